"""The share-group differential on the wire cluster with the Java client's KafkaShareConsumer
(through confluent-kafka's API, course_lib/client_adapters/java.py): the same sequences as
Kafka's recording with Java (tests/share_differential_support.py) - so a difference is the
simulated brokers' or the wire's, never the client's."""

from __future__ import annotations

from course_lib.wire.share_differential import JavaShare
from tests.share_differential_support import report, unexplained


def test_java_on_the_wire_sees_what_kafka_showed_java(wire_cluster, driver):
    side = JavaShare(wire_cluster, "Java on the wire cluster", driver)
    try:
        found = unexplained(side)
    finally:
        side.close()
    assert not found, report(side, found)
