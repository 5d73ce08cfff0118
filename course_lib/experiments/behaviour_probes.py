"""Probes of single Kafka behaviours (a strict min ISR, an ELR election, a failed send in a
transaction, a zombie producer...): the same steps on the simulator and on real Kafka, one
observable outcome each - what was acknowledged, what a consumer could read, which error the
application saw. (Whole scenarios side by side: :mod:`course_lib.experiments.fidelity`.)

Each experiment takes a :class:`course_lib.backend.Backend` and returns a
:class:`~course_lib.judge.result.Result` whose ``numbers`` are what was seen; the differential
tests (tests/real/test_fidelity_differential.py) assert that both backends see the same, and
tests/test_fidelity.py asserts the simulator's against what Kafka 4.3.1 and kafka-python 3.0.12
were measured to do (issue 11):

>>> from course_lib.backend import SimBackend
>>> strict_min_isr_high_watermark(SimBackend.start(seed=1, **SIM_TIMING)).numbers
{'acknowledged': 5, 'read': 0, 'isr': 2}

``SIM_TIMING`` gives the simulator the lab profile's timeouts (course_lib/clusters/lab.py), so
"wait until the ISR shrinks" means the same on both.
"""

from __future__ import annotations

import contextlib

from course_lib.experiments.registry import experiment, measured
from course_lib.judge.result import Result
from kafka.errors import KafkaTimeoutError
from kafka.structs import TopicPartition

from course_lib.clusters.lab import FAILURE_DETECTION, simulator_options

#: the lab profile's broker settings that decide how fast the ISR shrinks (course_lib/clusters/lab.py)
SIM_TIMING = simulator_options(FAILURE_DETECTION)


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
    consumer = b.consumer(auto_offset_reset="earliest", enable_auto_commit=False, isolation_level=isolation_level)
    consumer.assign([TopicPartition(topic, 0)])
    values: list[bytes] = []
    end = b.now_ms + ms
    while b.now_ms < end:
        for records in consumer.poll(timeout_ms=500).values():
            values.extend(r.value for r in records)
    consumer.close()
    return values


# ---- point 1 ------------------------------------------------------------------------------------
@experiment("probe", "producer")
def strict_min_isr_high_watermark(b) -> Result:
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
    return measured(
        strict_min_isr_high_watermark,
        {"acknowledged": sum(outcome(f) == "ok" for f in futures), "read": len(read), "isr": len(b.isr_of(topic))},
    )


# ---- point 3 ------------------------------------------------------------------------------------
@experiment("probe", "producer")
def transaction_with_a_failed_send(b) -> Result:
    """Topic a (min ISR 2) and b (min ISR 3), one broker killed, a transactional producer sends
    a:x and b:y, flushes and commits. kafka-python: y's future fails (KafkaTimeoutError,
    "Expiring 1 record(s)"), commit_transaction() returns normally, a read_committed consumer
    sees x in a and nothing in b."""
    topic_a = b.create_topic("txn-a", replication_factor=3, min_insync_replicas=2)
    topic_b = b.create_topic("txn-b", replication_factor=3, min_insync_replicas=3)
    victim = _follower(b, topic_b)
    b.crash(victim)
    b.wait_until(lambda: victim not in b.isr_of(topic_b) and victim not in b.isr_of(topic_a), timeout_ms=60_000)
    producer = b.producer(
        transactional_id=b.transactional_id("fidelity-txn"), delivery_timeout_ms=5000, request_timeout_ms=1000
    )
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
    return measured(
        transaction_with_a_failed_send,
        {
            "x": outcome(x),
            "y": outcome(y),
            "commit": commit,
            "read_committed_a": read_for(b, topic_a, 5000, "read_committed"),
            "read_committed_b": read_for(b, topic_b, 5000, "read_committed"),
        },
    )


