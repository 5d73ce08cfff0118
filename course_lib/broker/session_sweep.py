"""How a simulated group coordinator notices members whose heartbeats stopped: while any of its
groups has members, a timer looks once a simulated second (:meth:`SessionSweep._check_sessions`,
each coordinator's own: the classic coordinator keeps a session timeout per member, the share
coordinator one per group)."""

from __future__ import annotations

from typing import Any


class SessionSweep:
    """The sweep's timer: started by :meth:`_ensure_checking` (a member joined or heartbeated),
    rearmed while members are left and the broker still coordinates."""

    broker: Any
    groups: dict
    _checking = False

    def _ensure_checking(self) -> None:
        if not self._checking:
            self._checking = True
            self.broker.schedule_timer(1000, self._sweep)

    def _sweep(self) -> None:
        self._checking = False
        if self._check_sessions() and any(g.members for g in self.groups.values()):
            self._ensure_checking()

    def _check_sessions(self) -> bool:
        """Remove the members whose session ran out (the coordinator's own rule); False when
        this broker no longer coordinates (the sweep stops)."""
        raise NotImplementedError
