"""The core course claim, on a real broker: a lost produce ACK makes a retrying producer write a
duplicate unless it is idempotent."""

import pytest
from kafka import KafkaProducer

from real.helpers import read_all

pytestmark = pytest.mark.real_kafka


def _produce_one_with_lost_ack(cluster, topic, **producer_config) -> list[bytes]:
    leader = cluster.lose_next_ack(topic, 0)
    proxy = cluster.proxy(leader)
    dropped_before = len(proxy.stats.dropped_responses)
    p = KafkaProducer(
        bootstrap_servers=cluster.bootstrap_servers,
        acks="all",
        retries=5,
        max_in_flight_requests_per_connection=1,
        retry_backoff_ms=100,
        request_timeout_ms=10000,
        **producer_config,
    )
    try:
        md = p.send(topic, b"order-42", partition=0).get(timeout=60)
        p.flush()
    finally:
        p.close(timeout=5)
    assert md.offset >= 0, "the retried send must finally succeed"
    assert len(proxy.stats.dropped_responses) == dropped_before + 1, (
        "the proxy did not drop a produce response: the experiment did not happen"
    )
    return [r.value for r in read_all(cluster.bootstrap_servers, topic)]


def test_lost_ack_duplicates_without_idempotence(cluster, topic):
    values = _produce_one_with_lost_ack(cluster, topic, enable_idempotence=False)
    assert values == [b"order-42", b"order-42"]


def test_lost_ack_is_deduplicated_by_idempotent_producer(cluster, topic):
    values = _produce_one_with_lost_ack(cluster, topic, enable_idempotence=True)
    assert values == [b"order-42"]
