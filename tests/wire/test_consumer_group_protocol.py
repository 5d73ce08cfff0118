"""The consumer group protocol (KIP-848) over the wire with librdkafka (confluent-kafka,
``group.protocol=consumer``): a member joins and gets every partition from the coordinator's
assignor, a second member's join moves half of them - after the first revoked them (incremental
reconciliation), with epochs ConsumerGroupDescribe shows. Our own schemas of api keys 68/69
(course_lib/wire/apis/schemas) round-trip. The Java client's run is
tests/java_client/test_consumer_group_protocol_wire.py."""

from __future__ import annotations

import time

import pytest
from kafka.protocol.api_key import ApiKey

from course_lib.broker.consumer_group_invariants import ConsumerGroupInvariants
from course_lib.wire.apis import SUPPORTED
from course_lib.wire.apis.common import build
from course_lib.wire.apis.schemas import (
    ConsumerGroupDescribeRequest,
    ConsumerGroupDescribeResponse,
    ConsumerGroupHeartbeatRequest,
    ConsumerGroupHeartbeatResponse,
)
from course_lib.wire.apis.topic_ids import topic_uuid
from course_lib.experiments import protocol_matrix as matrix
from tests import consumer_protocol_support as kip848


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


def describe(wire, group_prefix: str) -> dict:
    def on_the_simulation_thread() -> dict:
        groups = [g for b in wire.cluster.brokers.values() for g in b.groups.consumer_groups.values()]
        return next(g for g in groups if g.group_id.startswith(group_prefix)).describe()

    return wire.call(on_the_simulation_thread)


@pytest.mark.timeout(120)
def test_librdkafka_join_split_leave(wire_cluster):
    """The same observations as on Kafka 4.3.1 (tests/real/test_consumer_group_protocol.py), with
    the consumer group invariants checked after every simulator event."""
    checker = wire_cluster.call(lambda: ConsumerGroupInvariants.attach(wire_cluster.cluster))
    got = kip848.join_split_leave(
        "confluent-kafka", wire_cluster.bootstrap_servers, wire_cluster.create_topic("t", partitions=4)
    )
    print("wire librdkafka:", got.pop("seconds"))
    assert got == kip848.EXPECTED
    # a new group is at epoch 1 (KAFKA-20268); join, join, leave, and the last one's leave on
    # close: four bumps, no member left
    described = describe(wire_cluster, "kip848-confluent-kafka-")
    assert (described["state"], described["group_epoch"], described["members"]) == ("Empty", 5, [])
    assert wire_cluster.call(lambda: checker.checks) > 100


@pytest.mark.timeout(120)
def test_librdkafka_admin_describes_a_consumer_group(wire_cluster):
    """ConsumerGroupDescribe over the wire: librdkafka's admin client reads type, state, assignor
    and each member's assignment (a classic DescribeGroups answer cannot say "consumer")."""
    from confluent_kafka import Consumer
    from confluent_kafka.admin import AdminClient

    wire_cluster.create_topic("t", partitions=4)
    servers = wire_cluster.bootstrap_servers
    member = Consumer({"bootstrap.servers": servers, "group.id": "described", "group.protocol": "consumer"})
    try:
        member.subscribe(["t"])
        deadline = time.monotonic() + 30
        while not member.assignment() and time.monotonic() < deadline:
            member.poll(0.1)
        admin = AdminClient({"bootstrap.servers": servers})  # kept: its futures die with it
        described = admin.describe_consumer_groups(["described"])["described"].result(timeout=30)
    finally:
        member.close()
    assert (described.type.name, described.state.name, described.partition_assignor) == (
        "CONSUMER",
        "STABLE",
        "uniform",
    )
    assert [sorted(tp.partition for tp in m.assignment.topic_partitions) for m in described.members] == [[0, 1, 2, 3]]


@pytest.mark.timeout(180)
def test_librdkafka_crashed_member():
    """A member killed (a child process, SIGKILL) is removed after the session timeout - 6 s here
    (Kafka's is 45 s, tests/real/test_consumer_group_protocol.py); the same assignments and counts.
    Once per test run: notebook 09's protocol matrix reads it back."""
    got = matrix.measured("consumer group: crashed member", "wire confluent-kafka")
    print("wire librdkafka crash:", got["seconds"])
    assert not kip848.check(got, kip848.CRASH_EXPECTED)


@pytest.mark.timeout(180)
def test_librdkafka_slow_handler():
    got = matrix.measured("consumer group: slow handler", "wire confluent-kafka")
    print("wire librdkafka slow handler:", got["seconds"])
    assert not kip848.check(got, kip848.SLOW_EXPECTED)
