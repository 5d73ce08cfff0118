"""The broker's producer-state table: duplicates recognised, gaps and old epochs refused."""

from kafka import errors as Errors

from course_lib.broker.producer_state import ProducerStateTable
from course_lib.broker.protocol import LogBatch, Record, RecordBatch


def batch(pid, epoch, seq, n=1, transactional=False):
    return RecordBatch([Record(None, b"v", 0)] * n, pid, epoch, seq, transactional)


def append(table, b, offset):
    table.update(LogBatch(offset, 0, b))


def test_a_retried_batch_is_a_duplicate_with_the_original_offset():
    t = ProducerStateTable()
    assert t.check(batch(7, 0, 0, n=3)) == (None, None)
    append(t, batch(7, 0, 0, n=3), offset=40)
    assert t.check(batch(7, 0, 0, n=3)) == (None, 40)
    assert t.check(batch(7, 0, 3)) == (None, None)


def test_only_the_last_five_batches_are_remembered():
    t = ProducerStateTable()
    for i in range(6):
        append(t, batch(7, 0, i), offset=i)
    assert t.check(batch(7, 0, 1)) == (None, 1)
    assert t.check(batch(7, 0, 0))[0] is Errors.OutOfOrderSequenceNumberError


def test_a_gap_in_sequence_numbers_is_out_of_order():
    t = ProducerStateTable()
    append(t, batch(7, 0, 0), 0)
    assert t.check(batch(7, 0, 2))[0] is Errors.OutOfOrderSequenceNumberError


def test_an_older_epoch_is_refused_and_a_new_epoch_starts_at_zero():
    t = ProducerStateTable()
    append(t, batch(7, 1, 0), 0)
    assert t.check(batch(7, 0, 1))[0] is Errors.InvalidProducerEpochError
    # KIP-588: a produce never gets PRODUCER_FENCED, transactional or not (only the coordinator says it)
    assert t.check(batch(7, 0, 1, transactional=True))[0] is Errors.InvalidProducerEpochError
    assert t.check(batch(7, 2, 0)) == (None, None)
    assert t.check(batch(7, 2, 5))[0] is Errors.OutOfOrderSequenceNumberError


def test_non_idempotent_batches_are_not_tracked():
    t = ProducerStateTable()
    append(t, batch(-1, -1, -1), 0)
    assert t.check(batch(-1, -1, -1)) == (None, None)
    assert t.snapshot() == {}


def test_state_is_rebuilt_from_the_log():
    t = ProducerStateTable()
    stored = [LogBatch(0, 0, batch(7, 0, 0, n=2)), LogBatch(2, 0, batch(7, 0, 2))]
    t.rebuild(stored)
    assert t.snapshot()[7]["last_sequence"] == 2


def test_a_producer_id_without_state_may_start_at_any_sequence():
    """Kafka 4.x never answers UNKNOWN_PRODUCER_ID to a produce (its state may have expired)."""
    t = ProducerStateTable()
    assert t.check(batch(8, 0, 17)) == (None, None)
