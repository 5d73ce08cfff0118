"""The client differential, producer side: seeded sequences of transactional calls in right and
wrong orders, sends and flushes through the simulator's own KafkaProducer and kafka-python
3.0.12's, on the same simulated brokers (course_lib/wire/differential.py). A difference not listed
in its ``KNOWN_*`` table fails with the seed that shows it; ``python -m bench wire --sequences N``
runs thousands."""

import os

import pytest

from course_lib.wire import differential
from course_lib.wire.differential import Difference, ProducerDifferential

SEQUENCES = int(os.environ.get("WIRE_DIFF_SEQUENCES", "120"))


@pytest.fixture(scope="module")
def shared_wire():
    wire = differential.wire_for_differential()
    yield wire
    wire.stop()


def unexplained(runner, sequences: int) -> list[str]:
    return [str(d) for seed in range(sequences) for d in runner.run(seed) if not d.known]


def test_transactional_call_sequences_match_kafka_python(shared_wire, no_leaks):
    found = unexplained(ProducerDifferential(shared_wire), SEQUENCES)
    assert not found, "new client differences (rerun one with WIRE_DIFF_SEQUENCES):\n" + "\n".join(found)


def test_a_difference_is_reported_with_its_seed_and_calls(monkeypatch):
    """The report a failure prints names the seed and the calls, and a listed difference is not
    reported (the tables are empty today, so a fake entry shows both ways)."""
    d = Difference("producer", 7, ("init_transactions", "send"), "send", "ok", "KafkaError")
    assert str(d) == "producer seed 7: ['init_transactions', 'send']: send: simulator ok, kafka-python KafkaError"
    assert not d.known
    monkeypatch.setitem(differential.KNOWN_PRODUCER_DIFFERENCES, ("send", "ok", "KafkaError"), "why")
    assert d.known
    assert ProducerDifferential.calls(7) == ProducerDifferential.calls(7)
