"""The Java client of the lab's Kafka release, through its driver process (course_lib.java_client), on that Kafka:
the experiments of tests/java_client/test_driver_wire.py on the session's LocalCluster, with the
same expected outcomes - where both pass, the wire cluster answers the Java client as Kafka does.

(Here rather than in tests/java_client so that they share the session's one cluster.)"""

import pytest

from tests.java_client import support

pytestmark = pytest.mark.real_kafka


@pytest.fixture(scope="module")
def driver():
    yield from support.module_driver()


@pytest.fixture
def make_topic(cluster):
    def make(name: str, replication_factor: int, min_insync_replicas: int) -> str:
        return cluster.create_topic(
            name, partitions=1, replication_factor=replication_factor, min_insync_replicas=min_insync_replicas
        )

    return make


@pytest.mark.parametrize("group_protocol", ["classic", "consumer"])
def test_produce_and_consume_round_trip(driver, cluster, make_topic, group_protocol):
    """Both group protocols: Kafka 4.3.1 runs KIP-848's (so does the wire cluster: tests/java_client/test_driver_wire.py)."""
    got = support.round_trip(driver, cluster.bootstrap_servers, make_topic, group_protocol=group_protocol)
    committed = got.pop("committed")
    assert got == support.expected_round_trip()
    assert list(committed.values()) == [10]


def test_a_committed_and_an_aborted_transaction_read_committed(driver, cluster, make_topic):
    got = support.transactions(driver, cluster.bootstrap_servers, make_topic)
    assert got["read_committed"] == [(i, f"committed-{i}".encode()) for i in range(3)]
    assert got["aborted offsets"] == [4, 5]
    assert got["read_uncommitted"] == got["read_committed"] + [(4, b"aborted-0"), (5, b"aborted-1")]
    assert got["read_committed end"] == got["read_uncommitted end"] == 7


def test_consume_transform_produce_commits_the_offsets_with_the_output(driver, cluster, make_topic):
    got = support.consume_transform_produce(driver, cluster.bootstrap_servers, make_topic)
    assert got == {"committed": [3], "out": [b"M-0", b"M-1", b"M-2"]}


def test_close_with_a_record_unfinished_fails_it(driver, healthy, make_topic):
    got = support.close_with_a_record_unfinished(
        driver, healthy.bootstrap_servers, make_topic, healthy.pause, healthy.resume
    )
    assert got == {
        "before close": "pending",
        "after close": "failed",
        "error": "KafkaException: Producer is closed forcefully.",
        "send after close": "IllegalStateException",
    }
