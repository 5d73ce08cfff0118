"""The Java client 4.3.1 with ``group.protocol=consumer`` (KIP-848) on the simulated cluster: it
reads ``group.version=1`` in ApiVersions, joins with ConsumerGroupHeartbeat, gets every partition
from the coordinator's assignor, and a second member's join moves half of them (after the first
revoked them: incremental reconciliation), and a leaving member's partitions go to the
other. Before this, the simulated cluster answered it with UnsupportedVersionException."""

from __future__ import annotations

import pytest
from kafka.protocol.api_key import ApiKey

import course_lib.wire.apis as apis
from course_lib import protocol_matrix as matrix
from tests import consumer_protocol_support as kip848


@pytest.mark.timeout(180)
def test_java_join_split_leave(driver, wire_cluster, monkeypatch):
    """The same observations as on Kafka 4.3.1 (tests/real/test_consumer_group_protocol.py),
    over ConsumerGroupHeartbeat only (no JoinGroup)."""
    seen: set = set()
    dispatch = apis.dispatch

    def recording(gw, header, request):
        seen.add(header.request_api_key)
        return dispatch(gw, header, request)

    monkeypatch.setattr(apis, "dispatch", recording)
    got = kip848.java(driver, wire_cluster.bootstrap_servers, wire_cluster.create_topic("t", partitions=4))
    print("wire java:", got.pop("seconds"))
    assert got == kip848.EXPECTED
    assert ApiKey.ConsumerGroupHeartbeat in seen and ApiKey.JoinGroup not in seen


@pytest.mark.timeout(180)
def test_java_crashed_member(driver):
    """On a wire cluster with a 6 s consumer-group session (Kafka's is 45 s, and its minimum): a
    crashed member is removed sooner; assignments, epochs and counts are the same.
    tests/real/test_consumer_group_protocol.py runs the same on Kafka 4.3.1; once per test run
    (notebook 09's protocol matrix reads it back)."""
    got = matrix.measured("consumer group: crashed member", "wire java", driver=driver)
    print("wire java crash:", got["seconds"])
    assert not kip848.check(got, kip848.CRASH_EXPECTED, kip848.JAVA_CRASH_EPOCHS)


@pytest.mark.timeout(180)
def test_java_slow_handler(driver):
    got = matrix.measured("consumer group: slow handler", "wire java", driver=driver)
    print("wire java slow handler:", got["seconds"])
    assert not kip848.check(got, kip848.SLOW_EXPECTED, kip848.JAVA_SLOW_EPOCHS)


@pytest.fixture
def batching_wire():
    """The wire cluster with Kafka 4.3.1's assignment batching (1 s; the simulator's default is 0)."""
    from course_lib.wire.cluster import WireCluster

    wire = WireCluster(
        brokers=3, seed=1, group_initial_rebalance_delay_ms=0, group_consumer_assignment_interval_ms=1000
    )
    wire.start()
    yield wire
    wire.stop()


@pytest.mark.timeout(180)
def test_java_first_member_epochs(driver, batching_wire):
    """Kafka 4.3.1 gives the same (tests/real/test_consumer_group_protocol.py)."""
    got = kip848.first_epochs(driver, batching_wire)
    print("wire first epochs:", got.pop("trails"))
    assert got == kip848.FIRST_EPOCHS
