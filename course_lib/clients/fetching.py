"""The simulated ``KafkaConsumer``'s fetcher - kafka-python's ``Fetcher``: where each assigned
partition stands (:class:`_Partition`), looking a position up (``auto_offset_reset``,
``seek_to_beginning``/``_end``), checking it after a leader change (KIP-320), taking a fetch
answer in (the ``read_committed`` filter of aborted transactions) and handing records to
``poll()``. The consumer (:mod:`.consumer`) decides *when* to fetch (``_advance``).
"""

from __future__ import annotations

from collections import deque
from typing import Callable

from kafka import errors as Errors
from kafka.consumer.fetcher import ConsumerRecord
from kafka.structs import TopicPartition

from ..broker.broker import node_name
from ..broker.protocol import ListOffsetsRequest, OffsetsForLeaderEpochRequest
from ..history import INFO, OK, OpName, as_text
from .offset_lookup import EARLIEST, LATEST
from .rpc import Requests


class _Partition:
    """What the consumer tracks per assigned partition."""

    __slots__ = (
        "position",
        "fetch_offset",
        "buffer",
        "fetching",
        "resetting",
        "committed_checked",
        "epoch",
        "validated_epoch",
        "validating",
        "paused",
        "highwater",
        "fetched_highwater",
        "reset_to",
        "early",
    )

    def __init__(self):
        self.committed_checked = False  # asked the group for its committed offset
        self.position: int | None = None  # next offset poll() returns
        self.fetch_offset: int | None = None  # next offset to fetch
        self.buffer: deque = deque()
        self.fetching: int | None = None  # corr of the fetch in flight
        self.resetting = False
        # KIP-320: the leader epoch of the last record fetched, and the leader epoch the
        # position was last checked against
        self.epoch: int | None = None
        self.validated_epoch = -1
        self.validating = False
        self.paused = False  # pause(): no fetches, nothing returned until resume()
        self.highwater: int | None = None  # from the last fetch answer, as kafka-python's highwater()
        # the last fetch answer's, shown by highwater() once a poll() took the answer in: kafka-python
        # parses a fetch answer (Fetcher._parse_fetched_data) only in poll(), and the simulator
        # fetches before (found by the differential, seed 378: highwater() None before any poll)
        self.fetched_highwater: int | None = None
        self.reset_to: int | None = None  # seek_to_beginning/_end: EARLIEST or LATEST, looked up lazily
        # the position was looked up (committed offset or auto_offset_reset) by a request sent
        # outside poll()/position(): kafka-python would not have asked yet, so until the next
        # poll()/position() it is no valid position - commit() leaves the partition out
        self.early = False


