"""The consumer side of the client differential: seeded sequences of assign/seek/poll/position/
commit/committed (and the methods the simulator's consumer lacks) through the simulator's
KafkaConsumer and kafka-python's, on the same simulated brokers with the same records."""

import os
import random
import time
import warnings

import pytest
from kafka import KafkaConsumer as RealConsumer
from kafka import KafkaProducer as RealProducer
from kafka import TopicPartition

from course_lib.broker import Cluster
from course_lib.clients import KafkaConsumer as SimConsumer
from course_lib.clients import KafkaProducer as SimProducer
from course_lib.wire import WireCluster

SEQUENCES = int(os.environ.get("WIRE_DIFF_SEQUENCES", "40"))
RECORDS = 6  # per partition
P0, P1 = TopicPartition("t", 0), TopicPartition("t", 1)
CALLS = (
    "assign_both",
    "assign_p0",
    "seek_p0_2",
    "seek_to_beginning",
    "read",
    "read",
    "position_p0",
    "commit",
    "committed_p0",
    "end_offsets",
    "seek_to_end",
)

#: differences of the simulator's consumer, each with the calls that show it and why (to be fixed
#: in course_lib/clients). ``matches(prior_calls, call, simulator outcome, kafka-python outcome)``;
#: an outcome is an exception class name, "ok", "records", "dict" or a small value's repr. After a
#: known difference the rest of that sequence is not compared (the consumers' states have parted).
KNOWN_DIFFERENCES: list = []  # the two found first (commit() after seek_to_beginning(), committed() then
# seek_to_end() reading from 0: a stale offset lookup applied after a newer seek) are fixed


def known(prior: list, call: str, simulated, real) -> bool:
    return any(match(prior, call, _kind(simulated), _kind(real)) for match, _ in KNOWN_DIFFERENCES)


def _kind(outcome) -> str:
    """An exception class name or "ok"; a value by its type (records, dict) or, if small, its repr."""
    if isinstance(outcome, str):
        return outcome
    if isinstance(outcome, (list, dict)):
        return type(outcome).__name__.replace("list", "records")
    return repr(outcome)


def read(consumer) -> list:
    """Poll until nothing new comes for a while: every record the assignment can give now."""
    got: list = []
    quiet = 0
    deadline = time.monotonic() + 5
    while quiet < 2 and time.monotonic() < deadline:
        batch = [r for records in consumer.poll(200).values() for r in records]
        got += [(r.partition, r.offset, r.value) for r in batch]
        quiet = 0 if batch else quiet + 1
    return sorted(got)


def call(consumer, name: str):
    try:
        if name == "assign_both":
            consumer.assign([P0, P1])
            return "ok"
        if name == "assign_p0":
            consumer.assign([P0])
            return "ok"
        if name == "seek_p0_2":
            consumer.seek(P0, 2)
            return "ok"
        if name == "seek_to_beginning":
            consumer.seek_to_beginning()
            return "ok"
        if name == "seek_to_end":
            consumer.seek_to_end()
            return "ok"
        if name == "read":
            return read(consumer)
        if name == "position_p0":
            return consumer.position(P0)
        if name == "commit":
            consumer.commit()
            return "ok"
        if name == "committed_p0":
            return consumer.committed(P0)
        if name == "end_offsets":
            return {tp.partition: o for tp, o in consumer.end_offsets([P0, P1]).items()}
    except Exception as exc:  # noqa: BLE001 - the exception class is what is compared
        return type(exc).__name__
    raise AssertionError(name)


@pytest.fixture(scope="module")
def shared_wire():
    with WireCluster(brokers=3, seed=1, group_initial_rebalance_delay_ms=0) as wire:
        wire.create_topic("t", partitions=2, min_insync_replicas=2)
        producer = RealProducer(bootstrap_servers=wire.bootstrap_servers, acks="all")
        for i in range(RECORDS * 2):
            producer.send("t", b"m%d" % i, partition=i % 2)
        producer.close()
        yield wire


@pytest.fixture(scope="module")
def sim_cluster():
    cluster = Cluster(3, seed=1, group_initial_rebalance_delay_ms=0)
    cluster.create_topic("t", partitions=2, min_insync_replicas=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        producer = SimProducer(bootstrap_servers=cluster, acks="all")
    for i in range(RECORDS * 2):
        producer.send("t", b"m%d" % i, partition=i % 2)
    producer.flush()
    return cluster


def test_consumer_call_sequences_match_kafka_python(shared_wire, sim_cluster):
    unexplained: list = []
    for seed in range(SEQUENCES):
        rng = random.Random(seed)
        calls = ["assign_both" if rng.random() < 0.5 else "assign_p0"] + [
            rng.choice(CALLS) for _ in range(rng.randint(2, 7))
        ]
        group = f"g{seed}"
        simulated = SimConsumer(
            bootstrap_servers=sim_cluster, group_id=group, enable_auto_commit=False, auto_offset_reset="earliest"
        )
        sim_out = [call(simulated, c) for c in calls]
        simulated.close(autocommit=False)
        real = RealConsumer(
            bootstrap_servers=shared_wire.bootstrap_servers,
            group_id=group,
            enable_auto_commit=False,
            auto_offset_reset="earliest",
        )
        try:
            real_out = [call(real, c) for c in calls]
        finally:
            real.close(autocommit=False)
        for i, (c, s, r) in enumerate(zip(calls, sim_out, real_out)):
            if s == r:
                continue
            if not known(calls[:i], c, s, r):
                unexplained.append(f"seed {seed}: {calls}: {c}: simulator {s!r}, kafka-python {r!r}")
            break  # the two consumers' states may differ from here on: stop comparing this one
    assert not unexplained, "new client differences:\n" + "\n".join(unexplained)
