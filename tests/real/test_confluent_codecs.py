"""The wire front end's codecs and malformed batches, measured on Kafka 4.3.1 with the same
probes as tests/wire/test_codecs.py (issue 30): the two must agree."""

import pytest

from tests.wire.client_probes import (
    CODECS,
    kafka_python_codec_roundtrip,
    librdkafka_codec_roundtrip,
    raw_produce_error_codes,
    acks0_bad_batch_closes_the_connection,
)
from tests.wire.test_codecs import MALFORMED_ANSWERS

pytestmark = pytest.mark.real_kafka


@pytest.mark.parametrize("codec", CODECS)
def test_librdkafka_produces_and_reads_each_codec_on_kafka(cluster, codec):
    pytest.importorskip("confluent_kafka")
    topic = cluster.create_topic(f"codec-{codec}")
    assert librdkafka_codec_roundtrip(cluster.bootstrap_servers, topic, codec) == [f"{codec}-{i}" for i in range(20)]


@pytest.mark.parametrize("codec", CODECS)
def test_kafka_python_compressed_batches_on_kafka(cluster, codec):
    pytest.importorskip("confluent_kafka")
    topic = cluster.create_topic(f"codec-kp-{codec}")
    got = kafka_python_codec_roundtrip(cluster.bootstrap_servers, topic, codec)
    assert got == [f"kp-{codec}-{i}" for i in range(20)]


def test_malformed_batches_get_kafkas_error_codes(cluster):
    topic = cluster.create_topic("codec-malformed")
    assert raw_produce_error_codes(cluster.bootstrap_servers, topic) == MALFORMED_ANSWERS


def test_an_undecodable_batch_at_acks_0_closes_the_connection_on_kafka(cluster):
    topic = cluster.create_topic("acks0")
    assert acks0_bad_batch_closes_the_connection(cluster.bootstrap_servers, topic)
