"""The fidelity experiments: the same steps on the simulator and on real Kafka, one observable
outcome each - what was acknowledged, what a consumer could read, which error the application saw.

Each experiment takes a :class:`course_lib.backend.Backend` and returns a plain dict; the
differential tests (tests/real/test_fidelity_differential.py) assert that both backends return
the same dict, and tests/test_fidelity.py asserts the simulator's against what Kafka 4.3.1 and
kafka-python 3.0.12 were measured to do (issue 11):

>>> from course_lib.backend import SimBackend
>>> strict_min_isr_high_watermark(SimBackend.start(seed=1, **SIM_TIMING))
{'acknowledged': 5, 'read': 0, 'isr': 2}

``SIM_TIMING`` gives the simulator the lab cluster's timeouts (course_lib/real/cluster.py), so
"wait until the ISR shrinks" means the same on both.
"""
from __future__ import annotations

import contextlib

from kafka.structs import TopicPartition

#: the lab cluster's broker settings that decide how fast the ISR shrinks
SIM_TIMING = {"broker_session_timeout_ms": 3000, "broker_heartbeat_interval_ms": 500,
              "replica_lag_time_max_ms": 10_000}


def outcome(future) -> str:
    """``"ok"``, the error's class name, or ``"pending"``: what the application can see."""
    if not future.is_done:
        return "pending"
    return "ok" if future.succeeded() else type(future.exception).__name__


def _follower(b, topic: str, n: int = 0) -> int:
    leader = b.leader_of(topic)
    return [r for r in b.replicas_of(topic) if r != leader][n]


def _shrink_isr(b, topic: str, to: int) -> None:
    """Kill followers until the ISR has ``to`` members (the controller fences them)."""
    n = 0
    while len(b.replicas_of(topic)) - n > to:
        b.crash(_follower(b, topic, n))
        n += 1
    if not b.wait_until(lambda: len(b.isr_of(topic)) == to, timeout_ms=60_000):
        raise RuntimeError(f"the ISR of {topic} did not shrink to {to} members: {b.isr_of(topic)}")


def read_for(b, topic: str, ms: float, isolation_level: str = "read_uncommitted") -> list[bytes]:
    """What a consumer (``assign``, ``earliest``) reads from partition 0 within ``ms``."""
    consumer = b.consumer(auto_offset_reset="earliest", enable_auto_commit=False,
                          isolation_level=isolation_level)
    consumer.assign([TopicPartition(topic, 0)])
    values: list[bytes] = []
    end = b.now_ms + ms
    while b.now_ms < end:
        for records in consumer.poll(timeout_ms=500).values():
            values.extend(r.value for r in records)
    consumer.close()
    return values


# ---- point 1 ------------------------------------------------------------------------------------
def strict_min_isr_high_watermark(b) -> dict:
    """RF=3, min.insync.replicas=3, ISR shrunk to 2, five acks=1 sends, a consumer polls 10 s.
    Kafka >= 3.7 (KAFKA-15583) acknowledges all five and lets the consumer read none: the HW
    does not advance while the ISR is below min ISR."""
    topic = b.create_topic("strict-hw", replication_factor=3, min_insync_replicas=3)
    _shrink_isr(b, topic, 2)
    producer = b.producer(acks=1, enable_idempotence=False, request_timeout_ms=5000)
    futures = [producer.send(topic, f"v{i}".encode()) for i in range(5)]
    producer.flush()
    producer.close()
    read = read_for(b, topic, 10_000)
    return {"acknowledged": sum(outcome(f) == "ok" for f in futures), "read": len(read),
            "isr": len(b.isr_of(topic))}


# ---- point 3 ------------------------------------------------------------------------------------
def transaction_with_a_failed_send(b) -> dict:
    """Topic a (min ISR 2) and b (min ISR 3), one broker killed, a transactional producer sends
    a:x and b:y, flushes and commits. kafka-python: y's future fails (KafkaTimeoutError,
    "Expiring 1 record(s)"), commit_transaction() returns normally, a read_committed consumer
    sees x in a and nothing in b."""
    topic_a = b.create_topic("txn-a", replication_factor=3, min_insync_replicas=2)
    topic_b = b.create_topic("txn-b", replication_factor=3, min_insync_replicas=3)
    victim = _follower(b, topic_b)
    b.crash(victim)
    b.wait_until(lambda: victim not in b.isr_of(topic_b) and victim not in b.isr_of(topic_a), timeout_ms=60_000)
    producer = b.producer(transactional_id=b.transactional_id("fidelity-txn"), delivery_timeout_ms=5000,
                          request_timeout_ms=1000)
    producer.init_transactions()
    producer.begin_transaction()
    x = producer.send(topic_a, b"x")
    y = producer.send(topic_b, b"y")
    producer.flush()
    try:
        producer.commit_transaction()
        commit = "ok"
    except Exception as exc:  # noqa: BLE001 - which error the application sees is the outcome
        commit = type(exc).__name__
    producer.close()
    return {"x": outcome(x), "y": outcome(y), "commit": commit,
            "read_committed_a": read_for(b, topic_a, 5000, "read_committed"),
            "read_committed_b": read_for(b, topic_b, 5000, "read_committed")}


