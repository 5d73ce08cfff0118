"""kafka-python 3.0.12 collects a group join only if the join finishes *inside* a ``poll()``
call (course_lib/client_adapters/joining.py, notebooks/reference/errors.md). A join that finishes between two
polls - while the application works on its records - is thrown away and the next poll sends a new
JoinGroup; with ``poll(timeout_ms=0)`` (kafka-python's default) every join finishes between two
polls, so the consumer never gets a partition. Java awaits a join under way.

Measured on the real cluster, so that the course's text stays true: a kafka-python upgrade that
changes this makes the first case fail."""

import time

import pytest
from kafka import KafkaConsumer

from course_lib.client_adapters.joining import before_first_join

pytestmark = pytest.mark.real_kafka


@pytest.mark.parametrize("timeout_ms,joins", [(0, False), (5000, True)])
def test_a_join_that_finishes_between_two_polls_is_thrown_away(cluster, timeout_ms, joins):
    topic = f"join-between-polls-{timeout_ms}-{time.time_ns()}"
    cluster.create_topic(topic, partitions=1)
    consumer = KafkaConsumer(
        bootstrap_servers=cluster.bootstrap_servers, group_id=f"{topic}-group", enable_auto_commit=False
    )
    try:
        consumer.subscribe([topic])
        before_first_join(consumer)  # not the metadata race: this one is about the poll timeout
        polls = 0
        # a join that should happen is waited for generously (a busy machine slows the group
        # coordinator); one that should not is given the 8 s in which it would have happened
        deadline = time.monotonic() + (60 if joins else 8)
        while not consumer.assignment() and time.monotonic() < deadline:
            consumer.poll(timeout_ms=timeout_ms)
            polls += 1
            time.sleep(0.3)  # the application's work between two polls
        got = (len(consumer.assignment()), consumer.group_metadata().state)
        assert got == ((1, "<stable>") if joins else (0, "<rebalancing>")), f"after {polls} polls"
    finally:
        consumer.close()
