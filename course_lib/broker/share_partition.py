"""Share-partition state on the partition leader: who holds which record, for how long, and
how many times it was delivered (Kafka's ``SharePartition`` and ``SharePartitionManager``).

For each (share group, partition) the leader keeps:

- the *start offset*: every record below it is done with (acknowledged or archived);
- the in-flight records at or above it, each ``AVAILABLE``, ``ACQUIRED`` (by one member, under
  an acquisition lock), ``ACKNOWLEDGED`` or ``ARCHIVED``, with its *delivery count*.

Transitions (``SharePartition.RecordState.validateTransition``, ``InFlightState.tryUpdateState``):

- ShareFetch *acquires* AVAILABLE records (delivery count + 1) for ``group.share.record.lock.duration.ms``
  - whole record batches, as Kafka 4.3 does: possibly more than the fetch's ``max_records``,
  split record by record once acknowledged piecemeal, throttled near the delivery count limit
  (:mod:`.share_batches`);
- ACCEPT: ACQUIRED -> ACKNOWLEDGED;  REJECT: ACQUIRED -> ARCHIVED (given up on purpose);
- RELEASE, an expired lock, or the member closing: ACQUIRED -> AVAILABLE - or ARCHIVED when
  the delivery count has reached ``group.share.delivery.count.limit`` (a poison record gives up);
- RENEW (KIP-1222): the holder gets a fresh lock, the delivery count stays;
- ACKNOWLEDGED and ARCHIVED are final.

Every acknowledgement, release and lock expiry is written to the share coordinator
(:mod:`.share_coordinator`) before it is answered; a write that fails is rolled back, as
``SharePartition`` rolls back its in-flight state. Until written, a record is not acquirable: a
ShareFetch that carries a RELEASE acquires meanwhile, so it does not get that record back. Acquisitions are not written. A new leader reads
the persisted state before handing out anything (``maybeInitialize``); a share-partition nobody
persisted yet starts at ``share.auto.offset.reset``: the high watermark (*latest*, the default),
the log's start (*earliest*) or the first record of the last ``by_duration:<duration>``. With
``share.isolation.level`` read_committed, records are handed out up to the last stable offset,
and an aborted transaction's are archived instead.

State lives in the leader's memory: it goes with a crash or with leadership (the next leader
reads it back), and every lock timer dies with the broker process.

Taught in notebooks/05c_share_groups.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, replace
from typing import Any, Callable

from kafka import errors as Errors

from .protocol import (
    ReadShareGroupStateRequest,
    ShareAcknowledgeRequest,
    ShareAcknowledgeResponse,
    ShareFetchRequest,
    ShareFetchResponse,
    WriteShareGroupStateRequest,
    node_name,
)
from .dead_letter_queue import OVER_LIMIT, REJECTED, DeadLetterWriter
from .share_batches import RECORD_LIMIT, InFlightBatch, cut_new, throttle_limit, whole_runs
from .share_config import ShareGroupSettings, by_duration_ms
from .share_coordinator import SHARE_STATE_TOPIC

AVAILABLE, ACQUIRED, ACKNOWLEDGED, ARCHIVED = "AVAILABLE", "ACQUIRED", "ACKNOWLEDGED", "ARCHIVED"
FINAL = (ACKNOWLEDGED, ARCHIVED)
#: AcknowledgeType ids on the wire (``org.apache.kafka.clients.consumer.AcknowledgeType``)
ACCEPT, RELEASE, REJECT, RENEW = 1, 2, 3, 4
ACK_NAMES = {ACCEPT: "accept", RELEASE: "release", REJECT: "reject", RENEW: "renew"}
#: how long a share-partition leader waits for the share coordinator
STATE_RPC_TIMEOUT_MS = 5_000
STATE_RETRY_MS = 100
#: an answer's part not known yet
_WAITING = object()


@dataclass
class InFlight:
    state: str
    count: int = 0  # delivery count
    member: str | None = None
    lock: int = 0  # the acquisition whose lock covers it (0: none)
    deadline: float = 0.0
    #: a state change waiting for the share coordinator: not acquirable until it is persisted
    #: (``InFlightState.rollbackState`` set: ``acquire`` skips records with an ongoing transition)
    pending: bool = False
    #: the first offset of its in-flight batch (:attr:`SharePartition.batches`)
    batch: int = -1


class SharePartition:
    """One share group's view of one partition, on its leader."""

    _serials = itertools.count(1)  # names each share-partition object (a leader's term) for the invariants

    def __init__(self, manager: "SharePartitionManager", group: str, partition):
        self.manager, self.group, self.partition = manager, group, partition
        self.serial = next(self._serials)
        self.tp = partition.tp
        self.leader_epoch = partition.leader_epoch
        self.settings: ShareGroupSettings = manager.settings(group)
        self.ready = False
        self.start = 0
        self.records: dict[int, InFlight] = {}
        #: first offset -> the in-flight batch: records acquired together (share_batches.py)
        self.batches: dict[int, InFlightBatch] = {}
        self.persisted: dict[int, tuple] = {}  # offset -> (state, count) as last written
        self.waiting: list = []  # (src, request) arrived before the state was read
        self._writes: list = []  # queued (updates, done) - one write in flight at a time
        self.writes_confirmed = 0  # (for the invariant checker: ``persisted`` changed)
        self.version = 0  # bumped by every change of ``records`` (the invariant checker skips the rest)
        self._writing = False
        self._initialize()

    @property
    def broker(self):
        return self.manager.broker

    @property
    def current(self) -> bool:
        p = self.partition
        return self.broker.alive and p.is_leader and p.leader_epoch == self.leader_epoch

    @property
    def end(self) -> int:
        """Where records stop being handed out: the high watermark, or with
        ``share.isolation.level`` read_committed the last stable offset (an open transaction's
        records, and all after them, wait for its end)."""
        log = self.partition.log
        if self.settings.isolation_level == "read_committed":
            return self.partition.txn.last_stable_offset(log.hw)
        return log.hw

    # ---- initialisation: read what the share coordinator persisted ---------------------------------
    def _reset_offset(self) -> int:
        """Where a new share group starts (``share.auto.offset.reset``): the high watermark
        (latest), the log's start (earliest), or the first record stamped within the last
        ``by_duration`` on the brokers' clock (the high watermark if none is)."""
        log, reset = self.partition.log, self.settings.auto_offset_reset
        if reset == "latest":
            return log.hw
        window = by_duration_ms(reset)
        if window is None:
            return 0
        since = self.broker.sim.now + self.broker.cluster.wall_clock_offset_ms - window
        return next((o for o, record, _ in log.records(0, log.hw) if record.timestamp_ms >= since), log.hw)

    def _initialize(self) -> None:
        def answered(resp) -> None:
            if not self.current:
                return
            if isinstance(resp, type) or resp.error is not None:
                return self.broker.schedule_timer(STATE_RETRY_MS, self._initialize)
            if resp.start_offset < 0:  # a new share group on this partition
                self.start = self._reset_offset()
                self.manager.note(
                    "share_start",
                    {
                        "group": self.group,
                        "topic": self.tp[0],
                        "partition": self.tp[1],
                        "start_offset": self.start,
                        "share.auto.offset.reset": self.settings.auto_offset_reset,
                    },
                )
                self._persist([], lambda error: None)  # the start offset survives a failover
            else:
                self.start = resp.start_offset
                for offset, state, count in resp.states:
                    self.records[offset] = InFlight(state, count)
                    self.persisted[offset] = (state, count)
                self._batches_from_persisted()
            self.ready = True
            self.version += 1
            self._advance_start()
            waiting, self.waiting = self.waiting, []
            for src, req in waiting:
                self.manager.dispatch(src, req)

        self.manager.ask_share_coordinator(
            ReadShareGroupStateRequest(0, self.group, self.tp, self.leader_epoch), answered
        )

    # ---- acquisition ----------------------------------------------------------------------------
    def acquire(self, member: str, max_records: int, batch_size: int = 0, mode: int = 0) -> list:
        """Acquire records below the high watermark for ``member``, as ``SharePartition.acquire``
        does (:mod:`.share_batches`): about ``max_records`` - whole batches, so possibly more
        (``mode`` 0, batch_optimized) - or at most that many (``mode`` 1, record_limit);
        ``[(offset, Record, delivery count)]``, all under one new lock."""
        if self.start >= self.end:
            return []
        fetch_offset = self._next_fetch_offset()
        if fetch_offset is None:
            return []
        room, last = self._window(fetch_offset, max_records)
        if room <= 0:
            return []
        record_limit = mode == RECORD_LIMIT
        take = _Taker(self, member)
        throttle = throttle_limit(self.settings.delivery_count_limit)
        for kind, segment in self._segments(fetch_offset, room, last):
            left = room - take.count
            if left <= 0:
                break
            if kind == "new":
                self._acquire_new(segment, left, batch_size or max_records, record_limit, take)
                continue
            batch, offsets = segment, self._offsets(segment)
            throttled = self._throttled(batch, offsets, throttle)
            if throttled and take.count:
                break  # a batch near the limit goes in a fetch of its own
            first = self.records[offsets[0]]
            if not batch.split and (throttled or (record_limit and len(offsets) > left)):
                if first.state != AVAILABLE or first.pending:
                    continue
                batch.split = True
            if not batch.split:
                if first.state == AVAILABLE and not first.pending:
                    take.all(offsets)
                continue
            if self._acquire_subset(batch, offsets, left, record_limit, throttle, take) and throttled:
                break
        if take.out:
            self.version += 1
            self.broker.schedule_timer(self.settings.record_lock_duration_ms, self._lock_expired, take.lock)
        return take.out

    def _window(self, fetch_offset: int, max_records: int) -> tuple[int, int | None]:
        """(records this fetch may acquire, the last offset it may reach or None): Kafka limits
        the *span* in flight - from the start offset to the last in-flight record, whatever their
        states - to ``share.partition.max.record.locks``, not the records acquired. A record
        stuck at the start offset (a slow or crashed worker's, until its lock runs out) caps how
        far past it the group gets, however fast the others are. At the cap, a fetch may still
        take released records inside the span (``lastOffsetAndMaxRecordsToAcquire``)."""
        end = max(self.records) if self.records else None
        in_flight = end - self.start + 1 if end is not None else 0
        room = min(max_records, self.settings.partition_max_record_locks - in_flight)
        if room > 0:
            return room, None
        if end is not None and fetch_offset <= end:
            return min(max_records, end - fetch_offset + 1), end
        return 0, None

    def _next_fetch_offset(self) -> int | None:
        """Where the next read starts: the first available record, or the first never acquired."""
        for offset, _, _ in self.partition.log.records(self.start, self.end):
            r = self.records.get(offset)
            if r is None or r.state == AVAILABLE:
                return offset
        return None

    def _segments(self, fetch_offset: int, room: int, last: int | None = None):
        """The in-flight batches and the runs of never acquired records (``[(offset, record,
        log batch)]``) from ``fetch_offset`` to the high watermark (or to ``last``), in offset order."""
        log = self.partition.log
        r = self.records.get(fetch_offset)
        begin = max(self.batches[r.batch].first, self.start) if r is not None else fetch_offset
        new: list = []
        last_batch = None
        for offset, record, stored in log.records(begin, self.end if last is None else min(self.end, last + 1)):
            r = self.records.get(offset)
            if r is None:
                # enough: the rest of the log batch that holds the room-th record is all a fetch takes
                if len(new) >= room and stored is not new[room - 1][2]:
                    break
                new.append((offset, record, stored))
                continue
            if new:
                yield "new", new
                new = []
            if r.batch != last_batch:
                last_batch = r.batch
                yield "batch", self.batches[r.batch]
        if new:
            yield "new", new

    def _offsets(self, batch: InFlightBatch) -> list:
        return [o for o in range(batch.first, batch.last + 1) if o in self.records]

    def _throttled(self, batch: InFlightBatch, offsets: list, throttle: int) -> bool:
        """``shouldThrottleRecordsDelivery``: the batch's (or an available record's) delivery
        count reached the throttle limit."""
        if not batch.split:
            return self.records[offsets[0]].count >= throttle
        counts = [self.records[o].count for o in offsets if self.records[o].state == AVAILABLE]
        return max(counts, default=0) >= throttle

    def _acquire_new(self, new: list, left: int, batch_size: int, record_limit: bool, take) -> None:
        """``acquireNewBatchRecords``: ``left`` records, rounded up to the end of a log batch."""
        if left < len(new):
            end = new[left - 1][2].next_offset  # the log batch holding the left-th record
            new = [x for x in new if x[0] < end]
        first, last = new[0][0], new[-1][0]
        if record_limit and len(new) > left:  # one batch; only ``left`` of it acquired
            self._add_batch(first, last, [o for o, _, _ in new], split=True)
            take.all([o for o, _, _ in new[:left]])
            return
        spans: list[tuple[int, int]] = []
        for _, _, stored in new:
            if not spans or spans[-1][0] != stored.base_offset:
                spans.append((stored.base_offset, stored.next_offset))
        for lo, hi in cut_new(spans, first, last, batch_size):
            self._add_batch(lo, hi, [o for o, _, _ in new if lo <= o <= hi])
        take.all([o for o, _, _ in new])

    def _acquire_subset(self, batch, offsets: list, left: int, record_limit: bool, throttle: int, take) -> int:
        """``acquireSubsetBatchRecords``: a split batch's available records, one by one; a record
        due for its last delivery goes alone; a throttled batch gives ``size >> k`` at a time
        (its size as acquired, records below the start offset included)."""
        limit = self.settings.delivery_count_limit
        taken, cap = 0, None
        for offset in offsets:
            r = self.records[offset]
            if r.state != AVAILABLE or r.pending:
                continue
            if limit > 2 and r.count == limit - 1 and taken:
                break
            if r.count >= throttle and cap is None:
                cap = max(1, (batch.last - batch.first + 1) >> (r.count - throttle + 1))
            take.all([offset])
            taken += 1
            if (limit > 2 and r.count == limit) or (record_limit and taken == left) or taken == cap:
                break
        return taken

    def _add_batch(self, first: int, last: int, offsets: list, split: bool = False) -> None:
        self.batches[first] = InFlightBatch(first, last, split)
        for offset in offsets:
            r = self.records.get(offset)
            if r is None:
                r = self.records[offset] = InFlight(AVAILABLE)
            r.batch = first

    def _batches_from_persisted(self) -> None:
        """A new leader's in-flight batches: runs of consecutive offsets read back in one state
        and delivery count (the share coordinator keeps state batches, not records)."""
        run: list = []
        for offset in sorted(self.records):
            r = self.records[offset]
            if run and (offset != run[-1] + 1 or (r.state, r.count) != self.persisted[run[0]]):
                self._add_batch(run[0], run[-1], run)
                run = []
            run.append(offset)
        if run:
            self._add_batch(run[0], run[-1], run)

    def _lock_expired(self, lock: int) -> None:
        """The acquisition lock timed out: the records go back (or are archived at the limit)."""
        if not self.current or self.manager.partitions.get((self.group, self.tp)) is not self:
            return
        expired = [o for o, r in sorted(self.records.items()) if r.state == ACQUIRED and r.lock == lock]
        if expired:
            self._release(expired, "lock_expired")

    def _release(self, offsets: list, why: str) -> None:
        self.version += 1
        changed, archived = [], []
        for offset in offsets:
            r = self.records[offset]
            r.state = ARCHIVED if r.count >= self.settings.delivery_count_limit else AVAILABLE
            r.member, r.lock, r.pending = None, 0, True
            changed.append(offset)
            if r.state == ARCHIVED:
                archived.append(offset)
        self.manager.note(
            "share_" + why,
            {
                "group": self.group,
                "topic": self.tp[0],
                "partition": self.tp[1],
                "offsets": offsets,
                "archived": archived,
            },
        )
        if archived:
            self.manager.dead_letters.archived(self, archived, OVER_LIMIT)
        self._persist(changed, lambda error: self._settled(changed))

    def _settled(self, offsets: list) -> None:
        for offset in offsets:
            r = self.records.get(offset)
            if r is not None:
                r.pending = False
        if self.manager.parked:  # released records may be acquired now
            self.manager.wake(self.tp)

    # ---- acknowledgements --------------------------------------------------------------------------
    def acknowledge(self, member: str, acks: tuple, done) -> None:
        """Apply ``(offset, type)`` acknowledgements of ``member``; ``done(error)`` once persisted.
        Any record not ACQUIRED by this member fails the whole batch with INVALID_RECORD_STATE and
        nothing changes (``SharePartition.acknowledge`` rolls back). A record below the start
        offset is skipped, no error: its batch is "already archived" to Kafka, whoever settled it
        (measured on Kafka 4.3.1: a late ACCEPT of a record another member took after its lock ran
        out, then settled, succeeds; the share-group differential, course_lib/experiments/share_differential.py)."""
        acks = tuple((offset, kind) for offset, kind in acks if offset >= self.start)
        for offset, kind in acks:
            r = self.records.get(offset)
            if r is None or r.state != ACQUIRED or r.member != member or kind not in ACK_NAMES:
                return done(Errors.InvalidRecordStateError)
        before = {
            o: (r.state, r.count, r.member, r.lock, r.deadline) for o, r in self.records.items() if o in dict(acks)
        }
        self._split_acknowledged(acks)
        self.version += 1
        changed, renewed = [], []
        for offset, kind in acks:
            r = self.records[offset]
            if kind == RENEW:
                renewed.append(offset)
                continue
            if kind == ACCEPT:
                r.state = ACKNOWLEDGED
            elif kind == REJECT:
                r.state = ARCHIVED
            else:  # RELEASE: another delivery, unless this was the last one allowed
                r.state = ARCHIVED if r.count >= self.settings.delivery_count_limit else AVAILABLE
            r.member, r.lock, r.pending = None, 0, True
            changed.append(offset)
        if renewed:
            self._renew(renewed)
        rejected = [o for o, k in acks if k == REJECT]
        limited = [o for o, k in acks if k == RELEASE and self.records[o].state == ARCHIVED]
        if rejected or limited:
            self.manager.note(
                "share_archived",
                {
                    "group": self.group,
                    "topic": self.tp[0],
                    "partition": self.tp[1],
                    "rejected": rejected,
                    "delivery_limit": limited,
                },
            )
            for offset, kind in sorted(acks):  # each dead letter in offset order
                if offset in rejected or offset in limited:
                    self.manager.dead_letters.archived(self, [offset], REJECTED if kind == REJECT else OVER_LIMIT)
        if not changed:
            return done(None)

        def persisted(error) -> None:
            self._settled(changed)
            self.version += 1
            if error is not None:  # roll back, as SharePartition does when the write fails
                expired = []
                for offset in changed:
                    r = self.records.get(offset)
                    if r is not None:
                        r.state, r.count, r.member, r.lock, r.deadline = before[offset]
                        if r.deadline <= self.broker.sim.now:  # its lock ran out meanwhile
                            expired.append(offset)
                if expired and self.current:
                    self._release(expired, "lock_expired")
            done(error)

        self._persist(changed, persisted)

    def _split_acknowledged(self, acks: tuple) -> None:
        """An in-flight batch not acknowledged whole, with one type, keeps per-record states from
        now on (``acknowledgeBatchRecords`` -> ``maybeInitializeOffsetStateUpdate``)."""
        runs = whole_runs(acks)
        for first in {self.records[o].batch for o, _ in acks}:
            batch = self.batches[first]
            if batch.split:
                continue
            offsets = self._offsets(batch)
            if not any(k is not None and lo <= offsets[0] and offsets[-1] <= hi for lo, hi, k in runs):
                batch.split = True

    def _renew(self, offsets: list) -> None:
        """RENEW (KIP-1222): a new lock for records still being processed; no new delivery."""
        lock = self.manager.next_lock()
        deadline = self.broker.sim.now + self.settings.record_lock_duration_ms
        for offset in offsets:
            r = self.records[offset]
            r.lock, r.deadline = lock, deadline
        self.broker.schedule_timer(self.settings.record_lock_duration_ms, self._lock_expired, lock)

    def release_member(self, member: str, why: str = "released_on_close") -> None:
        """The member's share session ended (it closed it, or its connection closed: ``why``
        "released_on_disconnect"): what it holds is available again at once."""
        held = [o for o, r in sorted(self.records.items()) if r.state == ACQUIRED and r.member == member]
        if held:
            self._release(held, why)

    # ---- persistence -------------------------------------------------------------------------------
    def _advance_start(self) -> None:
        """Move the start offset over records that are done (and over transaction markers)."""
        log = self.partition.log
        data = {o for o, _, _ in log.records(self.start, log.hw)}
        while self.start < log.hw:
            r = self.records.get(self.start)
            # only over what is persisted: a write that fails is rolled back
            if r is not None and r.state in FINAL and self.persisted.get(self.start, (None,))[0] == r.state:
                del self.records[self.start]
            elif r is not None or self.start in data:
                break
            self.start += 1
        for first in [f for f, b in self.batches.items() if b.last < self.start]:
            del self.batches[first]

    def _persist(self, offsets: list, done) -> None:
        self._writes.append((list(offsets), done))
        if not self._writing:
            self._write_next()

    def _write_next(self) -> None:
        if not self._writes or not self.current:
            self._writing = False
            for _, done in self._writes:
                done(Errors.NotLeaderForPartitionError)
            self._writes = []
            return
        self._writing = True
        batch, self._writes = self._writes, []
        offsets = sorted({o for offsets, _ in batch for o in offsets})
        updates = []
        for offset in offsets:
            r = self.records.get(offset)
            # an ACQUIRED record is written as it was last persisted: acquisitions are not written
            value = (r.state, r.count) if r is not None and r.state != ACQUIRED else self.persisted.get(offset)
            if value is not None:
                updates.append((offset, *value))
        request = WriteShareGroupStateRequest(0, self.group, self.tp, self.leader_epoch, self.start, tuple(updates))

        def answered(resp) -> None:
            error = resp if isinstance(resp, type) else resp.error
            if error is None:
                self.writes_confirmed += 1
                for offset, state, count in updates:
                    self.persisted[offset] = (state, count)
                for offset in [o for o in self.persisted if o < request.start_offset]:
                    del self.persisted[offset]
                self._advance_start()
            for _, done in batch:
                done(error)
            self._write_next()

        self.manager.ask_share_coordinator(request, answered)


