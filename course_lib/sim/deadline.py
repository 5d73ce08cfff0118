"""A deadline that moves often but rarely expires, at the cost of at most one pending event.

Followers re-arm their fetch timeout on every fetch, leaders their purgatory expiry on every
parked request; scheduling (and cancelling) an event each time would fill the heap with dead
entries. A :class:`Deadline` keeps one event at the earliest time it may expire and, if the
deadline moved later meanwhile, re-schedules itself instead of firing.
"""

from __future__ import annotations

import math
from typing import Callable


class Deadline:
    __slots__ = ("_schedule", "_now", "_callback", "at", "_pending_at")

    def __init__(self, schedule: Callable, now: Callable[[], float], callback: Callable[[], None]):
        self._schedule = schedule  # (delay_ms, fn, *args) -> handle
        self._now = now
        self._callback = callback
        self.at = math.inf
        self._pending_at = math.inf

    def arm(self, at: float) -> None:
        self.at = at
        if at < self._pending_at:
            self._pending_at = at
            self._schedule(at - self._now(), self._fire, at)

    def disarm(self) -> None:
        self.at = math.inf

    def reset(self) -> None:
        """Forget the pending event too (its process died, so it will never fire)."""
        self.at = self._pending_at = math.inf

    def _fire(self, scheduled_at: float) -> None:
        if scheduled_at != self._pending_at:
            return  # superseded by an earlier event
        self._pending_at = math.inf
        if self.at == math.inf:
            return
        if self._now() >= self.at:
            self.at = math.inf
            self._callback()
        else:
            self.arm(self.at)
