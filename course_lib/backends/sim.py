"""The simulator's adapter: :class:`course_lib.broker.Cluster`, seeded, on a virtual clock.

Its timing profile holds the virtual milliseconds the golden traces were recorded with: on a
virtual clock a fixed wait is exact and repeatable, and a condition wait would move the clock
differently (so every seeded number a notebook quotes would change).
"""

from __future__ import annotations

import warnings
from typing import Any, Callable

from kafka import errors as Errors

from ..clusters.parts import MIN_ISR, UNCLEAN, TopicSpec, cluster_faults
from .base import CLIENT_FAULTS, Common, Provenance, Timing

#: virtual time: the simulator's network moves a request in well under a millisecond
SIM_TIMING = Timing(
    request_gap_ms=0.1,
    ack_gap_ms=5,
    stream_step_ms=1.0,
    stream_drain_ms=5,
    append_ms=20,
    replicate_ms=1000,
    election_ms=15_000,
    abort_margin_ms=3000,  # the coordinator looks for timed-out transactions every second
    read_polls=5,  # five polls are part of the seeded timeline: no early stop
    read_stops_at_end=False,
)


class SimBackend(Common):
    """The simulated cluster (:class:`course_lib.broker.Cluster`): seeded, virtual time, every fault."""

    kind = "simulator"
    #: the simulated cluster has every part (course_lib.clusters.parts)
    faults = CLIENT_FAULTS | cluster_faults({})
    timing = SIM_TIMING

    def __init__(self, cluster) -> None:
        self.cluster = cluster
        self.history = cluster.history
        self.created_topics: dict[str, dict] = {}  # names are used as asked: nothing to record

    @classmethod
    def start(cls, seed: int = 0, brokers: int = 3, **options) -> SimBackend:
        """A fresh 3-broker simulated cluster (``options``: :class:`~course_lib.broker.ClusterOptions`)."""
        from ..broker import Cluster

        return cls(Cluster(brokers=brokers, seed=seed, **options))

    def describe(self) -> str:
        return "the simulator"

    def __repr__(self) -> str:
        return f"<SimBackend {self.cluster!r}>"

    def provenance(self) -> Provenance:
        return Provenance(self.kind, self.cluster, "", {})

    # names: one learner, one process: names are used as given
    def create_from(self, spec: TopicSpec) -> str:
        """The spec in the simulated cluster's terms (the topic configs it models)."""
        unmodelled = sorted(set(spec.config) - {MIN_ISR, UNCLEAN})
        if unmodelled:
            raise ValueError(f"the simulator models the topic configs {MIN_ISR} and {UNCLEAN} only, not {unmodelled}")
        self.cluster.create_topic(
            spec.name,
            partitions=spec.partitions,
            replication_factor=spec.replication_factor,
            min_insync_replicas=spec.min_insync_replicas,
            unclean_leader_election_enable=spec.unclean_leader_election_enable,
        )
        return spec.name

    def delete_topic(self, name: str) -> None:
        """Delete ``name`` (as :meth:`create_topic` returned it); every live broker has dropped it
        on return. ``UnknownTopicOrPartitionError`` if there is none, as from Kafka."""
        try:
            self.cluster.topic_config(name)
        except ValueError:
            raise Errors.UnknownTopicOrPartitionError(f"no topic {name!r} to delete") from None
        self.cluster.delete_topic(name)

    def group_id(self, name: str) -> str:
        return name

    def transactional_id(self, name: str) -> str:
        return name

    def producer(self, *, purpose: Any = None, **config):
        from ..clients import KafkaProducer

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # scenarios set enable_idempotence explicitly when it matters
            return KafkaProducer(bootstrap_servers=self.cluster, **self._producer_config(purpose, config))

    def consumer(self, *topics, **config):
        from ..clients import KafkaConsumer

        return KafkaConsumer(*topics, bootstrap_servers=self.cluster, **config)

    @property
    def brokers(self) -> list[int]:
        return list(self.cluster.broker_ids)

    def leader_of(self, topic, partition=0):
        return self.cluster.leader_of(topic, partition)

    def isr_of(self, topic, partition=0):
        return sorted(self.cluster.partition_state(topic, partition)["isr"])

    def replicas_of(self, topic, partition=0) -> list[int]:
        return list(self.cluster.partition_state(topic, partition)["replicas"])  # the controller's order

    def partitions_of(self, topic) -> int:
        return self.cluster.topic_config(topic).partitions

    def evidence(self, topic, partition=0) -> dict:
        s = self.cluster.partition_state(topic, partition)
        leader = s["leader"]
        hw = s["replicas"][leader]["hw"] if leader is not None else None
        return {"leader": leader, "leader_epoch": s["leader_epoch"], "isr": sorted(s["isr"]), "hw": hw}

    def end_offset(self, topic, partition=0, read_committed=False) -> int:
        view = self.cluster.inspect(topic, partition)
        end = view.lso if read_committed else view.hw
        if end is None:
            raise RuntimeError(
                f"{topic}-{partition} is offline (no live leader): restart a broker or call heal() first"
            )
        return end

    # ---- time: virtual
    @property
    def now_ms(self) -> float:
        return self.cluster.now

    def wait(self, ms) -> None:
        """Advance the virtual clock ``ms``."""
        if ms > 0:
            self.cluster.run_for(ms)

    def wait_until(self, predicate, timeout_ms=60_000) -> bool:
        return self.cluster.run_until(predicate, timeout_ms)

    def at(self, delay_ms: float, action: Callable, *args) -> None:
        """Schedule ``action`` ``delay_ms`` from now on the virtual clock."""
        self.cluster.at(delay_ms, action, *args)

    def app_time(self, ms: float) -> None:
        """Time the application itself takes (processing a record, a supervisor's restart
        delay): the virtual clock moves on, and the cluster with it."""
        self.wait(ms)

    # the intents, as fixed virtual waits (see the module docstring)
    def settle(self, topic: str, partition: int = 0) -> None:
        """Followers fetch within the network latency: nothing to wait for."""

    def until_replicated(self, topic: str, partition: int = 0) -> None:
        self.wait(self.timing.replicate_ms)

    def until_acknowledged(self, future: Any) -> None:
        self.wait(self.timing.ack_gap_ms)

    def until_sent(self, producer: Any) -> None:
        self.wait(self.timing.request_gap_ms)

    def until_appended(self, topic: str, records: int, partition: int = 0) -> None:
        self.wait(self.timing.append_ms)

    def until_leader_elected(self, topic: str, not_: int | None = None, partition: int = 0) -> int:
        self.wait(self.timing.election_ms)
        return super().until_leader_elected(topic, not_, partition)

    def until_transaction_aborted(self, topic: str, transaction_timeout_ms: float, partition: int = 0) -> None:
        self.wait(transaction_timeout_ms + self.timing.abort_margin_ms)

    # ---- the nemesis
    def crash(self, broker):
        self.cluster.crash(broker)

    def restart(self, broker):
        self.cluster.restart(broker)

    def pause(self, broker):
        self.cluster.pause(broker)

    def resume(self, broker):
        self.cluster.resume(broker)

    def lose_next_ack(self, producer, topic, partition=0, close=False):
        self.cluster.lose_next_ack(producer.node_id, close=close)

    def lose_next_request(self, producer, topic, partition=0):
        self.cluster.lose_next_request(producer.node_id)

    def crash_client(self, client):
        client.crash()  # the simulated client records crash_client itself

    def freeze_client(self, consumer):
        consumer.freeze()  # the simulated client records freeze_client itself

    def schedule_faults(self, rng, duration_ms, kinds, faults, topic, producer) -> list:
        """Draw ``faults`` faults of ``kinds`` (None: every kind) over ``duration_ms`` from ``rng``
        and schedule them, with their healing, on the virtual clock; returns the schedule."""
        from ..nemesis import FAULT_KINDS, apply_schedule, random_schedule

        schedule = random_schedule(rng, duration_ms, self.brokers, FAULT_KINDS if kinds is None else kinds, faults)
        apply_schedule(self.cluster, schedule, topic, producer.node_id)
        return schedule

    def lose_next_coordinator_response(self) -> None:
        """The next response of any group or transaction coordinator is lost (unrecorded: part of
        a timed fault plan, as the schedule's own steps are)."""
        self.cluster.network.drop_next(None, None, "coordinator_response")

    def heal(self, timeout_ms: float = 60_000) -> None:
        self.cluster.heal_all(timeout_ms)

    def final_read(self, topic, isolation_level="read_uncommitted"):
        return self.cluster.final_read(topic, isolation_level=isolation_level)

    def close_clients(self) -> None:
        """Nothing to release: simulated clients end with the simulation."""
