"""The simulator's named producer scenarios, run on a real Kafka cluster with kafka-python.

Same names, same workloads, same faults, same history format, same checker
(:mod:`course_lib.checker`) - only the backend differs. :func:`fidelity_table` runs each one on
both backends and compares which anomaly classes appeared: where they agree, the simulator's
explanation (offsets, high watermark, epochs) is trustworthy for the real thing.

    >>> with LocalCluster() as kafka:                                   # doctest: +SKIP
    ...     r = run_real_scenario(kafka, "lost_ack_retry", idempotent=False)
    >>> r.result.found                                                  # doctest: +SKIP
    {'duplicate'}

How each fault is made real:

- ``leader_crash_after_ack``: SIGSTOP both followers (they stay in the ISR until the controller
  fences them, ~3 s here), write, SIGKILL the leader, SIGCONT the followers - one of them, without
  the acknowledged writes, is elected;
- ``not_enough_replicas``: SIGKILL both followers and wait until the ISR is the leader alone;
- ``lost_ack_retry``: the lost-ACK proxy swallows one produce response and cuts the connection;
- ``fire_and_forget_crash``: ``acks=0`` with frozen followers, then the leader is SIGKILLed;
- ``producer_restart_gap``: an ACK is lost, the producer is killed before its retry
  (:func:`kill_producer`) and a new producer (new producer id) sends the message again;
- ``aborted_transaction``: kafka-python's transactional producer commits, aborts, commits; a
  consumer reads with the given ``isolation_level``;
- ``zombie_fencing``: two transactional producers with one ``transactional_id``; the second's
  ``init_transactions()`` fences the first, whose late commit raises ``ProducerFencedError``;
- ``consumer_crash`` / ``consume_transform_produce``: a consuming application
  (:class:`RealProcessor`, the loop of :mod:`course_lib.processing`) "crashes" by closing its
  consumer without committing (and abandoning its open transaction); a new instance joins the
  same group. The processed list (or the read_committed output topic) is compared with the input
  by the checker's ``consumer=`` spec.

After the faults everything is healed (brokers restarted) and the partition is read from offset 0
(Jepsen's final read) before the checker runs.

Taught in notebooks/09_real_kafka_lab.
"""
from __future__ import annotations

import itertools
import threading
import time
import warnings
from typing import Callable

from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka.errors import (InvalidRecordError, MessageSizeTooLargeError, NotEnoughReplicasError,
                          RecordListTooLargeError, TopicAuthorizationFailedError)

from course_lib.checker import check
from course_lib.history import FAIL, INFO, OK, History
from course_lib.scenarios import ScenarioResult

#: Errors that mean "the broker refused the batch before appending it": a definite ``fail``.
#: Anything else (timeouts, disconnects, NotEnoughReplicasAfterAppend) leaves the write's fate
#: unknown: ``info``.
DEFINITE_FAILURES = (NotEnoughReplicasError, InvalidRecordError, MessageSizeTooLargeError,
                     RecordListTooLargeError, TopicAuthorizationFailedError)

REAL_SCENARIOS: dict[str, Callable[..., ScenarioResult]] = {}
_topic_seq = itertools.count(1)


def real_scenario(fn):
    REAL_SCENARIOS[fn.__name__] = fn
    return fn


def run_real_scenario(cluster, name: str, **kwargs) -> ScenarioResult:
    """Run the named scenario on ``cluster`` (a :class:`~course_lib.real.cluster.LocalCluster`)."""
    try:
        fn = REAL_SCENARIOS[name]
    except KeyError:
        raise ValueError(f"no real scenario {name!r}; choose one of {sorted(REAL_SCENARIOS)}") from None
    result = fn(cluster, **kwargs)
    result.notes["parameters"] = dict(kwargs)
    return result


# ---- recording kafka-python into a History ------------------------------------------------------
class RecordingProducer:
    """A kafka-python ``KafkaProducer`` whose sends are written to a :class:`History`.

    kafka-python completes futures on its I/O thread, so the history is guarded by a lock.
    """

    def __init__(self, cluster, history: History, lock: threading.Lock, process: str,
                 topic: str, **config) -> None:
        self.history, self.lock, self.process, self.topic = history, lock, process, topic
        self.cluster = cluster
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # acks=1 + default idempotence warns; we set it
            self.producer = KafkaProducer(bootstrap_servers=cluster.bootstrap_servers, **config)
        self.futures = []
        self.unfinished = 0

    def send(self, message_id: str, partition: int = 0, evidence: dict | None = None):
        with self.lock:
            op = self.history.invoke(self.process, "send", message_id, topic=self.topic,
                                     partition=partition)
        fut = self.producer.send(self.topic, message_id.encode(), partition=partition)

        def ok(md):
            with self.lock:  # acks=0: no offset comes back (kafka-python reports -1)
                self.history.complete(op, OK, offset=md.offset if md.offset >= 0 else None,
                                      evidence=evidence)

        def err(exc):
            kind = FAIL if isinstance(exc, DEFINITE_FAILURES) else INFO
            with self.lock:
                self.history.complete(op, kind, error=type(exc).__name__, evidence=evidence)

        fut.add_callback(ok)
        fut.add_errback(err)
        self.futures.append(fut)
        return fut

    def flush(self, timeout_s: float = 60) -> None:
        """Wait for every send to complete; sends still open after ``timeout_s`` stay without an
        outcome in the history (the checker treats them as unknown)."""
        from kafka.errors import KafkaTimeoutError
        try:
            self.producer.flush(timeout=timeout_s)
        except KafkaTimeoutError:
            self.unfinished = sum(1 for f in self.futures if not f.is_done)
        deadline = time.monotonic() + 10  # callbacks run right after the futures resolve
        while time.monotonic() < deadline and not all(f.is_done for f in self.futures):
            time.sleep(0.05)

    def close(self) -> None:
        try:
            self.producer.close(timeout=10)
        except Exception:  # sends still open: close() gives up on them after the timeout
            pass