class SharePartitionManager:
    """A broker's share-partitions (created on the first ShareFetch of a group for a partition
    it leads) and its requests to the share coordinator. Nothing exists, and nothing is
    scheduled, until a share group fetches."""

    def __init__(self, broker):
        self.broker = broker
        self.partitions: dict[tuple, SharePartition] = {}  # (group, tp) -> state
        self._pending: dict[int, Callable[[Any], None]] = {}
        #: ShareFetches waiting for records (long poll): tp -> [[src, request, share-partition, ack error]]
        self.parked: dict[tuple, list] = {}
        self._corr = 0
        self._locks = 0
        #: connection (the client's node) -> the (group, member)s whose share sessions it carries
        self.sessions: dict[str, set[tuple[str, str]]] = {}
        #: records given up on also go to the group's dead-letter topic, if it has one (KIP-1191)
        self.dead_letters = DeadLetterWriter(broker)
        #: connection -> the requests read after a ShareAcknowledge still being answered (see
        #: :meth:`dispatch`); a connection is here while one is
        self.muted: dict[str, list] = {}

    def crash(self) -> None:
        self.dead_letters.crash()
        self.partitions.clear()
        self._pending.clear()
        self.parked.clear()
        self.sessions.clear()
        self.muted.clear()

    def disconnected(self, src: str) -> None:
        """A client's connection closed (it closed it, or its process died and its operating
        system did): the share sessions it carried end, and what their members hold here is
        available again at once (Kafka's ``SharePartitionManager``, on a disconnect: measured on
        4.3.1, a SIGKILLed consumer's records come back within a second, whatever the lock)."""
        self._unpark(lambda s, req: s == src)  # nobody to answer: the connection is gone
        self.muted.pop(src, None)
        for group, member in sorted(self.sessions.pop(src, ())):
            for (g, _), sp in sorted(self.partitions.items()):
                if g == group and sp.current and sp.ready:
                    sp.release_member(member, "released_on_disconnect")

    def _forget_group(self, group: str) -> None:
        """The group's share sessions here all ended since its share-partitions were made: they
        leave the cache, and the next fetch reads the state again from the share coordinator
        (Kafka's ``ShareGroupListener.onGroupEmpty``). So a leader hands out from where an
        AlterShareGroupOffsets or DeleteShareGroupOffsets - which only an empty group accepts -
        left the group. One still settling what its members held stays until it is done."""
        for key, sp in sorted(self.partitions.items()):
            idle = sp.ready and not sp.waiting and not sp._writing and not sp._writes
            if key[0] == group and idle and all(r.state != ACQUIRED for r in sp.records.values()):
                del self.partitions[key]

    def _unpark(self, whose: Callable[[str, Any], bool]) -> list:
        """Take the parked ShareFetches ``whose(src, request)`` picks out of the purgatory, so they
        acquire nothing more; returns them."""
        taken = []
        for tp in list(self.parked):
            still = [e for e in self.parked[tp] if not whose(e[0], e[1])]
            taken += [e for e in self.parked[tp] if whose(e[0], e[1])]
            if still:
                self.parked[tp] = still
            else:
                del self.parked[tp]
        return taken

    def settings(self, group: str) -> ShareGroupSettings:
        cluster = self.broker.cluster
        return ShareGroupSettings.resolve(self.broker.options, cluster.share_group_configs.get(group))

    def next_lock(self) -> int:
        self._locks += 1
        return self._locks

    def note(self, f: str, value: dict) -> None:
        self.broker.cluster.record(f"share-{self.broker.broker_id}", f, value)

    def share_partition(self, group: str, tp):
        """The current share-partition of (group, tp), or None if this broker does not lead tp;
        a share-partition of an earlier leadership is dropped and read again."""
        partition = self.broker.partitions.get(tp)
        if partition is None or not partition.is_leader:
            return None
        sp = self.partitions.get((group, tp))
        if sp is None or sp.leader_epoch != partition.leader_epoch:
            sp = self.partitions[(group, tp)] = SharePartition(self, group, partition)
        return sp

    # ---- requests from share consumers ---------------------------------------------------------------
    def dispatch(self, src: str, req) -> None:
        """A share request. Kafka reads a connection's next request only once the one in progress
        is answered (``SocketServer`` mutes the channel meanwhile), so a ShareFetch sent after a
        ShareAcknowledge - ``commit_async`` then ``poll`` - is handled once the acknowledgement is
        persisted and answered: the release it carried is seen, and its answer comes first (Kafka
        4.4.0 with both clients: the acknowledgement commit callback runs before the released
        record is polled again). A long-polling ShareFetch does not hold its connection here:
        the clients send no acknowledgement behind it but a closing one."""
        if src in self.muted:
            self.muted[src].append(req)
        elif isinstance(req, ShareFetchRequest):
            self.share_fetch(src, req)
        else:
            self.share_acknowledge(src, req)

    def _answer_acknowledge(self, src: str, resp: ShareAcknowledgeResponse) -> None:
        """Answer a ShareAcknowledge; then the requests its connection sent meanwhile, in order."""
        self.broker.send(src, resp)
        for req in self.muted.pop(src, ()):
            self.dispatch(src, req)

    def share_fetch(self, src: str, req: ShareFetchRequest) -> None:
        if not any(g == req.group for carried in self.sessions.values() for g, _ in carried):
            self._forget_group(req.group)
        self.sessions.setdefault(src, set()).add((req.group, req.member_id))
        if self.broker.options.share_version < 1:  # share groups not enabled (``share.version`` 0)
            return self.broker.send(src, ShareFetchResponse(req.corr, req.tp, Errors.UnsupportedVersionError))
        sp = self.share_partition(req.group, req.tp)
        if sp is None:
            return self.broker.send(src, ShareFetchResponse(req.corr, req.tp, self.broker.no_replica_error(req.tp)))
        if not sp.ready:
            sp.waiting.append((src, req))
            return
        # the piggybacked acknowledgements and the fetch go on side by side, as in Kafka's
        # KafkaApis.handleShareFetchRequest: records just released are still being written to the
        # share coordinator, so this fetch skips them (a later one gets them); the answer waits
        # for both
        entry = [src, req, sp, {"ack": _WAITING if req.acknowledgements else None, "records": _WAITING}]
        if req.acknowledgements:
            sp.acknowledge(req.member_id, req.acknowledgements, lambda error: self._done(entry, "ack", error))
        records = _acquire(sp, req)
        if records or not req.max_wait_ms:
            return self._done(entry, "records", records)
        # nothing to hand out: wait (long poll) until records are written or released, at most
        # max_wait_ms (Kafka's share fetch purgatory)
        self.parked.setdefault(req.tp, []).append(entry)
        self.broker.schedule_timer(req.max_wait_ms, self._wait_over, entry)

    def _wait_over(self, entry: list) -> None:
        waiting = self.parked.get(entry[1].tp, [])
        if not any(e is entry for e in waiting):
            return  # answered already
        waiting.remove(entry)
        if not waiting:
            del self.parked[entry[1].tp]
        self._done(entry, "records", _acquire(entry[2], entry[1]))

    def wake(self, tp) -> None:
        """New records below the high watermark, or released ones: answer the parked fetches
        that can now acquire something."""
        waiting = self.parked.pop(tp, [])
        still = []
        for entry in waiting:
            sp = entry[2]
            records = _acquire(sp, entry[1])
            if records or not sp.current:
                self._done(entry, "records", records)
            else:
                still.append(entry)
        if still:
            self.parked[tp] = still

    def _done(self, entry: list, part: str, value) -> None:
        """One part of a ShareFetch's answer is known (its acknowledgements' outcome or its
        records): answer once both are."""
        src, req, sp, box = entry
        box[part] = value
        if box["ack"] is _WAITING or box["records"] is _WAITING:
            return
        error = None if sp.current else Errors.NotLeaderForPartitionError
        self.broker.send(src, ShareFetchResponse(req.corr, req.tp, error, tuple(box["records"]), box["ack"]))

    def share_acknowledge(self, src: str, req: ShareAcknowledgeRequest) -> None:
        if req.close:
            self.sessions.get(src, set()).discard((req.group, req.member_id))
            # The session ends: a ShareFetch of it still waiting here is answered now, empty, and
            # acquires nothing that is written later (measured on Kafka 4.4.0 with confluent-kafka:
            # a share consumer closed while it fetched in the background never takes a record
            # written after its close - the share-group differential, seeds 3 and 9).
            for entry in self._unpark(
                lambda s, r: s == src and (r.group, r.member_id, r.tp) == (req.group, req.member_id, req.tp)
            ):
                self._done(entry, "records", [])
        if self.broker.options.share_version < 1:
            return self.broker.send(src, ShareAcknowledgeResponse(req.corr, req.tp, Errors.UnsupportedVersionError))
        sp = self.share_partition(req.group, req.tp)
        if sp is None:
            return self.broker.send(
                src, ShareAcknowledgeResponse(req.corr, req.tp, self.broker.no_replica_error(req.tp))
            )
        if not sp.ready:
            sp.waiting.append((src, req))
            return

        def done(error) -> None:
            if req.close:
                sp.release_member(req.member_id)
            self._answer_acknowledge(src, ShareAcknowledgeResponse(req.corr, req.tp, error))

        self.muted[src] = []  # until done: every write ends in it (answered, failed or timed out)
        sp.acknowledge(req.member_id, req.acknowledgements, done)

    # ---- the share coordinator ---------------------------------------------------------------------
    def ask_share_coordinator(self, request, on_answer) -> None:
        """Send a Read/WriteShareGroupState to the leader of ``__share_group_state`` (created on
        first use); ``on_answer(response)``, or an error class if it never came."""
        self.broker.cluster.controller.ensure_internal_topic(SHARE_STATE_TOPIC)
        state = self.broker.metadata.get((SHARE_STATE_TOPIC, 0))
        if state is None or state.leader is None:
            return on_answer(Errors.CoordinatorNotAvailableError)
        self._corr += 1
        corr = self._corr
        self._pending[corr] = on_answer
        self.broker.send(node_name(state.leader), replace(request, corr=corr))
        self.broker.schedule_timer(STATE_RPC_TIMEOUT_MS, self._expired, corr)

    def _expired(self, corr: int) -> None:
        on_answer = self._pending.pop(corr, None)
        if on_answer is not None:
            on_answer(Errors.RequestTimedOutError)

    def on_state_response(self, resp) -> None:
        on_answer = self._pending.pop(resp.corr, None)
        if on_answer is not None:
            on_answer(resp)


