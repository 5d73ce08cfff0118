"""Looking offsets up without consuming: ``beginning_offsets``, ``end_offsets`` and
``offsets_for_times`` of kafka-python's ``KafkaConsumer`` (its ``Fetcher.offsets_by_times``).

- The partitions need not be assigned, and the consumer's positions do not move.
- ``end_offsets`` is what a consumer of this isolation level can read up to: the high watermark
  under ``read_uncommitted``, the *last stable offset* under ``read_committed`` (an open
  transaction holds it back, its records included).
- ``offsets_for_times({tp: t})`` is the first offset, in offset order, whose record timestamp is
  ``>= t`` and which lies below that same end, as ``OffsetAndTimestamp(offset, timestamp,
  leader_epoch)`` - or ``None``. As on Kafka, transaction markers count: they carry the time they
  were written, so a lookup past the last data record can land on a marker.
- A partition without a known leader (it does not exist, or has no leader yet) is asked again
  after a metadata refresh until ``timeout_ms`` (default ``request_timeout_ms``) passes:
  ``KafkaTimeoutError``, as kafka-python.

The simulated broker answers ListOffsets only for the earliest and the latest offset; a
timestamp lookup therefore reads the partition from its leader (fetches from offset 0, below the
same end) and searches the timestamps in the client. The answer is the one Kafka's time index
gives; it costs more round trips of virtual time.

Record timestamps are the simulator's *virtual* clock (ms since the simulation started) unless
the producer gave ``timestamp_ms``: ``offsets_for_times`` with a wall-clock time finds nothing.
"""

from __future__ import annotations

from typing import Any, Callable

from kafka import errors as Errors
from kafka.structs import OffsetAndTimestamp

from ..broker.broker import node_name
from ..broker.protocol import ConsumerFetchRequest, ListOffsetsRequest, MetadataRequest
from .rpc import Requests

#: kafka-python's OffsetSpec values for the earliest and the latest offset
EARLIEST, LATEST = -2, -1


