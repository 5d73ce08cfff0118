"""The Java client's experiments, written once and run on the wire cluster (tests/java_client) and
on Kafka 4.3.1 (tests/real/test_java_client.py, on the session's LocalCluster).

Each takes a driver, the bootstrap servers and ``make_topic(name, replication_factor,
min_insync_replicas) -> name`` (a cluster's own topic creation), and returns what it observed, so a
test asserts the same outcome on both clusters.
"""

from __future__ import annotations

import itertools
import time

import pytest

from course_lib.java_client import (
    DriverProcess,
    JavaAdmin,
    JavaConsumer,
    JavaException,
    JavaProducer,
    TopicPartition,
    outcomes,
)
from course_lib.clusters import jars

_names = itertools.count(1)


def start_driver(make=DriverProcess) -> DriverProcess:
    """A driver process (``make()``), or a skip that says what to install (a failure under
    CI=true, as every Java-needing test: tests/conftest.py)."""
    try:
        return make()
    except jars.JvmToolMissing as exc:
        pytest.skip(f"needs Java: {str(exc).splitlines()[0]} (apt-get install openjdk-17-jdk-headless maven)")


def unique(name: str) -> str:
    return f"{name}-{next(_names)}"


def until(predicate, timeout_s: float = 30.0) -> bool:
    """Whether ``predicate()`` became true within ``timeout_s`` (a condition, checked often)."""
    deadline = time.monotonic() + timeout_s
    while not predicate():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def read_all(consumer: JavaConsumer, expected: int, polls: int = 60) -> list:
    """Poll until ``expected`` records arrived or ``polls`` polls of 0.5 s returned nothing new."""
    records: list = []
    idle = 0
    while len(records) < expected and idle < polls:
        got = consumer.poll(0.5)
        records += got
        idle = 0 if got else idle + 1
    return records


def round_trip(driver: DriverProcess, servers: str, make_topic, group_protocol: str = "classic") -> dict:
    """Ten keyed records with a header, idempotent acks=all, read back by a group member that
    commits; what each side saw."""
    topic = make_topic(unique("java-round-trip"), 3, 2)
    producer = JavaProducer(driver, {"bootstrap.servers": servers, "acks": "all", "enable.idempotence": "true"})
    try:
        futures = [
            producer.send(topic, f"v{i}".encode(), key=f"k{i}".encode(), headers=[("n", str(i).encode())])
            for i in range(10)
        ]
        producer.flush()
        sent = outcomes(driver, futures)
    finally:
        producer.close(timeout=10)
    consumer = JavaConsumer(
        driver,
        {
            "bootstrap.servers": servers,
            "group.id": unique("java-group"),
            "group.protocol": group_protocol,
            "auto.offset.reset": "earliest",
            "enable.auto.commit": "false",
        },
    )
    try:
        consumer.subscribe([topic])
        records = read_all(consumer, 10)
        pending = consumer.commit_async()  # its callback runs inside the commit_sync that follows
        consumer.commit_sync(timeout=30)
        by_callback = pending.get(timeout=30)
        committed = consumer.committed([(topic, 0)], timeout=30)
        member = consumer.group_metadata()
        bounds = (consumer.beginning_offsets([(topic, 0)]), consumer.position((topic, 0), timeout=30))
    finally:
        consumer.close(timeout=10)
    return {
        "sent": [(state, m.offset if state == "done" else m) for state, m in sent],
        "read": [(r.offset, r.key, r.value, r.headers) for r in records],
        "committed": {tp: c.offset if c else None for tp, c in committed.items()},
        "generation": member["generationId"] >= 1,
        "commitAsync": [o.offset for o in by_callback.values() if o is not None],
        "beginning, position": (list(bounds[0].values()), bounds[1]),
    }


def expected_round_trip(topic_offsets: int = 10) -> dict:
    return {
        "sent": [("done", i) for i in range(topic_offsets)],
        "read": [(i, f"k{i}".encode(), f"v{i}".encode(), [("n", str(i).encode())]) for i in range(topic_offsets)],
        "generation": True,
        "commitAsync": [topic_offsets],
        "beginning, position": ([0], topic_offsets),
    }


