"""The simulated ``KafkaConsumer``'s membership of its consumer group - kafka-python's
``ConsumerCoordinator`` and heartbeat thread: joining (an eager rebalance), the committed
offsets a new assignment starts from, giving partitions up before a rejoin (listener,
auto-commit), heartbeats, leaving after ``max_poll_interval_ms`` without a poll, and the
checks and calls of a commit. The consumer (:mod:`.consumer`) provides the attributes below
and decides *when* (``_advance``); this module says *how*.
"""

from __future__ import annotations

from typing import Any, Callable

from kafka import errors as Errors
from kafka.structs import TopicPartition

from ..broker.protocol import (
    CoordinatorRequest,
    GroupRequest,
    HeartbeatRequest,
    JoinGroupRequest,
    LeaveGroupRequest,
    OffsetCommitRequest,
    OffsetFetchRequest,
)
from ..history import INFO, OpName
from .rpc import Requests

#: a group's answers that mean "your generation is over": rejoin
GENERATION_ERRORS = (Errors.IllegalGenerationError, Errors.UnknownMemberIdError, Errors.RebalanceInProgressError)


class GroupMembership(Requests):
    """The consumer's part in its group (see the module docstring); mixed into ``KafkaConsumer``."""

    _group: Any  # the group_id setting (None: no group)
    _member_id: str
    _generation: int
    _joining: bool
    _needs_join: bool
    _left_group: bool
    _fetching_committed: bool
    _heartbeat_gen: int
    _last_poll_ms: float
    _next_auto_commit: float
    _polling: bool
    _subscription: tuple
    _pattern: Any
    _partitions: dict
    _listener: Any
    _assigned_pending: Any
    _advance: Callable[..., None]
    _later: Callable[[Callable], None]
    _set_assignment: Callable[[Any], None]
    _matching_topics: Callable[[Any], tuple]
    _looking_up_early: Callable[[], bool]
    commit: Callable[..., Any]
    commit_async: Callable[..., Any]

    def _join(self):
        self._joining = True
        if self._pattern is not None:
            self._subscription = self._matching_topics(self._pattern)
        self._set_assignment([])  # eager rebalance: give everything up, then get the new assignment
        request = JoinGroupRequest(
            group=self._group,
            member_id=self._member_id,
            client_id=self.node_id,
            topics=list(self._subscription),
            session_timeout_ms=self.config["session_timeout_ms"],
            rebalance_timeout_ms=self.config["max_poll_interval_ms"],
            group_instance_id=self.config["group_instance_id"],
        )

        def joined(error, result):
            self._joining = False
            if error is Errors.UnknownMemberIdError:
                self._member_id = ""
            if error is not None:
                return self._later(self._advance)
            self._member_id, self._generation = result["member_id"], result["generation"]
            self._needs_join = False
            self._set_assignment([tuple(tp) for tp in result["assignment"]])
            self._assigned_pending = {TopicPartition(*tp) for tp in result["assignment"]}
            self._history.record(
                self.node_id,
                INFO,
                OpName.ASSIGNED,
                sorted([list(tp) for tp in result["assignment"]]),
                evidence={"generation": self._generation, "member_id": self._member_id},
            )
            self._start_heartbeats()
            self._advance()

        # kafka-python waits max_poll_interval_ms + 5 s for the JoinGroup answer (the coordinator may
        # hold it that long). A lost answer in the simulator stands for a dropped connection, which
        # kafka-python notices at once; so the simulator retries sooner - the retried JoinGroup of
        # the same member id simply replaces the first one in the coordinator.
        self._send_coordinator(request, joined, timeout_ms=self.config["session_timeout_ms"] * 2 + 5000)

    def _fetch_committed(self, wanted):
        self._fetching_committed = True
        early = self._looking_up_early()

        def fetched(error, result):
            self._fetching_committed = False
            if error is not None:
                return self._later(self._advance)
            for tp, offset in result.items():
                state = self._partitions.get(tp)
                # a position set meanwhile (seek) or awaiting a seek_to_beginning/_end is not missing:
                # kafka-python applies committed offsets only to partitions without either
                if state is None or state.position is not None or state.reset_to is not None:
                    continue
                state.committed_checked = True
                if offset >= 0:
                    state.position = state.fetch_offset = offset
                    state.early = early
            self._advance()

        self._send_coordinator(OffsetFetchRequest(group=self._group, partitions=wanted), fetched)

    def _on_revoke(self) -> None:
        """Before rejoining (kafka-python's ``_on_join_prepare``): if the member was thrown out
        (no generation any more) its partitions are *lost* - no commit is possible, the listener
        hears ``on_partitions_lost``; otherwise auto-commit commits what was consumed and the
        listener hears ``on_partitions_revoked`` while the member can still commit."""
        held = {TopicPartition(*tp) for tp in self._partitions}
        if self._generation < 0:
            self._set_assignment([])
            if self._listener is not None:
                self._listener.on_partitions_lost(held)
            return
        if self.config["enable_auto_commit"]:
            try:
                self.commit()
            except Errors.KafkaError:
                pass
        if self._listener is not None:
            self._listener.on_partitions_revoked(held)
        self._set_assignment([])

    def _auto_commit(self) -> None:
        self._next_auto_commit = self._sim.now + self.config["auto_commit_interval_ms"]
        if self._generation >= 0 and any(s.position is not None and not s.early for s in self._partitions.values()):
            self.commit_async()

    # ---- heartbeats ---------------------------------------------------------------------------------
    def _start_heartbeats(self) -> None:
        self._heartbeat_gen += 1
        self._sim.schedule(self.config["heartbeat_interval_ms"], self._heartbeat, self._heartbeat_gen)

    def _heartbeat(self, gen) -> None:
        if not self.alive or gen != self._heartbeat_gen or not self._member_id:
            return
        idle_ms = self._sim.now - self._last_poll_ms
        if not self._polling and idle_ms > self.config["max_poll_interval_ms"]:
            return self._leave_after_poll_timeout(idle_ms)

        def answered(error, result):
            if error in GENERATION_ERRORS:
                if error is Errors.UnknownMemberIdError:
                    self._member_id = ""
                self._needs_join = True

        self._send_coordinator(
            HeartbeatRequest(group=self._group, member_id=self._member_id, generation=self._generation), answered
        )
        self._sim.schedule(self.config["heartbeat_interval_ms"], self._heartbeat, gen)

    def _record_poll_timeout(self, idle_ms: float) -> None:
        """The history's note that this member left for want of a poll(), with its generation."""
        self._history.record(
            self.node_id,
            INFO,
            OpName.LEFT_GROUP,
            sorted([list(tp) for tp in self._partitions]),
            evidence={
                "reason": f"no poll() for {idle_ms:g} ms > max_poll_interval_ms="
                f"{self.config['max_poll_interval_ms']:g}",
                "generation": self._generation,
                "member_id": self._member_id,
            },
        )

    def _leave_after_poll_timeout(self, idle_ms: float) -> None:
        """kafka-python's heartbeat thread: "Consumer poll timeout has expired" - leave the group
        (a static member sends no LeaveGroup, it only forgets its membership) and stop heartbeating
        until the next poll."""
        self._record_poll_timeout(idle_ms)
        if self.config["group_instance_id"] is None:
            self._leave_group()
        # kafka-python's reset_generation(): member id and generation are forgotten either way; a
        # static member's rejoin then takes its old slot back by group_instance_id
        self._member_id = ""
        self._generation = -1
        self._needs_join = True
        self._left_group = True
        self._heartbeat_gen += 1

    # ---- commits -----------------------------------------------------------------------------------
    def _check_membership(self) -> None:
        """kafka-python refuses a commit without a stable generation before sending it."""
        if not self._subscription or self._generation >= 0:
            return
        if self._joining:
            raise Errors.RebalanceInProgressError(
                "the consumer is rejoining its group: poll() to finish the rebalance, then commit"
            )
        raise Errors.CommitFailedError(
            "the consumer is not part of an active group (it was thrown out: no poll() "
            f"within max_poll_interval_ms={self.config['max_poll_interval_ms']:g}, or "
            "it never joined); its partitions may belong to another member now - "
            "poll() again to rejoin"
        )

    def _commit_request(self, offsets) -> OffsetCommitRequest:
        return OffsetCommitRequest(
            group=self._group, member_id=self._member_id, generation=self._generation, offsets=offsets
        )

    def _metadata_generation(self) -> int:
        """The generation ``group_metadata()`` shows: kafka-python's current one."""
        return self._generation

    def _leaves_on_close(self) -> bool:
        """A static member (group_instance_id) sends no LeaveGroup: it keeps its partitions until
        session_timeout_ms passes, so a quick restart does not rebalance the group."""
        return self.config["group_instance_id"] is None

    def _leave_group(self) -> None:
        """LeaveGroup, unanswered (kafka-python does not wait for it either)."""
        self._send_coordinator(LeaveGroupRequest(group=self._group, member_id=self._member_id), None)

    def _call_group(self, request: GroupRequest, timeout_ms=None):
        try:
            return self._call_coordinator(request, timeout_ms)
        except GENERATION_ERRORS as exc:
            self._needs_join = True
            raise Errors.CommitFailedError(
                f"{type(exc).__name__}: the group rebalanced (generation {self._generation} is over) and the "
                f"partitions may belong to another member now; poll() again to rejoin"
            ) from None

    def _send_coordinator(self, request: CoordinatorRequest, on_result, timeout_ms=None) -> None:
        self._ask_coordinator(request, on_result or (lambda e, r: None), timeout_ms)

    @property
    def _coordinator(self):
        return self._coordinators.get(("group", self._group))

    def _auto_commit_now(self) -> None:
        """kafka-python's maybe_auto_commit_offsets_now (before assign() and unsubscribe())."""
        if self.config["enable_auto_commit"] and self._group is not None and self._coordinator is not None:
            self.commit_async()
