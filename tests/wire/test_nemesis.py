"""The nemesis on the wire cluster: kafka-python meets crashed, frozen and silent brokers."""

import socket
import time

import pytest
from kafka import KafkaProducer
from kafka.protocol.consumer import (
    FetchRequest,
    FetchResponse,
    OffsetForLeaderEpochRequest,
    OffsetForLeaderEpochResponse,
)
from kafka.protocol.metadata import ApiVersionsRequest, ApiVersionsResponse, MetadataRequest, MetadataResponse

from course_lib.wire import WireCluster

from .client_probes import RawClient

FAST_FAILOVER = {
    "broker_session_timeout_ms": 1500,
    "broker_heartbeat_interval_ms": 300,
    "replica_lag_time_max_ms": 2000,
    "group_initial_rebalance_delay_ms": 0,
}


@pytest.fixture
def fast(no_leaks):
    w = WireCluster(brokers=3, seed=4, **FAST_FAILOVER).start()
    try:
        yield w
    finally:
        w.stop()


def values(wire, topic: str) -> list:
    return [v for _, _, v in wire.call(lambda: wire.cluster.committed_records(topic))]


def test_crash_refuses_connections_and_clients_fail_over(fast):
    fast.create_topic("t", min_insync_replicas=2)
    leader = fast.call(lambda: fast.cluster.leader_of("t"))
    port = fast.ports[leader]
    raw = RawClient(f"127.0.0.1:{port}")
    producer = KafkaProducer(bootstrap_servers=fast.bootstrap_servers, acks="all", enable_idempotence=True)
    producer.send("t", b"before").get(timeout=10)
    fast.nemesis.crash(leader)
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", port), timeout=2)
    raw.assert_closed()  # the open connection was reset
    raw.close()
    producer.send("t", b"after").get(timeout=20)  # the controller elected a new leader
    assert fast.call(lambda: fast.cluster.leader_of("t")) not in (None, leader)
    fast.nemesis.restart(leader)
    socket.create_connection(("127.0.0.1", port), timeout=2).close()  # same port again
    producer.send("t", b"restarted").get(timeout=10)
    producer.close()
    assert values(fast, "t") == [b"before", b"after", b"restarted"]
    crash_and_restart = [op.f for op in fast.cluster.history if op.process == "nemesis"]
    assert crash_and_restart == ["crash", "restart"]


@pytest.mark.parametrize("idempotent, expected", [(True, [b"x"]), (False, [b"x", b"x"])])
def test_a_lost_ack_is_retried_and_only_idempotence_removes_the_duplicate(fast, idempotent, expected):
    fast.create_topic("t", min_insync_replicas=2)
    producer = KafkaProducer(
        bootstrap_servers=fast.bootstrap_servers,
        acks="all",
        enable_idempotence=idempotent,
        retries=5,
        request_timeout_ms=1000,
        **({} if idempotent else {"max_in_flight_requests_per_connection": 1}),
    )
    producer.send("t", b"warm-up").get(timeout=10)
    fast.nemesis.lose_next_ack()
    producer.send("t", b"x").get(timeout=20)  # appended, answer lost, timed out, retried
    producer.close()
    assert values(fast, "t") == [b"warm-up", *expected]


def test_a_lost_request_is_retried_once_written(fast):
    fast.create_topic("t", min_insync_replicas=2)
    producer = KafkaProducer(
        bootstrap_servers=fast.bootstrap_servers, acks="all", enable_idempotence=True, request_timeout_ms=1000
    )
    producer.send("t", b"warm-up").get(timeout=10)
    fast.nemesis.lose_next_request()
    started = time.monotonic()
    producer.send("t", b"y").get(timeout=20)
    assert time.monotonic() - started >= 0.9  # it waited for its request timeout
    producer.close()
    assert values(fast, "t") == [b"warm-up", b"y"]


def test_pause_holds_answers_until_resume(fast):
    fast.create_topic("t", min_insync_replicas=2)
    leader = fast.call(lambda: fast.cluster.leader_of("t"))
    producer = KafkaProducer(bootstrap_servers=fast.bootstrap_servers, acks="all", request_timeout_ms=10_000)
    producer.send("t", b"a").get(timeout=10)
    fast.nemesis.pause(leader)
    future = producer.send("t", b"b")
    time.sleep(0.5)
    assert not future.is_done  # the frozen leader answers nothing (its socket is still open)
    fast.nemesis.resume(leader)
    assert future.get(timeout=10).offset == 1
    producer.close()


