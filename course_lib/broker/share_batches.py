"""In-flight *batches* of a share-partition: Kafka 4.3 hands out whole record batches, not
records (``SharePartition.acquire``, ``acquireNewBatchRecords``, ``createBatches``,
``acquireSubsetBatchRecords``; the acquire modes of KIP-1206).

What a ShareFetch acquires, from the first available offset up to the high watermark:

- **records never handed out yet** (past the in-flight ones, or in a gap a new leader did not read
  back): at least ``max_records`` of them, *rounded up to the end of the log batch* that holds the
  ``max_records``-th one (``MaxRecords`` "can be exceeded for alignment of batch boundaries").
  24 records written in one producer batch all go to the first fetch, whatever its
  ``max.poll.records``. They are cut, at log batch boundaries, into in-flight batches of about
  ``batch_size`` records, each under one acquisition lock.
  With ``share.acquire.mode=record_limit`` (the Java client's option; ShareFetch v2) exactly
  ``max_records`` are acquired and the rest of the batch stays available.
- **in-flight batches available again** (released, or their lock ran out): a batch nobody has
  acknowledged piecemeal is acquired whole again, its records' delivery count + 1 together -
  again past ``max_records`` if it is bigger. Once a batch was acknowledged record by record (or
  partly renewed), its records have states of their own (it is *split*, Kafka's ``offsetState``)
  and are acquired one by one; in *record_limit* mode a whole batch bigger than what is left of
  ``max_records`` is split too.
- **throttling a record that keeps failing** (``throttleRecordsDeliveryLimit``): from delivery
  ``max(2, ceil(limit / 2))`` on, a batch is split and handed out in halves, quarters, ... and a
  record about to get its last delivery goes alone, so a poison record cannot drag its batch to
  the delivery count limit with it. A fetch stops at such a batch if it already holds records.

>>> throttle_limit(5), throttle_limit(3), throttle_limit(2)
(3, 2, 2)
>>> cut_new([(0, 4), (4, 8), (8, 12)], first=0, last=11, batch_size=4)
[(0, 3), (4, 7), (8, 11)]
>>> cut_new([(0, 24)], first=0, last=23, batch_size=4)  # one producer batch stays one
[(0, 23)]
>>> whole_runs(((8, 1), (9, 1), (10, 2), (11, 1), (12, 1)))
[(8, 12, None)]
>>> whole_runs(((0, 1), (1, 1), (3, 2)))
[(0, 1, 1), (3, 3, 2)]

Taught in notebooks/05c_share_groups.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

#: ShareFetch's ShareAcquireMode (v2, KIP-1206): 0 batch_optimized (the default, and what v1
#: and librdkafka 2.16 get), 1 record_limit (the Java client's ``share.acquire.mode``)
BATCH_OPTIMIZED, RECORD_LIMIT = 0, 1
ACQUIRE_MODES = {"batch_optimized": BATCH_OPTIMIZED, "record_limit": RECORD_LIMIT}
#: SharePartition.MINIMUM_THROTTLE_RECORDS_DELIVERY_LIMIT (Kafka 4.3.1)
MINIMUM_THROTTLE_LIMIT = 2


@dataclass
class InFlightBatch:
    """Offsets ``first..last`` acquired together; ``split``: their states are kept per record
    (Kafka's ``InFlightBatch.offsetState``), not one for the batch."""

    first: int
    last: int
    split: bool = False


def throttle_limit(delivery_count_limit: int) -> int:
    """The delivery count from which a batch is handed out in ever smaller pieces."""
    return max(MINIMUM_THROTTLE_LIMIT, math.ceil(delivery_count_limit / 2))


def cut_new(log_batches: list, first: int, last: int, batch_size: int) -> list:
    """``createBatches`` (batch_optimized): records ``first..last`` never acquired before, as
    in-flight batches of about ``batch_size``, cut only where a log batch starts.
    ``log_batches``: ``(base offset, next offset)`` of the log batches holding them."""
    if last - first + 1 <= batch_size:
        return [(first, last)]
    out, current = [], first
    for base, _ in log_batches:
        if base > last:
            break
        if base - current >= batch_size:
            out.append((current, base - 1))
            current = base
    out.append((current, last))
    return out


def whole_runs(acks: tuple) -> list:
    """How a client sends ``(offset, type)`` acknowledgements: runs of consecutive offsets,
    ``(first, last, type)`` - the type None when it differs within the run (one type per
    offset). An in-flight batch inside a run with one type changes state as a whole; any other
    acknowledgement splits it (``acknowledgeBatchRecords``: not a full match, or per-offset types)."""
    runs: list = []
    for offset, kind in sorted(acks):
        if runs and runs[-1][1] == offset - 1:
            first, _, k = runs[-1]
            runs[-1] = (first, offset, k if k == kind else None)
        else:
            runs.append((offset, offset, kind))
    return runs


__all__ = [
    "ACQUIRE_MODES",
    "BATCH_OPTIMIZED",
    "RECORD_LIMIT",
    "InFlightBatch",
    "cut_new",
    "throttle_limit",
    "whole_runs",
]
