"""Real Kafka's adapter: kafka-python against a :class:`~course_lib.real.cluster.LocalCluster`
(every fault) or a cluster reached with :func:`~course_lib.real.connect.connect` (client faults).

Its steps run on the wall clock (:class:`~course_lib.backends.wallclock.WallClock`): each that
depends on the cluster's state waits *for that state* - a busy machine makes a run slower, never
wrong.
"""

from __future__ import annotations

import itertools
import time
from functools import partial
from typing import Any, Callable

from ..history import INFO, Nemesis, OpName
from .base import BROKER_FAULTS, CLIENT_FAULTS, Provenance, Timing
from .wallclock import WallClock

#: wall-clock budgets of the lab cluster (course_lib/real/cluster.py: broker.session.timeout.ms
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


class KafkaBackend(WallClock):
    """Real Kafka through kafka-python: a :class:`LocalCluster` (every fault) or a cluster reached
    with :func:`connect` (client faults only: its brokers run elsewhere).

    One backend object is one run: a fresh history, and topic, group and transactional ids with a
    per-run suffix (the cluster adds the learner's prefix).
    """

    kind = "kafka"
    timing = KAFKA_TIMING

    def __init__(self, cluster) -> None:
        from ..real.cluster import LocalCluster

        super().__init__()  # a fresh history on the wall clock
        self.cluster = cluster
        self.run_id = f"{int(time.time()) % 100000}{next(_run_ids):03d}"
        self._names = itertools.count(1)
        self._clients: list = []
        #: every topic this run created -> the settings the scenario asked for (Kafka's names)
        self.created_topics: dict[str, dict] = {}
        #: a cluster whose broker processes this notebook started (and may signal)
        self.local = isinstance(cluster, LocalCluster)
        # message faults: the LocalCluster's proxies, or the learner's own proxy (connect())
        proxies = cluster.use_proxies if self.local else bool(getattr(cluster, "message_faults", False))
        self.faults = (
            CLIENT_FAULTS
            | (
                frozenset({Nemesis.CRASH, Nemesis.RESTART, Nemesis.PAUSE, Nemesis.RESUME})
                if self.local
                else frozenset()
            )
            | (frozenset({Nemesis.LOSE_NEXT_ACK, Nemesis.LOSE_NEXT_REQUEST}) if proxies else frozenset())
        )
        if not self.local:
            self.missing_reason = (
                f"its brokers run elsewhere ({cluster.bootstrap_servers}, e.g. a shared workshop cluster): "
                f"this notebook cannot signal their processes (broker faults are the instructor's: "
                f"python -m course_lib.workshop broker ...); use LocalCluster() for these"
            )
        elif not proxies:
            self.missing_reason = "this LocalCluster runs without proxies (proxies=False): no message can be lost"
        else:
            self.missing_reason = "not available on real Kafka (the simulator replays fault schedules in virtual time)"

    @classmethod
    def fresh(cls, target) -> KafkaBackend:
        """A new run on the same cluster (``target``: a cluster or another KafkaBackend)."""
        return cls(target.cluster if isinstance(target, KafkaBackend) else target)

    def describe(self) -> str:
        return f"real Kafka ({type(self.cluster).__name__})"

    def __repr__(self) -> str:
        return f"<KafkaBackend {self.cluster!r} run {self.run_id}>"

    def provenance(self) -> Provenance:
        return Provenance(self.kind, self.cluster, f" on {self.kind}", {"created_topics": dict(self.created_topics)})

    # ---- names: the cluster adds the learner prefix, once; we add the run suffix
    def _unique(self, name: str) -> str:
        return f"{name}-{self.run_id}"

    def create_topic(
        self, name, partitions=1, replication_factor=None, min_insync_replicas=None, unclean_leader_election_enable=None
    ) -> str:
        config = {}
        if unclean_leader_election_enable is not None:
            config["unclean.leader.election.enable"] = str(bool(unclean_leader_election_enable)).lower()
        full = self.cluster.create_topic(
            self._unique(name),
            partitions=partitions,
            replication_factor=replication_factor,
            min_insync_replicas=min_insync_replicas,
            config=config,
        )
        asked = {
            "partitions": partitions,
            "replication_factor": replication_factor,
            "min.insync.replicas": min_insync_replicas,
            **config,
        }
        self.created_topics[full] = {k: v for k, v in asked.items() if v is not None}
        return full

    def delete_topic(self, name: str) -> None:
        """Delete ``name`` (as :meth:`create_topic` returned it) with the admin client's
        DeleteTopics; the metadata no longer lists it on return."""
        self.cluster.delete_topic(name)

    def group_id(self, name: str) -> str:
        return self.cluster.group_id(self._unique(name))

    def transactional_id(self, name: str) -> str:
        return self.cluster.transactional_id(self._unique(name))

    def _process(self, role: str, config: dict) -> str:
        return config.get("client_id") or f"{role}-{next(self._names)}"

    def _bootstrap(self, config: dict) -> dict:
        """Bootstrap a new client from the brokers that are up, on a cluster this notebook runs.

        kafka-python 3.0.12 draws a bootstrap address at random and, when that broker is down,
        waits out its reconnect backoff (doubling up to ``reconnect_backoff_max_ms``) before it
        draws again (``kafka/net/manager.py``, ``_do_bootstrap``): with two of three brokers down
        it missed its bootstrap timeout in about one run in twenty. Which broker a client
        bootstraps from changes nothing else: the metadata it gets lists the live brokers."""
        if not self.local or "bootstrap_servers" in config:
            return config
        live = self.cluster.live_bootstrap_servers()
        return {"bootstrap_servers": live, **config} if live else config

    def producer(self, *, purpose: Any = None, **config):
        from ..real.recording import RecordingProducer

        config = self._bootstrap(self._producer_config(purpose, config))
        p = RecordingProducer(self, self._process("producer", config), **config)
        self._clients.append(p)
        # Fetch the metadata of this run's topics now, as the simulated producer does when it is
        # created: a first send after a pause would otherwise ask a frozen broker and wait.
        for topic in self.created_topics:
            p.partitions_for(topic)
        return p

    def consumer(self, *topics, **config):
        from ..real.recording import RecordingConsumer

        c = RecordingConsumer(self, self._process("consumer", config), *topics, **self._bootstrap(config))
        self._clients.append(c)
        return c

    # ---- observation
    @property
    def brokers(self) -> list[int]:
        return sorted(self.cluster.nodes) if self.local else self.cluster.live_broker_ids()

    def leader_of(self, topic, partition=0):
        leader = self.cluster.leader_of(topic, partition)
        return None if leader is None or leader < 0 else leader

    def isr_of(self, topic, partition=0):
        return sorted(self.cluster.isr_of(topic, partition))

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
        from ..real.recording import end_offset

        return end_offset(self.cluster, topic, partition, read_committed)

    # ---- the nemesis
    def _broker_fault(self, f: str, broker: int, action: Callable[[int], Any]) -> None:
        self.require(f, f)
        action(broker)
        self.history.record("nemesis", INFO, f, {"broker": broker})

    def crash(self, broker):
        self._broker_fault(Nemesis.CRASH, broker, self.cluster.kill)

    def restart(self, broker):
        self._broker_fault(Nemesis.RESTART, broker, self.cluster.restart)

    def pause(self, broker):
        self._broker_fault(Nemesis.PAUSE, broker, self.cluster.pause)

    def resume(self, broker):
        self._broker_fault(Nemesis.RESUME, broker, self.cluster.resume)

    def lose_next_ack(self, producer, topic, partition=0, close=False):
        """The leader's proxy swallows the next produce response and cuts the connection. A real
        proxy always cuts it: with ``close=False`` the client retries at once instead of after
        ``request_timeout_ms`` - the same outcome, sooner."""
        self.require(Nemesis.LOSE_NEXT_ACK, Nemesis.LOSE_NEXT_ACK)
        leader = self.cluster.drop_next_produce_response(topic, partition)
        self.history.record("nemesis", INFO, Nemesis.LOSE_NEXT_ACK, {"client": producer.node_id, "broker": leader})

    def lose_next_request(self, producer, topic, partition=0):
        """The leader's proxy spoils the next produce request so the broker refuses it (a retriable
        CORRUPT_MESSAGE); requests behind it on the connection go through - as a lost request
        followed by its retry does."""
        self.require(Nemesis.LOSE_NEXT_REQUEST, Nemesis.LOSE_NEXT_REQUEST)
        leader = self.cluster.spoil_next_produce_request(topic, partition)
        self.history.record("nemesis", INFO, Nemesis.LOSE_NEXT_REQUEST, {"client": producer.node_id, "broker": leader})

    def crash_client(self, client):
        client.crash()  # the recording client records crash_client itself

    def freeze_client(self, consumer):
        """A frozen consumer leaves its group after max.poll.interval.ms; closing it (without a
        commit) has the same effect without the wait."""
        self.history.record("nemesis", INFO, Nemesis.FREEZE_CLIENT, {"client": consumer.node_id})
        consumer.close_quietly()

    def heal(self, timeout_ms: float = 60_000) -> None:
        """Resume and restart every broker, then wait until every partition of this run has its
        full ISR back (a just-restarted leader may answer with a stale end offset before)."""
        if not (self.faults & BROKER_FAULTS) or not self.local:
            return  # nothing of ours to heal (a shared cluster's lost ACKs need no healing)
        for node_id, node in sorted(self.cluster.nodes.items()):
            if node.paused:
                self.resume(node_id)
        stopped = [node_id for node_id, node in sorted(self.cluster.nodes.items()) if not node.running()]
        for node_id in stopped:  # start them all, then wait once: JVMs start in parallel
            self._broker_fault(Nemesis.RESTART, node_id, lambda b: self.cluster.restart(b, wait=False))
        if stopped:
            self.cluster.wait_registered(stopped)
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
        from ..real.recording import final_read

        self.heal()
        return final_read(self, topic, isolation_level)

    def close_clients(self) -> None:
        """Close every client this run opened and did not close (after an error, too)."""
        for c in self._clients:
            c.close_quietly()
