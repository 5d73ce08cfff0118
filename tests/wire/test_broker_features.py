"""Broker features in ApiVersions (``ClusterOptions.features``): the wire cluster finalizes what
the Kafka release it models does (the lab's, ``COURSE_KAFKA_VERSION``, unless told), and each client picks its transaction protocol from them as on Kafka -
kafka-python 3.0.12 keeps transactions v1 on a ``transaction.version=2`` cluster."""

import pytest
from kafka import KafkaConsumer, KafkaProducer
from kafka.protocol.api_key import ApiKey
from kafka.protocol.metadata import ApiVersionsRequest, ApiVersionsResponse

from course_lib.broker.options import ClusterOptions
from course_lib.clusters.jars import kafka_version
from course_lib.wire.cluster import WireCluster

from .conftest import record_versions


def api_versions(wire) -> ApiVersionsResponse:
    """An ApiVersions v3 answer from broker 1, over a socket (as a client reads it)."""
    import socket

    with socket.create_connection((wire.host, wire.ports[1]), timeout=10) as sock:
        request = ApiVersionsRequest(version=3, client_software_name="course-test", client_software_version="1")
        request.with_header(correlation_id=1, client_id="t")
        sock.sendall(request.encode(version=3, header=True, framed=True))
        size = int.from_bytes(_read(sock, 4), "big")
        return ApiVersionsResponse.decode(_read(sock, size), version=3, header=True)


def _read(sock, n: int) -> bytes:
    data = b""
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        assert chunk, "the broker closed the connection"
        data += chunk
    return data


#: what a freshly formatted 3-node cluster of each release finalizes (``kafka-features describe``,
#: measured: docs/kafka-4.4.0.md section 1), as ApiVersions' (min, max) levels
FINALIZED = {
    "4.3.1": {
        "eligible.leader.replicas.version": (1, 1),
        "group.version": (1, 1),
        "metadata.version": (30, 30),
        "share.version": (1, 1),
        "streams.version": (1, 1),
        "transaction.version": (2, 2),
    },
    "4.4.0": {
        "eligible.leader.replicas.version": (1, 1),
        "group.version": (1, 1),
        "metadata.version": (33, 33),
        "share.version": (2, 2),
        "streams.version": (1, 1),
        "transaction.version": (2, 2),
    },
}


def test_the_wire_cluster_models_the_labs_release(wire):
    """Unless told, the wire cluster finalizes what the lab's Kafka does (COURSE_KAFKA_VERSION)."""
    assert wire.cluster.options.kafka_version == kafka_version()
    finalized = {f.name: (f.min_version_level, f.max_version_level) for f in api_versions(wire).finalized_features}
    assert finalized == FINALIZED[kafka_version()]


@pytest.mark.parametrize("version", sorted(FINALIZED))
def test_api_versions_finalizes_each_releases_features(version):
    with WireCluster(brokers=1, seed=1, kafka_version=version) as wire:
        answer = api_versions(wire)
    finalized = {f.name: (f.min_version_level, f.max_version_level) for f in answer.finalized_features}
    assert finalized == FINALIZED[version]
    assert answer.finalized_features_epoch >= 0  # a Java client reads features only from epoch 0 on
    supported = {f.name: (f.min_version, f.max_version) for f in answer.supported_features}
    assert supported["transaction.version"] == (0, 2)


@pytest.mark.parametrize(
    "features, version, error",
    [
        ({"transaction.version": 3}, "4.3.1", "from 0 to 2"),
        ({"transaction_version": 1}, "4.3.1", "unknown feature"),
        ({"metadata.version": 3}, "4.3.1", "from 7 to 30"),
        ({"metadata.version": 34}, "4.4.0", "from 7 to 33"),
        ({"share.version": 2}, "4.3.1", "from 0 to 1"),
    ],
)
def test_a_feature_level_kafka_does_not_have_is_refused(features, version, error):
    with pytest.raises(ValueError, match=error):
        ClusterOptions.from_kwargs(features=features, kafka_version=version)


def test_kafka_python_keeps_transactions_v1_on_a_v2_cluster(wire, monkeypatch):
    seen = record_versions(monkeypatch)
    wire.create_topic("tx", partitions=1)
    producer = KafkaProducer(bootstrap_servers=wire.bootstrap_servers, transactional_id="tid-v1")
    try:
        producer.init_transactions()
        for commit in (True, False):
            producer.begin_transaction()
            producer.send("tx", b"committed" if commit else b"aborted").get(timeout=10)
            producer.commit_transaction() if commit else producer.abort_transaction()
    finally:
        producer.close()
    assert seen[ApiKey.Produce] == {9} and seen[ApiKey.EndTxn] == {3} and seen[ApiKey.AddPartitionsToTxn] == {3}
    consumer = KafkaConsumer(
        bootstrap_servers=wire.bootstrap_servers, isolation_level="read_committed", auto_offset_reset="earliest"
    )
    try:
        from kafka import TopicPartition

        consumer.assign([TopicPartition("tx", 0)])
        values = [r.value for batch in consumer.poll(timeout_ms=5000).values() for r in batch]
    finally:
        consumer.close()
    assert values == [b"committed"]
