"""The simulated ``KafkaConsumer``'s committed offsets, the same under both group protocols: the
committed offset a new assignment starts from, the commit request (it carries the generation -
the member epoch under KIP-848), auto-commit, and the group coordinator they all go to. How the
consumer is a member of the group is its membership's (:mod:`.group_membership`); the consumer
(:mod:`.consumer`) provides the attributes below and decides *when* (``_advance``).
"""

from __future__ import annotations

from typing import Any, Callable

from ..broker.protocol import CoordinatorRequest, OffsetCommitRequest, OffsetFetchRequest
from .rpc import Requests


class GroupOffsets(Requests):
    """Mixed into ``KafkaConsumer`` (see the module docstring)."""

    _group: Any  # the group_id setting (None: no group)
    _member_id: str
    _generation: int
    _fetching_committed: bool
    _looked_up_again: dict
    _next_auto_commit: float
    _partitions: dict
    _advance: Callable[..., None]
    _later: Callable[[Callable], None]
    _looking_up_early: Callable[[], bool]
    commit_async: Callable[..., Any]

    def _fetch_committed(self, wanted):
        self._fetching_committed = True
        early = self._looking_up_early()
        asked = {tp: self._partitions.get(tp) for tp in wanted}
        for tp in wanted:  # a commit made these states after their last lookup: this one is theirs
            self._looked_up_again.pop(tp, None)

        def fetched(error, result):
            self._fetching_committed = False
            if error is not None:
                return self._later(self._advance)
            for tp, offset in result.items():
                state = self._partitions.get(tp)
                if state is not None and self._looked_up_again.get(tp) is state and asked.get(tp) is not state:
                    continue  # a commit since made this answer stale (KafkaConsumer._committed_before_looked_up)
                # a position set meanwhile (seek) or awaiting a seek_to_beginning/_end is not missing:
                # kafka-python applies committed offsets only to partitions without either
                if state is None or state.position is not None or state.reset_to is not None:
                    continue
                state.committed_checked = True
                if offset >= 0:
                    state.position = state.fetch_offset = offset
                    state.early = early and self._looking_up_early()  # answered outside poll()/position()
            self._advance()

        self._send_coordinator(OffsetFetchRequest(group=self._group, partitions=wanted), fetched)

    def _commit_request(self, offsets) -> OffsetCommitRequest:
        return OffsetCommitRequest(
            group=self._group, member_id=self._member_id, generation=self._generation, offsets=offsets
        )

    def _auto_commit(self) -> None:
        self._next_auto_commit = self._sim.now + self.config["auto_commit_interval_ms"]
        if self._generation >= 0 and any(s.position is not None and not s.early for s in self._partitions.values()):
            self.commit_async()

    def _auto_commit_now(self) -> None:
        """kafka-python's maybe_auto_commit_offsets_now (before assign() and unsubscribe())."""
        if self.config["enable_auto_commit"] and self._group is not None and self._coordinator is not None:
            self.commit_async()

    def _send_coordinator(self, request: CoordinatorRequest, on_result, timeout_ms=None) -> None:
        self._ask_coordinator(request, on_result or (lambda e, r: None), timeout_ms)

    @property
    def _coordinator(self):
        return self._coordinators.get(("group", self._group))
