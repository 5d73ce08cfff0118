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
- ``lost_ack_retry``: the lost-ACK proxy swallows one produce response and cuts the connection.

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
    return fn(cluster, **kwargs)


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
            with self.lock:
                self.history.complete(op, OK, offset=md.offset, evidence=evidence)

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


def final_read(cluster, history: History, lock: threading.Lock, topic: str,
               partition: int = 0) -> list:
    """Read the whole partition (offset 0 to the end) and record it as ``final_read``."""
    c = KafkaConsumer(bootstrap_servers=cluster.bootstrap_servers, enable_auto_commit=False,
                      consumer_timeout_ms=3000)
    rows = []
    try:
        tp = TopicPartition(topic, partition)
        c.assign([tp])
        end = -1
        for _ in range(50):  # the end offset must be the same twice in a row: settled
            now = c.end_offsets([tp])[tp]
            if now == end:
                break
            end = now
            time.sleep(0.2)
        c.seek_to_beginning(tp)
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


def _heal(cluster, history, lock, topic: str, timeout_s: float = 60) -> None:
    """Resume and restart every broker, then wait until the partition's ISR is whole again.

    Right after a restart the leader may answer ListOffsets with a stale end offset (0), so the
    final read waits for recovery first, as Jepsen's final reads do.
    """
    for node in cluster.nodes.values():
        if node.paused:
            cluster.resume(node.node_id)
    for node in cluster.nodes.values():
        if not node.running():
            cluster.restart(node.node_id)
            _nemesis(history, lock, "restart", broker=node.node_id)
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
        leader = cluster.leader_of(topic, 0)
        followers = [b for b in cluster.isr_of(topic, 0) if b != leader]
        ev = _evidence(cluster, topic)
        # From here the clock runs: the followers are fenced ~3 s after they stop heartbeating,
        # and they must still be in the ISR when the leader dies for a clean election of one
        # of them. Everything up to the kill takes well under a second.
        for b in followers:
            cluster.pause(b)
            _nemesis(h, lock, "pause", broker=b)
        for i in range(messages):
            p.send(f"m-{i}", evidence=ev)
            time.sleep(0.02)  # one batch per message, as in the simulator
        if not safe:  # wait for the leader's acknowledgements (not for acks=all: they can't come)
            deadline = time.monotonic() + 1.0
            while time.monotonic() < deadline and not all(f.is_done for f in p.futures):
                time.sleep(0.02)
        with lock:
            acked = sum(1 for op in h if op.f == "send" and op.type == OK)
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
        leader = cluster.drop_next_produce_response(topic, 0)
        _nemesis(h, lock, "lose_ack", broker=leader)
        for i in range(2, 5):
            p.send(f"m-{i}")
        p.flush()
        for i in range(5, 7):
            p.send(f"m-{i}")
        p.flush()
    finally:
        p.close()
    dropped = len(cluster.proxy(leader).stats.dropped_responses)
    return _finish("lost_ack_retry", cluster, h, lock, topic, config, topic_cfg,
                   set() if idempotent else {"duplicate"}, lost_ack_retry.__doc__,
                   dropped_responses=dropped)


# ---- simulator vs real --------------------------------------------------------------------------
#: (scenario name, keyword arguments) pairs that run on both backends.
FIDELITY_CASES: list[tuple[str, dict]] = [
    ("leader_crash_after_ack", {"acks": 1}),
    ("leader_crash_after_ack", {"acks": "all"}),
    ("not_enough_replicas", {"acks": "all"}),
    ("not_enough_replicas", {"acks": 1}),
    ("lost_ack_retry", {"idempotent": False}),
    ("lost_ack_retry", {"idempotent": True}),
]


def fidelity_table(cluster, cases=FIDELITY_CASES, seed: int = 0) -> list[dict]:
    """Run each case in the simulator and on ``cluster``; one row per case.

    A row ``agrees`` when both backends found the same anomaly classes.
    """
    from tqdm.auto import tqdm

    from course_lib.scenarios import run_scenario
    rows = []
    for name, kwargs in tqdm(cases, desc="sim vs real Kafka", leave=False):
        sim = run_scenario(name, seed=seed, **kwargs)
        real = run_real_scenario(cluster, name, **kwargs)
        rows.append({"scenario": name, "parameters": kwargs, "expected": sorted(sim.expected),
                     "simulator": sorted(sim.result.found), "real Kafka": sorted(real.result.found),
                     "agree": sim.result.found == real.result.found,
                     "real outcome": real.result.outcome_table(), "real": real, "sim": sim})
    return rows
