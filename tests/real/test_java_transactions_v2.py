"""Transactions v2 (KIP-890) on Kafka 4.3.1 for the Java client 4.3.1, and with Kafka's
``transaction.version`` set back to 1 (``kafka-features downgrade``; set to 2 again after): every
transactional experiment gives what it gives on the wire cluster with the same
``transaction.version`` (tests/java_client/test_transactions_v2_wire.py, same expected values)."""

import subprocess

import pytest

from course_lib.clusters import jars
from tests.java_client import support, txn_v2_support
from tests.java_client.test_transactions_v2_wire import ZOMBIE

pytestmark = pytest.mark.real_kafka


@pytest.fixture(scope="module")
def driver():
    yield from support.module_driver()


def features(cluster, *args: str) -> str:
    """``org.apache.kafka.tools.FeatureCommand`` against the cluster (kafka-features.sh)."""
    done = subprocess.run(
        [
            jars.java_executable(),
            "-cp",
            jars.kafka_classpath(progress=False),
            "org.apache.kafka.tools.FeatureCommand",
            "--bootstrap-server",
            cluster.bootstrap_servers,
            *args,
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def finalized_transaction_version(cluster) -> int:
    for line in features(cluster, "describe").splitlines():
        if "transaction.version" in line:
            return int(line.split("FinalizedVersionLevel:")[1].split()[0])
    raise AssertionError("no transaction.version in kafka-features describe")


@pytest.fixture(params=[2, 1], ids=["transaction.version=2", "transaction.version=1"])
def tv(request, cluster):
    """The session cluster at the level asked for; always left at 2 (Kafka 4.3.1's default)."""
    if request.param == 1:
        features(cluster, "downgrade", "--feature", "transaction.version=1")
        assert support.until(lambda: finalized_transaction_version(cluster) == 1, 60)
    try:
        yield request.param
    finally:
        if request.param == 1:
            features(cluster, "upgrade", "--feature", "transaction.version=2")
            assert support.until(lambda: finalized_transaction_version(cluster) == 2, 60)


@pytest.fixture
def make_topic(cluster):
    def make(name: str, replication_factor: int, min_insync_replicas: int) -> str:
        return cluster.create_topic(
            name, partitions=1, replication_factor=replication_factor, min_insync_replicas=min_insync_replicas
        )

    return make


def test_transactions_and_consume_transform_produce(driver, cluster, make_topic, tv):
    got = support.transactions(driver, cluster.bootstrap_servers, make_topic)
    assert got["read_committed"] == [(i, f"committed-{i}".encode()) for i in range(3)]
    assert got["aborted offsets"] == [4, 5]
    assert got["read_committed end"] == got["read_uncommitted end"] == 7
    ctp = support.consume_transform_produce(driver, cluster.bootstrap_servers, make_topic)
    assert ctp == {"committed": [3], "out": [b"M-0", b"M-1", b"M-2"]}


def test_a_zombie_meets_what_it_meets_on_the_wire_cluster(driver, cluster, make_topic, tv):
    assert txn_v2_support.zombie(driver, cluster.bootstrap_servers, make_topic) == ZOMBIE[tv]