def _settled_end(consumer, tp, pause_s: float) -> int:
    """The partition's end offset once it reads the same twice in a row; positions the consumer
    at the beginning."""
    end = -1
    for _ in range(50):
        now = consumer.end_offsets([tp])[tp]
        if now == end:
            break
        end = now
        time.sleep(pause_s)
    consumer.seek_to_beginning(tp)
    return end


def final_read(cluster, history: History, lock: threading.Lock, topic: str,
               partition: int = 0) -> list:
    """Read the whole partition (offset 0 to the end) and record it as ``final_read``."""
    c = KafkaConsumer(bootstrap_servers=cluster.bootstrap_servers, enable_auto_commit=False,
                      consumer_timeout_ms=3000)
    rows = []
    try:
        tp = TopicPartition(topic, partition)
        c.assign([tp])
        end = _settled_end(c, tp, pause_s=0.2)
        # Read until the settled end offset; if the broker still reports 0 (a leader that has
        # just taken over can), read until nothing arrives for consumer_timeout_ms instead.
        for r in c:
            rows.append([partition, r.offset, r.value.decode()])
            if end > 0 and r.offset + 1 >= end:
                break
    finally:
        c.close()
    with lock:
        history.record("reader", OK, "final_read", value=rows, topic=topic)
    return rows


def _nemesis(history, lock, f: str, **value) -> None:
    with lock:
        history.record("nemesis", INFO, f, value=value)


def _setup(cluster, name: str, topic_cfg: dict):
    topic = cluster.topic(f"{name}-{next(_topic_seq)}-{int(time.time())}")
    cluster.create_topic(topic, min_insync_replicas=topic_cfg["min_insync_replicas"])
    t0 = time.monotonic()
    history = History(clock=lambda: (time.monotonic() - t0) * 1000)
    return topic, history, threading.Lock()


def _finish(name, cluster, history, lock, topic, config, topic_cfg, expected, description,
            **notes) -> ScenarioResult:
    final_read(cluster, history, lock, topic)
    result = check(history, config, topic_cfg)
    return ScenarioResult(name, 0, description, config, topic_cfg, history, result, cluster,
                          set(expected), {"backend": "kafka", "topic": topic, **notes})


def revive(cluster) -> list:
    """Resume every paused broker and restart every stopped one; returns the restarted ids."""
    for node in cluster.nodes.values():
        if node.paused:
            cluster.resume(node.node_id)
    restarted = []
    for node in cluster.nodes.values():
        if not node.running():
            cluster.restart(node.node_id)
            restarted.append(node.node_id)
    return restarted


def _pause_followers(cluster, history, lock, topic: str):
    """SIGSTOP the partition's followers (a long GC pause); returns (leader, followers, evidence)."""
    leader = cluster.leader_of(topic, 0)
    followers = [b for b in cluster.isr_of(topic, 0) if b != leader]
    evidence = _evidence(cluster, topic)
    for b in followers:
        cluster.pause(b)
        _nemesis(history, lock, "pause", broker=b)
    return leader, followers, evidence


def _lose_next_ack(cluster, history, lock, topic: str):
    """Arm the leader's proxy to swallow its next produce response; returns (leader, responses it
    had dropped before), so a scenario counts only its own lost ACK."""
    leader = cluster.leader_of(topic, 0)
    dropped_before = len(cluster.proxy(leader).stats.dropped_responses)
    cluster.drop_next_produce_response(topic, 0)
    _nemesis(history, lock, "lose_ack", broker=leader)
    return leader, dropped_before


def _heal(cluster, history, lock, topic: str, timeout_s: float = 60) -> None:
    """Resume and restart every broker, then wait until the partition's ISR is whole again.

    Right after a restart the leader may answer ListOffsets with a stale end offset (0), so the
    final read waits for recovery first, as Jepsen's final reads do.
    """
    for broker in revive(cluster):
        _nemesis(history, lock, "restart", broker=broker)
    deadline = time.monotonic() + timeout_s
    while len(cluster.isr_of(topic, 0)) < len(cluster.nodes):
        if time.monotonic() > deadline:
            raise RuntimeError(f"{topic}-0 did not get its full ISR back within {timeout_s} s")
        time.sleep(0.2)