# ---- point 4 ------------------------------------------------------------------------------------
def idempotent_batch_expired(b) -> dict:
    """An idempotent producer's batch is retried (NotEnoughReplicas) until delivery_timeout_ms
    expires it; then the ISR recovers and the next, innocent batch is sent. kafka-python resets
    its producer id and the next batch succeeds."""
    topic = b.create_topic("expired", replication_factor=3, min_insync_replicas=3)
    victim = _follower(b, topic)
    b.crash(victim)
    b.wait_until(lambda: len(b.isr_of(topic)) == 2, timeout_ms=60_000)
    producer = b.producer(acks="all", enable_idempotence=True, delivery_timeout_ms=3000,
                          request_timeout_ms=1000, retry_backoff_ms=100, linger_ms=0)
    first = producer.send(topic, b"first")
    producer.flush()
    b.restart(victim)
    b.wait_until(lambda: len(b.isr_of(topic)) == 3, timeout_ms=60_000)
    second = producer.send(topic, b"second")
    producer.flush()
    producer.close()
    return {"first": outcome(first), "second": outcome(second), "read": read_for(b, topic, 3000)}


# ---- point 9 ------------------------------------------------------------------------------------
def zombie_transactional_send(b) -> dict:
    """Two producers with one transactional.id: the second init_transactions() fences the first;
    the zombie's next send and its commit. Kafka answers the produce INVALID_PRODUCER_EPOCH;
    kafka-python tries to bump its epoch, the coordinator answers PRODUCER_FENCED, and the
    producer is in a fatal state: the commit raises a plain ``KafkaError`` ("Cannot execute
    transactional method because we are in an error state: ProducerFencedError...")."""
    topic = b.create_topic("zombie", replication_factor=3, min_insync_replicas=2)
    tid = b.transactional_id("fidelity-zombie")
    zombie = b.producer(transactional_id=tid, request_timeout_ms=2000)
    zombie.init_transactions()
    zombie.begin_transaction()
    zombie.send(topic, b"before")
    zombie.flush()
    successor = b.producer(transactional_id=tid)
    successor.init_transactions()
    late = zombie.send(topic, b"late")
    with contextlib.suppress(Exception):  # kafka-python may raise here instead of failing the future
        zombie.flush()
    try:
        zombie.commit_transaction()
        commit = "ok"
    except Exception as exc:  # noqa: BLE001
        commit = type(exc).__name__
    zombie.close()
    successor.close()
    return {"late": outcome(late), "commit": commit, "read_committed": read_for(b, topic, 3000, "read_committed")}


# ---- point 2 ------------------------------------------------------------------------------------
def elr_clean_election(b) -> dict:
    """KIP-966. RF=3, min ISR 2, three acknowledged records. Kill follower f1 (ISR {L, f2}), pause
    f2 (fenced: ISR {L}, ELR {f2}), kill the leader (ISR empty, ELR {L, f2}), resume f2: the
    controller elects f2 from the ELR - a clean election, nothing acknowledged lost. Before ELR
    (Kafka < 4.1) the partition stayed offline until the old leader came back.

    On real Kafka the controller quorum must survive two dead brokers: a LocalCluster with
    separate controller processes."""
    topic = b.create_topic("elr", replication_factor=3, min_insync_replicas=2)
    producer = b.producer(acks="all")
    futures = [producer.send(topic, f"v{i}".encode()) for i in range(3)]
    producer.flush()
    producer.close()
    leader, f1, f2 = b.leader_of(topic), _follower(b, topic, 0), _follower(b, topic, 1)
    b.crash(f1)
    b.wait_until(lambda: b.isr_of(topic) == sorted([leader, f2]), timeout_ms=60_000)
    b.pause(f2)
    b.wait_until(lambda: b.isr_of(topic) == [leader], timeout_ms=60_000)
    b.crash(leader)
    offline = b.wait_until(lambda: b.leader_of(topic) is None, timeout_ms=60_000)
    b.resume(f2)
    b.wait_until(lambda: b.leader_of(topic) is not None, timeout_ms=60_000)
    new_leader = b.leader_of(topic)
    read = read_for(b, topic, 5000)
    return {"acknowledged": sum(outcome(f) == "ok" for f in futures), "offline_after_leader_died": offline,
            "new_leader_is_the_paused_follower": new_leader == f2, "read": len(read)}
