"""A client adapter composed with a wall-clock cluster: the backend of every cluster but the
simulator's own (kafka-python on a :class:`~course_lib.real.cluster.LocalCluster`, on a
:func:`~course_lib.real.connect.connect` handle, on a :class:`~course_lib.wire.cluster.WireCluster`).

The client side (:mod:`course_lib.client_adapters`) builds and calls the applications; the
cluster side (:mod:`course_lib.clusters`) answers about topics and brokers and injects the faults
of the parts it has - so :attr:`ComposedBackend.faults` is the client faults plus the faults of
the cluster's parts, and a missing part says why (``cluster.missing_parts()``). Nothing here asks
which cluster it is.

Its steps run on the wall clock (:class:`~course_lib.backends.wallclock.WallClock`): each that
depends on the cluster's state waits *for that state* - a busy machine makes a run slower, never
wrong.
"""

from __future__ import annotations

import itertools
import time
from functools import partial
from typing import Any, cast

from ..client_adapters import ClientSide, kafka_python
from ..clusters import FAULT, Fault, FaultSchedules, Part, TopicSpec, Topology, cluster_faults
from ..history import INFO, Nemesis, OpName
from .base import CLIENT_FAULTS, Provenance, Timing
from .wallclock import WallClock

#: wall-clock budgets of the lab profile (course_lib/clusters/lab.py: broker.session.timeout.ms
#: and replica.lag.time.max.ms of a few seconds) and the client settings its steps need
KAFKA_TIMING = Timing(
    request_gap_ms=10,  # a send is on the wire well within 10 ms of a sender thread's turn
    ack_gap_ms=200,  # the bound of until_acknowledged: acks=all behind paused followers never answers
    stream_step_ms=10.0,
    stream_drain_ms=500,
    append_ms=0,  # until_appended waits for the end offset itself
    replicate_ms=0,  # until_replicated waits for the full ISR and the high watermark itself
    election_ms=5000,  # an election would take well under this once the followers registered again
    abort_margin_ms=0,  # until_transaction_aborted waits for the last stable offset itself
    read_polls=100,
    read_stops_at_end=True,
    holding_back_followers=(Nemesis.PAUSE, Nemesis.RESUME),
    # a broker publishes new metadata to its cache before it applies it to its partitions, so a
    # leader can still enforce the old ISR for a moment after the metadata shows the new one
    isr_stable_ms=1500,
    producer_for={
        "failover": {"request_timeout_ms": 5000, "retry_backoff_ms": 100},
        "metadata_refresh": {"metadata_max_age_ms": 1000, "retry_backoff_ms": 100},
        # a long back-off keeps the producer from retrying before the application "crashes"
        "no_retry_before_crash": {
            "retry_backoff_ms": 10_000,
            "reconnect_backoff_ms": 10_000,
            "reconnect_backoff_max_ms": 10_000,
            "request_timeout_ms": 30_000,
        },
    },
)

_run_ids = itertools.count(1)


