"""The share-group differential on the wire cluster with confluent-kafka's ShareConsumer: the
same sequences as Kafka's recorded ones (tests/share_differential_support.py), through librdkafka
on the simulated brokers - so a difference is the brokers' or the wire's, never the client's."""

from __future__ import annotations

import pytest

from course_lib.wire.share_differential import ConfluentShare
from tests.share_differential_support import report, unexplained

pytest.importorskip("confluent_kafka")


def test_confluent_kafka_on_the_wire_sees_what_kafka_showed(wire):
    side = ConfluentShare(wire, "confluent-kafka on the wire cluster")
    try:
        found = unexplained(side)
    finally:
        side.close()
    assert not found, report(side, found)