# ---- point 4 ------------------------------------------------------------------------------------
@experiment("probe", "producer")
def idempotent_batch_expired(b) -> Result:
    """An idempotent producer's batch is retried (NotEnoughReplicas) until delivery_timeout_ms
    expires it; then the ISR recovers and the next, innocent batch is sent - or not.

    kafka-python 3.0.12 resets its producer id after the expired batch (it may have been
    appended, so the partition's sequence is unknown) but never asks for a new one: the id is
    requested only while the transaction manager is UNINITIALIZED, and the reset leaves it
    READY. Without an id its sender drains nothing and expires nothing, so the next batch stays
    unsent - still "pending" 10 s later, more than three times its delivery_timeout_ms. close(timeout=0)
    then raises (the batch is unfinished) and leaves the producer open: the backend's clean-up
    stops it. Java bumps the epoch and sends it.

    ``retry_backoff_ms=1000`` puts the delivery timeout (3 s) inside a backoff, never inside a
    request: attempts go at about 0, 1, 2 and 3 s plus three round trips. A batch in flight when
    its timeout passes ends differently in kafka-python: if the broker's NotEnoughReplicas answer
    is handled before the sender's next expiry check (a loaded machine), the batch fails with that
    error, the producer id is kept and the next batch is sent."""
    topic = b.create_topic("expired", replication_factor=3, min_insync_replicas=3)
    victim = _follower(b, topic)
    b.crash(victim)
    b.wait_until(lambda: len(b.isr_of(topic)) == 2, timeout_ms=60_000)
    producer = b.producer(
        acks="all",
        enable_idempotence=True,
        delivery_timeout_ms=3000,
        request_timeout_ms=1000,
        retry_backoff_ms=1000,
        linger_ms=0,
    )
    first = producer.send(topic, b"first")
    producer.flush()
    b.restart(victim)
    b.wait_until(lambda: len(b.isr_of(topic)) == 3, timeout_ms=60_000)
    second = producer.send(topic, b"second")
    with contextlib.suppress(KafkaTimeoutError):  # flush() gives up: the batch is never sent
        producer.flush(timeout=10)
    after_10s = outcome(second)
    try:  # kafka-python 3.0.12 flushes first and raises before it stops anything: still open
        producer.close(timeout=0)
        close = "closed"
    except KafkaTimeoutError:
        close = "KafkaTimeoutError"
    return measured(
        idempotent_batch_expired,
        {
            "first": outcome(first),
            "second_after_10s": after_10s,
            "close(timeout=0)": close,
            "read": read_for(b, topic, 3000),
        },
    )


@experiment("probe", "producer")
def close_with_a_record_unfinished(b) -> Result:
    """close(timeout=0) while a record waits for the ISR to grow back.

    kafka-python 3.0.12's close() flushes first and raises ``KafkaTimeoutError`` before it stops
    anything: the producer stays open, takes the next send and delivers both once the ISR is
    back, and a later close() closes it. (Java's close(timeout) gives up on what is left and
    fails it.) This is the client's own code, so the wire column runs the very client."""
    topic = b.create_topic("closing", replication_factor=3, min_insync_replicas=3)
    _shrink_isr(b, topic, to=2)
    victim = next(r for r in b.replicas_of(topic) if r not in b.isr_of(topic))
    producer = b.producer(acks="all", linger_ms=0)
    first = producer.send(topic, b"first")
    try:
        producer.close(timeout=0)
        close = "closed"
    except KafkaTimeoutError:
        close = "KafkaTimeoutError"
    second = producer.send(topic, b"second")
    b.restart(victim)
    b.wait_until(lambda: len(b.isr_of(topic)) == 3, timeout_ms=60_000)
    producer.close()
    return measured(
        close_with_a_record_unfinished,
        {
            "close(timeout=0)": close,
            "first": outcome(first),
            "second": outcome(second),
            "read": read_for(b, topic, 3000),
        },
    )


