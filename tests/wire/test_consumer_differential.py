"""The consumer side of the client differential: seeded sequences of assign/seek/poll/position/
commit/committed/end_offsets through the simulator's KafkaConsumer and kafka-python's, on the
same simulated brokers with the same records - a plain topic, or one written in committed and
aborted transactions read committed or uncommitted (course_lib/experiments/differential.py)."""

import os

import pytest
from kafka import TopicPartition

from course_lib.experiments import differential
from course_lib.experiments.differential import ConsumerDifferential

from .test_client_differential import unexplained

SEQUENCES = int(os.environ.get("WIRE_DIFF_SEQUENCES", "80"))


@pytest.fixture(scope="module")
def runner():
    wire = differential.wire_for_differential()
    yield ConsumerDifferential(wire)
    wire.stop()


def test_consumer_call_sequences_match_kafka_python(runner):
    found = unexplained(runner, SEQUENCES)
    assert not found, "new client differences (rerun one with WIRE_DIFF_SEQUENCES):\n" + "\n".join(found)


def test_the_sequences_close_the_consumer_and_call_it_after():
    drawn = [ConsumerDifferential.calls(seed) for seed in range(SEQUENCES)]
    closes = {c for calls in drawn for c in calls if c in differential.CONSUMER_CLOSES}
    assert closes == set(differential.CONSUMER_CLOSES)
    assert any(calls[-1] not in differential.CONSUMER_CLOSES for calls in drawn if closes & set(calls))


def test_the_sequences_read_each_topic_under_each_isolation_level():
    drawn = {ConsumerDifferential.reads(seed) for seed in range(SEQUENCES)}
    assert drawn == set(differential.READS)


def test_the_transactional_topic_holds_markers_and_aborted_records(runner):
    """What the read_committed sequences read: on both clusters each partition ends after its
    transactions' records, one marker per transaction and a plain record."""
    assert runner.ends[differential.TXN_TOPIC] == 8
    from kafka import KafkaConsumer

    seen = {}
    for isolation in ("read_committed", "read_uncommitted"):
        consumer = KafkaConsumer(bootstrap_servers=runner.wire.bootstrap_servers, isolation_level=isolation)
        consumer.assign([TopicPartition(differential.TXN_TOPIC, 0)])
        consumer.seek_to_beginning()
        seen[isolation] = []
        for _ in range(100):  # 20 s at most: a position stuck before the end fails, not hangs
            if consumer.position(TopicPartition(differential.TXN_TOPIC, 0)) >= 8:
                break
            seen[isolation] += [r.offset for rs in consumer.poll(200).values() for r in rs]
        consumer.close()
    assert seen == {"read_committed": [0, 1, 5, 7], "read_uncommitted": [0, 1, 3, 5, 7]}


def test_a_closed_consumer_looks_up_missing_positions_over_its_closed_network(runner):
    """Found by the close(timeout) sequences (seed 4): kafka-python's position() first looks up
    every assigned partition without a position, and close() stopped its network loop, so it
    raises RuntimeError; with every position known it answers. The simulator answered both."""
    assert runner.run(4) == []  # ['assign_both', 'close_0', 'position_p0', 'commit']
    from course_lib.clients import KafkaConsumer

    def closed(*steps):
        consumer = KafkaConsumer(bootstrap_servers=runner.cluster, group_id="closed", enable_auto_commit=False)
        consumer.assign([differential.P0, differential.P1])
        for step in steps:
            step(consumer)
        consumer.close(timeout_ms=0)
        return consumer

    with pytest.raises(RuntimeError, match="closed"):
        closed(lambda c: c.seek(differential.P0, 2)).position(differential.P0)  # P1's is missing
    both = closed(lambda c: c.seek(differential.P0, 2), lambda c: c.seek(differential.P1, 1))
    assert both.position(differential.P0) == 2
