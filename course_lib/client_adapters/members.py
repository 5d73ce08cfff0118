"""The consumer-group workload's contract: one member of a group, as an experiment on group
membership sees it (:func:`course_lib.client_adapters.group_member` makes one for any client of
:data:`~course_lib.client_adapters.GROUP_CLIENTS`).

An experiment on rebalances asks a member only this: poll once (and how many records that
read), commit, which partitions it owns, its member id, epoch and positions where the client
shows them, and to die or to leave. So a KIP-848 or classic-protocol experiment - and the
differential that compares the simulator's member with Java's call by call - is written once and
runs with the simulator's consumer, librdkafka's and Java's, on every cluster.
"""

from __future__ import annotations

from typing import NamedTuple

#: what one :meth:`GroupMember.poll` waits at most, in seconds (a member is polled in a loop)
POLL_S = 0.1


class MemberState(NamedTuple):
    """What a member says of itself at one moment (:meth:`GroupMember.state`): its member id and
    epoch (None where the client does not show them), its partitions, sorted, and its position
    on each (None while it does not know it)."""

    member_id: str | None
    epoch: int | None
    owned: list[int]
    positions: dict[int, int | None]


class GroupMember:
    """A subscribed group member. ``poll(timeout_s)``: one poll of up to ``timeout_s`` (default
    :data:`POLL_S`), returns the records it read (also added to :attr:`seen`); ``commit()``: a
    synchronous commit of its positions; ``owned()``: its partitions, sorted; ``epoch()``: its
    member epoch (Java's ``groupMetadata().generationId``, the simulator's
    ``group_metadata().generation_id``; None where the client does not show it: librdkafka);
    ``state()``: its :class:`MemberState`, taken at once; ``kill()``: it dies without a word to the
    group (a member made with ``own_process=True``): the coordinator removes it after the session
    timeout; ``close()``: it leaves the group.

    An adapter implements ``_poll(timeout_s)``, ``owned()``, ``close()`` and, where it can,
    ``commit()``, ``epoch()``, ``state()`` and ``kill()``."""

    #: records this member has read so far
    seen = 0

    def poll(self, timeout_s: float = POLL_S) -> int:
        got = self._poll(timeout_s)
        self.seen += got
        return got

    def _poll(self, timeout_s: float) -> int:
        raise NotImplementedError

    def commit(self) -> None:
        raise NotImplementedError(f"{type(self).__name__} has no commit in this contract yet")

    def owned(self) -> list[int]:
        raise NotImplementedError

    def epoch(self) -> int | None:
        return None

    def state(self) -> MemberState:
        """Where the client shows no member id nor positions: its epoch and partitions."""
        owned = self.owned()
        return MemberState(None, self.epoch(), owned, {p: None for p in owned})

    def kill(self) -> None:
        raise ValueError(
            f"{type(self).__name__}: a member that can die runs in a process of its own (own_process=True)"
        )

    def close(self) -> None:
        raise NotImplementedError