def _elected(cluster, history, lock, topic, old_leader) -> int:
    new = cluster.wait_for_leader(topic, 0, not_in=(old_leader,), timeout_s=60)
    info = cluster.partition_info(topic, 0)
    _nemesis(history, lock, "elect", topic=topic, partition=0, leader=new,
             leader_epoch=info.get("leader_epoch", -1), unclean=False)
    return new


def _evidence(cluster, topic) -> dict:
    info = cluster.partition_info(topic, 0)
    return {"leader": info["leader_id"], "leader_epoch": info.get("leader_epoch", -1)}


# ---- the scenarios ------------------------------------------------------------------------------
@real_scenario
def leader_crash_after_ack(cluster, acks=1, messages: int = 10) -> ScenarioResult:
    """The followers freeze (SIGSTOP), the leader acknowledges ``messages`` writes, then is
    SIGKILLed; the followers resume and one of them becomes leader.

    acks=1: the acknowledged writes the followers never fetched are lost. acks='all': none was
    acknowledged before the crash; the producer retries them on the new leader - nothing lost.
    """
    safe = acks in ("all", -1)
    topic_cfg = {"min_insync_replicas": 2 if safe else 1, "unclean_leader_election_enable": False}
    config = ({"acks": acks} if safe else {"acks": acks, "enable_idempotence": False})
    config.update(request_timeout_ms=5000, retry_backoff_ms=100)
    topic, h, lock = _setup(cluster, "leader_crash_after_ack", topic_cfg)
    p = RecordingProducer(cluster, h, lock, "producer-1", topic, **config)
    try:
        for i in range(3):
            p.send(f"warmup-{i}")
        p.flush()
        time.sleep(0.5)  # acks=1 returns before the followers fetch: let them have the warm-up
        # From here the clock runs: the followers are fenced ~3 s after they stop heartbeating,
        # and they must still be in the ISR when the leader dies for a clean election of one
        # of them. Everything up to the kill takes well under a second.
        leader, followers, ev = _pause_followers(cluster, h, lock, topic)
        for i in range(messages):
            p.send(f"m-{i}", evidence=ev)
            time.sleep(0.02)  # one batch per message, as in the simulator
        if not safe:  # wait for the leader's acknowledgements (not for acks=all: they can't come)
            deadline = time.monotonic() + 1.0
            while time.monotonic() < deadline and not all(f.is_done for f in p.futures):
                time.sleep(0.02)
        with lock:
            acked = sum(1 for op in h if op.f == "send" and op.type == OK and op.value.startswith("m-"))
        cluster.kill(leader)
        _nemesis(h, lock, "crash", broker=leader)
        for b in followers:
            cluster.resume(b)
            _nemesis(h, lock, "resume", broker=b)
        new_leader = _elected(cluster, h, lock, topic, leader)
        p.flush()
    finally:
        p.close()
    _heal(cluster, h, lock, topic)
    return _finish("leader_crash_after_ack", cluster, h, lock, topic, config, topic_cfg,
                   set() if safe else {"lost"}, leader_crash_after_ack.__doc__.split("\n\n")[0],
                   crashed_leader=leader, new_leader=new_leader, acked_before_crash=acked)


@real_scenario
def not_enough_replicas(cluster, acks="all", min_insync_replicas: int = 2) -> ScenarioResult:
    """Followers crash until the ISR is smaller than min.insync.replicas. With acks='all' every
    write is refused (NotEnoughReplicas) and the producer is told - nothing is silently lost.
    With acks=1 the remaining replicas accept them.

    Real-cluster difference: every node of the local cluster is also a KRaft controller, so
    killing two of three would kill the controller quorum too - metadata freezes, nobody is
    fenced, the ISR never shrinks and writes just time out. So the real run raises
    min.insync.replicas to 3 and kills one follower: the same mechanism (ISR below
    min.insync.replicas) with the quorum intact.
    """
    safe = acks in ("all", -1)
    real_min_isr = min_insync_replicas + 1
    topic_cfg = {"min_insync_replicas": real_min_isr, "unclean_leader_election_enable": False}
    config = {"acks": acks, "delivery_timeout_ms": 5000, "request_timeout_ms": 1000, "linger_ms": 0}
    if not safe:
        config["enable_idempotence"] = False
    topic, h, lock = _setup(cluster, "not_enough_replicas", topic_cfg)
    leader = cluster.leader_of(topic, 0)
    victims = [b for b in sorted(cluster.nodes) if b != leader][: 3 - min_insync_replicas]
    for b in victims:
        cluster.kill(b)
        _nemesis(h, lock, "crash", broker=b)
    deadline = time.monotonic() + 60
    while any(b in cluster.isr_of(topic, 0) for b in victims):  # fenced after the session timeout
        if time.monotonic() > deadline:
            raise RuntimeError(f"the ISR still holds the killed broker(s) {victims} after 60 s")
        time.sleep(0.2)
    p = RecordingProducer(cluster, h, lock, "producer-1", topic, **config)
    try:
        ev = _evidence(cluster, topic)
        t_send = time.monotonic()
        for i in range(5):
            p.send(f"m-{i}", evidence=ev)
        p.flush(timeout_s=30)
        flush_s = time.monotonic() - t_send
        errors = sorted({type(f.exception).__name__ for f in p.futures if f.failed()})
        failed = sum(1 for f in p.futures if f.failed())
    finally:
        p.close()
    _heal(cluster, h, lock, topic)
    return _finish("not_enough_replicas", cluster, h, lock, topic, config, topic_cfg, set(),
                   not_enough_replicas.__doc__.split("\n\n")[0], errors=errors, failed=failed,
                   unfinished=p.unfinished, flush_s=round(flush_s, 1), killed=victims, min_insync_replicas=real_min_isr)


