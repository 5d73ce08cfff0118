"""The consumer group protocol (KIP-848) over the wire with librdkafka (confluent-kafka,
``group.protocol=consumer``): a member joins and gets every partition from the coordinator's
assignor, a second member's join moves half of them - after the first revoked them (incremental
reconciliation), with epochs ConsumerGroupDescribe shows. Our own schemas of api keys 68/69
(course_lib/wire/apis/schemas) round-trip. The Java client's run is
tests/java_client/test_consumer_group_protocol_wire.py."""

from __future__ import annotations

import time
import uuid

import pytest
from confluent_kafka import Consumer
from kafka.protocol.api_key import ApiKey

from course_lib.wire.apis import SUPPORTED
from course_lib.wire.apis.common import build
from course_lib.wire.apis.schemas import (
    ConsumerGroupDescribeRequest,
    ConsumerGroupDescribeResponse,
    ConsumerGroupHeartbeatRequest,
    ConsumerGroupHeartbeatResponse,
)
from course_lib.wire.apis.topic_ids import topic_uuid


def test_our_schemas_round_trip():
    req = ConsumerGroupHeartbeatRequest(
        version=1, group_id="g", member_id="m", member_epoch=0, subscribed_topic_names=["t"], topic_partitions=[]
    )
    assert ConsumerGroupHeartbeatRequest.decode(req.encode(), version=1).subscribed_topic_names == ["t"]
    resp = build(
        ConsumerGroupHeartbeatResponse,
        1,
        throttle_time_ms=0,
        error_code=0,
        member_id="m",
        member_epoch=3,
        heartbeat_interval_ms=5000,
        assignment={"topic_partitions": [{"topic_id": topic_uuid(1), "partitions": [0, 2]}]},
    )
    back = ConsumerGroupHeartbeatResponse.decode(resp.encode(), version=1)
    assert back.member_epoch == 3 and back.assignment.topic_partitions[0].partitions == [0, 2]
    assert ConsumerGroupDescribeRequest(version=0, group_ids=["g"], include_authorized_operations=False).encode()
    assert ConsumerGroupDescribeResponse.API_KEY == 69
    assert SUPPORTED[ApiKey.ConsumerGroupHeartbeat][:2] == (0, 1)
    assert SUPPORTED[ApiKey.ConsumerGroupDescribe][:2] == (0, 1)


def partitions(consumer) -> list:
    return sorted(p.partition for p in consumer.assignment())


def poll_until(consumers, condition, timeout_s: float) -> float:
    start = time.monotonic()
    while time.monotonic() - start < timeout_s:
        if condition():
            return time.monotonic() - start
        for c in consumers:
            c.poll(0.05)
    raise AssertionError(f"not within {timeout_s} s: {[partitions(c) for c in consumers]}")


def describe(wire, group: str) -> dict:
    def on_the_simulation_thread() -> dict:
        coordinator = next(b for b in wire.cluster.brokers.values() if group in b.groups.consumer_groups)
        return coordinator.groups.consumer_groups[group].describe()

    return wire.call(on_the_simulation_thread)


@pytest.mark.timeout(120)
def test_librdkafka_joins_and_a_second_member_takes_half(wire_cluster):
    wire_cluster.create_topic("t", partitions=4)
    group = f"g-{uuid.uuid4().hex[:6]}"
    conf = {"bootstrap.servers": wire_cluster.bootstrap_servers, "group.id": group, "group.protocol": "consumer"}
    a: Consumer | None = Consumer(conf)
    b = None
    try:
        a.subscribe(["t"])
        poll_until([a], lambda: partitions(a) == [0, 1, 2, 3], 30)
        first = describe(wire_cluster, group)
        assert (first["state"], first["group_epoch"], first["assignor"]) == ("Stable", 1, "uniform")
        b = Consumer(conf)
        b.subscribe(["t"])
        poll_until([a, b], lambda: len(partitions(a)) == 2 and len(partitions(b)) == 2, 60)
        assert sorted(partitions(a) + partitions(b)) == [0, 1, 2, 3]
        after = describe(wire_cluster, group)
        assert after["group_epoch"] == 2 and {m["member_epoch"] for m in after["members"]} == {2}
        a.close()  # leaves (epoch -1): b gets the rest
        a = None
        poll_until([b], lambda: partitions(b) == [0, 1, 2, 3], 60)
        assert describe(wire_cluster, group)["group_epoch"] == 3
    finally:
        if a is not None:
            a.close()
        if b is not None:
            b.close()
