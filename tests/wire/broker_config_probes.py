"""Probes of the broker checks and defaults issue 39 named, run the same way against the wire
cluster (tests/wire/test_broker_configs.py) and Kafka 4.3.1 (tests/real/test_broker_configs_real.py):
each returns plain values that both sides compare with one expected table."""

from __future__ import annotations

import time
import uuid

from kafka.protocol.consumer import JoinGroupRequest, JoinGroupResponse, OffsetCommitRequest, OffsetCommitResponse
from kafka.protocol.metadata import MetadataRequest, MetadataResponse
from kafka.protocol.producer import TxnOffsetCommitRequest, TxnOffsetCommitResponse

from course_lib.wire.apis.common import build

from .client_probes import _coordinator, ask_coordinator, connect


def _metadata(client, name: str, allow: bool):
    frame = client.request(
        build(
            MetadataRequest,
            12,
            topics=[{"topic_id": uuid.UUID(int=0), "name": name}],
            allow_auto_topic_creation=allow,
            include_topic_authorized_operations=False,
        ),
        12,
    )
    return MetadataResponse.decode(frame, version=12, header=True).topics[0]


def auto_creation_answers(bootstrap: str) -> dict:
    """Metadata v12 for topics nobody created: allowed to create, not allowed, an invalid name."""
    host, port = bootstrap.split(",")[0].rsplit(":", 1)
    client = connect(host, int(port))
    fresh = f"auto-{uuid.uuid4().hex[:8]}"
    try:
        first = _metadata(client, fresh, allow=True).error_code
        deadline = time.monotonic() + 30
        while True:  # the client asks again until the new topic has a leader everywhere
            topic = _metadata(client, fresh, allow=True)
            if topic.error_code == 0 and all(p.leader_id >= 0 for p in topic.partitions):
                break
            assert time.monotonic() < deadline, f"{fresh} was never created: {topic}"
            time.sleep(0.2)
        return {
            "first answer": first,
            "partitions": len(topic.partitions),
            "replicas": len(topic.partitions[0].replica_nodes),
            "not allowed": _metadata(client, f"auto-{uuid.uuid4().hex[:8]}", allow=False).error_code,
            "invalid name": _metadata(client, "no spaces allowed", allow=True).error_code,
        }
    finally:
        client.close()


def join_session_timeout_codes(bootstrap: str) -> dict:
    """JoinGroup v3 (no member id round trip, KIP-394) with session.timeout.ms below, inside and above Kafka's default bounds
    (group.min.session.timeout.ms 6000, group.max.session.timeout.ms 1800000)."""
    group = f"sessions-{uuid.uuid4().hex[:8]}"
    raw = [_coordinator(bootstrap, group, 0)]
    out = {}
    try:
        for session_ms in (3000, 1_800_001, 10_000):
            request = build(
                JoinGroupRequest,
                3,
                group_id=group,
                session_timeout_ms=session_ms,
                rebalance_timeout_ms=10_000,
                member_id="",
                group_instance_id=None,
                protocol_type="consumer",
                protocols=[{"name": "range", "metadata": b""}],
            )
            out[session_ms] = ask_coordinator(raw, bootstrap, group, 0, request, JoinGroupResponse, 3).error_code
    finally:
        raw[0].close()
    return out


def commit_to_unknown_partitions(bootstrap: str, topic: str) -> dict:
    """OffsetCommit v8 and TxnOffsetCommit v3 for a partition ``topic`` lacks and a topic nobody
    created: the error code of each partition (the broker answers before the coordinator looks
    at the group or the producer)."""
    group = f"unknown-{uuid.uuid4().hex[:8]}"
    missing = f"missing-{uuid.uuid4().hex[:8]}"
    topics = [
        {"name": topic, "partitions": [{"partition_index": 99, "committed_offset": 1, "committed_metadata": ""}]},
        {"name": missing, "partitions": [{"partition_index": 0, "committed_offset": 1, "committed_metadata": ""}]},
    ]
    coordinator = _coordinator(bootstrap, group, 0)
    try:
        plain = OffsetCommitResponse.decode(
            coordinator.request(
                build(
                    OffsetCommitRequest,
                    8,
                    group_id=group,
                    generation_id_or_member_epoch=-1,
                    member_id="",
                    group_instance_id=None,
                    topics=topics,
                ),
                8,
            ),
            version=8,
            header=True,
        )
        txn = TxnOffsetCommitResponse.decode(
            coordinator.request(
                build(
                    TxnOffsetCommitRequest,
                    3,
                    transactional_id=f"tx-{group}",
                    group_id=group,
                    producer_id=1,
                    producer_epoch=0,
                    generation_id=-1,
                    member_id="",
                    group_instance_id=None,
                    topics=topics,
                ),
                3,
            ),
            version=3,
            header=True,
        )
    finally:
        coordinator.close()
    return {
        kind: sorted((t.name == topic, p.partition_index, p.error_code) for t in answer.topics for p in t.partitions)
        for kind, answer in (("OffsetCommit", plain), ("TxnOffsetCommit", txn))
    }


def committed_offset_roundtrip(bootstrap: str, topic: str) -> tuple:
    """kafka-python commits (offset 5, metadata, leader epoch 0) and fetches it back."""
    from kafka import KafkaConsumer, TopicPartition
    from kafka.structs import OffsetAndMetadata

    consumer = KafkaConsumer(
        bootstrap_servers=bootstrap, group_id=f"meta-{uuid.uuid4().hex[:8]}", enable_auto_commit=False
    )
    try:
        tp = TopicPartition(topic, 0)
        consumer.commit({tp: OffsetAndMetadata(5, "batch 7 of job 3", 0)})
        got = consumer.committed(tp, metadata=True)
        return (got.offset, got.metadata, got.leader_epoch)
    finally:
        consumer.close()
