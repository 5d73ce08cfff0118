"""The client adapters beside kafka-python's (course_lib/client_adapters: confluent-kafka, Java)
give kafka-python's API over their own client and record what it did: a send's future completes
from the client's own report, the history holds the invocation and its outcome, and a setting
the client has no counterpart for is refused, saying so."""

import pytest

from course_lib.backend import ComposedBackend
from course_lib.client_adapters import CLIENTS, java_missing
from course_lib.history import OpName

OTHERS = ("confluent-kafka", "java")


@pytest.fixture
def stops_java_driver():
    yield
    from course_lib.client_adapters.java import stop_driver

    stop_driver()


@pytest.mark.parametrize("client", OTHERS)
def test_a_send_future_completes_from_the_clients_report_and_is_recorded(wire, stops_java_driver, client):
    if client == "java" and java_missing():
        pytest.skip(f"the Java client needs a JVM: {java_missing()}")
    b = ComposedBackend(wire, CLIENTS[client]())
    topic = b.create_topic("adapted", partitions=3, replication_factor=3)
    producer = b.producer(acks="all", enable_idempotence=True)
    try:
        futures = [producer.send(topic, f"v-{i}".encode(), key=f"k-{i}".encode()) for i in range(6)]
        producer.flush()
        metadata = [f.get(timeout=30) for f in futures]
        assert all(f.is_done and f.succeeded() and not f.failed() for f in futures)
        sends = [op for op in b.history if op.f == OpName.SEND]
        invoked = [op for op in sends if op.type == "invoke"]
        done = [op for op in sends if op.type == "ok"]
        # keyed: the partition the client's own partitioner picks is known, and recorded, at invocation
        assert [op.partition for op in invoked] == [m.partition for m in metadata]
        assert sorted((op.partition, op.offset) for op in done) == sorted((m.partition, m.offset) for m in metadata)
    finally:
        b.close_clients()


@pytest.mark.parametrize("client", OTHERS)
def test_a_setting_without_a_counterpart_is_refused_by_name(wire, stops_java_driver, client):
    b = ComposedBackend(wire, CLIENTS[client]())
    with pytest.raises(ValueError, match="proxy_url has no counterpart"):
        b.producer(proxy_url="socks5://127.0.0.1:1")
