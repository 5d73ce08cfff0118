"""The Java client 4.3.1's KafkaShareConsumer (KIP-932) on the simulated cluster: the same
workers, acknowledgements, lock timeout and delivery count limit as confluent-kafka's
(tests/wire/test_share_groups_wire.py, tests/share_protocol_support.py), over
ShareGroupHeartbeat v1, ShareFetch and ShareAcknowledge at the versions Java chooses."""

from __future__ import annotations

import pytest
from kafka.protocol.api_key import ApiKey

from course_lib.experiments import protocol_matrix as matrix
from tests import share_protocol_support as share
from tests.wire.conftest import with_versions


@pytest.mark.timeout(180)
def test_java_share_consumers_on_the_wire(driver, monkeypatch):
    """Once per test run, with the versions Java sent (notebook 09's protocol matrix reads it back)."""
    got = dict(matrix.measure("share group", "wire java", lambda: with_versions(monkeypatch, "java")).numbers)
    seen = {k: set(v) for k, v in got.pop("versions").items()}
    print("wire java share:", got.pop("seconds"), "s; versions:", {k: v for k, v in seen.items() if k >= 76})
    assert got.pop("invariant checks") > 100
    assert got.pop("during") == share.DESCRIBED  # Admin.describeShareGroups
    assert got == share.EXPECTED
    assert seen[ApiKey.ShareGroupHeartbeat] == {1} and seen[ApiKey.ShareFetch] == {2}
    assert ApiKey.JoinGroup not in seen and ApiKey.ConsumerGroupHeartbeat not in seen


@pytest.mark.timeout(120)
def test_a_share_partition_leader_failover_with_java_on_the_wire(driver):
    """course_lib/experiments/share_leader_failover.py with KafkaShareConsumer: the same as confluent-kafka's."""
    from course_lib.experiments import share_leader_failover as failover

    for wire in failover.wire_like_the_lab():
        assert failover.wire_run(wire, "java") == failover.EXPECTED


@pytest.mark.timeout(90)
@pytest.mark.parametrize("renew", [True, False])
def test_java_renews_a_lock_on_the_wire(driver, wire_cluster, renew):
    """course_lib/experiments/share_renew.py: RENEW keeps the record the holder's, and the next poll() hands it
    back; without it the other worker gets the record and the holder's late ACCEPT is refused
    (lesson 05c's slow handler) - as on Kafka (tests/real/test_share_groups_real.py) and in the simulator."""
    from course_lib.experiments import share_renew

    assert share_renew.client_run(wire_cluster, renew=renew) == share_renew.EXPECTED[renew]


@pytest.mark.timeout(120)
def test_a_killed_or_frozen_java_share_consumer_on_the_wire(driver, wire_cluster):
    """tests/wire/test_share_groups_wire.py's crashes with KafkaShareConsumer: the crashing worker
    in a JVM of its own, SIGKILLed (its records come back at once) or SIGSTOPped (after the lock),
    as on the simulator and on Kafka 4.3.1 (tests/real/test_share_groups_real.py)."""
    from course_lib.experiments.on_kafka import share_groups

    compared = share_groups.crashes_compared(wire_cluster, "java")
    assert share_groups.crash_disagreements(compared) == []
    assert [c["wait"][1] for c in compared.values()] == ["at once", "after about the lock duration"]


@pytest.mark.timeout(90)
def test_java_admin_lists_share_group_offsets_on_the_wire(driver, wire_cluster):
    """Admin.listShareGroupOffsets (DescribeShareGroupOffsets v1): start offset, leader epoch and
    lag as Kafka 4.3.1 gives them (tests/real/test_share_groups_real.py); before the wire had
    API 90, Java's admin failed with UnsupportedVersionException."""
    got = share.share_offsets_probe(
        driver, wire_cluster.bootstrap_servers, wire_cluster.create_topic("offsets", partitions=1)
    )
    assert got == share.SHARE_OFFSETS_EXPECTED
