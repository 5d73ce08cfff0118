"""What a partition replica knows about transactions in its log.

- *ongoing*: producer id -> offset of its first record in the open transaction. The last stable
  offset (LSO) is the smaller of the high watermark and the first ongoing offset: a
  ``read_committed`` consumer reads nothing at or after it, because that transaction might
  still abort.
- *aborted*: ``(producer id, first offset, marker offset)`` of every aborted transaction. A fetch
  answer lists those in range; a ``read_committed`` consumer drops that producer's records from
  the first offset up to the abort marker (Kafka's aborted-transactions index).

Markers are records too: they take offsets, which is why offsets of a transactional topic have
gaps.

Taught in notebooks/06_transactions.
"""

from __future__ import annotations


class TxnIndex:
    __slots__ = ("ongoing", "aborted")

    def __init__(self):
        self.ongoing: dict[int, int] = {}
        self.aborted: list[tuple[int, int, int]] = []

    def on_append(self, stored) -> None:
        batch = stored.batch
        if batch.control is not None:
            first = self.ongoing.pop(batch.producer_id, None)
            if batch.control == "abort" and first is not None:
                self.aborted.append((batch.producer_id, first, stored.base_offset))
        elif batch.is_transactional and batch.producer_id not in self.ongoing:
            self.ongoing[batch.producer_id] = stored.base_offset

    def rebuild(self, batches) -> None:
        self.ongoing.clear()
        self.aborted.clear()
        for stored in batches:
            self.on_append(stored)

    def last_stable_offset(self, high_watermark: int) -> int:
        return min(high_watermark, *self.ongoing.values()) if self.ongoing else high_watermark

    def aborted_in(self, start: int, end: int) -> list[tuple[int, int]]:
        return [(pid, first) for pid, first, marker in self.aborted if marker >= start and first < end]

    def is_aborted(self, producer_id: int, offset: int) -> bool:
        return any(pid == producer_id and first <= offset < marker for pid, first, marker in self.aborted)