@real_scenario
def lost_ack_retry(cluster, idempotent: bool = False) -> ScenarioResult:
    """The broker appends a batch but its response (the ACK) is swallowed by the proxy, which
    also cuts the connection; kafka-python retries. Without idempotence the retry is appended
    again (a duplicate); with it the broker recognises the sequence number."""
    topic_cfg = {"min_insync_replicas": 2, "unclean_leader_election_enable": False}
    config = {"acks": "all", "enable_idempotence": idempotent, "request_timeout_ms": 2000,
              "delivery_timeout_ms": 30000}
    topic, h, lock = _setup(cluster, "lost_ack_retry", topic_cfg)
    p = RecordingProducer(cluster, h, lock, "producer-1", topic, **config)
    try:
        for i in range(2):
            p.send(f"m-{i}")
        p.flush()
        leader, dropped_before = _lose_next_ack(cluster, h, lock, topic)
        for i in range(2, 5):
            p.send(f"m-{i}")
        p.flush()
        for i in range(5, 7):
            p.send(f"m-{i}")
        p.flush()
    finally:
        p.close()
    dropped = len(cluster.proxy(leader).stats.dropped_responses) - dropped_before
    return _finish("lost_ack_retry", cluster, h, lock, topic, config, topic_cfg,
                   set() if idempotent else {"duplicate"}, lost_ack_retry.__doc__,
                   dropped_responses=dropped)


