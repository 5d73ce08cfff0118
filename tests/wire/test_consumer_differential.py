"""The consumer side of the client differential: seeded sequences of assign/seek/poll/position/
commit/committed/end_offsets through the simulator's KafkaConsumer and kafka-python's, on the
same simulated brokers with the same records (course_lib/wire/differential.py)."""

import os

import pytest

from course_lib.wire import differential
from course_lib.wire.differential import ConsumerDifferential

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