class OffsetLookup(Requests):
    """The simulated ``KafkaConsumer``'s lookups; the consumer provides the attributes below."""

    _read_committed: bool
    _leaders_by_tp: dict  # tp -> (leader or None, leader epoch), from the last metadata answer
    _learn_metadata: Callable[[Any], None]  # takes a metadata answer in

    def beginning_offsets(self, partitions, timeout_ms=None):
        """``{TopicPartition: first offset}`` (always 0 here: the simulator deletes no records)."""
        return self._offsets_of(partitions, EARLIEST, timeout_ms)

    def end_offsets(self, partitions, timeout_ms=None):
        """``{TopicPartition: offset of the next record}``, the high watermark or, under
        ``read_committed``, the last stable offset."""
        return self._offsets_of(partitions, LATEST, timeout_ms)

    def offsets_for_times(self, timestamps, timeout_ms=None):
        """``{TopicPartition: OffsetAndTimestamp or None}``: the first record with a timestamp
        ``>= timestamps[tp]`` (ms), ``None`` where there is none."""
        timeout_ms = self.config["request_timeout_ms"] if timeout_ms is None else timeout_ms
        for tp, ts in timestamps.items():
            timestamps[tp] = int(ts)  # kafka-python converts in place, then checks the sign
            if ts < 0:
                raise ValueError(f"The target time for partition {tp} is {ts}. The target time cannot be negative.")
        found = self._list_offsets(timestamps, timeout_ms)
        return {**found, **{tp: None for tp in timestamps if tp not in found}}

    def _check_network(self) -> None:
        """kafka-python stops its network loop in close(): every later call that needs a broker
        raises RuntimeError (measured: end_offsets, committed, commit, topics)."""
        if self._closed:
            raise RuntimeError("NetworkSelector closed! (this consumer was closed: create a new one)")

    # ---- the requests ------------------------------------------------------------------------------
    def _offsets_of(self, partitions, spec: int, timeout_ms) -> dict:
        timeout_ms = self.config["request_timeout_ms"] if timeout_ms is None else timeout_ms
        wanted = {tp: spec for tp in partitions}
        found = self._list_offsets(wanted, timeout_ms)
        return {tp: found[tp].offset for tp in wanted}

    def _list_offsets(self, specs: dict, timeout_ms) -> dict:
        """Ask each partition's leader until every one answered or ``timeout_ms`` passed;
        partitions whose answer is "no such offset" are left out, as kafka-python leaves them."""
        self._check_network()
        if not specs:
            return {}
        deadline = self._sim.now + timeout_ms
        pending, found = dict(specs), {}
        while True:
            if any(self._leader_of(tp) is None for tp in pending):  # kafka-python: request_update, wait
                self._refresh_lookup_metadata(deadline)
            answers = {
                tp: self._look_up(tp, spec, leader)
                for tp, spec in pending.items()
                if (leader := self._leader_of(tp)) is not None
            }
            if answers:
                self._sim.run_until(
                    lambda: all("error" in a for a in answers.values()), max(deadline - self._sim.now, 0)
                )
            for tp, answer in answers.items():
                if answer.get("error", Errors.RequestTimedOutError) is None:
                    found[tp] = answer["value"]
                    del pending[tp]
                else:  # moved, dead or silent: ask the metadata again who leads it
                    self._leaders_by_tp.pop(tuple(tp), None)
            if not pending:
                return {tp: value for tp, value in found.items() if value is not None}
            if self._sim.now >= deadline:
                raise Errors.KafkaTimeoutError(f"Failed to get offsets by timestamps in {timeout_ms} ms")
            self._sim.run_for(min(self.config["retry_backoff_ms"], deadline - self._sim.now))

    def _leader_of(self, tp) -> int | None:
        return self._leaders_by_tp.get(tuple(tp), (None, -1))[0]

    def _look_up(self, tp, spec: int, leader: int) -> dict:
        """One partition's lookup in the background; the dict gets ``error`` (None when done)
        and ``value`` (an ``OffsetAndTimestamp`` or None)."""
        answer: dict = {}
        node = node_name(leader)

        def failed(resp) -> bool:
            if isinstance(resp, type) or resp.error is not None:
                answer["error"] = resp if isinstance(resp, type) else resp.error
                return True
            return False

        if spec < 0:

            def listed(resp):
                if not failed(resp):
                    answer.update(error=None, value=OffsetAndTimestamp(resp.offset, -1, -1))

            self._send(
                node, ListOffsetsRequest(self._next_corr(), tuple(tp), spec == LATEST, self._read_committed), listed
            )
            return answer

        def fetched(resp, start: int):
            if failed(resp):
                return
            end = resp.last_stable_offset if self._read_committed else resp.high_watermark
            position = start
            for stored in resp.batches:
                for i, record in enumerate(stored.batch.records):
                    offset = stored.base_offset + i
                    if offset < start:
                        continue
                    if offset >= end:
                        return answer.update(error=None, value=None)
                    if record.timestamp_ms >= spec:
                        found = OffsetAndTimestamp(offset, int(record.timestamp_ms), stored.leader_epoch)
                        return answer.update(error=None, value=found)
                position = stored.next_offset
            if position == start or position >= end:
                return answer.update(error=None, value=None)
            fetch_from(position)

        def fetch_from(offset: int):
            request = ConsumerFetchRequest(self._next_corr(), tuple(tp), offset, self._read_committed, 0)
            self._send(node, request, lambda resp: fetched(resp, offset))

        fetch_from(0)
        return answer

    def _refresh_lookup_metadata(self, deadline: float) -> None:
        box: dict = {}
        self._send(self._any_broker(), MetadataRequest(self._next_corr()), lambda resp: box.update(resp=resp))
        self._sim.run_until(lambda: "resp" in box, max(deadline - self._sim.now, 0))
        resp = box.get("resp")
        if resp is not None and not isinstance(resp, type):
            self._learn_metadata(resp)
