"""KIP-848 on Kafka 4.3.1 (the session's LocalCluster): the experiments the wire cluster runs in
tests/wire/test_consumer_group_protocol.py (librdkafka) and
tests/java_client/test_consumer_group_protocol_wire.py (Java), with the same expected
observations (tests/consumer_protocol_support.py). Join, split and leave with both clients is the
consumer-protocol workload of tests/real/test_composition_real.py."""

from __future__ import annotations

import uuid

import pytest

from course_lib.experiments import protocol_matrix as matrix
from tests import consumer_protocol_support as kip848
from tests.java_client import support

pytestmark = pytest.mark.real_kafka


@pytest.fixture(scope="module")
def driver():
    yield from support.module_driver()


def _topic(cluster) -> str:
    # (create_topic returns once every broker knows the topic: course_lib/real/broker_metadata.py)
    return cluster.create_topic(f"kip848-{uuid.uuid4().hex[:8]}", partitions=4)


def _both_clients(experiment: str, cluster) -> tuple[dict, dict]:
    """``experiment`` with Java and librdkafka at once, each in its own group and topic; each
    run once per test run (notebook 09's protocol matrix reads them back: course_lib/experiments/protocol_matrix.py)."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(2, thread_name_prefix="kip848-kafka") as pool:
        java = pool.submit(matrix.measured, experiment, "Kafka java", cluster)
        rdkafka = pool.submit(matrix.measured, experiment, "Kafka confluent-kafka", cluster)
        return java.result(timeout=280), rdkafka.result(timeout=280)


@pytest.mark.timeout(300)
def test_crashed_member_java_and_librdkafka(driver, cluster):
    """Kafka removes a crashed member after group.consumer.session.timeout.ms (45 s, also its
    minimum): both clients' experiments run at once, each in its own group and topic. The wire
    cluster gives the same (tests/java_client/test_consumer_group_protocol_wire.py,
    tests/wire/test_consumer_group_protocol.py)."""
    java_got, rdkafka_got = _both_clients("consumer group: crashed member", cluster)
    print(f"kafka {cluster.kafka_version} crash: java", java_got["seconds"], "librdkafka", rdkafka_got["seconds"])
    wrong = kip848.check(java_got, kip848.CRASH_EXPECTED, kip848.JAVA_CRASH_EPOCHS)
    wrong += kip848.check(rdkafka_got, kip848.CRASH_EXPECTED)
    assert not wrong, wrong


@pytest.mark.timeout(300)
def test_slow_handler_java_and_librdkafka(driver, cluster):
    java_got, rdkafka_got = _both_clients("consumer group: slow handler", cluster)
    print(
        f"kafka {cluster.kafka_version} slow handler: java", java_got["seconds"], "librdkafka", rdkafka_got["seconds"]
    )
    wrong = kip848.check(java_got, kip848.SLOW_EXPECTED, kip848.JAVA_SLOW_EPOCHS)
    wrong += kip848.check(rdkafka_got, kip848.SLOW_EXPECTED)
    assert not wrong, wrong


@pytest.mark.timeout(240)
def test_java_first_member_epochs(driver, cluster):
    """A new group's first member is at epoch 2 on Kafka 4.3.1 (KAFKA-20268), whatever it
    subscribes to; the wire cluster gives the same (tests/java_client/test_consumer_group_protocol_wire.py)."""
    got = kip848.first_epochs(cluster)
    print(f"kafka {cluster.kafka_version} first epochs:", got.pop("trails"))
    assert got == kip848.FIRST_EPOCHS


@pytest.mark.timeout(180)
def test_java_static_member_bounce(driver, cluster):
    """A static member's close (epoch -2) and its replacement within the session timeout; the wire
    cluster gives the same (tests/java_client/test_consumer_group_protocol_wire.py)."""
    from tests import static_member_support as static

    got = static.static_bounce(static.java_static_members(cluster.bootstrap_servers, _topic(cluster)))
    assert got == static.STATIC_EXPECTED


@pytest.mark.timeout(180)
def test_java_members_carry_on_across_a_coordinator_failover(driver, healthy):
    """The group's coordinator is killed (SIGKILL); the wire cluster gives the same
    (tests/java_client/test_consumer_group_protocol_wire.py)."""
    from tests import coordinator_failover_support as failover

    cluster = healthy
    servers = cluster.bootstrap_servers
    make = failover.java_members(servers, _topic(cluster))
    crashed = []

    def crash():
        crashed.append(failover.kafka_coordinator(servers, make.group))
        cluster.crash(crashed[0])

    assert failover.coordinator_failover(make, crash) == failover.FAILOVER_EXPECTED
    assert failover.kafka_coordinator(servers, make.group) != crashed[0]
