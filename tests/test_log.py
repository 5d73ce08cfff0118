"""The partition log: offsets, LEO, leader-epoch cache, truncation."""

from course_lib.broker.log import PartitionLog
from course_lib.broker.protocol import LogBatch, Record, RecordBatch


def batch(*values):
    return RecordBatch([Record(None, v, 0) for v in values])


def test_offsets_are_consecutive_across_batches():
    log = PartitionLog()
    a = log.append(batch(b"a", b"b"), leader_epoch=0)
    b = log.append(batch(b"c"), leader_epoch=0)
    assert (a.base_offset, b.base_offset, log.leo) == (0, 2, 3)
    assert [(o, r.value) for o, r, _ in log.records()] == [(0, b"a"), (1, b"b"), (2, b"c")]


def test_read_returns_batches_holding_the_offset():
    log = PartitionLog()
    for v in (b"a", b"b", b"c", b"d"):
        log.append(batch(v), 0)
    assert [s.base_offset for s in log.read(2)] == [2, 3]
    assert [s.base_offset for s in log.read(1, max_batches=2)] == [1, 2]
    assert log.read(4) == []


def test_epoch_cache_and_end_offset_for_epoch():
    log = PartitionLog()
    log.append(batch(b"a", b"b"), 0)
    log.append(batch(b"c"), 2)
    log.assign_epoch(5)  # elected leader again, nothing appended yet
    assert log.epochs == [(0, 0), (2, 2), (5, 3)]
    assert log.end_offset_for_epoch(0) == (0, 2)
    assert log.end_offset_for_epoch(1) == (0, 2)  # largest epoch <= 1 is 0
    assert log.end_offset_for_epoch(2) == (2, 3)
    assert log.end_offset_for_epoch(9) == (5, 3)
    assert PartitionLog().end_offset_for_epoch(0) == (-1, -1)


def test_truncate_drops_the_tail_and_its_epochs():
    log = PartitionLog()
    log.append(batch(b"a"), 0)
    log.append(batch(b"b", b"c"), 1)
    log.hw = 3
    removed = log.truncate(1)
    assert [r.value for s in removed for r in s.batch.records] == [b"b", b"c"]
    assert (log.leo, log.hw, log.epochs) == (1, 1, [(0, 0)])


def test_truncate_inside_a_batch_drops_the_whole_batch():
    log = PartitionLog()
    log.append(batch(b"a"), 0)
    log.append(batch(b"b", b"c"), 0)
    log.truncate(2)
    assert log.leo == 1


def test_replicated_append_keeps_the_leaders_offsets_and_epoch():
    leader, follower = PartitionLog(), PartitionLog()
    stored = leader.append(batch(b"a"), 3)
    follower.append_replicated(stored)
    assert (follower.leo, follower.epochs) == (1, [(3, 0)])
    assert isinstance(follower.batches[0], LogBatch)
