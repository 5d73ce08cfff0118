"""course_lib.clients.rpc: every request a simulated client waits on is in one correlation table,
and each answer - a response, or the error class of a timeout or a closed connection - goes to
the client's handler for that request type, or else to the callback the request carries."""

from types import SimpleNamespace

import pytest
from kafka import errors as Errors

from course_lib.broker import Cluster
from course_lib.broker.protocol import InitProducerIdRequest, MetadataRequest, ProduceRequest
from course_lib.clients import KafkaConsumer, KafkaProducer


@pytest.fixture
def cluster():
    c = Cluster(brokers=3, seed=1)
    c.create_topic("t", partitions=1, replication_factor=3)
    return c


def test_the_producer_answers_its_own_requests_from_its_table_and_the_consumer_by_callbacks():
    assert set(KafkaProducer._RESPONSE_HANDLERS) == {ProduceRequest, MetadataRequest, InitProducerIdRequest}
    # a consumer's requests need per-call context (a partition, a blocking lookup): callbacks
    assert KafkaConsumer._RESPONSE_HANDLERS == {}


def test_a_produce_request_waits_in_the_one_table_until_answered(cluster):
    producer = KafkaProducer(bootstrap_servers=cluster, acks=1, enable_idempotence=False, linger_ms=0)
    future = producer.send("t", b"v")
    cluster.run_until(lambda: any(type(f.request) is ProduceRequest for f in producer._pending.values()), 1000)
    assert producer.state["in_flight_requests"] == 1
    producer.flush()
    assert future.get(timeout=1).offset == 0
    assert producer._pending == {} and producer.state["in_flight_requests"] == 0


def test_a_closed_connection_fails_its_requests_in_the_order_sent_and_ignores_late_answers(cluster):
    consumer = KafkaConsumer(bootstrap_servers=cluster)
    heard = []
    for name in ("first", "second"):
        consumer._send("broker-1", MetadataRequest(consumer._next_corr()), lambda a, name=name: heard.append((name, a)))
    consumer._send("broker-2", MetadataRequest(consumer._next_corr()), lambda a: heard.append(("other", a)))
    consumer.on_disconnect("broker-1")
    assert heard == [("first", Errors.KafkaConnectionError), ("second", Errors.KafkaConnectionError)]
    consumer.receive("broker-1", SimpleNamespace(corr=1))  # the first one's answer, too late
    assert len(heard) == 2 and [f.node for f in consumer._pending.values()] == ["broker-2"]
