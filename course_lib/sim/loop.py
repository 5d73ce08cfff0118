"""The event loop: virtual time in milliseconds and one seeded random generator per run.

Everything that happens in the simulator - a request arriving, a follower fetching, a
controller noticing a dead broker - is an event on one heap of ``(time_ms, seq, fn, args)``.
``seq`` grows monotonically, so two events due at the same instant run in the order they were
scheduled (as SimPy's ``Environment.schedule`` does) and a run never depends on how Python
compares functions. With one ``random.Random(seed)`` for every random choice, the same seed and
inputs give the same history, byte for byte.

Taught in notebooks/01_replicated_log.

>>> sim = Simulation(seed=7)
>>> log = []
>>> _ = sim.schedule(5, log.append, "b")
>>> _ = sim.schedule(1, log.append, "a")
>>> _ = sim.schedule(5, log.append, "c")
>>> sim.run()
>>> log, sim.now
(['a', 'b', 'c'], 5.0)
"""

from __future__ import annotations

import heapq
import math
import random
from typing import Any, Callable


class ReentrantRunError(RuntimeError):
    """A blocking call (``future.get()``, ``flush()``) was made from inside an event handler."""


class Simulation:
    """Discrete-event loop: :meth:`schedule`, :meth:`step`, :meth:`run`, :meth:`peek`."""

    def __init__(self, seed: int = 0):
        self.seed = seed
        self.rng = random.Random(seed)
        self.now: float = 0.0
        self._heap: list[tuple[float, int, Callable, tuple]] = []
        self._seq = 0
        self._cancelled: set[int] = set()
        self._running = False
        self.events_run = 0
        #: called with no argument after every event (the replication invariant checker uses it)
        self.observers: list[Callable[[], None]] = []

    def schedule(self, delay_ms: float, fn: Callable, *args: Any) -> int:
        """Run ``fn(*args)`` ``delay_ms`` from now; returns a handle for :meth:`cancel`."""
        if delay_ms < 0:
            raise ValueError(f"delay_ms must be >= 0, got {delay_ms}")
        self._seq += 1
        heapq.heappush(self._heap, (self.now + delay_ms, self._seq, fn, args))
        return self._seq

    def cancel(self, handle: int | None) -> None:
        """Forget a scheduled event (lazily: it is skipped when it comes up)."""
        if handle is not None:
            self._cancelled.add(handle)

    def peek(self) -> float:
        """Time of the next event, or ``math.inf`` when nothing is scheduled."""
        heap, cancelled = self._heap, self._cancelled
        while heap and heap[0][1] in cancelled:
            cancelled.discard(heapq.heappop(heap)[1])
        return heap[0][0] if heap else math.inf

    def step(self) -> bool:
        """Run the next event; False if there was none."""
        if self.peek() == math.inf:
            return False
        time_ms, _, fn, args = heapq.heappop(self._heap)
        self.now = time_ms
        self.events_run += 1
        self._running = True
        try:
            fn(*args)
            for observe in self.observers:
                observe()
        finally:
            self._running = False
        return True

    def run(self, until: float | None = None) -> None:
        """Run events until virtual time ``until`` (then ``now == until``) or none are left.

        A cluster's followers keep fetching forever, so runs with brokers pass ``until``.
        """
        if until is not None and until < self.now:
            raise ValueError(f"until={until} is in the past (now={self.now})")
        self._drain(math.inf if until is None else until, None)
        if until is not None:
            self.now = until

    def run_for(self, duration_ms: float) -> None:
        self.run(until=self.now + duration_ms)

    def run_until(self, predicate: Callable[[], bool], timeout_ms: float) -> bool:
        """Run events until ``predicate()`` holds (checked after each event) or ``timeout_ms``
        of virtual time pass. Returns whether the predicate held."""
        deadline = self.now + timeout_ms
        if predicate() or self._drain(deadline, predicate):
            return True
        self.now = max(self.now, deadline)
        return predicate()

    def _drain(self, limit: float, predicate: Callable[[], bool] | None) -> bool:
        """Run events due up to ``limit``; stop early (True) once ``predicate()`` holds."""
        self._check_not_reentrant()
        heap, cancelled, pop = self._heap, self._cancelled, heapq.heappop
        self._running = True
        try:
            while heap:
                time_ms, seq, fn, args = heap[0]
                if seq in cancelled:
                    pop(heap)
                    cancelled.discard(seq)
                    continue
                if time_ms > limit:
                    break
                pop(heap)
                self.now = time_ms
                self.events_run += 1
                fn(*args)
                if self.observers:
                    for observe in self.observers:
                        observe()
                if predicate is not None and predicate():
                    return True
        finally:
            self._running = False
        return False

    def _check_not_reentrant(self) -> None:
        if self._running:
            raise ReentrantRunError(
                "a blocking call (future.get(), flush(), poll(), run()) was made from inside a "
                "simulator callback; in callbacks only record results - make blocking calls from "
                "the notebook or scenario code instead"
            )
