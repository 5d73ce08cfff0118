"""TxnOffsetCommit per version on Kafka 4.3.1, with the probes of tests/wire/test_txn_offset_commit.py."""

import pytest

from tests.wire.client_probes import (
    aiokafka_consume_transform_produce,
    consume_transform_produce,
    produce_values,
    txn_offset_commit_codes,
)
from tests.wire.test_txn_offset_commit import TXN_OFFSET_COMMIT_ANSWERS

pytestmark = pytest.mark.real_kafka


def test_txn_offset_commit_checks_the_member_only_when_named_on_kafka(cluster):
    pytest.importorskip("confluent_kafka")
    topic = cluster.create_topic("txo")
    assert txn_offset_commit_codes(cluster.bootstrap_servers, topic) == TXN_OFFSET_COMMIT_ANSWERS


def test_confluent_consume_transform_produce_on_kafka(cluster):
    pytest.importorskip("confluent_kafka")
    source, sink = cluster.create_topic("ctp-in"), cluster.create_topic("ctp-out")
    produce_values(cluster.bootstrap_servers, source, [f"v{i}" for i in range(10)])
    out, committed = consume_transform_produce(cluster.bootstrap_servers, source, sink)
    assert out == [f"V{i}" for i in range(10)] and committed == 10


def test_aiokafka_consume_transform_produce_on_kafka(cluster):
    pytest.importorskip("aiokafka")
    pytest.importorskip("confluent_kafka")
    source, sink = cluster.create_topic("aio-in"), cluster.create_topic("aio-out")
    produce_values(cluster.bootstrap_servers, source, [f"v{i}" for i in range(10)])
    out, committed = aiokafka_consume_transform_produce(cluster.bootstrap_servers, source, sink)
    assert out == [f"V{i}" for i in range(10)] and committed == 10
