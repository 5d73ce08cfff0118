"""The broker's producer-state table for one partition: how the idempotent producer's
retries are recognised.

For each producer id the broker keeps the producer epoch and the sequence ranges and offsets of
the last 5 batches it appended (``max.in.flight.requests.per.connection`` may be at most 5 for
exactly this reason). A retried batch whose sequence range is one of those five is a duplicate:
the broker does not append it again and answers with the offset of the copy it already has. A
batch that skips sequence numbers is out of order and is refused.

Followers keep the same table from the batches they replicate, so a new leader recognises a
retry of a batch the old leader wrote.

Taught in notebooks/04_idempotent_producer.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from kafka import errors as Errors

from .protocol import LogBatch, RecordBatch

BATCHES_KEPT = 5


@dataclass
class ProducerEntry:
    epoch: int
    batches: deque = field(default_factory=lambda: deque(maxlen=BATCHES_KEPT))  # (first, last, offset)

    @property
    def last_sequence(self) -> int:
        return self.batches[-1][1] if self.batches else -1


class ProducerStateTable:
    def __init__(self):
        self.entries: dict[int, ProducerEntry] = {}

    def check(self, batch: RecordBatch):
        """``(error, duplicate_base_offset)`` for an incoming batch: both None means append it."""
        pid = batch.producer_id
        if pid < 0 or batch.control is not None:
            return None, None
        entry = self.entries.get(pid)
        first = batch.base_sequence
        if entry is not None and batch.producer_epoch < entry.epoch:
            # Kafka >= 2.7 (KIP-588) answers a produce from an older epoch with INVALID_PRODUCER_EPOCH,
            # transactional or not; only the transaction coordinator says PRODUCER_FENCED
            return Errors.InvalidProducerEpochError, None
        if first < 0:  # written by a coordinator on the producer's behalf: only the epoch is checked
            return None, None
        if entry is None:
            # Kafka 4.x never answers UNKNOWN_PRODUCER_ID to a produce: with no state for the
            # producer id (new, or expired/truncated away) any first sequence is accepted
            return None, None
        if batch.producer_epoch > entry.epoch:
            return (None, None) if first == 0 else (Errors.OutOfOrderSequenceNumberError, None)
        last = batch.last_sequence
        for f, l, offset in entry.batches:
            if f == first and l == last:
                return None, offset
        if first != entry.last_sequence + 1:
            return Errors.OutOfOrderSequenceNumberError, None
        return None, None

    def update(self, stored: LogBatch) -> None:
        batch = stored.batch
        pid = batch.producer_id
        if pid < 0:
            return
        entry = self.entries.get(pid)
        if entry is None or batch.producer_epoch > entry.epoch:
            # a new epoch (a marker written after init_transactions() bumped it) fences older ones
            entry = self.entries[pid] = ProducerEntry(batch.producer_epoch)
        if batch.control is None and batch.base_sequence >= 0:
            entry.batches.append((batch.base_sequence, batch.last_sequence, stored.base_offset))

    def rebuild(self, batches) -> None:
        """Recover from the log, as a broker does after a restart or a truncation."""
        self.entries.clear()
        for stored in batches:
            self.update(stored)

    def snapshot(self) -> dict:
        """For display: pid -> epoch and cached sequence ranges."""
        return {
            pid: {"epoch": e.epoch, "last_sequence": e.last_sequence, "batches": [list(b) for b in e.batches]}
            for pid, e in sorted(self.entries.items())
        }