def _acquire(sp: SharePartition, req: ShareFetchRequest) -> list:
    """What a ShareFetch acquires at its share-partition (nothing once it lost the leadership)."""
    return sp.acquire(req.member_id, req.max_records, req.batch_size, req.acquire_mode) if sp.current else []


class _Taker:
    """Acquires records for one fetch: each ACQUIRED by ``member`` under one new lock, its
    delivery count + 1, and listed as ``(offset, Record, delivery count)`` in offset order."""

    def __init__(self, sp: SharePartition, member: str):
        self.sp, self.member = sp, member
        self.lock = sp.manager.next_lock()
        self.deadline = sp.broker.sim.now + sp.settings.record_lock_duration_ms
        self.out: list = []

    @property
    def count(self) -> int:
        return len(self.out)

    def all(self, offsets: list) -> None:
        if not offsets:
            return
        sp = self.sp
        log, txn = sp.partition.log, sp.partition.txn
        stored = {o: (rec, b.batch) for o, rec, b in log.records(offsets[0], offsets[-1] + 1)}
        committed_only = sp.settings.isolation_level == "read_committed"
        aborted = []
        for offset in offsets:
            r = sp.records[offset]
            r.count += 1
            record, batch = stored[offset]
            if committed_only and batch.is_transactional and txn.is_aborted(batch.producer_id, offset):
                # read_committed: an aborted transaction's record is archived, never handed out
                # (SharePartition's filterAbortedTransactionalAcquiredRecords)
                r.state, r.member, r.lock, r.pending = ARCHIVED, None, 0, True
                aborted.append(offset)
                continue
            r.state, r.member, r.lock, r.deadline = ACQUIRED, self.member, self.lock, self.deadline
            self.out.append((offset, record, r.count))
        if aborted:
            sp.version += 1
            sp.manager.note(
                "share_aborted_archived",
                {"group": sp.group, "topic": sp.tp[0], "partition": sp.tp[1], "offsets": aborted},
            )
            sp._persist(aborted, lambda error: sp._settled(aborted))
