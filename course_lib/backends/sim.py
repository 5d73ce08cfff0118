"""The simulator's backend: the simulator's clients (:mod:`course_lib.client_adapters.simulated`)
composed with the simulated cluster (:class:`~course_lib.broker.simulated_cluster.SimulatedCluster`),
seeded, on the cluster's virtual clock. Its faults are those of the cluster's parts, as a
:class:`~course_lib.backends.composed.ComposedBackend`'s are.

Its timing profile holds the virtual milliseconds the golden traces were recorded with: on a
virtual clock a fixed wait is exact and repeatable, and a condition wait would move the clock
differently (so every seeded number a notebook quotes would change).
"""

from __future__ import annotations

from typing import Any, Callable

from ..broker.simulated_cluster import SimulatedCluster
from ..client_adapters.simulated import SimulatedClients
from ..clusters.faults import Fault, cluster_faults
from ..clusters.parts import TopicSpec
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
    """The simulator's clients on the simulated cluster: seeded, on virtual time."""

    kind = "simulator"
    timing = SIM_TIMING

    def __init__(self, cluster: SimulatedCluster, clients: SimulatedClients | None = None) -> None:
        self.cluster = cluster
        self.clients = clients or SimulatedClients()
        self.history = cluster.history  # the simulated cluster writes the run's history itself
        self.created_topics: dict[str, dict] = {}  # names are used as asked: nothing to record
        #: the parts the simulated cluster lacks, and why: its faults follow
        self.missing_parts = cluster.missing_parts()
        self.faults = CLIENT_FAULTS | cluster_faults(self.missing_parts)

    @classmethod
    def start(cls, seed: int = 0, brokers: int = 3, **options) -> SimBackend:
        """A fresh 3-broker simulated cluster (``options``: :class:`~course_lib.broker.ClusterOptions`)."""
        return cls(SimulatedCluster(brokers=brokers, seed=seed, **options))

    def fresh(self, seed: int = 0, brokers: int = 3, **options) -> SimBackend:
        """A new run with the same clients on a fresh simulated cluster (as :meth:`start`)."""
        return type(self)(SimulatedCluster(brokers=brokers, seed=seed, **options), self.clients)

    def describe(self) -> str:
        return self.cluster.description

    def __repr__(self) -> str:
        return f"<SimBackend {self.cluster.cluster!r}>"

    def provenance(self) -> Provenance:
        # the simulation itself, for a learner who wants to look further (inspect, partition_state)
        return Provenance(self.kind, self.cluster.cluster, "", {})

    # names: one learner, one process: names are used as given
    def create_from(self, spec: TopicSpec) -> str:
        return self.cluster.create_from(spec)

    def delete_topic(self, name: str) -> None:
        """Delete ``name`` (as :meth:`create_topic` returned it); every live broker has dropped it
        on return. ``UnknownTopicOrPartitionError`` if there is none, as from Kafka."""
        self.cluster.delete_topic(name)

    def group_id(self, name: str) -> str:
        return self.cluster.group_id(name)

    def transactional_id(self, name: str) -> str:
        return self.cluster.transactional_id(name)

    def producer(self, *, purpose: Any = None, **config):
        return self.clients.producer(self, "", self._producer_config(purpose, config))

    def consumer(self, *topics, **config):
        return self.clients.consumer(self, "", topics, config)

    def every_broker(self) -> dict:
        return {}  # the simulator's clients join the cluster object: they know every broker

    @property
    def brokers(self) -> list[int]:
        return self.cluster.broker_ids()

    def leader_of(self, topic, partition=0):
        return self.cluster.leader_of(topic, partition)

    def isr_of(self, topic, partition=0):
        return sorted(self.cluster.partition_info(topic, partition)["isr_nodes"])

    def replicas_of(self, topic, partition=0) -> list[int]:
        return self.cluster.partition_info(topic, partition)["replica_nodes"]  # the controller's order

    def partitions_of(self, topic) -> int:
        return len(self.cluster.partitions_of(topic))

    def evidence(self, topic, partition=0) -> dict:
        view = self.cluster.inspect(topic, partition)
        leader = view.leader
        hw = view.replica(leader).hw if leader is not None else None
        return {"leader": leader, "leader_epoch": view.leader_epoch, "isr": sorted(view.isr), "hw": hw}

    def end_offset(self, topic, partition=0, read_committed=False) -> int:
        return self.clients.end_offset(self.cluster, topic, partition, read_committed)

    # ---- time: the cluster's virtual clock
    @property
    def now_ms(self) -> float:
        return self.cluster.now_ms

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

    # ---- the nemesis: the cluster's parts (each records its fault in the run's history)
    def _broker_fault(self, fault: Fault, broker: int) -> None:
        """The simulation's own process fault: a restart leaves the virtual clock where it is (the
        scenario says what it waits for next; a wait here would move every seeded number)."""
        getattr(self.cluster.cluster, fault.hook)(broker)

    def _produce_fault(
        self, fault: Fault, producer: Any, topic: str, partition: int, close: bool, followed: bool
    ) -> None:
        """Lost on the simulated network on the producer's own connections, whichever broker they
        lead to (the simulation's own fault, aimed at a client); ``close`` (a lost answer only):
        its connection closes too, so the client retries at once. ``followed`` is for a refused
        request, which the simulator lacks."""
        self.require(fault.op, fault.op)  # MissingFault: says why (refused requests)
        how = {"close": True} if close else {}
        getattr(self.cluster.cluster, fault.hook)(producer.node_id, **how)

    def crash_client(self, client):
        client.crash()  # the simulated client records crash_client itself

    def freeze_client(self, consumer):
        self.clients.freeze(self, consumer)

    def schedule_faults(self, rng, duration_ms, kinds, faults, topic, producer) -> list:
        """Draw ``faults`` faults of ``kinds`` (None: every kind) over ``duration_ms`` from ``rng``
        and schedule them, with their healing, on the virtual clock; returns the schedule."""
        from ..nemesis import FAULT_KINDS, random_schedule

        schedule = random_schedule(rng, duration_ms, self.brokers, FAULT_KINDS if kinds is None else kinds, faults)
        return self.cluster.run_schedule(schedule, topic, producer.node_id)

    def heal(self, timeout_ms: float = 60_000) -> None:
        self.cluster.revive(timeout_ms)

    def final_read(self, topic, isolation_level="read_uncommitted"):
        return self.clients.final_read(self, topic, isolation_level)

    def close_clients(self) -> None:
        """Nothing to release: simulated clients end with the simulation."""
