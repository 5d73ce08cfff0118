"""The Java client 4.3.1, through its driver process, on the simulated cluster over the wire.

The same experiments run on Kafka 4.3.1 in tests/real/test_java_client.py; where both pass, the
wire cluster answers the Java client as Kafka does."""

import gc
import threading

import pytest

from course_lib.java_client import DriverDied, DriverTimeout, JavaAdmin, JavaConsumer, JavaException, JavaProducer
from tests.java_client import support


@pytest.fixture
def servers(wire_cluster):
    return wire_cluster.bootstrap_servers


@pytest.fixture
def make_topic(wire_cluster):
    def make(name: str, replication_factor: int, min_insync_replicas: int) -> str:
        wire_cluster.create_topic(
            name, partitions=1, replication_factor=replication_factor, min_insync_replicas=min_insync_replicas
        )
        return name

    return make


@pytest.mark.parametrize("group_protocol", ["classic", "consumer"])
def test_produce_and_consume_round_trip(driver, servers, make_topic, group_protocol):
    """Both group protocols, as on Kafka 4.3.1 (tests/real/test_java_client.py): the consumer
    protocol (KIP-848) is the simulator's ConsumerGroupHeartbeat (it was refused by name before)."""
    got = support.round_trip(driver, servers, make_topic, group_protocol=group_protocol)
    committed = got.pop("committed")
    assert got == support.expected_round_trip()
    assert list(committed.values()) == [10]


@pytest.mark.parametrize(
    "config, chain, words",
    [
        ({"acks": "sometimes"}, ["ConfigException"], "Invalid value sometimes for configuration acks"),
        ({"acks": "0", "enable.idempotence": "true"}, ["ConfigException"], "Must set acks to all"),
        ({"linger.ms": "-1"}, ["ConfigException"], "linger.ms"),
        # checked inside the constructor, so wrapped: the cause chain says what was wrong
        ({"bootstrap.servers": "no-port-here"}, ["KafkaException", "ConfigException"], "Failed to construct"),
    ],
)
def test_a_refused_setting_is_the_clients_config_exception(driver, servers, config, chain, words):
    with pytest.raises(JavaException) as raised:
        JavaProducer(driver, {"bootstrap.servers": servers, **config})
    assert raised.value.chain == chain
    assert raised.value.java_class.startswith("org.apache.kafka.common.")
    assert words in raised.value.message
    assert driver.alive()  # a refused client leaves the driver serving


def test_a_committed_and_an_aborted_transaction_read_committed(driver, servers, make_topic):
    got = support.transactions(driver, servers, make_topic)
    assert got["read_committed"] == [(i, f"committed-{i}".encode()) for i in range(3)]
    # offset 3 is the commit marker; the aborted records sit at 4 and 5, and read_uncommitted sees them
    assert got["aborted offsets"] == [4, 5]
    assert got["read_uncommitted"] == got["read_committed"] + [(4, b"aborted-0"), (5, b"aborted-1")]
    assert got["read_committed end"] == got["read_uncommitted end"] == 7  # after the abort marker


def test_consume_transform_produce_commits_the_offsets_with_the_output(driver, servers, make_topic):
    got = support.consume_transform_produce(driver, servers, make_topic)
    assert got == {"committed": [3], "out": [b"M-0", b"M-1", b"M-2"]}


def test_close_with_a_record_unfinished_fails_it(driver, servers, make_topic, wire_cluster):
    got = support.close_with_a_record_unfinished(
        driver, servers, make_topic, wire_cluster.nemesis.pause, wire_cluster.nemesis.resume
    )
    assert got == {
        "before close": "pending",
        "after close": "failed",
        "error": "KafkaException: Producer is closed forcefully.",
        "send after close": "IllegalStateException",
    }


def test_admin_parts_fail_alone(driver, servers, make_topic):
    existing = make_topic(support.unique("java-admin"), 3, 2)
    admin = JavaAdmin(driver, {"bootstrap.servers": servers})
    try:
        fresh = support.unique("java-new")
        created = admin.create_topics([{"name": existing, "partitions": 1}, {"name": fresh, "partitions": 2}])
        described = admin.describe_topics([existing, "java-no-such-topic"])
        offsets = admin.list_offsets({(existing, 0): "latest"}, isolation_level="read_committed")
    finally:
        admin.close(timeout=10)
    assert {name: e.name if e else None for name, e in created.items()} == {
        existing: "TopicExistsException",
        fresh: None,
    }
    assert described["java-no-such-topic"].name == "UnknownTopicOrPartitionException"
    [partition] = described[existing]["partitions"]
    assert sorted(partition["isr"]) == sorted(partition["replicas"]) == [1, 2, 3]
    assert offsets == {(existing, 0): {"offset": 0, "timestamp": -1, "leaderEpoch": None}}


def test_a_call_that_outlasts_its_wait_names_the_call(driver, servers):
    consumer = JavaConsumer(driver, {"bootstrap.servers": servers})
    try:
        consumer.assign([("nowhere", 0)])
        with pytest.raises(DriverTimeout, match=r"consumer.poll \(a poll of 3 s\) within 0.2 s"):
            driver.request("consumer.poll", handle=consumer.handle, timeout_ms=3000, what="a poll of 3 s", timeout=0.2)
    finally:
        consumer.close(timeout=10)  # waits for the poll: one client, one call at a time


def test_a_driver_killed_mid_call_fails_the_call_clearly(servers, make_topic):
    topic = make_topic(support.unique("java-killed"), 3, 2)
    with support.start_driver() as doomed:
        consumer = JavaConsumer(doomed, {"bootstrap.servers": servers})
        consumer.assign([(topic, 0)])
        failure: list[BaseException] = []

        def long_poll() -> None:
            try:
                consumer.poll(60)
            except BaseException as exc:  # the assertion below reads it
                failure.append(exc)

        caller = threading.Thread(target=long_poll, name="java-driver-test-caller")
        caller.start()
        assert support.until(lambda: doomed.pending_calls() == 1)
        doomed.kill()
        caller.join(timeout=30)
        assert not caller.is_alive()
    assert len(failure) == 1 and isinstance(failure[0], DriverDied), failure
    message = str(failure[0])
    assert "exited with code -9 during consumer.poll" in message


def test_a_dropped_driver_is_stopped_by_its_finalizer(servers):
    """No orphan JVM: a DriverProcess nobody closed stops its JVM when it is collected (and the
    JVM exits by itself when Python's end of its stdin closes)."""
    dropped = support.start_driver()
    # a Python list for a LIST setting: passed as Java's comma-separated form, so no ConfigException
    producer = JavaProducer(dropped, {"bootstrap.servers": servers.split(","), "client.id": "dropped"})
    process = dropped._proc
    del dropped, producer
    gc.collect()
    assert process.returncode is not None, f"the JVM {process.pid} of a dropped driver still runs"
