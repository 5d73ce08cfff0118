"""Compressed batches on the wire front end (issue 30): librdkafka and kafka-python produce with
gzip, snappy, lz4 and zstd and read the values back; a batch the front end cannot decode gets
Kafka's error answer on an open connection. tests/real/test_confluent_codecs.py runs the same
probes on Kafka 4.3.1 and asserts the same outcomes."""

import pytest

from .client_probes import (
    CODECS,
    kafka_python_codec_roundtrip,
    librdkafka_codec_roundtrip,
    raw_produce_error_codes,
    acks0_bad_batch_closes_the_connection,
)

#: what Kafka 4.3.1 answers each malformed batch of client_probes.malformed_batches with
#: (measured by tests/real/test_confluent_codecs.py, on a connection that stays open)
MALFORMED_ANSWERS = {
    "bad crc": 2,  # CORRUPT_MESSAGE
    "unknown codec id 5": -1,  # UNKNOWN_SERVER_ERROR: CompressionType.forId's IllegalArgumentException
    "gzip bits over plain records": -1,  # UNKNOWN_SERVER_ERROR: the codec's KafkaException
    "zstd at Produce v6": 76,  # UNSUPPORTED_COMPRESSION_TYPE
    "zstd at Produce v7": 0,
    "two batches": 87,  # INVALID_RECORD
}


@pytest.mark.parametrize("codec", CODECS)
def test_librdkafka_produces_and_reads_each_codec(wire, codec):
    pytest.importorskip("confluent_kafka")
    wire.create_topic(f"codec-{codec}", replication_factor=3)
    got = librdkafka_codec_roundtrip(wire.bootstrap_servers, f"codec-{codec}", codec)
    assert got == [f"{codec}-{i}" for i in range(20)]


@pytest.mark.parametrize("codec", CODECS)
def test_kafka_python_compressed_batches(wire, codec):
    pytest.importorskip("confluent_kafka")
    wire.create_topic(f"codec-kp-{codec}", replication_factor=3)
    topic = f"codec-kp-{codec}"
    got = kafka_python_codec_roundtrip(wire.bootstrap_servers, topic, codec)
    assert got == [f"kp-{codec}-{i}" for i in range(20)]


def test_malformed_batches_get_kafkas_error_codes(wire):
    # a batch whose records still decode is CRC-checked only with a C CRC32C (records.CHECK_EVERY_CRC)
    pytest.importorskip("crc32c", reason="pip install -e '.[clients]'")
    wire.create_topic("codec-malformed", replication_factor=3)
    assert raw_produce_error_codes(wire.bootstrap_servers, "codec-malformed") == MALFORMED_ANSWERS


def test_an_undecodable_batch_at_acks_0_closes_the_connection(wire):
    pytest.importorskip("crc32c", reason="pip install -e '.[clients]'")
    wire.create_topic("acks0", replication_factor=3)
    topic = "acks0"
    assert acks0_bad_batch_closes_the_connection(wire.bootstrap_servers, topic)
