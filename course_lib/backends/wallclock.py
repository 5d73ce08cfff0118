"""Backends on a wall clock: every step that depends on the cluster's state waits for that state.

Real Kafka (:mod:`.kafka`) and any other adapter whose cluster runs in real time subclass
:class:`WallClock`: a fresh :class:`~course_lib.history.History` timed in ms since the run
started, a timeline of scheduled actions run by :meth:`~WallClock.wait`, and the intents of
:class:`~course_lib.backends.base.Backend` as conditions on admin metadata and end offsets,
bounded by :attr:`Timing.condition_timeout_ms`; a condition that does not come raises
:class:`~course_lib.backends.base.ConditionTimeout` naming what it waited for and what it saw.
"""

from __future__ import annotations

import heapq
import itertools
import time
from typing import Any, Callable

from ..history import OK, History, OpName
from .base import Common


class WallClock(Common):
    """The wall-clock half of an adapter (see the module docstring)."""

    def __init__(self) -> None:
        t0 = time.monotonic()
        self.history = History(clock=lambda: (time.monotonic() - t0) * 1000)
        self._timeline: list = []  # (due, seq, action, args): run by wait()
        self._seq = itertools.count()

    @property
    def now_ms(self) -> float:
        return self.history.clock()

    def wait(self, ms) -> None:
        """Sleep ``ms``, running the actions :meth:`at` scheduled, when due."""
        end = time.monotonic() + max(ms, 0) / 1000
        while self._timeline and self._timeline[0][0] <= end:
            due, _, action, args = heapq.heappop(self._timeline)
            time.sleep(max(0.0, due - time.monotonic()))
            action(*args)
        time.sleep(max(0.0, end - time.monotonic()))

    def at(self, delay_ms: float, action: Callable, *args) -> None:
        """Schedule ``action`` ``delay_ms`` from now; it runs during the next :meth:`wait` that
        reaches its time (in this thread: scheduled actions never race each other)."""
        heapq.heappush(self._timeline, (time.monotonic() + delay_ms / 1000, next(self._seq), action, args))

    def wait_until(self, predicate, timeout_ms=60_000) -> bool:
        deadline = time.monotonic() + timeout_ms / 1000
        while True:
            try:
                if predicate():
                    return True
            except Exception:  # metadata briefly unavailable (an election, a restarting broker)
                pass
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.1)

    def app_time(self, ms: float) -> None:
        """The application's own work took real time already: nothing to wait for."""

    def poll_together(self, consumers: list, timeout_ms: int) -> list[dict]:
        """Every consumer inside ``poll()`` at the same time, one thread each, as separate
        application processes would be: kafka-python 3.0.12 collects a group join only inside
        ``poll()`` (:mod:`course_lib.client_adapters.joining`). Each consumer is still touched by one thread
        at a time."""
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(len(consumers)) as pool:
            return list(pool.map(lambda c: c.poll(timeout_ms=timeout_ms), consumers))

    # ---- the intents: conditions on the cluster's state
    def _acked(self, topic: str, partition: int) -> int:
        """How many sends to the partition this run's producers saw acknowledged."""
        return sum(
            1
            for op in self.history
            if op.f == OpName.SEND and op.type == OK and op.topic == topic and op.partition == partition
        )

    def settle(self, topic: str, partition: int = 0) -> None:
        """Wait until every in-sync follower has what was acknowledged: the high watermark (the
        end offset a read_uncommitted reader sees) reaches the acknowledged sends."""
        want = self._acked(topic, partition)
        self.until(
            f"the high watermark of {topic}-{partition} to reach the {want} acknowledged sends",
            lambda: self.end_offset(topic, partition),
            lambda hw: hw >= want,
        )

    def until_replicated(self, topic: str, partition: int = 0) -> None:
        """Wait until every replica has what was acknowledged: all of them are in the ISR and the
        high watermark (which no in-sync follower lags behind) reaches the acknowledged sends."""
        want, replicas = self._acked(topic, partition), sorted(self.replicas_of(topic, partition))
        self.until(
            f"every replica {replicas} of {topic}-{partition} in the ISR, and its high watermark at the "
            f"{want} acknowledged sends (ISR, high watermark)",
            lambda: (self.isr_of(topic, partition), self.end_offset(topic, partition)),
            lambda seen: seen[0] == replicas and seen[1] >= want,
        )

    def until_acknowledged(self, future: Any) -> None:
        """Give the leader :attr:`Timing.ack_gap_ms` to acknowledge ``future`` (acks=all behind
        paused followers never does: then the next send simply follows)."""
        self.wait_until(lambda: future.is_done, self.timing.ack_gap_ms)

    def until_sent(self, producer: Any) -> None:
        self.wait(self.timing.request_gap_ms)

    def until_appended(self, topic: str, records: int, partition: int = 0) -> None:
        self.until(
            f"{topic}-{partition} to hold {records} records (its end offset)",
            lambda: self.end_offset(topic, partition),
            lambda end: end >= records,
        )

    def until_isr_shrinks(self, topic: str, to: int = 1, partition: int = 0) -> list[int]:
        """Wait until the ISR has ``to`` members, and has stayed so for :attr:`Timing.isr_stable_ms`
        (a broker may apply the change to its partition just after its metadata shows it)."""
        since: list = []

        def shrunk_long_enough(isr) -> bool:
            if len(isr) != to:
                since.clear()
                return False
            since[:] = since or [time.monotonic()]
            return (time.monotonic() - since[0]) * 1000 >= self.timing.isr_stable_ms

        return self.until(
            f"the ISR of {topic}-{partition} to shrink to {to} member(s)",
            lambda: self.isr_of(topic, partition),
            shrunk_long_enough,
        )

    def until_transaction_aborted(self, topic: str, transaction_timeout_ms: float, partition: int = 0) -> None:
        """Wait until no transaction is open on the partition any more: its last stable offset
        (what read_committed readers may read up to) reaches the high watermark - the
        coordinator wrote the abort marker."""
        self.until(
            f"the coordinator to abort the timed-out transaction on {topic}-{partition} "
            f"(last stable offset, high watermark)",
            lambda: (self.end_offset(topic, partition, read_committed=True), self.end_offset(topic, partition)),
            lambda ends: ends[0] >= ends[1],
            timeout_ms=transaction_timeout_ms + self.timing.condition_timeout_ms,
        )
