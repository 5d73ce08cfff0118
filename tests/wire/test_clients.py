"""Unmodified kafka-python 3.0.12 against the simulated cluster over TCP, one API group at a time."""

import pytest
from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import ConfigResource, ConfigResourceType, NewTopic
from kafka.protocol.metadata import ApiVersionsRequest, ApiVersionsResponse, MetadataRequest

from course_lib.wire import apis

from .client_probes import RawClient


def poll_all(consumer, count: int, timeout_s: float = 20.0) -> list:
    import time

    got: list = []
    deadline = time.monotonic() + timeout_s
    while len(got) < count and time.monotonic() < deadline:
        for records in consumer.poll(200).values():
            got += records
    return got


def test_api_versions_advertises_only_what_is_implemented(wire):
    raw = RawClient(wire.bootstrap_servers)
    try:
        frame = raw.request(ApiVersionsRequest(client_software_name="raw", client_software_version="0"), 3)
    finally:
        raw.close()
    resp = ApiVersionsResponse.decode(frame, version=3, header=True)
    assert resp.error_code == 0
    advertised = {k.api_key: (k.min_version, k.max_version) for k in resp.api_keys}
    assert advertised == {key: (lo, hi) for key, (lo, hi, _) in apis.SUPPORTED.items()}
    # transactions v2 and Produce by topic id as Kafka 4.3.1: clients choose them by the broker
    # features (tests/wire/test_broker_features.py); Produce 13 and Fetch 13+ by topic id
    assert advertised[0][1] == 13 and advertised[1][1] == 18 and advertised[26][1] == 5


def test_idempotent_producer_and_assigned_consumer_round_trip(wire):
    wire.create_topic("orders", partitions=2, min_insync_replicas=2)
    producer = KafkaProducer(bootstrap_servers=wire.bootstrap_servers, acks="all", enable_idempotence=True)
    futures = [producer.send("orders", key=b"k%d" % i, value=b"v%d" % i, partition=i % 2) for i in range(20)]
    metadata = [f.get(timeout=10) for f in futures]
    producer.close()
    assert sorted((m.partition, m.offset) for m in metadata) == sorted((p, o) for p in (0, 1) for o in range(10))
    # what the replicated log holds, read from the simulator itself
    committed = wire.call(lambda: wire.cluster.committed_records("orders", 0))
    assert [v for _, _, v in committed] == [b"v%d" % i for i in range(0, 20, 2)]

    consumer = KafkaConsumer(bootstrap_servers=wire.bootstrap_servers, enable_auto_commit=False)
    tps = [TopicPartition("orders", 0), TopicPartition("orders", 1)]
    consumer.assign(tps)
    consumer.seek(tps[0], 3)
    consumer.seek_to_beginning(tps[1])
    records = poll_all(consumer, 17)
    assert sorted((r.partition, r.offset, r.value) for r in records) == sorted(
        [(0, o, b"v%d" % (2 * o)) for o in range(3, 10)] + [(1, o, b"v%d" % (2 * o + 1)) for o in range(10)]
    )
    assert consumer.end_offsets(tps) == {tps[0]: 10, tps[1]: 10}
    assert consumer.beginning_offsets(tps) == {tps[0]: 0, tps[1]: 0}
    # offsets_for_times: the first record at or after a timestamp (producer create times)
    stamps = {(r.partition, r.offset): r.timestamp for r in records}
    found = consumer.offsets_for_times({tps[1]: stamps[(1, 4)], tps[0]: stamps[(0, 9)] + 10_000})
    assert found[tps[1]].offset <= 4 and found[tps[1]].timestamp == stamps[(1, found[tps[1]].offset)]
    assert found[tps[0]] is None  # nothing that late
    consumer.close()


def test_admin_creates_lists_and_describes_topics(wire):
    admin = KafkaAdminClient(bootstrap_servers=wire.bootstrap_servers)
    try:
        result = admin.create_topics([NewTopic("t1", 3, 3, topic_configs={"min.insync.replicas": "2"})])
        assert [t["error_code"] for t in result["topics"]] == [0]
        assert "t1" in admin.list_topics()
        configs = admin.describe_configs([ConfigResource(ConfigResourceType.TOPIC, "t1")])
        assert configs["topic"]["t1"]["min.insync.replicas"]["value"] == "2"
        (described,) = admin.describe_topics(["t1"])
        assert [p["leader_id"] for p in described["partitions"]] == [1, 2, 3]
        with pytest.raises(Exception, match="TopicAlreadyExists"):
            admin.create_topics([NewTopic("t1", 1, 1)], raise_errors=True)
    finally:
        admin.close()
    # the simulator's controller made the decision: same topic config as Cluster.create_topic gives
    assert wire.call(lambda: wire.cluster.topic_config("t1").min_insync_replicas) == 2


