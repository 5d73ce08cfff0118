"""Kafka 4.3.1 serves a producer's batch as produced: the expectation of
tests/wire/test_batches_as_produced.py, measured with the same probe."""

import pytest

from tests.wire.client_probes import fetched_batches
from tests.wire.test_batches_as_produced import AS_PRODUCED, CODEC_IDS

pytestmark = pytest.mark.real_kafka


@pytest.mark.parametrize("codec", sorted(CODEC_IDS))
def test_fetched_batches_are_the_produced_ones_on_kafka(cluster, codec):
    topic = cluster.create_topic(f"as-produced-{codec}")
    assert fetched_batches(cluster.bootstrap_servers, topic, codec) == AS_PRODUCED[codec]