@real_scenario
def fire_and_forget_crash(cluster, messages: int = 40) -> ScenarioResult:
    """acks=0: the producer sends a stream and never waits; the leader crashes halfway. Every
    future succeeded (no offset), yet the records sent to the dead leader are gone.

    Real-cluster fault: as in ``leader_crash_after_ack`` the followers are frozen while the first
    half is sent, so the crashed leader alone had it."""
    topic_cfg = {"min_insync_replicas": 1, "unclean_leader_election_enable": False}
    config = {"acks": 0, "enable_idempotence": False, "request_timeout_ms": 5000, "retry_backoff_ms": 100}
    topic, h, lock = _setup(cluster, "fire_and_forget_crash", topic_cfg)
    p = RecordingProducer(cluster, h, lock, "producer-1", topic, **config)
    try:
        p.send("warmup-0")
        p.flush()
        time.sleep(0.5)  # acks=0 waits for nothing: give the followers time to fetch the warm-up
        leader, followers, ev = _pause_followers(cluster, h, lock, topic)
        # A follower frozen while its fetch request waited at the leader still gets the answer
        # into its socket buffer, and appends it when it resumes: the first write after the
        # freeze can survive. Spend it on a bait record, then send one batch per message.
        p.send("bait")
        p.flush()
        time.sleep(0.1)
        for i in range(messages // 2):
            p.send(f"m-{i}", evidence=ev)
            time.sleep(0.01)
        p.flush()
        time.sleep(0.2)  # acks=0: "done" means written to the socket; let the leader append them
        cluster.kill(leader)
        _nemesis(h, lock, "crash", broker=leader)
        for b in followers:
            cluster.resume(b)
            _nemesis(h, lock, "resume", broker=b)
        new_leader = _elected(cluster, h, lock, topic, leader)
        for i in range(messages // 2, messages):
            p.send(f"m-{i}")
            time.sleep(0.01)
        p.flush()
    finally:
        p.close()
    _heal(cluster, h, lock, topic)
    return _finish("fire_and_forget_crash", cluster, h, lock, topic, config, topic_cfg, {"lost"},
                   fire_and_forget_crash.__doc__.split("\n\n")[0], crashed_leader=leader,
                   new_leader=new_leader)


@real_scenario
def producer_restart_gap(cluster) -> ScenarioResult:
    """An idempotent producer's ACK is lost and the application dies before the retry; the
    restarted application sends the message again with a *new* producer id, which the broker
    cannot match to the first copy: a duplicate despite idempotence (transactions close this gap)."""
    topic_cfg = {"min_insync_replicas": 2, "unclean_leader_election_enable": False}
    config = {"acks": "all", "enable_idempotence": True}
    topic, h, lock = _setup(cluster, "producer_restart_gap", topic_cfg)
    # a long backoff keeps the first producer from retrying before the "crash"
    first = RecordingProducer(cluster, h, lock, "producer-1", topic, retry_backoff_ms=10_000,
                              reconnect_backoff_ms=10_000, reconnect_backoff_max_ms=10_000,
                              request_timeout_ms=30_000, **config)
    try:
        for i in range(3):
            first.send(f"m-{i}")
        first.flush()
        leader, dropped_before = _lose_next_ack(cluster, h, lock, topic)
        first.send("m-3")
        deadline = time.monotonic() + 20  # until the broker has appended it and the ACK is gone
        while (len(cluster.proxy(leader).stats.dropped_responses) == dropped_before
               and time.monotonic() < deadline):
            time.sleep(0.02)
    finally:
        kill_producer(first.producer)
    _nemesis(h, lock, "crash_client", client="producer-1")
    second = RecordingProducer(cluster, h, lock, "producer-2", topic, **config)
    try:
        second.send("m-3")  # the application's own resend after its restart
        for i in range(4, 6):
            second.send(f"m-{i}")
        second.flush()
    finally:
        second.close()
    return _finish("producer_restart_gap", cluster, h, lock, topic, config, topic_cfg, {"duplicate"},
                   producer_restart_gap.__doc__,
                   dropped_responses=len(cluster.proxy(leader).stats.dropped_responses) - dropped_before)


# ---- reading and recording consumers -------------------------------------------------------------
def read_partition(cluster, topic: str, partition: int = 0, isolation_level: str = "read_uncommitted",
                   timeout_s: float = 30) -> list:
    """Every record of one partition from offset 0 to its end, as ``[partition, offset, value]``.

    Reads until the consumer's position reaches the end offset (with ``read_committed`` the last
    offsets are transaction markers, which are never returned as records, so waiting for "the
    last record" would wait forever)."""
    c = KafkaConsumer(bootstrap_servers=cluster.bootstrap_servers, enable_auto_commit=False,
                      isolation_level=isolation_level)
    rows = []
    try:
        tp = TopicPartition(topic, partition)
        c.assign([tp])
        end = _settled_end(c, tp, pause_s=0.1)
        deadline = time.monotonic() + timeout_s
        while c.position(tp) < end and time.monotonic() < deadline:
            for records in c.poll(timeout_ms=200).values():
                rows += [[partition, r.offset, r.value.decode()] for r in records]
    finally:
        c.close()
    return rows


def final_read_txn(cluster, history: History, lock: threading.Lock, topic: str) -> list:
    """The final read of a topic written in transactions: ``read_committed``, with the aborted
    records (present read_uncommitted, absent read_committed) listed as evidence, as the
    simulator's final read lists them."""
    everything = read_partition(cluster, topic, isolation_level="read_uncommitted")
    rows = read_partition(cluster, topic, isolation_level="read_committed")
    committed_offsets = {offset for _, offset, _ in rows}
    committed_values = {value for _, _, value in rows}
    aborted = [v for _, offset, v in everything
               if offset not in committed_offsets and v not in committed_values]
    evidence = {"isolation_level": "read_committed", **({"aborted": aborted} if aborted else {})}
    with lock:
        history.record("reader", OK, "final_read", value=rows, topic=topic, evidence=evidence)
    return rows


class _TxnLog:
    """begin/end transaction lines for one transactional producer, as the simulator writes them."""

    def __init__(self, history, lock, process):
        self.history, self.lock, self.process, self.n = history, lock, process, 0

    def begin(self):
        self.n += 1
        with self.lock:
            self.history.record(self.process, OK, "begin_transaction", self.n)

    def end(self, commit: bool):
        with self.lock:
            op = self.history.invoke(self.process, "end_transaction", self.n)
            self.history.complete(op, OK, value={"transaction": self.n, "commit": commit})


def _record_poll(history, lock, process, topic, batches) -> list:
    records = [r for rs in batches.values() for r in rs]
    if records:
        with lock:
            op = history.invoke(process, "poll", None, topic)
            history.complete(op, OK, value=[[r.partition, r.offset, r.value.decode()] for r in records])
    return records


@real_scenario
def aborted_transaction(cluster, isolation_level: str = "read_committed") -> ScenarioResult:
    """A transactional producer commits a transaction, aborts the next, commits a third. A
    read_committed consumer never sees the aborted records; a read_uncommitted one does."""
    topic_cfg = {"min_insync_replicas": 2, "unclean_leader_election_enable": False}
    topic, h, lock = _setup(cluster, "aborted_transaction", topic_cfg)
    txn_id = cluster.transactional_id(f"writer-{topic}")
    config = {"transactional_id": txn_id}
    p = RecordingProducer(cluster, h, lock, "writer", topic, **config)
    txn = _TxnLog(h, lock, "writer")
    try:
        p.producer.init_transactions()
        for label, commit in (("a", True), ("b", False), ("c", True)):
            p.producer.begin_transaction()
            txn.begin()
            for i in range(3):
                p.send(f"{label}-{i}")
            p.flush()
            p.producer.commit_transaction() if commit else p.producer.abort_transaction()
            txn.end(commit)
    finally:
        p.close()
    c = KafkaConsumer(bootstrap_servers=cluster.bootstrap_servers, enable_auto_commit=False,
                      isolation_level=isolation_level, client_id="reader")
    seen = []
    try:
        tp = TopicPartition(topic, 0)
        c.assign([tp])
        c.seek_to_beginning(tp)
        end = c.end_offsets([tp])[tp]
        deadline = time.monotonic() + 20
        while c.position(tp) < end and time.monotonic() < deadline:
            seen += [(r.offset, r.value.decode())
                     for r in _record_poll(h, lock, "reader", topic, c.poll(timeout_ms=200))]
    finally:
        c.close()
    final_read_txn(cluster, h, lock, topic)
    spec = {"semantics": None, "isolation_level": isolation_level, "input": topic}
    result = check(h, config, None, consumer=spec)
    return ScenarioResult("aborted_transaction", 0, aborted_transaction.__doc__, config,
                          {"isolation_level": isolation_level}, h, result, cluster,
                          set() if isolation_level == "read_committed" else {"aborted_read"},
                          {"backend": "kafka", "topic": topic, "seen": seen, "log_end_offset": end})


class _Crash(Exception):
    """The application process dies here."""


class RealProcessor:
    """One instance of a consuming application on real Kafka - the same loop, semantics and crash
    points as :class:`course_lib.processing.Processor`, with kafka-python clients.

    A crash closes the consumer *without committing* (and abandons the transactional producer,
    whose open transaction the next instance's ``init_transactions()`` aborts). Closing leaves
    the group at once; a process that really died would be noticed after ``session_timeout_ms``
    - the same rebalance, later.
    """

    def __init__(self, cluster, history, lock, semantics, sink, number, input_topic, output_topic,
                 group, transactional_id, input_end, crash_point=None, crash_after_polls=1, batch=5):
        self.cluster, self.h, self.lock, self.semantics, self.sink = cluster, history, lock, semantics, sink
        self.name = f"processor-{number}"
        self.input_topic, self.output_topic, self.input_end = input_topic, output_topic, input_end
        self.crash_point, self.crash_after_polls, self.polls = crash_point, crash_after_polls, 0
        self.tp = TopicPartition(input_topic, 0)
        eos = semantics == "exactly-once-kafka"
        self.consumer = KafkaConsumer(
            input_topic, bootstrap_servers=cluster.bootstrap_servers, group_id=group,
            client_id=self.name, enable_auto_commit=False, auto_offset_reset="earliest",
            max_poll_records=batch, isolation_level="read_committed" if eos else "read_uncommitted",
            session_timeout_ms=6000, heartbeat_interval_ms=1000)
        self.producer = self.txn = None
        if eos:
            self.producer = KafkaProducer(bootstrap_servers=cluster.bootstrap_servers,
                                          transactional_id=transactional_id, client_id=f"{self.name}-producer",
                                          retry_backoff_ms=20)
            self.producer.init_transactions()  # fences an older instance, aborts its open transaction
            self.txn = _TxnLog(history, lock, self.name)

    def _maybe_crash(self, point):
        if point == self.crash_point and self.polls >= self.crash_after_polls:
            raise _Crash(point)

    def _caught_up(self) -> bool:
        try:
            return self.tp in self.consumer.assignment() and self.consumer.position(self.tp) >= self.input_end
        except Exception:
            return False

    def process(self, r) -> None:
        message = r.value.decode()
        if self.producer is not None:
            self.producer.send(self.output_topic, r.value, partition=0)
        else:
            self.sink.append(message)
            with self.lock:
                self.h.record(self.name, OK, "process", message, topic=r.topic, partition=r.partition,
                              offset=r.offset)

    def _offsets(self):
        from kafka.structs import OffsetAndMetadata
        return {self.tp: OffsetAndMetadata(self.consumer.position(self.tp), "", -1)}

    def _commit(self) -> bool:
        from kafka.errors import CommitFailedError
        offsets = self._offsets()
        with self.lock:
            op = self.h.invoke(self.name, "commit", [[self.input_topic, 0, offsets[self.tp].offset]])
        try:
            self.consumer.commit(offsets)
        except CommitFailedError as e:
            with self.lock:
                self.h.complete(op, FAIL, error=type(e).__name__)
            return False
        with self.lock:
            self.h.complete(op, OK)
        return True

    def commit_transaction(self) -> None:
        offsets = self._offsets()
        self.producer.send_offsets_to_transaction(offsets, self.consumer.group_metadata())
        self.producer.commit_transaction()
        self.txn.end(True)
        with self.lock:
            self.h.record(self.name, OK, "commit", [[self.input_topic, 0, offsets[self.tp].offset]])

    def run(self, max_polls: int = 300) -> None:
        for _ in range(max_polls):
            records = _record_poll(self.h, self.lock, self.name, self.input_topic,
                                   self.consumer.poll(timeout_ms=300))
            if not records:
                if self._caught_up():
                    return
                continue
            self.polls += 1
            self._maybe_crash("after_poll")
            if self.semantics == "at-most-once":
                if not self._commit():
                    continue
                self._maybe_crash("after_commit")
            if self.producer is not None:
                self.producer.begin_transaction()
                self.txn.begin()
            for i, r in enumerate(records):
                if i == len(records) // 2:
                    self._maybe_crash("mid_batch")
                self.process(r)
            self._maybe_crash("after_process")
            if self.semantics == "at-least-once":
                self._commit()
            elif self.producer is not None:
                self.commit_transaction()
            if self.semantics != "at-most-once":
                self._maybe_crash("after_commit")
        raise RuntimeError(f"{self.name} did not reach the end of {self.input_topic} in {max_polls} polls")

    def crash(self) -> None:
        with self.lock:
            self.h.record("nemesis", INFO, "crash_client", {"client": self.name})
        self.consumer.close(autocommit=False)
        if self.producer is not None:  # abandoned with its transaction open; no abort
            _abandon(self.producer)

    def close(self) -> None:
        self.consumer.close(autocommit=False)
        if self.producer is not None:
            self.producer.close(timeout=10)


def _abandon(producer) -> None:
    """Let the sends already made reach the log (uncommitted), then drop the producer without
    ending its transaction - what a crashed process leaves behind."""
    from kafka.errors import KafkaError
    try:
        producer.flush(timeout=10)
    except KafkaError:
        pass
    kill_producer(producer)


def kill_producer(producer) -> None:
    """Stop a kafka-python producer the way a crash would: no flush, no retries of what is still
    in flight (its futures fail), no ending of an open transaction."""
    from kafka.errors import KafkaError
    sender = getattr(producer, "_sender", None)
    if sender is not None and sender.is_alive():
        sender.force_close()
        sender.join(10)
    try:
        producer.close(timeout=0)
    except KafkaError:  # close() flushes first; after force_close nothing is left to send
        pass


def _load_input(cluster, name, messages, eos):
    """Topics, group and transactional id of one pipeline run; the input loaded (acks=all)."""
    topic_cfg = {"min_insync_replicas": 2, "unclean_leader_election_enable": False}
    input_topic, h2, lock2 = _setup(cluster, name, topic_cfg)
    output_topic = None
    if eos:
        output_topic = input_topic + "-out"
        cluster.create_topic(output_topic, min_insync_replicas=2)
    loader = RecordingProducer(cluster, h2, lock2, "loader", input_topic, acks="all")
    try:
        for i in range(messages):
            loader.send(f"msg-{i}")
        loader.flush()
    finally:
        loader.close()
    return input_topic, output_topic, h2, lock2, cluster.group_id(f"processors-{input_topic}"), \
        cluster.transactional_id(f"processor-{input_topic}")


def _judge_pipeline(name, description, cluster, h, lock, semantics, input_topic, output_topic, sink,
                    expected, **notes) -> ScenarioResult:
    final_read(cluster, h, lock, input_topic)
    if output_topic is not None:
        final_read_txn(cluster, h, lock, output_topic)
        sink_name, isolation = output_topic, "read_committed"
    else:
        with lock:
            h.record("final-reader", OK, "final_read", [[0, i, m] for i, m in enumerate(sink)],
                     topic="sink:list")
        sink_name, isolation = "sink:list", "read_uncommitted"
    spec = {"semantics": semantics, "isolation_level": isolation, "input": input_topic, "output": sink_name}
    result = check(h, {"acks": "all"}, None, consumer=spec)
    return ScenarioResult(name, 0, description, {"semantics": semantics}, {}, h, result, cluster,
                          set(expected), {"backend": "kafka", "topic": input_topic, **notes})


@real_scenario
def consumer_crash(cluster, semantics: str = "at-least-once", crash_point: str = "after_process",
                   messages: int = 20, batch: int = 5) -> ScenarioResult:
    """A consuming application crashes at ``crash_point`` after its first poll and is restarted
    (a new consumer in the same group); its output is compared with its input."""
    from course_lib.scenarios import CONSUMER_EXPECTED
    eos = semantics == "exactly-once-kafka"
    if semantics not in ("at-most-once", "at-least-once", "exactly-once-kafka"):
        raise ValueError(f"real consumer_crash runs at-most-once, at-least-once or exactly-once-kafka, "
                         f"not {semantics!r}")
    input_topic, output_topic, h, lock, group, txn_id = _load_input(
        cluster, "consumer_crash", messages, eos)
    sink: list = []
    crashes = []
    for number in (1, 2, 3):
        proc = RealProcessor(cluster, h, lock, semantics, sink, number, input_topic, output_topic, group,
                             txn_id, messages, crash_point=crash_point if number == 1 else None, batch=batch)
        try:
            proc.run()
            proc.close()
            break
        except _Crash as crash:
            proc.crash()
            crashes.append({"instance": number, "point": str(crash), "after_polls": proc.polls})
        except BaseException:
            proc.close()
            raise
    expected = set() if eos else CONSUMER_EXPECTED[(semantics, crash_point)]
    return _judge_pipeline("consumer_crash", consumer_crash.__doc__, cluster, h, lock, semantics,
                           input_topic, output_topic, sink, expected, crashes=crashes)


@real_scenario
def consume_transform_produce(cluster, crash_point: str = "mid_batch") -> ScenarioResult:
    """Read, transform, write to another topic in a transaction that also commits the consumed
    offsets; crash anywhere; exactly once in the output."""
    r = consumer_crash(cluster, "exactly-once-kafka", crash_point)
    r.name, r.description = "consume_transform_produce", consume_transform_produce.__doc__
    return r


@real_scenario
def zombie_fencing(cluster, messages: int = 10) -> ScenarioResult:
    """Instance A of a consume-transform-produce app freezes in the middle of a transaction; B
    replaces it with the same transactional_id, which fences A and aborts its open transaction.
    A wakes up and tries to commit: ProducerFenced. The output has every input once.

    Real-cluster shortcut: A's consumer is closed when it "freezes" (a frozen consumer leaves the
    group after max.poll.interval.ms; closing it skips that wait). Its producer stays open."""
    input_topic, output_topic, h, lock, group, txn_id = _load_input(
        cluster, "zombie_fencing", messages, True)
    zombie = RealProcessor(cluster, h, lock, "exactly-once-kafka", None, 1, input_topic, output_topic,
                           group, txn_id, messages)
    fenced = None
    try:
        batch = []
        for _ in range(100):
            batch = _record_poll(h, lock, zombie.name, input_topic, zombie.consumer.poll(timeout_ms=300))
            if batch:
                break
        zombie.producer.begin_transaction()
        zombie.txn.begin()
        for r in batch:
            zombie.process(r)
        zombie.producer.flush()  # its outputs are in the log, uncommitted
        offsets, metadata = zombie._offsets(), zombie.consumer.group_metadata()
        _nemesis(h, lock, "freeze", client=zombie.name)
        zombie.consumer.close(autocommit=False)
        replacement = RealProcessor(cluster, h, lock, "exactly-once-kafka", None, 2, input_topic,
                                    output_topic, group, txn_id, messages)  # init_transactions fences A
        try:
            replacement.run()
        finally:
            replacement.close()
        _nemesis(h, lock, "wake", client=zombie.name)
        try:
            zombie.producer.send_offsets_to_transaction(offsets, metadata)
            zombie.producer.commit_transaction()
            zombie.txn.end(True)
        except Exception as exc:  # ProducerFencedError
            fenced = type(exc).__name__
    finally:
        _abandon(zombie.producer)
    return _judge_pipeline("zombie_fencing", zombie_fencing.__doc__.split("\n\n")[0], cluster, h, lock,
                           "exactly-once-kafka", input_topic, output_topic, None, set(),
                           zombie_error=fenced)


# ---- simulator vs real --------------------------------------------------------------------------
#: (scenario name, keyword arguments) pairs that run on both backends.
FIDELITY_CASES: list[tuple[str, dict]] = [
    ("leader_crash_after_ack", {"acks": 1}),
    ("leader_crash_after_ack", {"acks": "all"}),
    ("not_enough_replicas", {"acks": "all"}),
    ("not_enough_replicas", {"acks": 1}),
    ("lost_ack_retry", {"idempotent": False}),
    ("lost_ack_retry", {"idempotent": True}),
    ("fire_and_forget_crash", {}),
    ("producer_restart_gap", {}),
    ("aborted_transaction", {"isolation_level": "read_committed"}),
    ("aborted_transaction", {"isolation_level": "read_uncommitted"}),
    ("zombie_fencing", {}),
    ("consumer_crash", {"semantics": "at-most-once", "crash_point": "after_commit"}),
    ("consumer_crash", {"semantics": "at-least-once", "crash_point": "after_process"}),
    ("consume_transform_produce", {"crash_point": "mid_batch"}),
]


#: scenarios whose faults (kill, pause, lost ACK) need the local cluster
FAULT_SCENARIOS = ("leader_crash_after_ack", "not_enough_replicas", "lost_ack_retry",
                   "fire_and_forget_crash", "producer_restart_gap")


def fidelity_table(cluster, cases=FIDELITY_CASES, seed: int = 0, reuse=(), skip=()) -> list[dict]:
    """Run each case in the simulator and on ``cluster``; one row per case.

    A row ``agrees`` when both backends found the same anomaly classes. ``reuse``: real results
    already run (by :func:`run_real_scenario`) for some cases, which are then not run again.
    ``skip``: scenario names not to run (e.g. the fault scenarios on a shared cluster).
    """
    from tqdm.auto import tqdm

    from course_lib.scenarios import run_scenario
    rows = []
    done = {(r.name, repr(sorted(r.notes.get("parameters", {}).items()))): r for r in reuse}
    cases = [(n, kw) for n, kw in cases if n not in skip]
    for name, kwargs in tqdm(cases, desc="sim vs real Kafka", leave=False):
        sim = run_scenario(name, seed=seed, **kwargs)
        real = done.get((name, repr(sorted(kwargs.items())))) or run_real_scenario(cluster, name, **kwargs)
        rows.append({"scenario": name, "parameters": kwargs, "expected": sorted(sim.expected),
                     "simulator": sorted(sim.result.found), "real Kafka": sorted(real.result.found),
                     "agree": sim.result.found == real.result.found,
                     "real outcome": real.result.outcome_table(), "real": real, "sim": sim})
    return rows
