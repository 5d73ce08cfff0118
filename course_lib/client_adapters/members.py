"""The consumer-group workload's contract: one member of a group, as an experiment on group
membership sees it (:func:`course_lib.client_adapters.group_member` makes one for any client of
:data:`~course_lib.client_adapters.GROUP_CLIENTS`).

An experiment on rebalances asks a member only this: poll once (and how many records that
read), which partitions it owns, its member epoch where the client shows it, and to die or to
leave. So a KIP-848 or classic-protocol experiment is written once and runs with the simulator's
consumer, librdkafka's and Java's, on every cluster.
"""

from __future__ import annotations

#: what one :meth:`GroupMember.poll` waits at most, in seconds (a member is polled in a loop)
POLL_S = 0.1


class GroupMember:
    """A subscribed group member. ``poll()``: one poll of up to :data:`POLL_S`, returns the records
    it read (also added to :attr:`seen`); ``owned()``: its partitions, sorted; ``epoch()``: its
    member epoch (Java's ``groupMetadata().generationId``, the simulator's
    ``group_metadata().generation_id``; None where the client does not show it: librdkafka);
    ``kill()``: it dies without a word to the group (a member made with ``own_process=True``):
    the coordinator removes it after the session timeout; ``close()``: it leaves the group.

    An adapter implements ``_poll()``, ``owned()``, ``close()`` and, where it can, ``epoch()`` and
    ``kill()``."""

    #: records this member has read so far
    seen = 0

    def poll(self) -> int:
        got = self._poll()
        self.seen += got
        return got

    def _poll(self) -> int:
        raise NotImplementedError

    def owned(self) -> list[int]:
        raise NotImplementedError

    def epoch(self) -> int | None:
        return None

    def kill(self) -> None:
        raise ValueError(
            f"{type(self).__name__}: a member that can die runs in a process of its own (own_process=True)"
        )

    def close(self) -> None:
        raise NotImplementedError
