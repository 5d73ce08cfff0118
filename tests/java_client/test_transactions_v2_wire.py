"""Transactions v2 (KIP-890) over the wire: the Java client 4.3.1 reads the cluster's finalized
``transaction.version`` in ApiVersions and speaks v2 where it is 2 (Produce 13, EndTxn 5, no
AddPartitionsToTxn - what it sends to Kafka 4.3.1) and v1 where it is 1 (Produce 11, EndTxn 4,
AddPartitionsToTxn 3 - what it sends to Kafka 4.3.1 with ``transaction.version=1``), with the same
outcomes; kafka-python keeps v1 on a v2 cluster."""

import pytest
from kafka.protocol.api_key import ApiKey

from course_lib.wire.cluster import WireCluster
from tests.java_client import support, txn_v2_support
from tests.wire.conftest import versions_sent


@pytest.fixture(params=[2, 1], ids=["transaction.version=2", "transaction.version=1"])
def cluster(request):
    with WireCluster(
        seed=7, group_initial_rebalance_delay_ms=0, features={"transaction.version": request.param}
    ) as wire:
        wire.tv = request.param
        yield wire


def make_topic(wire):
    def make(name: str, replication_factor: int, min_insync_replicas: int) -> str:
        wire.create_topic(
            name, partitions=1, replication_factor=replication_factor, min_insync_replicas=min_insync_replicas
        )
        return name

    return make


#: what the Java client 4.3.1 sends for a transaction, by the cluster's transaction.version
JAVA_TXN_VERSIONS = {
    2: {ApiKey.Produce: {13}, ApiKey.EndTxn: {5}},
    1: {ApiKey.Produce: {11}, ApiKey.EndTxn: {4}, ApiKey.AddPartitionsToTxn: {3}},
}


def test_java_transactions_follow_the_clusters_transaction_version(driver, cluster, monkeypatch):
    with versions_sent(monkeypatch) as seen:
        got = support.transactions(driver, cluster.bootstrap_servers, make_topic(cluster))
    assert got["read_committed"] == [(i, f"committed-{i}".encode()) for i in range(3)]
    assert got["aborted offsets"] == [4, 5]
    assert got["read_uncommitted"] == got["read_committed"] + [(4, b"aborted-0"), (5, b"aborted-1")]
    assert got["read_committed end"] == got["read_uncommitted end"] == 7
    sent = {key: seen.get(key, set()) for key in (ApiKey.Produce, ApiKey.EndTxn, ApiKey.AddPartitionsToTxn)}
    assert sent == {ApiKey.AddPartitionsToTxn: set(), **JAVA_TXN_VERSIONS[cluster.tv]}, seen
    # the highest versions of Kafka 4.3.1 (topic ids in Metadata make Fetch 13+ usable)
    assert seen[ApiKey.Fetch] == {18} and seen[ApiKey.Metadata] == {13}, seen


def test_java_consume_transform_produce_on_both_versions(driver, cluster, monkeypatch):
    with versions_sent(monkeypatch) as seen:
        got = support.consume_transform_produce(driver, cluster.bootstrap_servers, make_topic(cluster))
    assert got == {"committed": [3], "out": [b"M-0", b"M-1", b"M-2"]}
    # v2: the offsets join the transaction by TxnOffsetCommit v5 itself, no AddOffsetsToTxn
    assert (ApiKey.AddOffsetsToTxn in seen) == (cluster.tv == 1), seen
    assert seen[ApiKey.TxnOffsetCommit] == ({5} if cluster.tv == 2 else {4}), seen


#: what the Java client meets as a zombie, by transaction.version - the same on Kafka 4.3.1
#: (tests/real/test_java_transactions_v2.py)
ZOMBIE = {
    tv: {
        "zombie send": "InvalidProducerEpochException",
        "zombie commit": "InvalidProducerEpochException",
        "read_committed": [b"new-1"],
    }
    for tv in (1, 2)
}


def test_a_zombie_meets_the_same_on_both_versions(driver, cluster):
    got = txn_v2_support.zombie(driver, cluster.bootstrap_servers, make_topic(cluster))
    assert got == ZOMBIE[cluster.tv]
