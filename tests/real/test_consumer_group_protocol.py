"""KIP-848 on Kafka 4.3.1 (the session's LocalCluster): the experiments the wire cluster runs in
tests/wire/test_consumer_group_protocol.py (librdkafka) and
tests/java_client/test_consumer_group_protocol_wire.py (Java), with the same expected
observations (tests/consumer_protocol_support.py)."""

from __future__ import annotations

import uuid

import pytest

from tests import consumer_protocol_support as kip848
from tests.java_client import support

pytestmark = pytest.mark.real_kafka


@pytest.fixture(scope="module")
def driver():
    yield from support.module_driver()


def _topic(cluster) -> str:
    return cluster.create_topic(f"kip848-{uuid.uuid4().hex[:8]}", partitions=4)


@pytest.mark.timeout(240)
def test_librdkafka_join_split_leave(cluster):
    got = kip848.librdkafka(cluster.bootstrap_servers, _topic(cluster))
    print("kafka 4.3.1 librdkafka:", got.pop("seconds"))
    assert got == kip848.EXPECTED


@pytest.mark.timeout(240)
def test_java_join_split_leave(driver, cluster):
    got = kip848.java(driver, cluster.bootstrap_servers, _topic(cluster))
    print("kafka 4.3.1 java:", got.pop("seconds"))
    assert got == kip848.EXPECTED


@pytest.mark.timeout(300)
def test_crashed_member_java_and_librdkafka(driver, cluster):
    """Kafka removes a crashed member after group.consumer.session.timeout.ms (45 s, also its
    minimum): both clients' experiments run at once, each in its own group and topic. The wire
    cluster gives the same (tests/java_client/test_consumer_group_protocol_wire.py,
    tests/wire/test_consumer_group_protocol.py)."""
    from concurrent.futures import ThreadPoolExecutor

    servers = cluster.bootstrap_servers
    java_topic, rdkafka_topic = _topic(cluster), _topic(cluster)
    with ThreadPoolExecutor(2, thread_name_prefix="kip848-crash") as pool:
        java = pool.submit(
            kip848.crashed_member,
            kip848.java_members(driver, servers, java_topic, crash_b=True),
            kip848.producer(servers, java_topic),
        )
        rdkafka = pool.submit(
            kip848.crashed_member,
            kip848.rdkafka_members(servers, rdkafka_topic, crash_b=True),
            kip848.producer(servers, rdkafka_topic),
        )
        java_got, rdkafka_got = java.result(timeout=280), rdkafka.result(timeout=280)
    print("kafka 4.3.1 crash: java", java_got["seconds"], "librdkafka", rdkafka_got["seconds"])
    wrong = kip848.check(java_got, kip848.CRASH_EXPECTED, kip848.JAVA_CRASH_EPOCHS)
    wrong += kip848.check(rdkafka_got, kip848.CRASH_EXPECTED)
    assert not wrong, wrong


@pytest.mark.timeout(240)
def test_slow_handler_java_and_librdkafka(driver, cluster):
    from concurrent.futures import ThreadPoolExecutor

    servers = cluster.bootstrap_servers
    java_topic, rdkafka_topic = _topic(cluster), _topic(cluster)
    with ThreadPoolExecutor(2, thread_name_prefix="kip848-slow") as pool:
        java = pool.submit(
            kip848.slow_handler,
            kip848.java_members(driver, servers, java_topic, **{"max.poll.interval.ms": "5000"}),
            kip848.producer(servers, java_topic),
            5,
        )
        rdkafka = pool.submit(
            kip848.slow_handler,
            kip848.rdkafka_members(servers, rdkafka_topic, **{"max.poll.interval.ms": 5000}),
            kip848.producer(servers, rdkafka_topic),
            5,
        )
        java_got, rdkafka_got = java.result(timeout=220), rdkafka.result(timeout=220)
    print("kafka 4.3.1 slow handler: java", java_got["seconds"], "librdkafka", rdkafka_got["seconds"])
    wrong = kip848.check(java_got, kip848.SLOW_EXPECTED, kip848.JAVA_SLOW_EPOCHS)
    wrong += kip848.check(rdkafka_got, kip848.SLOW_EXPECTED)
    assert not wrong, wrong


@pytest.mark.timeout(240)
def test_java_first_member_epochs(driver, cluster):
    """A new group's first member is at epoch 2 on Kafka 4.3.1 (KAFKA-20268), whatever it
    subscribes to; the wire cluster gives the same (tests/java_client/test_consumer_group_protocol_wire.py)."""
    got = kip848.first_epochs(driver, cluster)
    print("kafka 4.3.1 first epochs:", got.pop("trails"))
    assert got == kip848.FIRST_EPOCHS


@pytest.mark.timeout(180)
def test_java_static_member_bounce(driver, cluster):
    """A static member's close (epoch -2) and its replacement within the session timeout; the wire
    cluster gives the same (tests/java_client/test_consumer_group_protocol_wire.py)."""
    from tests import static_member_support as static

    got = static.static_bounce(static.java_static_members(driver, cluster.bootstrap_servers, _topic(cluster)))
    assert got == static.STATIC_EXPECTED


@pytest.mark.timeout(180)
def test_java_members_carry_on_across_a_coordinator_failover(driver, healthy):
    """The group's coordinator is killed (SIGKILL); the wire cluster gives the same
    (tests/java_client/test_consumer_group_protocol_wire.py)."""
    from tests import coordinator_failover_support as failover

    cluster = healthy
    servers = cluster.bootstrap_servers
    group, make = failover.java_members(driver, servers, _topic(cluster))
    crashed = []

    def crash():
        crashed.append(failover.kafka_coordinator(servers, group))
        cluster.crash(crashed[0])

    assert failover.coordinator_failover(make, crash) == failover.FAILOVER_EXPECTED
    assert failover.kafka_coordinator(servers, group) != crashed[0]
