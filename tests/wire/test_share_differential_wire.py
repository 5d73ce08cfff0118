"""The share-group differential on the wire cluster with each wall-clock client's share consumer
(confluent-kafka's, the Java client's: the ``share_client`` fixture): the same sequences as
Kafka's recorded ones with that client (tests/share_differential_support.py), through the client
on the simulated brokers - so a difference is the brokers' or the wire's, never the client's."""

from __future__ import annotations

import pytest

from course_lib.experiments.share_differential import ClientShare
from tests.share_differential_support import report, unexplained


@pytest.fixture
def stops_java_driver():
    """The Java client's shared driver process is stopped after the test (before no_leaks looks)."""
    yield
    from course_lib.client_adapters.for_java import stop_driver

    stop_driver()


@pytest.mark.timeout(600)
def test_each_client_on_the_wire_sees_what_kafka_showed(wire, share_client, stops_java_driver):
    if share_client == "confluent-kafka":
        pytest.importorskip("confluent_kafka")
    side = ClientShare(wire, share_client, f"{share_client} on the wire cluster")
    try:
        found = unexplained(side)
    finally:
        side.close()
    assert not found, report(side, found)