def test_group_subscribe_commit_and_describe(wire):
    wire.create_topic("in", partitions=2)
    producer = KafkaProducer(bootstrap_servers=wire.bootstrap_servers)
    for i in range(6):
        producer.send("in", b"m%d" % i, partition=i % 2)
    producer.close()
    consumer = KafkaConsumer(
        "in",
        bootstrap_servers=wire.bootstrap_servers,
        group_id="g1",
        auto_offset_reset="earliest",
        enable_auto_commit=False,
    )
    records = poll_all(consumer, 6)
    assert sorted(r.value for r in records) == [b"m%d" % i for i in range(6)]
    assert consumer.assignment() == {TopicPartition("in", 0), TopicPartition("in", 1)}
    consumer.commit()
    assert consumer.committed(TopicPartition("in", 0)) == 3
    admin = KafkaAdminClient(bootstrap_servers=wire.bootstrap_servers)
    try:
        assert [g["group_id"] for g in admin.list_groups()] == ["g1"]
        group = admin.describe_groups(["g1"])["g1"]
        assert group["group_state"] == "Stable" and len(group["members"]) == 1
        offsets = admin.list_group_offsets("g1")["g1"]
        assert {tp.partition: o.offset for tp, o in offsets.items()} == {0: 3, 1: 3}
    finally:
        admin.close()
    consumer.close()
    # LeaveGroup reached the simulator's coordinator: the group is empty again
    assert wire.wait_until(
        lambda: not wire.cluster.brokers[wire.cluster.leader_of("__consumer_offsets")].groups.groups["g1"].members
    )


def test_transactions_commit_abort_and_read_committed(wire):
    wire.create_topic("tx", partitions=1, min_insync_replicas=2)
    producer = KafkaProducer(bootstrap_servers=wire.bootstrap_servers, transactional_id="tid-1")
    producer.init_transactions()
    producer.begin_transaction()
    for i in range(3):
        producer.send("tx", b"c%d" % i)
    producer.commit_transaction()
    producer.begin_transaction()
    for i in range(3):
        producer.send("tx", b"a%d" % i)
    producer.flush()  # written, then aborted (without the flush kafka-python drops them unsent)
    producer.abort_transaction()
    producer.close()
    committed = KafkaConsumer(
        bootstrap_servers=wire.bootstrap_servers, isolation_level="read_committed", enable_auto_commit=False
    )
    uncommitted = KafkaConsumer(bootstrap_servers=wire.bootstrap_servers, enable_auto_commit=False)
    tp = TopicPartition("tx", 0)
    for c in (committed, uncommitted):
        c.assign([tp])
        c.seek_to_beginning()
    assert [r.value for r in poll_all(committed, 3, timeout_s=5)] == [b"c0", b"c1", b"c2"]
    assert [r.value for r in poll_all(uncommitted, 6)] == [b"c0", b"c1", b"c2", b"a0", b"a1", b"a2"]
    # two control batches (the COMMIT and ABORT markers) are in the log but never handed out
    assert committed.end_offsets([tp])[tp] == 8
    committed.close()
    uncommitted.close()
    assert [v for _, _, v in wire.call(lambda: wire.cluster.aborted_records("tx"))] == [b"a0", b"a1", b"a2"]


def test_consume_transform_produce_commits_offsets_in_the_transaction(wire):
    wire.create_topic("src", partitions=1)
    wire.create_topic("dst", partitions=1)
    producer = KafkaProducer(bootstrap_servers=wire.bootstrap_servers)
    for i in range(4):
        producer.send("src", b"s%d" % i)
    producer.close()
    consumer = KafkaConsumer(
        "src",
        bootstrap_servers=wire.bootstrap_servers,
        group_id="etl",
        auto_offset_reset="earliest",
        enable_auto_commit=False,
        isolation_level="read_committed",
    )
    txn = KafkaProducer(bootstrap_servers=wire.bootstrap_servers, transactional_id="etl-1")
    txn.init_transactions()
    records = poll_all(consumer, 4)
    txn.begin_transaction()
    for r in records:
        txn.send("dst", r.value.upper())
    from kafka.structs import OffsetAndMetadata

    tp = TopicPartition("src", 0)
    txn.send_offsets_to_transaction({tp: OffsetAndMetadata(4, "", -1)}, consumer.group_metadata())
    txn.commit_transaction()
    txn.close()
    assert consumer.committed(tp) == 4
    consumer.close()
    assert [v for _, _, v in wire.call(lambda: wire.cluster.committed_records("dst", read_committed=True))] == [
        b"S0",
        b"S1",
        b"S2",
        b"S3",
    ]


def test_acks_0_gets_no_answer_but_is_appended(wire):
    wire.create_topic("fire", partitions=1)
    producer = KafkaProducer(bootstrap_servers=wire.bootstrap_servers, acks=0)
    for i in range(5):
        producer.send("fire", b"f%d" % i)
    producer.flush()
    producer.close()
    assert wire.wait_until(lambda: len(wire.cluster.committed_records("fire")) == 5)


def test_pipelined_requests_are_answered_in_order(wire):
    """A client may send several requests before reading: the answers come back in order."""
    raw = RawClient(wire.bootstrap_servers)
    try:
        frames = []
        for corr, request in enumerate(
            [MetadataRequest(topics=None), ApiVersionsRequest(client_software_name="r", client_software_version="0")]
            * 3,
            start=1,
        ):
            version = 1 if isinstance(request, MetadataRequest) else 3
            request.API_VERSION = version
            request.with_header(correlation_id=corr, client_id="raw")
            frames.append(bytes(request.encode(header=True, framed=True)))
        raw.sock.sendall(b"".join(frames))
        correlation_ids = [int.from_bytes(raw.read_frame()[:4], "big") for _ in frames]
    finally:
        raw.close()
    assert correlation_ids == [1, 2, 3, 4, 5, 6]
