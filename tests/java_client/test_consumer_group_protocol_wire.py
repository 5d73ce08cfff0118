"""The Java client 4.3.1 with ``group.protocol=consumer`` (KIP-848) on the simulated cluster: it
reads ``group.version=1`` in ApiVersions, joins with ConsumerGroupHeartbeat, gets every partition
from the coordinator's assignor, and a second member's join moves half of them (after the first
revoked them: incremental reconciliation), and a leaving member's partitions go to the
other. Before this, the simulated cluster answered it with UnsupportedVersionException."""

from __future__ import annotations

import pytest
from kafka.protocol.api_key import ApiKey

import course_lib.wire.apis as apis
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
