"""The pytest plugin's ``wire_cluster`` fixture as another project uses it, with each client the
course measures: confluent-kafka (librdkafka) loaded through the plugin in a pytester run, as a
project that installed this package would, and kafka-python through the fixture - each
connecting, producing and consuming with a group that commits. The Java client 4.3.1 (its driver
process) does the same through this fixture in tests/java_client/test_driver_wire.py
(``test_produce_and_consume_round_trip``, whose conftest imports ``wire_cluster``)."""

import pytest

from course_lib.wire.pytest_plugin import wire_cluster  # noqa: F401 - the plugin's fixture, tested here

pytest_plugins = ["pytester"]

CONFLUENT_PROJECT_TEST = """
from confluent_kafka import Consumer, Producer, TopicPartition


def test_a_project_with_librdkafka(wire_cluster):
    wire_cluster.create_topic("orders", partitions=2, min_insync_replicas=2)
    servers = wire_cluster.bootstrap_servers
    producer = Producer({"bootstrap.servers": servers, "acks": "all", "enable.idempotence": True})
    reports = []
    for i in range(6):
        producer.produce("orders", b"order-%d" % i, partition=i % 2, on_delivery=lambda e, m: reports.append(e))
    assert producer.flush(20) == 0 and reports == [None] * 6
    consumer = Consumer({"bootstrap.servers": servers, "group.id": "billing",
                         "auto.offset.reset": "earliest", "enable.auto.commit": False})
    consumer.subscribe(["orders"])
    seen = []
    for _ in range(100):  # bounded: each poll waits at most a second
        message = consumer.poll(1.0)
        if message is not None and message.error() is None:
            seen.append(message.value())
        if len(seen) == 6:
            break
    assert sorted(seen) == [b"order-%d" % i for i in range(6)]
    committed = consumer.commit(asynchronous=False)
    assert sorted((tp.partition, tp.offset) for tp in committed) == [(0, 3), (1, 3)]
    consumer.close()
    assert wire_cluster.seed == 7
"""


def test_confluent_kafka_through_the_registered_plugin(pytester):
    pytest.importorskip("confluent_kafka")
    pytester.makepyfile(test_project=CONFLUENT_PROJECT_TEST)
    # no -p: installing this package registered the plugin (entry point course_lib_wire)
    # in process: a second interpreter costs some 15 s more here
    result = pytester.runpytest_inprocess("--wire-seed", "7", "-q")
    result.assert_outcomes(passed=1)


def test_kafka_python_through_the_fixture(wire_cluster):  # noqa: F811 - the fixture
    from kafka import KafkaConsumer, KafkaProducer

    wire_cluster.create_topic("orders", partitions=1, min_insync_replicas=2)
    producer = KafkaProducer(bootstrap_servers=wire_cluster.bootstrap_servers, acks="all")
    assert producer.send("orders", b"paid").get(timeout=10).offset == 0
    producer.close()
    consumer = KafkaConsumer(
        "orders",
        bootstrap_servers=wire_cluster.bootstrap_servers,
        group_id="billing",
        auto_offset_reset="earliest",
        enable_auto_commit=False,
        consumer_timeout_ms=20_000,
    )
    try:
        assert next(iter(consumer)).value == b"paid"
        consumer.commit()
    finally:
        consumer.close()
