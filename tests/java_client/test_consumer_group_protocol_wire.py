"""The Java client 4.3.1 with ``group.protocol=consumer`` (KIP-848) on the simulated cluster: it
reads ``group.version=1`` in ApiVersions, joins with ConsumerGroupHeartbeat, gets every partition
from the coordinator's assignor, and a second member's join moves half of them (after the first
revoked them: incremental reconciliation), and a leaving member's partitions go to the other. Before this, the simulated cluster answered it with
UnsupportedVersionException (issue 31)."""

from __future__ import annotations

import time

import pytest
from kafka.protocol.api_key import ApiKey

import course_lib.wire.apis as apis
from course_lib.java_client import JavaConsumer
from tests.java_client import support


def partitions(consumer) -> list:
    return sorted(tp.partition for tp in consumer.assignment())


def poll_until(consumers, condition, timeout_s: float) -> None:
    start = time.monotonic()
    while time.monotonic() - start < timeout_s:
        if condition():
            return
        for c in consumers:
            c.poll(0.1)
    raise AssertionError(f"not within {timeout_s} s: {[partitions(c) for c in consumers]}")


@pytest.mark.timeout(180)
def test_java_consumer_protocol_join_and_second_member(driver, wire_cluster, monkeypatch):
    seen: set = set()
    dispatch = apis.dispatch

    def recording(gw, header, request):
        seen.add(header.request_api_key)
        return dispatch(gw, header, request)

    monkeypatch.setattr(apis, "dispatch", recording)
    wire_cluster.create_topic("t", partitions=4)
    group = support.unique("java-kip848")
    conf = {"bootstrap.servers": wire_cluster.bootstrap_servers, "group.id": group, "group.protocol": "consumer"}
    a: JavaConsumer | None = JavaConsumer(driver, conf)
    b = None
    try:
        a.subscribe(["t"])
        poll_until([a], lambda: partitions(a) == [0, 1, 2, 3], 60)
        b = JavaConsumer(driver, conf)
        b.subscribe(["t"])
        poll_until([a, b], lambda: len(partitions(a)) == 2 and len(partitions(b)) == 2, 60)
        assert sorted(partitions(a) + partitions(b)) == [0, 1, 2, 3]
        a.close()  # leaves (epoch -1): b gets the rest
        a = None
        poll_until([b], lambda: partitions(b) == [0, 1, 2, 3], 60)
    finally:
        if a is not None:
            a.close()
        if b is not None:
            b.close()
    assert ApiKey.ConsumerGroupHeartbeat in seen and ApiKey.JoinGroup not in seen