class Fetching(Requests):
    """The consumer's fetcher (see the module docstring); mixed into ``KafkaConsumer``."""

    _partitions: dict
    _leaders: dict  # tp -> leader broker id, None until metadata names one
    _leader_epochs: dict  # tp -> the leader's epoch, from metadata
    _read_committed: bool
    _advance: Callable[..., None]
    _later: Callable[[Callable], None]
    _polling: bool
    _in_position: bool

    def _reset_offset(self, tp, state):
        """Look the position up: where seek_to_beginning/_end asked for, else ``auto_offset_reset``."""
        policy = self._reset_policy(state)
        if policy == "none":
            raise Errors.NoOffsetForPartitionError(f"no committed offset for {tp} and auto_offset_reset='none'")
        leader = self._leaders.get(tp)
        if leader is None:
            return
        state.resetting = True
        early = self._looking_up_early()

        def listed(resp):
            state.resetting = False
            if isinstance(resp, type) or resp.error is not None:
                self._leaders[tp] = None
                return self._later(self._advance)
            # kafka-python's Fetcher._reset_offset_if_needed: the answer counts only if the partition
            # still awaits this same reset - a seek() or a seek_to_beginning/_end since then wins
            if state.position is None and self._reset_policy(state) == policy:
                state.position = state.fetch_offset = resp.offset
                state.reset_to = None
                state.early = early and self._looking_up_early()  # answered outside poll()/position()
            self._advance()

        self._send(
            node_name(leader),
            ListOffsetsRequest(self._next_corr(), tp, policy == "latest", self._read_committed),
            listed,
        )

    def _looking_up_early(self) -> bool:
        """A position lookup sent now is one kafka-python would not send yet: it looks positions up
        only inside poll() and position(); the simulator does as soon as it can (the lessons'
        timelines were measured so), but hides the result from commit() until then."""
        return not (self._polling or self._in_position)

    def _reset_policy(self, state) -> str:
        """Where a position without an offset is looked up: seek_to_beginning/_end's choice, else
        ``auto_offset_reset``."""
        return {EARLIEST: "earliest", LATEST: "latest", None: self.config["auto_offset_reset"]}[state.reset_to]

    def _needs_validation(self, tp, state) -> bool:
        return state.epoch is not None and self._leader_epochs.get(tp, -1) > state.validated_epoch

    def _validate_position(self, tp, state, leader) -> None:
        """kafka-python's ``Fetcher.maybe_validate_positions`` (KIP-320): after a leader change, ask
        the new leader where the epoch of the last fetched record ended. If it ended before the
        position - an unclean election or a truncation removed records this consumer already
        read - seek back to that point instead of resetting by ``auto_offset_reset``."""
        if state.validating:
            return
        state.validating = True
        checked_against = self._leader_epochs.get(tp, -1)

        def answered(resp):
            state.validating = False
            if isinstance(resp, type) or resp.error is not None:
                self._leaders[tp] = None
                return self._later(self._advance)
            state.validated_epoch = checked_against
            if 0 <= resp.end_offset < (state.fetch_offset or 0) and state.position is not None:
                self._history.record(
                    self.node_id,
                    INFO,
                    OpName.TRUNCATION_DETECTED,
                    {"partition": tp[1], "position": state.position, "diverging_offset": resp.end_offset},
                    topic=tp[0],
                )
                state.buffer.clear()
                state.position = state.fetch_offset = resp.end_offset
            self._advance()

        self._send(node_name(leader), OffsetsForLeaderEpochRequest(self._next_corr(), tp, state.epoch), answered)

    def _on_fetch(self, tp, resp):
        state = self._partitions.get(tp)
        if state is None or (not isinstance(resp, type) and state.fetching != resp.corr):
            return
        state.fetching = None
        if state.paused:  # paused while the fetch was in flight: kafka-python ignores its answer
            return
        if isinstance(resp, type) or resp.error is not None:
            error = resp if isinstance(resp, type) else resp.error
            if error is Errors.OffsetOutOfRangeError and state.epoch is not None:
                state.validated_epoch = -1  # out of range after a leader change: check for divergence
                self._leaders[tp] = None
            elif error is Errors.OffsetOutOfRangeError:
                state.position = state.fetch_offset = None
                self._reset_offset(tp, state)
            else:
                self._leaders[tp] = None
            return self._later(self._advance)
        state.fetched_highwater = resp.high_watermark
        # Kafka's read_committed filter: from an aborted transaction's first offset, drop that
        # producer's batches until its ABORT marker
        aborted: dict[int, list] = {}
        for pid, first in sorted(resp.aborted, key=lambda a: a[1]):
            aborted.setdefault(pid, []).append(first)
        skipping = set()
        topic, partition = tp
        for stored in resp.batches:
            batch = stored.batch
            pid = batch.producer_id
            if batch.control is not None:
                skipping.discard(pid)
            elif self._read_committed and batch.is_transactional:
                firsts = aborted.get(pid)
                while firsts and firsts[0] <= stored.base_offset:
                    firsts.pop(0)
                    skipping.add(pid)
            if stored.next_offset <= state.fetch_offset:
                continue
            if batch.control is None and pid not in skipping:
                for i, r in enumerate(batch.records):
                    offset = stored.base_offset + i
                    if offset >= state.fetch_offset:
                        state.buffer.append(
                            ConsumerRecord(
                                topic,
                                partition,
                                stored.leader_epoch,
                                offset,
                                r.timestamp_ms,
                                0,
                                r.key,
                                r.value,
                                list(r.headers),
                                None,
                                len(r.key or b""),
                                len(r.value or b""),
                                -1,
                            )
                        )
            state.fetch_offset = stored.next_offset
            state.epoch = stored.leader_epoch
            if state.validated_epoch < 0:  # fetched from the leader we know: nothing to check yet
                state.validated_epoch = self._leader_epochs.get(tp, -1)
        if not state.buffer:
            state.position = state.fetch_offset  # only markers / aborted records: skip past them
        self._advance()

    def _drain(self, max_records: int) -> dict:
        out: dict = {}
        rows: dict[str, list] = {}
        for tp, state in sorted(self._partitions.items()):
            if state.paused:
                continue
            if state.fetched_highwater is not None:
                state.highwater = state.fetched_highwater
            while state.buffer and max_records > 0:
                record = state.buffer.popleft()
                out.setdefault(TopicPartition(*tp), []).append(record)
                rows.setdefault(tp[0], []).append([tp[1], record.offset, as_text(record.value)])
                state.position = record.offset + 1
                max_records -= 1
            # past the markers and aborted records that end the fetched range (kafka-python: the
            # position is the fetch's next offset once its records are all returned)
            if not state.buffer and state.fetch_offset is not None:
                state.position = state.fetch_offset
        for topic, values in rows.items():
            op = self._history.invoke(self.node_id, OpName.POLL, None, topic)
            self._history.complete(op, OK, value=values)
        self._advance()
        return out

    def _has_data(self) -> bool:
        return any(s.buffer for s in self._partitions.values())
