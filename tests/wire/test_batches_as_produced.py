"""Fetched batches come back as produced (issue 39): Kafka keeps a producer's v2 batch as it came
(``compression.type=producer``, its default) and fills in only the base offset and leader epoch,
so a consumer sees the producer's codec, record count per batch and create timestamps. Before,
the wire cluster rebuilt every batch uncompressed. tests/real/test_batches_as_produced_real.py
measures the same on Kafka 4.3.1."""

import pytest

from .client_probes import fetched_batches

CODEC_IDS = {"none": 0, "gzip": 1, "snappy": 2, "lz4": 3, "zstd": 4}
#: (codec id, records, first timestamp - the producer's base, max timestamp - base, CreateTime)
AS_PRODUCED = {codec: [(codec_id, 5, 0, 40, 0)] for codec, codec_id in CODEC_IDS.items()}


@pytest.mark.parametrize("codec", sorted(CODEC_IDS))
def test_fetched_batches_are_the_produced_ones(wire, codec):
    wire.create_topic(f"as-produced-{codec}", replication_factor=3)
    assert fetched_batches(wire.bootstrap_servers, f"as-produced-{codec}", codec) == AS_PRODUCED[codec]
