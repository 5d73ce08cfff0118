"""The Java client 4.3.1 with ``group.protocol=consumer`` (KIP-848) on the simulated cluster: it
reads ``group.version=1`` in ApiVersions, joins with ConsumerGroupHeartbeat, gets every partition
from the coordinator's assignor, and a second member's join moves half of them (after the first
revoked them: incremental reconciliation), and a leaving member's partitions go to the
other. Before this, the simulated cluster answered it with UnsupportedVersionException."""

from __future__ import annotations

import pytest
from kafka.protocol.api_key import ApiKey

import course_lib.wire.apis as apis
from course_lib.experiments import protocol_matrix as matrix
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
    got = kip848.join_split_leave("java", wire_cluster.bootstrap_servers, wire_cluster.create_topic("t", partitions=4))
    print("wire java:", got.pop("seconds"))
    assert got == kip848.EXPECTED
    assert ApiKey.ConsumerGroupHeartbeat in seen and ApiKey.JoinGroup not in seen


@pytest.mark.timeout(180)
def test_java_crashed_member(driver):
    """On a wire cluster with a 6 s consumer-group session (Kafka's is 45 s, and its minimum): a
    crashed member is removed sooner; assignments, epochs and counts are the same.
    tests/real/test_consumer_group_protocol.py runs the same on Kafka 4.3.1; once per test run
    (notebook 09's protocol matrix reads it back)."""
    got = matrix.measured("consumer group: crashed member", "wire java")
    print("wire java crash:", got["seconds"])
    assert not kip848.check(got, kip848.CRASH_EXPECTED, kip848.JAVA_CRASH_EPOCHS)


@pytest.mark.timeout(180)
def test_java_slow_handler(driver):
    got = matrix.measured("consumer group: slow handler", "wire java")
    print("wire java slow handler:", got["seconds"])
    assert not kip848.check(got, kip848.SLOW_EXPECTED, kip848.JAVA_SLOW_EPOCHS)


@pytest.mark.timeout(180)
def test_java_first_member_epochs(driver, wire_cluster):
    """Kafka 4.3.1 gives the same (tests/real/test_consumer_group_protocol.py), at Kafka's assignment
    batching (``group.consumer.assignment.interval.ms`` 1 s), the wire cluster's default too."""
    got = kip848.first_epochs(wire_cluster)
    print("wire first epochs:", got.pop("trails"))
    assert got == kip848.FIRST_EPOCHS


@pytest.mark.timeout(120)
def test_java_static_member_bounce(driver, wire_cluster):
    """A static member's close (epoch -2) and its replacement: b's partitions wait for it and go
    back to it with no rebalance, as on Kafka 4.3.1 (tests/real/test_consumer_group_protocol.py)."""
    from tests import static_member_support as static

    topic = wire_cluster.create_topic("static", partitions=4)
    got = static.static_bounce(static.java_static_members(wire_cluster.bootstrap_servers, topic))
    assert got == static.STATIC_EXPECTED


@pytest.mark.timeout(120)
def test_java_members_carry_on_across_a_coordinator_failover(driver, wire_cluster):
    """The coordinator's broker is killed: the new one restores the group from __consumer_offsets,
    nothing moves and the epochs stay, as on Kafka 4.3.1 (tests/real/test_consumer_group_protocol.py)."""
    from tests import coordinator_failover_support as failover

    wire = wire_cluster
    make = failover.java_members(wire.bootstrap_servers, wire.create_topic("failover", partitions=4))
    crashed = []

    def crash():
        crashed.append(wire.call(lambda: failover.sim_coordinator(wire.cluster, make.group)))
        wire.nemesis.crash(crashed[0])

    assert failover.coordinator_failover(make, crash) == failover.FAILOVER_EXPECTED
    assert wire.call(lambda: failover.sim_coordinator(wire.cluster, make.group)) != crashed[0]