def test_a_paused_broker_answers_not_even_api_versions(fast):
    raw = RawClient(f"127.0.0.1:{fast.ports[2]}")
    raw.sock.settimeout(0.3)
    try:
        fast.nemesis.pause(2)
        raw.sock.sendall(bytes(_api_versions_frame()))
        with pytest.raises(socket.timeout):
            raw.read_frame()
        fast.nemesis.resume(2)
        raw.sock.settimeout(5)
        assert ApiVersionsResponse.decode(raw.read_frame(), version=3, header=True).error_code == 0
    finally:
        raw.close()


def _api_versions_frame():
    request = ApiVersionsRequest(client_software_name="raw", client_software_version="0")
    request.API_VERSION = 3
    request.with_header(correlation_id=1, client_id="raw")
    return request.encode(header=True, framed=True)


def test_random_schedules_are_seeded(no_leaks):
    """The simulator's schedules (course_lib.nemesis); without a topic, no fault that aims at a
    topic's leader."""
    from course_lib.nemesis import NEEDS_TOPIC

    with WireCluster(brokers=3, seed=9) as a, WireCluster(brokers=3, seed=9) as b:
        plan_a = a.nemesis.random_schedule(60, seed=5)
        plan_b = b.nemesis.random_schedule(60, seed=5)
        a.nemesis.cancel()
        b.nemesis.cancel()
    assert plan_a == plan_b and len(plan_a) == 30
    assert not {fault.kind for fault in plan_a} & NEEDS_TOPIC


def test_offset_for_leader_epoch_after_a_leader_change(fast):
    """KIP-320: where did epoch 0 end? The new leader answers from its own log."""
    fast.create_topic("t", min_insync_replicas=2)
    producer = KafkaProducer(bootstrap_servers=fast.bootstrap_servers, acks="all")
    for i in range(3):
        producer.send("t", b"e0-%d" % i).get(timeout=10)
    old = fast.call(lambda: fast.cluster.leader_of("t"))
    fast.nemesis.crash(old)
    producer.send("t", b"e1").get(timeout=20)
    producer.close()
    new = fast.call(lambda: fast.cluster.leader_of("t"))
    raw = RawClient(f"127.0.0.1:{fast.ports[new]}")
    try:
        Topic = OffsetForLeaderEpochRequest.OffsetForLeaderTopic
        request = OffsetForLeaderEpochRequest(
            replica_id=-1,
            topics=[
                Topic(
                    topic="t",
                    partitions=[Topic.OffsetForLeaderPartition(partition=0, current_leader_epoch=1, leader_epoch=0)],
                )
            ],
        )
        answer = OffsetForLeaderEpochResponse.decode(raw.request(request, 4), version=4, header=True)
    finally:
        raw.close()
    (part,) = answer.topics[0].partitions
    assert (part.error_code, part.leader_epoch, part.end_offset) == (0, 0, 3)


def test_fetch_with_another_leader_epoch_is_fenced(fast):
    """KIP-320: the leader refuses a fetch that expects an older (or a newer) leader epoch."""
    fast.create_topic("t", min_insync_replicas=2)
    producer = KafkaProducer(bootstrap_servers=fast.bootstrap_servers, acks="all")
    producer.send("t", b"x").get(timeout=10)
    old = fast.call(lambda: fast.cluster.leader_of("t"))
    fast.nemesis.crash(old)
    producer.send("t", b"y").get(timeout=20)  # a new leader, epoch 1
    producer.close()
    new = fast.call(lambda: fast.cluster.leader_of("t"))
    raw = RawClient(f"127.0.0.1:{fast.ports[new]}")
    try:
        codes = {}
        for epoch in (0, 1, 2, -1):
            answer = _fetch_v12(raw, "t", 0, current_leader_epoch=epoch)
            codes[epoch] = answer.error_code
    finally:
        raw.close()
    assert codes == {0: 74, 1: 0, 2: 75, -1: 0}  # FENCED_LEADER_EPOCH, ok, UNKNOWN_LEADER_EPOCH, not checked


