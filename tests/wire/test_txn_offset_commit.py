"""TxnOffsetCommit as Kafka checks it (issue 30): ClassicGroup.validateOffsetCommit checks the
member only when the request names one or a generation - so v0-v2, which have neither field, are
not refused while the group has members (aiokafka's consume-transform-produce loop sends v0),
and v3+ naming an unknown member is. tests/real/test_confluent_txn_offsets.py asserts the same
on Kafka 4.3.1."""

import pytest

from .client_probes import (
    aiokafka_consume_transform_produce,
    consume_transform_produce,
    produce_values,
    txn_offset_commit_codes,
)

#: case -> the error code Kafka 4.3.1 answers it with (tests/real/test_confluent_txn_offsets.py)
TXN_OFFSET_COMMIT_ANSWERS = {
    "v0": 0,
    "v3 no member": 0,
    "v3 unknown member": 25,  # UNKNOWN_MEMBER_ID
    "v0 fenced": 47,  # INVALID_PRODUCER_EPOCH: the producer was fenced before its commit
    "v3 fenced": 47,
}


def test_txn_offset_commit_checks_the_member_only_when_named(wire):
    pytest.importorskip("confluent_kafka")
    wire.create_topic("txo", replication_factor=3)
    assert txn_offset_commit_codes(wire.bootstrap_servers, "txo") == TXN_OFFSET_COMMIT_ANSWERS


def test_confluent_consume_transform_produce(wire):
    pytest.importorskip("confluent_kafka")
    wire.create_topic("ctp-in", replication_factor=3)
    wire.create_topic("ctp-out", replication_factor=3)
    produce_values(wire.bootstrap_servers, "ctp-in", [f"v{i}" for i in range(10)])
    out, committed = consume_transform_produce(wire.bootstrap_servers, "ctp-in", "ctp-out")
    assert out == [f"V{i}" for i in range(10)] and committed == 10


def test_aiokafka_consume_transform_produce(wire):
    """aiokafka sends TxnOffsetCommit v0 while its consumer is a member of the group: refused
    with UNKNOWN_MEMBER_ID on the wire before issue 30, taken by Kafka."""
    pytest.importorskip("aiokafka")
    pytest.importorskip("confluent_kafka")
    wire.create_topic("aio-in", replication_factor=3)
    wire.create_topic("aio-out", replication_factor=3)
    produce_values(wire.bootstrap_servers, "aio-in", [f"v{i}" for i in range(10)])
    out, committed = aiokafka_consume_transform_produce(wire.bootstrap_servers, "aio-in", "aio-out")
    assert out == [f"V{i}" for i in range(10)] and committed == 10