class ComposedBackend(WallClock):
    """A client adapter (``clients``, default kafka-python) on a wall-clock ``cluster``.

    One backend object is one run: a fresh history, and topic, group and transactional ids with a
    per-run suffix (the cluster adds the learner's prefix).
    """

    timing = KAFKA_TIMING

    def __init__(self, cluster: Topology, clients: ClientSide | None = None) -> None:
        super().__init__()  # a fresh history on the wall clock
        self.cluster = cluster
        self.clients = clients or kafka_python()
        self.kind = cluster.label
        self.run_id = f"{int(time.time()) % 100000}{next(_run_ids):03d}"
        self._names = itertools.count(1)
        self._clients: list = []
        #: every topic this run created -> the settings the scenario asked for (Kafka's names)
        self.created_topics: dict[str, dict] = {}
        #: the parts this cluster lacks, and why: its faults follow
        self.missing_parts = cluster.missing_parts()
        self.faults = CLIENT_FAULTS | cluster_faults(self.missing_parts)
        cluster.record_events_into(self.history)  # one history per run

    def fresh(self) -> "ComposedBackend":
        """A new run with the same clients on the same cluster."""
        return type(self)(self.cluster, self.clients)

    def describe(self) -> str:
        return f"{self.clients.name} on {self.cluster.description}"

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.clients.name} on {self.cluster!r} run {self.run_id}>"

    def provenance(self) -> Provenance:
        return Provenance(self.kind, self.cluster, f" on {self.kind}", {"created_topics": dict(self.created_topics)})

    # ---- the cluster's optional parts (present unless missing_parts() names them)
    def _part(self, part: Part) -> Any:
        return None if part in self.missing_parts else self.cluster

    # ---- names: the cluster adds the learner prefix, once; we add the run suffix
    def _unique(self, name: str) -> str:
        return f"{name}-{self.run_id}"

    def create_from(self, spec: TopicSpec) -> str:
        full = self.cluster.create_from(spec.named(self._unique(spec.name)))
        self.created_topics[full] = spec.asked()
        return full

    def delete_topic(self, name: str) -> None:
        """Delete ``name`` (as :meth:`create_topic` returned it); the metadata no longer lists it
        on return."""
        self.cluster.delete_topic(name)

    def group_id(self, name: str) -> str:
        return self.cluster.group_id(self._unique(name))

    def transactional_id(self, name: str) -> str:
        return self.cluster.transactional_id(self._unique(name))

    def _process(self, role: str, config: dict) -> str:
        return config.get("client_id") or f"{role}-{next(self._names)}"

    def _bootstrap(self, config: dict) -> dict:
        """Bootstrap a new client from the brokers that are up, on a cluster this program runs.

        kafka-python 3.0.12 draws a bootstrap address at random and, when that broker is down,
        waits out its reconnect backoff (doubling up to ``reconnect_backoff_max_ms``) before it
        draws again (``kafka/net/manager.py``, ``_do_bootstrap``): with two of three brokers down
        it missed its bootstrap timeout in about one run in twenty. Which broker a client
        bootstraps from changes nothing else: the metadata it gets lists the live brokers."""
        brokers = self._part(Part.BROKER_FAULTS)
        if brokers is None or "bootstrap_servers" in config:
            return config
        live = brokers.live_bootstrap_servers()
        return {"bootstrap_servers": live, **config} if live else config

    def every_broker(self) -> dict:
        return {"bootstrap_servers": self.cluster.bootstrap_servers}

    def producer(self, *, purpose: Any = None, **config):
        config = self._bootstrap(self._producer_config(purpose, config))
        p = self.clients.producer(self, self._process("producer", config), config)
        self._clients.append(p)
        # Fetch the metadata of this run's topics now, as the simulated producer does when it is
        # created: a first send after a pause would otherwise ask a frozen broker and wait.
        for topic in self.created_topics:
            p.partitions_for(topic)
        return p

    def consumer(self, *topics, **config):
        c = self.clients.consumer(self, self._process("consumer", config), topics, self._bootstrap(config))
        self._clients.append(c)
        return c

    # ---- observation
    @property
    def brokers(self) -> list[int]:
        return self.cluster.broker_ids()

    def leader_of(self, topic, partition=0):
        leader = self.cluster.partition_info(topic, partition)["leader_id"]
        return None if leader is None or leader < 0 else leader

    def isr_of(self, topic, partition=0):
        return sorted(self.cluster.partition_info(topic, partition)["isr_nodes"])

    def replicas_of(self, topic, partition=0) -> list[int]:
        return list(self.cluster.partition_info(topic, partition).get("replica_nodes") or self.isr_of(topic, partition))

    def partitions_of(self, topic) -> int:
        return len(self.cluster.partitions_of(topic))

    def evidence(self, topic, partition=0) -> dict:
        info = self.cluster.partition_info(topic, partition)
        leader = info["leader_id"]
        return {
            "leader": None if leader < 0 else leader,
            "leader_epoch": info.get("leader_epoch", -1),
            "isr": sorted(info["isr_nodes"]),
        }

    def end_offset(self, topic, partition=0, read_committed=False) -> int:
        return self.clients.end_offset(self.cluster, topic, partition, read_committed)

    # ---- the nemesis: the cluster's parts; this backend records each fault in the run's history
    def _broker_fault(self, fault: Fault, broker: int, **how) -> None:
        self.require(fault.op, fault.op)
        getattr(self.cluster, fault.hook)(broker, **how)
        self.history.record("nemesis", INFO, fault.op, {"broker": broker})

    def _produce_fault(
        self, fault: Fault, producer: Any, topic: str, partition: int, close: bool, followed: bool
    ) -> None:
        """Armed in front of the partition's leader. ``close`` changes nothing here: a lost
        answer's connection is always cut (a real proxy cuts it; kept open, the client would
        retry after ``request_timeout_ms`` instead of at once - the same outcome, later)."""
        self.require(fault.op, fault.op)
        leader = getattr(self.cluster, fault.hook)(topic, partition, followed)
        self.history.record("nemesis", INFO, fault.op, {"client": producer.node_id, "broker": leader})

    def crash_client(self, client):
        client.crash()  # the recording client records crash_client itself

    def freeze_client(self, consumer):
        self.clients.freeze(self, consumer)

    def schedule_faults(self, rng, duration_ms, kinds, faults, topic, producer) -> list:
        """Draw ``faults`` faults of ``kinds`` (None: every kind) over ``duration_ms`` from ``rng``
        - the draws of the simulator's ``schedule_faults``, so a seed gives the same schedule on
        both - and start them now on the cluster's clock, with their healing. Lost ACKs and
        requests are those of ``producer``'s connections; every fault is recorded in this run's
        history as it starts. Returns the schedule."""
        from ..nemesis import random_schedule

        self.require("a random fault schedule", Nemesis.SCHEDULE)
        schedule = random_schedule(rng, duration_ms, self.brokers, kinds, faults)
        schedules = cast(FaultSchedules, self.cluster)
        return schedules.run_schedule(schedule, topic, producer.node_id, self._scheduled_fault)

    def _scheduled_fault(self, f: str, value) -> None:
        self.history.record("nemesis", INFO, f, value)

    def heal(self, timeout_ms: float = 60_000) -> None:
        """Stop what is left of a fault schedule and heal the network, then resume and restart
        every broker and wait until every partition of this run has its full ISR back (a
        just-restarted leader may answer with a stale end offset before)."""
        schedules = self._part(Part.FAULT_SCHEDULES)
        if schedules is not None:
            schedules.cancel_schedules()
            schedules.heal_network()
        brokers = self._part(Part.BROKER_FAULTS)
        if brokers is None:
            return  # nothing of ours to heal (a shared cluster's lost ACKs need no healing)
        for broker_id in brokers.paused_brokers():
            self.resume(broker_id)
        stopped = brokers.stopped_brokers()
        for broker_id in stopped:  # start them all, then wait once: JVMs start in parallel
            self._broker_fault(FAULT["restart"], broker_id, wait=False)
        if stopped:
            brokers.wait_registered(stopped)
        everyone = len(self.brokers)
        for topic in self._topics():
            self.until(
                f"{topic}-0 to get its full ISR back",
                partial(self.isr_of, topic),
                lambda isr: len(isr) == everyone,
                timeout_ms,
            )

    def _topics(self) -> list[str]:
        return sorted({op.topic for op in self.history if op.topic and op.f == OpName.SEND})

    def final_read(self, topic, isolation_level="read_uncommitted"):
        self.heal()
        return self.clients.final_read(self, topic, isolation_level)

    def close_clients(self) -> None:
        """Close every client this run opened and did not close (after an error, too)."""
        for c in self._clients:
            c.close_quietly()
