"""Real Kafka's adapter: kafka-python against a :class:`~course_lib.real.cluster.LocalCluster`
(every fault) or a cluster reached with :func:`~course_lib.real.connect.connect` (client faults).

On a wall clock every step that depends on the cluster's state waits *for that state* (admin
metadata, end offsets), bounded by :attr:`Timing.condition_timeout_ms`, and fails with
:class:`~course_lib.backends.base.ConditionTimeout` naming what it waited for and what it saw -
a busy machine makes a run slower, never wrong.
"""

from __future__ import annotations

import heapq
import itertools
import time
from functools import partial
from typing import Any, Callable

from ..history import INFO, OK, History, Nemesis, OpName
from .base import BROKER_FAULTS, CLIENT_FAULTS, Common, Provenance, Timing

#: wall-clock budgets of the lab cluster (course_lib/real/cluster.py: broker.session.timeout.ms
#: and replica.lag.time.max.ms of a few seconds) and the client settings its steps need
KAFKA_TIMING = Timing(
    request_gap_ms=10,  # a send is on the wire well within 10 ms of a sender thread's turn
    ack_gap_ms=200,  # the bound of until_acknowledged: acks=all behind paused followers never answers
    stream_step_ms=10.0,
    stream_drain_ms=500,
    append_ms=0,  # until_appended waits for the end offset itself
    election_ms=5000,  # an election would take well under this once the followers registered again
    abort_margin_ms=0,  # until_transaction_aborted waits for the last stable offset itself
    read_polls=100,
    read_stops_at_end=True,
    holding_back_followers=(Nemesis.PAUSE, Nemesis.RESUME),
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

#: a broker publishes new metadata to its cache before it applies it to its partitions, so a
#: leader can still enforce the old ISR for a moment after the metadata shows the new one; a
#: changed ISR counts once it has been seen unchanged this long
ISR_SEEN_STABLE_MS = 1500

_run_ids = itertools.count(1)


class KafkaBackend(Common):
    """Real Kafka through kafka-python: a :class:`LocalCluster` (every fault) or a cluster reached
    with :func:`connect` (client faults only: its brokers run elsewhere).

    One backend object is one run: a fresh history, and topic, group and transactional ids with a
    per-run suffix (the cluster adds the learner's prefix).
    """

    kind = "kafka"
    timing = KAFKA_TIMING

    def __init__(self, cluster) -> None:
        from ..real.cluster import LocalCluster

        self.cluster = cluster
        self.run_id = f"{int(time.time()) % 100000}{next(_run_ids):03d}"
        t0 = time.monotonic()
        self.history = History(clock=lambda: (time.monotonic() - t0) * 1000)
        self._names = itertools.count(1)
        self._clients: list = []
        self._timeline: list = []  # (due, seq, action, args): run by wait()
        #: every topic this run created -> the settings the scenario asked for (Kafka's names)
        self.created_topics: dict[str, dict] = {}
        self._seq = itertools.count()
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

    def group_id(self, name: str) -> str:
        return self.cluster.group_id(self._unique(name))

    def transactional_id(self, name: str) -> str:
        return self.cluster.transactional_id(self._unique(name))

    def _process(self, role: str, config: dict) -> str:
        return config.get("client_id") or f"{role}-{next(self._names)}"

    def producer(self, *, purpose: Any = None, **config):
        from ..real.recording import RecordingProducer

        config = self._producer_config(purpose, config)
        p = RecordingProducer(self, self._process("producer", config), **config)
        self._clients.append(p)
        # Fetch the metadata of this run's topics now, as the simulated producer does when it is
        # created: a first send after a pause would otherwise ask a frozen broker and wait.
        for topic in self.created_topics:
            p.partitions_for(topic)
        return p

    def consumer(self, *topics, **config):
        from ..real.recording import RecordingConsumer

        c = RecordingConsumer(self, self._process("consumer", config), *topics, **config)
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

    # ---- time: wall clock
    @property
    def now_ms(self) -> float:
        return self.history.clock()

    def wait(self, ms, kafka_ms=None) -> None:
        """Sleep ``ms``, running the actions :meth:`at` scheduled, when due. (``kafka_ms``, if
        given, replaces ``ms``: kept for experiments written before the timing profiles.)"""
        ms = ms if kafka_ms is None else kafka_ms
        end = time.monotonic() + max(ms, 0) / 1000
        while self._timeline and self._timeline[0][0] <= end:
            due, _, action, args = heapq.heappop(self._timeline)
            time.sleep(max(0.0, due - time.monotonic()))
            action(*args)
        time.sleep(max(0.0, end - time.monotonic()))

    def at(self, delay_ms: float, action: Callable, *args) -> None:
        """Schedule ``action`` ``delay_ms`` from now; it runs during the next :meth:`wait` that
        reaches its time (in this thread: scheduled actions never race each other)."""
        heapq.heappush(self._timeline, (time.monotonic() + delay_ms / 1000, next(self._seq), action, args))

    def wait_until(self, predicate, timeout_ms=60_000) -> bool:
        deadline = time.monotonic() + timeout_ms / 1000
        while True:
            try:
                if predicate():
                    return True
            except Exception:  # metadata briefly unavailable (an election, a restarting broker)
                pass
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.1)

    def app_time(self, ms: float) -> None:
        """The application's own work took real time already: nothing to wait for."""

    def poll_together(self, consumers: list, timeout_ms: int) -> list[dict]:
        """Every consumer inside ``poll()`` at the same time, one thread each, as separate
        application processes would be: kafka-python 3.0.12 collects a group join only inside
        ``poll()`` (:mod:`course_lib.real.joining`). Each consumer is still touched by one thread
        at a time."""
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(len(consumers)) as pool:
            return list(pool.map(lambda c: c.poll(timeout_ms=timeout_ms), consumers))

    # ---- the intents: conditions on the cluster's state
    def _acked(self, topic: str, partition: int) -> int:
        """How many sends to the partition this run's producers saw acknowledged."""
        return sum(
            1
            for op in self.history
            if op.f == OpName.SEND and op.type == OK and op.topic == topic and op.partition == partition
        )

    def settle(self, topic: str, partition: int = 0) -> None:
        """Wait until every in-sync follower has what was acknowledged: the high watermark (the
        end offset a read_uncommitted reader sees) reaches the acknowledged sends."""
        want = self._acked(topic, partition)
        self.until(
            f"the high watermark of {topic}-{partition} to reach the {want} acknowledged sends",
            lambda: self.end_offset(topic, partition),
            lambda hw: hw >= want,
        )

    def until_acknowledged(self, future: Any) -> None:
        """Give the leader :attr:`Timing.ack_gap_ms` to acknowledge ``future`` (acks=all behind
        paused followers never does: then the next send simply follows)."""
        self.wait_until(lambda: future.is_done, self.timing.ack_gap_ms)

    def until_sent(self, producer: Any) -> None:
        self.wait(self.timing.request_gap_ms)

    def until_appended(self, topic: str, records: int, partition: int = 0) -> None:
        self.until(
            f"{topic}-{partition} to hold {records} records (its end offset)",
            lambda: self.end_offset(topic, partition),
            lambda end: end >= records,
        )

    def until_isr_shrinks(self, topic: str, to: int = 1, partition: int = 0) -> list[int]:
        """Wait until the ISR has ``to`` members, and has stayed so for :data:`ISR_SEEN_STABLE_MS`
        (the leader applies the change to its partition just after its metadata shows it)."""
        since: list = []

        def shrunk_long_enough(isr) -> bool:
            if len(isr) != to:
                since.clear()
                return False
            since[:] = since or [time.monotonic()]
            return (time.monotonic() - since[0]) * 1000 >= ISR_SEEN_STABLE_MS

        return self.until(
            f"the ISR of {topic}-{partition} to shrink to {to} member(s)",
            lambda: self.isr_of(topic, partition),
            shrunk_long_enough,
        )

    def until_transaction_aborted(self, topic: str, transaction_timeout_ms: float, partition: int = 0) -> None:
        """Wait until no transaction is open on the partition any more: its last stable offset
        (what read_committed readers may read up to) reaches the high watermark - the
        coordinator wrote the abort marker."""
        self.until(
            f"the coordinator to abort the timed-out transaction on {topic}-{partition} "
            f"(last stable offset, high watermark)",
            lambda: (self.end_offset(topic, partition, read_committed=True), self.end_offset(topic, partition)),
            lambda ends: ends[0] >= ends[1],
            timeout_ms=transaction_timeout_ms + self.timing.condition_timeout_ms,
        )

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