def _fetch_v12(raw, topic: str, offset: int, current_leader_epoch: int = -1, last_fetched_epoch: int = -1):
    """One partition's answer to a Fetch v12 (the version that carries last_fetched_epoch)."""
    Topic = FetchRequest.FetchTopic
    request = FetchRequest(
        replica_id=-1,
        max_wait_ms=0,
        min_bytes=1,
        max_bytes=1 << 20,
        isolation_level=0,
        session_id=0,
        session_epoch=-1,
        topics=[
            Topic(
                topic=topic,
                partitions=[
                    Topic.FetchPartition(
                        partition=0,
                        current_leader_epoch=current_leader_epoch,
                        fetch_offset=offset,
                        last_fetched_epoch=last_fetched_epoch,
                        partition_max_bytes=1 << 20,
                    )
                ],
            )
        ],
        forgotten_topics_data=[],
        rack_id="",
    )
    return FetchResponse.decode(raw.request(request, 12), version=12, header=True).responses[0].partitions[0]


def test_a_fetch_past_where_its_epoch_ended_gets_the_diverging_epoch(fast):
    """KIP-595 (Fetch v12): the leader alone took old3..old5 in epoch 0 and died; an out-of-sync
    follower leads without them (unclean). A consumer at offset 6 that last fetched epoch 0 gets
    no records but "epoch 0 ended at 3" - as Kafka answers, and what kafka-python truncates by
    when the leader changed after its poll checked the position."""
    fast.create_topic("t", min_insync_replicas=1, unclean_leader_election_enable=True)
    producer = KafkaProducer(bootstrap_servers=fast.bootstrap_servers, acks=1, enable_idempotence=False)
    for i in range(3):
        producer.send("t", b"old%d" % i).get(timeout=10)

    def every_replica_has_three() -> bool:
        return all(r.leo == 3 for r in fast.cluster.inspect("t").replica_views)

    assert fast.wait_until(every_replica_has_three, 10)
    leader = fast.call(lambda: fast.cluster.leader_of("t"))
    followers = [b for b in sorted(fast.ports) if b != leader]
    for b in followers:
        fast.nemesis.crash(b)
    assert fast.wait_until(lambda: fast.cluster.inspect("t").isr == (leader,), 20)
    for i in range(3, 6):
        producer.send("t", b"old%d" % i).get(timeout=10)
    producer.close()
    fast.nemesis.crash(leader)
    fast.nemesis.restart(followers[0])
    assert fast.wait_until(lambda: fast.cluster.leader_of("t") == followers[0], 20)
    epoch = fast.call(lambda: fast.cluster.inspect("t").leader_epoch)
    raw = RawClient(f"127.0.0.1:{fast.ports[followers[0]]}")
    try:
        diverged = _fetch_v12(raw, "t", 6, current_leader_epoch=epoch, last_fetched_epoch=0)
        at_the_end_of_epoch_0 = _fetch_v12(raw, "t", 3, current_leader_epoch=epoch, last_fetched_epoch=0)
    finally:
        raw.close()
    assert diverged.error_code == 0 and not diverged.records
    assert (diverged.diverging_epoch.epoch, diverged.diverging_epoch.end_offset) == (0, 3)
    assert at_the_end_of_epoch_0.error_code == 0 and at_the_end_of_epoch_0.diverging_epoch is None


def test_an_isolated_broker_hears_nothing_until_healed(fast):
    raw = RawClient(f"127.0.0.1:{fast.ports[3]}")
    raw.sock.settimeout(0.3)
    try:
        fast.nemesis.isolate(3)
        raw.sock.sendall(bytes(_metadata_frame()))
        with pytest.raises(socket.timeout):
            raw.read_frame()  # the request was lost in the partition
    finally:
        raw.close()
    fast.nemesis.heal()
    again = RawClient(f"127.0.0.1:{fast.ports[3]}")
    try:
        assert MetadataResponse.decode(again.request(MetadataRequest(topics=None), 1), version=1, header=True).brokers
    finally:
        again.close()
    assert [op.f for op in fast.cluster.history if op.process == "nemesis"] == ["isolate", "heal"]


def _metadata_frame():
    request = MetadataRequest(topics=None)
    request.API_VERSION = 1
    request.with_header(correlation_id=1, client_id="raw")
    return request.encode(header=True, framed=True)