# ---- point 9 ------------------------------------------------------------------------------------
@experiment("probe", "producer")
def zombie_transactional_send(b) -> Result:
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
    return measured(
        zombie_transactional_send,
        {"late": outcome(late), "commit": commit, "read_committed": read_for(b, topic, 3000, "read_committed")},
    )


# ---- point 2 ------------------------------------------------------------------------------------
@experiment("probe", "producer")
def elr_clean_election(b) -> Result:
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
    b.wait(5000)  # fenced: ISR empty, ELR {leader, f2}; no broker is up to say so
    b.resume(f2)
    # the first answer may come from f2's stale metadata (the dead leader): wait for another
    b.wait_until(lambda: b.leader_of(topic) not in (None, leader), timeout_ms=60_000)
    new_leader = b.leader_of(topic)
    read = read_for(b, topic, 5000)
    return measured(
        elr_clean_election,
        {
            "acknowledged": sum(outcome(f) == "ok" for f in futures),
            "new_leader_is_the_paused_follower": new_leader == f2,
            "read": len(read),
        },
    )


# ---- point 5 ------------------------------------------------------------------------------------
@experiment("probe", "producer")
def acks0_to_a_deposed_leader(b) -> Result:
    """acks=0: the leader freezes (SIGSTOP) until the controller replaces it, then wakes up -
    alive but deposed. Kafka closes the connection on the first acks=0 produce it refuses and
    kafka-python moves to the new leader: only what went to the old leader around the election is
    lost, every record sent a second after the wake-up is kept."""
    topic = b.create_topic("acks0", replication_factor=3, min_insync_replicas=1)
    producer = b.producer(acks=0, enable_idempotence=False, linger_ms=0)
    producer.send(topic, b"warm-up")
    producer.flush()  # the producer knows the leader
    old = b.leader_of(topic)
    b.pause(old)
    b.wait_until(lambda: b.leader_of(topic) not in (None, old), timeout_ms=60_000)
    b.resume(old)
    sent = [f"v{i}" for i in range(20)]
    for value in sent:
        producer.send(topic, value.encode())
        b.wait(100)
    producer.flush()
    producer.close()
    kept = {value for _, _, value in b.final_read(topic)}  # rows: [partition, offset, text]
    return measured(acks0_to_a_deposed_leader, {"last_10_kept": all(v in kept for v in sent[10:])})


# ---- point 8 ------------------------------------------------------------------------------------
@experiment("probe", "consumer classic")
def consumer_after_unclean_election(b) -> Result:
    """KIP-320. min ISR 1, unclean election on: the leader alone takes old3..old5 and a consumer
    reads all six; the leader dies and an out-of-sync follower leads without them; new records
    take offsets 3-8.

    The consumer started while the leader was the only live broker, so that leader is the only
    broker it knows (a metadata answer lists the live brokers, and kafka-python 3.0.12 never goes
    back to ``bootstrap_servers``): while it is down the consumer asks it, in vain, and reads
    nothing. When the old leader comes back (as a follower) the consumer learns the new leader,
    asks it where its epoch ended (OffsetsForLeaderEpoch) and seeks back to offset 3 - it reads
    new0..new5 instead of skipping new0..new2 (a consumer without KIP-320 goes on at offset 6) or
    rereading from 0 (``auto_offset_reset``)."""
    topic = b.create_topic("diverge", replication_factor=3, min_insync_replicas=1, unclean_leader_election_enable=True)
    producer = b.producer(acks=1, enable_idempotence=False, request_timeout_ms=5000)
    for i in range(3):
        producer.send(topic, f"old{i}".encode())
    producer.flush()
    b.until_replicated(topic)  # acks=1 answered before the followers fetched: f1 must have old0..old2
    leader = b.leader_of(topic)
    f1, f2 = _follower(b, topic, 0), _follower(b, topic, 1)
    b.crash(f1)
    b.crash(f2)
    b.wait_until(lambda: b.isr_of(topic) == [leader], timeout_ms=60_000)
    for i in range(3, 6):
        producer.send(topic, f"old{i}".encode())
    producer.flush()
    consumer = b.consumer(auto_offset_reset="earliest", enable_auto_commit=False)
    consumer.assign([TopicPartition(topic, 0)])
    before = _poll_until(b, consumer, 6, 20_000)
    b.crash(leader)
    b.restart(f1)
    if not b.wait_until(lambda: b.leader_of(topic) == f1, timeout_ms=60_000):
        raise RuntimeError(f"no unclean election: {b.evidence(topic)}")
    for i in range(6):
        producer.send(topic, f"new{i}".encode())
    producer.flush()
    producer.close()
    while_down = _poll_until(b, consumer, 6, 10_000)
    b.restart(leader)
    # kafka-python backs off from a broker it failed to reach, doubling up to
    # reconnect_backoff_max_ms (30 s, +-20 % jitter): after 10 s of refused connections it may
    # try the restarted broker only ~36 s later, so the bound covers that (the poll stops at 6)
    after = _poll_until(b, consumer, 6, 60_000)
    consumer.close()
    return measured(
        consumer_after_unclean_election,
        {
            "read_before": len(before),
            "read_while_its_only_broker_is_down": while_down,
            "read_after_it_is_back": after,
        },
    )