def transactions(driver: DriverProcess, servers: str, make_topic) -> dict:
    """A committed transaction (3 records), then an aborted one (2); read_committed and
    read_uncommitted reads of the partition from the beginning."""
    topic = make_topic(unique("java-txn"), 3, 2)
    producer = JavaProducer(
        driver, {"bootstrap.servers": servers, "transactional.id": unique("java-txn-id"), "acks": "all"}
    )
    try:
        producer.init_transactions()
        producer.begin_transaction()
        for i in range(3):
            producer.send(topic, f"committed-{i}".encode(), partition=0)
        producer.commit_transaction()
        producer.begin_transaction()
        aborted = [producer.send(topic, f"aborted-{i}".encode(), partition=0) for i in range(2)]
        producer.flush()
        producer.abort_transaction()
        aborted_offsets = [f.get(timeout=30).offset for f in aborted]
    finally:
        producer.close(timeout=10)
    seen = {}
    for isolation in ("read_committed", "read_uncommitted"):
        consumer = JavaConsumer(driver, {"bootstrap.servers": servers, "isolation.level": isolation})
        try:
            consumer.assign([(topic, 0)])
            consumer.seek_to_beginning([(topic, 0)])
            # every record a level can see, then its end: the position passes the markers
            records = read_all(consumer, 3 if isolation == "read_committed" else 5, polls=20)
            end = consumer.end_offsets([(topic, 0)])
            seen[isolation] = [(r.offset, r.value) for r in records]
            seen[f"{isolation} end"] = list(end.values())[0]
        finally:
            consumer.close(timeout=10)
    seen["aborted offsets"] = aborted_offsets
    return seen


def leader_of(driver: DriverProcess, servers: str, topic: str) -> int:
    admin = JavaAdmin(driver, {"bootstrap.servers": servers})
    try:
        description = admin.describe_topics([topic])[topic]
    finally:
        admin.close(timeout=10)
    assert not isinstance(description, JavaException), description
    return description["partitions"][0]["leader"]


def close_with_a_record_unfinished(driver: DriverProcess, servers: str, make_topic, pause, resume) -> dict:
    """A record that cannot complete (its leader is paused), then ``close(timeout=0)``: Java gives
    up on it and fails its future, and refuses later sends (kafka-python 3.0.12's close(timeout=0)
    raises instead and keeps the producer open: course_lib.experiments.behaviour_probes)."""
    topic = make_topic(unique("java-closing"), 3, 2)
    producer = JavaProducer(driver, {"bootstrap.servers": servers, "acks": "all", "linger.ms": "0"})
    producer.send(topic, b"warm-up").get(timeout=60)  # metadata and connections first
    leader = leader_of(driver, servers, topic)
    pause(leader)
    try:
        future = producer.send(topic, b"never")
        before = future.outcome()[0]
        producer.close(timeout=0)
        state, error = future.outcome()
        try:
            producer.send(topic, b"after close")
            after = "accepted"
        except JavaException as exc:
            after = exc.name
    finally:
        resume(leader)
    return {
        "before close": before,
        "after close": state,
        "error": f"{error.name}: {error.message}" if isinstance(error, JavaException) else error,
        "send after close": after,
    }


def module_driver():
    """The body of a module-scoped ``driver`` fixture: one JVM for the module's tests - the Java
    client adapter's shared driver, so the clients the experiments build through the adapter
    (course_lib.client_adapters) run in it too - stopped (and checked stopped) after them."""
    from course_lib.client_adapters.for_java import driver as shared_driver
    from course_lib.client_adapters.for_java import stop_driver

    driver = start_driver(shared_driver)
    try:
        yield driver
    finally:
        stop_driver()
        assert not driver.alive(), f"the driver (pid {driver.pid}) outlived close()"


def consume_transform_produce(driver: DriverProcess, servers: str, make_topic) -> dict:
    """The exactly-once loop: read 3 records as a group member, write them upper-cased in a
    transaction with the member's offsets (``sendOffsetsToTransaction(offsets, groupMetadata())``),
    commit; what the group committed and what read_committed sees downstream."""
    source, sink = make_topic(unique("java-ctp-in"), 3, 2), make_topic(unique("java-ctp-out"), 3, 2)
    group = unique("java-ctp-group")
    seed = JavaProducer(driver, {"bootstrap.servers": servers, "acks": "all"})
    try:
        for i in range(3):
            seed.send(source, f"m-{i}".encode(), partition=0)
        seed.flush()
    finally:
        seed.close(timeout=10)
    consumer = JavaConsumer(
        driver,
        {
            "bootstrap.servers": servers,
            "group.id": group,
            "auto.offset.reset": "earliest",
            "enable.auto.commit": "false",
            "isolation.level": "read_committed",
        },
    )
    producer = JavaProducer(driver, {"bootstrap.servers": servers, "transactional.id": unique("java-ctp-txn")})
    try:
        consumer.subscribe([source])
        producer.init_transactions()
        records = read_all(consumer, 3)
        producer.begin_transaction()
        for r in records:
            producer.send(sink, (r.value or b"").upper(), partition=0)
        producer.send_offsets_to_transaction({(source, 0): consumer.position((source, 0))}, consumer)
        producer.commit_transaction()
        committed = consumer.committed([(source, 0)], timeout=30)
    finally:
        producer.close(timeout=10)
        consumer.close(timeout=10)
    reader = JavaConsumer(driver, {"bootstrap.servers": servers, "isolation.level": "read_committed"})
    try:
        reader.assign([(sink, 0)])
        reader.seek(TopicPartition(sink, 0), 0)
        out = [r.value for r in read_all(reader, 3)]
    finally:
        reader.close(timeout=10)
    return {"committed": [c.offset if c else None for c in committed.values()], "out": out}
