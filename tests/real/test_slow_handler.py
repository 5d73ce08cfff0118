"""Differential: a handler slower than ``max_poll_interval_ms`` on the simulator and on real
Kafka 4.3.1 with kafka-python 3.0.12, same steps, same observable outcome - the slow member is
thrown out of its group, its late commit raises ``CommitFailedError``, the other member owns every
partition (and will read the slow member's uncommitted records again), and the slow member's next
``poll()`` rejoins.

The simulator's half runs everywhere; the real half needs Java and Maven (marker ``real_kafka``)."""
import time

import pytest
from kafka import errors as Errors

GROUP_CONFIG = dict(group_id="slow-handler", enable_auto_commit=False, auto_offset_reset="earliest",
                    session_timeout_ms=6000, heartbeat_interval_ms=1000, max_poll_interval_ms=3000)


def slow_handler_outcome(consumer_cls, producer_cls, bootstrap, topic, wait) -> dict:
    """The experiment, written once against kafka-python's API. ``wait(ms, pollers)`` lets time
    pass while the ``pollers`` keep polling (the slow member is "in its handler")."""
    producer = producer_cls(bootstrap_servers=bootstrap)
    for i in range(10):
        producer.send(topic, f"m-{i}".encode(), partition=i % 2)
    producer.flush()
    producer.close()
    slow = consumer_cls(bootstrap_servers=bootstrap, client_id="slow", **GROUP_CONFIG)
    other = consumer_cls(bootstrap_servers=bootstrap, client_id="other", **GROUP_CONFIG)
    slow.subscribe([topic])
    other.subscribe([topic])
    try:
        got = {"slow": 0, "other": 0}
        deadline = time.monotonic() + 60
        while (len(slow.assignment()) != 1 or len(other.assignment()) != 1 or not got["slow"]) \
                and time.monotonic() < deadline:
            for name, c in (("slow", slow), ("other", other)):
                got[name] += sum(len(rs) for rs in c.poll(timeout_ms=200).values())
        assert len(slow.assignment()) == 1 and got["slow"], "the group never settled with two members"
        wait(6000, [other])  # slow is in its handler for twice max_poll_interval_ms
        outcome = {"commit_error": None}
        try:
            slow.commit()
        except Errors.KafkaError as exc:
            outcome["commit_error"] = type(exc).__name__
        wait(3000, [other])
        outcome["other_owns"] = len(other.assignment())
        deadline = time.monotonic() + 60
        while len(slow.assignment()) != 1 and time.monotonic() < deadline:
            slow.poll(timeout_ms=200)
            other.poll(timeout_ms=200)
        outcome["slow_rejoined_with"] = len(slow.assignment())
        return outcome
    finally:
        slow.close()
        other.close()


EXPECTED = {"commit_error": "CommitFailedError", "other_owns": 2, "slow_rejoined_with": 1}


def test_simulator():
    from course_lib.broker import Cluster
    from course_lib.clients import KafkaConsumer, KafkaProducer

    cluster = Cluster(3, seed=1, group_initial_rebalance_delay_ms=0)
    cluster.create_topic("in", partitions=2, min_insync_replicas=2)

    def wait(ms, pollers):
        end = cluster.sim.now + ms
        while cluster.sim.now < end:
            for c in pollers:
                c.poll(timeout_ms=200)

    assert slow_handler_outcome(KafkaConsumer, KafkaProducer, cluster, "in", wait) == EXPECTED


@pytest.mark.real_kafka
def test_real_kafka(cluster):
    from kafka import KafkaConsumer, KafkaProducer

    name = "slow-handler"
    cluster.create_topic(name, partitions=2)

    def wait(ms, pollers):
        end = time.monotonic() + ms / 1000
        while time.monotonic() < end:
            for c in pollers:
                c.poll(timeout_ms=200)

    assert slow_handler_outcome(KafkaConsumer, KafkaProducer, cluster.bootstrap_servers, name, wait) == EXPECTED