@experiment("probe", "consumer classic")
def consumer_whose_known_brokers_died(b) -> Result:
    """A consumer that knows only one broker, which dies while the other two run: does it find them?

    Two followers are down when the consumer starts, so the metadata it gets lists the leader
    alone - though its ``bootstrap_servers`` name all three brokers. The followers come back and
    rejoin the ISR, the leader dies, a follower leads, three new records are written. kafka-python
    3.0.12 asks only the brokers its last metadata listed (it never goes back to
    ``bootstrap_servers``): it reads nothing until the old leader is back. Java (4.0+:
    ``metadata.recovery.strategy=rebootstrap``, KIP-899) goes back to its bootstrap addresses
    when every broker it knows is unreachable, learns the new leader and reads the three records.
    The simulator's clients model kafka-python's."""
    topic = b.create_topic("rebootstrap", replication_factor=3, min_insync_replicas=1)
    producer = b.producer(acks="all")
    producer.send(topic, b"before").get(timeout=30)
    b.until_replicated(topic)
    leader = b.leader_of(topic)
    followers = [_follower(b, topic, 0), _follower(b, topic, 1)]
    for f in followers:
        b.crash(f)
    b.wait_until(lambda: b.isr_of(topic) == [leader], timeout_ms=60_000)
    # every broker's address, dead ones too; a short reconnect backoff, so kafka-python's
    # bootstrap does not wait long on a dead one
    consumer = b.consumer(
        auto_offset_reset="earliest", enable_auto_commit=False, reconnect_backoff_max_ms=1000, **b.every_broker()
    )
    consumer.assign([TopicPartition(topic, 0)])
    before = _poll_until(b, consumer, 1, 20_000)
    for f in followers:
        b.restart(f)
    b.wait_until(lambda: len(b.isr_of(topic)) == 3, timeout_ms=60_000)
    b.crash(leader)
    b.wait_until(lambda: b.leader_of(topic) not in (None, leader), timeout_ms=60_000)
    for i in range(3):
        producer.send(topic, f"new{i}".encode())
    producer.flush()
    producer.close()
    while_down = _poll_until(b, consumer, 3, 15_000)
    consumer.close()
    return measured(
        consumer_whose_known_brokers_died,
        {"read_before": len(before), "read_while_its_known_broker_is_down": len(while_down)},
    )


def _poll_until(b, consumer, n: int, ms: float) -> list:
    rows: list = []
    end = b.now_ms + ms
    while len(rows) < n and b.now_ms < end:
        for records in consumer.poll(timeout_ms=500).values():
            rows.extend((r.offset, r.value) for r in records)
    return rows
