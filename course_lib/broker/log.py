"""A partition's log on one broker: record batches at offsets, the log end offset (LEO), the
high watermark (HW) and the leader-epoch cache.

- LEO: the offset the next appended record gets.
- HW: every in-sync replica has the records below it; consumers read only below it.
- Leader-epoch cache: ``[(epoch, start_offset), ...]`` - which leader epoch wrote which range.
  A returning replica asks "where did your copy of epoch E end?" and truncates what came after
  (KIP-101, and since Kafka 2.7 the same answer arrives in the Fetch response as a diverging
  epoch). This is what stops a restarted ex-leader from keeping records nobody else has.

Taught in notebooks/01_replicated_log.

>>> from course_lib.broker.protocol import Record, RecordBatch
>>> log = PartitionLog()
>>> _ = log.append(RecordBatch([Record(None, b"a", 0), Record(None, b"b", 0)]), leader_epoch=0)
>>> _ = log.append(RecordBatch([Record(None, b"c", 0)]), leader_epoch=1)
>>> log.leo, log.epochs, log.end_offset_for_epoch(0)
(3, [(0, 0), (1, 2)], (0, 2))
>>> _ = log.truncate(2); log.leo, log.epochs
(2, [(0, 0)])
"""

from __future__ import annotations

from bisect import bisect_right
from typing import Iterator

from .protocol import LogBatch, RecordBatch


class PartitionLog:
    __slots__ = ("batches", "base_offsets", "leo", "hw", "epochs", "start_offset")

    def __init__(self):
        self.batches: list[LogBatch] = []
        self.base_offsets: list[int] = []
        self.leo = 0
        self.hw = 0
        self.epochs: list[tuple[int, int]] = []
        #: the log start offset: nothing below it can be read (DeleteRecords moves it,
        #: course_lib/broker/record_deletion.py); the batches stay, as Kafka keeps a segment
        #: until all of it lies below the start
        self.start_offset = 0

    def advance_start(self, offset: int) -> None:
        """Move the log start offset up to ``offset`` (never down, never past the LEO)."""
        self.start_offset = max(self.start_offset, min(offset, self.leo))

    @property
    def last_epoch(self) -> int:
        return self.epochs[-1][0] if self.epochs else -1

    def assign_epoch(self, epoch: int, start_offset: int | None = None) -> None:
        """Record that ``epoch`` starts at ``start_offset`` (default: the LEO)."""
        if not self.epochs or self.epochs[-1][0] < epoch:
            self.epochs.append((epoch, self.leo if start_offset is None else start_offset))

    def append(self, batch: RecordBatch, leader_epoch: int) -> LogBatch:
        """Leader append: give the batch offsets from the LEO."""
        self.assign_epoch(leader_epoch)
        stored = LogBatch(self.leo, leader_epoch, batch)
        self.batches.append(stored)
        self.base_offsets.append(self.leo)
        self.leo += len(batch.records)
        return stored

    def append_replicated(self, stored: LogBatch) -> None:
        """Follower append: keep the leader's offsets and epoch."""
        if stored.base_offset != self.leo:
            raise AssertionError(f"replica gap: LEO {self.leo}, batch at {stored.base_offset}")
        self.assign_epoch(stored.leader_epoch, stored.base_offset)
        self.batches.append(stored)
        self.base_offsets.append(stored.base_offset)
        self.leo = stored.next_offset

    def read(self, offset: int, max_batches: int = 1 << 30, below: int | None = None) -> list[LogBatch]:
        """Batches holding offsets ``>= offset`` (and starting below ``below`` if given)."""
        i = max(bisect_right(self.base_offsets, offset) - 1, 0)
        out: list = []
        limit = self.leo if below is None else below
        for stored in self.batches[i : i + max_batches + 1]:
            if stored.next_offset <= offset:
                continue
            if stored.base_offset >= limit or len(out) >= max_batches:
                break
            out.append(stored)
        return out

    def records(self, start: int = 0, end: int | None = None) -> Iterator[tuple[int, object, LogBatch]]:
        """``(offset, record, batch)`` for data records in ``[start, end)`` (markers skipped)."""
        end = self.leo if end is None else end
        for stored in self.read(start, below=end):
            if stored.batch.control is not None:
                continue
            for i, record in enumerate(stored.batch.records):
                offset = stored.base_offset + i
                if start <= offset < end:
                    yield offset, record, stored

    def truncate(self, offset: int) -> list[LogBatch]:
        """Drop everything at or after ``offset``; returns what was removed."""
        self.epochs = [(e, s) for e, s in self.epochs if s < offset]
        if offset >= self.leo:
            return []
        i = bisect_right(self.base_offsets, offset - 1) if offset > 0 else 0
        # a batch straddling the cut goes too, as Kafka truncates at batch boundaries
        while i > 0 and self.batches[i - 1].next_offset > offset:
            i -= 1
        removed = self.batches[i:]
        del self.batches[i:]
        del self.base_offsets[i:]
        self.leo = self.batches[-1].next_offset if self.batches else 0
        self.hw = min(self.hw, self.leo)
        self.epochs = [(e, s) for e, s in self.epochs if s < self.leo]  # the cut may fall mid-batch
        return removed

    def end_offset_for_epoch(self, epoch: int) -> tuple[int, int]:
        """Kafka's OffsetsForLeaderEpoch answer: the largest epoch ``<= epoch`` this log knows
        and the offset where it ended (the start of the next epoch, or the LEO)."""
        found = -1, -1
        for i, (e, _start) in enumerate(self.epochs):
            if e > epoch:
                break
            end = self.epochs[i + 1][1] if i + 1 < len(self.epochs) else self.leo
            found = e, end
        return found
