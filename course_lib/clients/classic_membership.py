"""The classic group protocol's membership (``group_protocol="classic"``, kafka-python's
``ConsumerCoordinator`` and heartbeat thread): joining (an eager rebalance), giving partitions up
before a rejoin (listener, auto-commit), heartbeats, leaving after ``max_poll_interval_ms``
without a poll, and the checks and errors of a commit. KIP-848's is :mod:`.consumer_protocol`.
"""

from __future__ import annotations

from kafka import errors as Errors
from kafka.structs import TopicPartition

from ..broker.protocol import GroupRequest, HeartbeatRequest, JoinGroupRequest, LeaveGroupRequest
from ..history import INFO, OpName
from .group_membership import GroupMembership

#: a group's answers that mean "your generation is over": rejoin
GENERATION_ERRORS = (Errors.IllegalGenerationError, Errors.UnknownMemberIdError, Errors.RebalanceInProgressError)


class ClassicMembership(GroupMembership):
    """A member of a classic group (see the module docstring)."""

    def join(self) -> None:
        c = self.consumer
        c._joining = True
        if c._pattern is not None:
            c._subscription = c._matching_topics(c._pattern)
        c._set_assignment([])  # eager rebalance: give everything up, then get the new assignment
        request = JoinGroupRequest(
            group=c._group,
            member_id=c._member_id,
            client_id=c.node_id,
            topics=list(c._subscription),
            session_timeout_ms=c.config["session_timeout_ms"],
            rebalance_timeout_ms=c.config["max_poll_interval_ms"],
            group_instance_id=c.config["group_instance_id"],
        )

        def joined(error, result):
            c._joining = False
            if error is Errors.UnknownMemberIdError:
                c._member_id = ""
            if error is not None:
                return c._later(c._advance)
            c._member_id, c._generation = result["member_id"], result["generation"]
            c._needs_join = False
            c._set_assignment([tuple(tp) for tp in result["assignment"]])
            c._assigned_pending = {TopicPartition(*tp) for tp in result["assignment"]}
            c._history.record(
                c.node_id,
                INFO,
                OpName.ASSIGNED,
                sorted([list(tp) for tp in result["assignment"]]),
                evidence={"generation": c._generation, "member_id": c._member_id},
            )
            self._start_heartbeats()
            c._advance()

        # kafka-python waits max_poll_interval_ms + 5 s for the JoinGroup answer (the coordinator may
        # hold it that long). A lost answer in the simulator stands for a dropped connection, which
        # kafka-python notices at once; so the simulator retries sooner - the retried JoinGroup of
        # the same member id simply replaces the first one in the coordinator.
        c._send_coordinator(request, joined, timeout_ms=c.config["session_timeout_ms"] * 2 + 5000)

    def subscribed(self) -> None:
        self.consumer._needs_join = True  # a new subscription is a rebalance

    def polled(self) -> None:
        pass  # kafka-python's heartbeat thread looks at the time since the last poll() at each tick

    def check_poll(self) -> None:
        pass  # a classic heartbeat's errors only make the member rejoin: nothing for poll() to raise

    def revoke_before_rejoin(self) -> None:
        """kafka-python's ``_on_join_prepare``: if the member was thrown out (no generation any
        more) its partitions are *lost* - no commit is possible, the listener hears
        ``on_partitions_lost``; otherwise auto-commit commits what was consumed and the listener
        hears ``on_partitions_revoked`` while the member can still commit."""
        c = self.consumer
        held = {TopicPartition(*tp) for tp in c._partitions}
        if c._generation < 0:
            c._set_assignment([])
            if c._listener is not None:
                c._listener.on_partitions_lost(held)
            return
        if c.config["enable_auto_commit"]:
            try:
                c.commit()
            except Errors.KafkaError:
                pass
        if c._listener is not None:
            c._listener.on_partitions_revoked(held)
        c._set_assignment([])

    # ---- heartbeats ---------------------------------------------------------------------------------
    def _start_heartbeats(self) -> None:
        c = self.consumer
        c._heartbeat_gen += 1
        c._sim.schedule(c.config["heartbeat_interval_ms"], self._heartbeat, c._heartbeat_gen)

    def _heartbeat(self, gen) -> None:
        c = self.consumer
        if not c.alive or gen != c._heartbeat_gen or not c._member_id:
            return
        idle_ms = c._sim.now - c._last_poll_ms
        if not c._polling and idle_ms > c.config["max_poll_interval_ms"]:
            return self._leave_after_poll_timeout(idle_ms)

        def answered(error, result):
            if error in GENERATION_ERRORS:
                if error is Errors.UnknownMemberIdError:
                    c._member_id = ""
                c._needs_join = True

        c._send_coordinator(
            HeartbeatRequest(group=c._group, member_id=c._member_id, generation=c._generation), answered
        )
        c._sim.schedule(c.config["heartbeat_interval_ms"], self._heartbeat, gen)

    def _leave_after_poll_timeout(self, idle_ms: float) -> None:
        """kafka-python's heartbeat thread: "Consumer poll timeout has expired" - leave the group
        (a static member sends no LeaveGroup, it only forgets its membership) and stop heartbeating
        until the next poll."""
        c = self.consumer
        self.record_poll_timeout(idle_ms)
        if c.config["group_instance_id"] is None:
            self.leave()
        # kafka-python's reset_generation(): member id and generation are forgotten either way; a
        # static member's rejoin then takes its old slot back by group_instance_id
        c._member_id = ""
        c._generation = -1
        c._needs_join = True
        c._left_group = True
        c._heartbeat_gen += 1

    # ---- commits -----------------------------------------------------------------------------------
    def check_commit(self) -> None:
        """kafka-python refuses a commit without a stable generation before sending it."""
        c = self.consumer
        if not c._subscription or c._generation >= 0:
            return
        if c._joining:
            raise Errors.RebalanceInProgressError(
                "the consumer is rejoining its group: poll() to finish the rebalance, then commit"
            )
        raise Errors.CommitFailedError(
            "the consumer is not part of an active group (it was thrown out: no poll() "
            f"within max_poll_interval_ms={c.config['max_poll_interval_ms']:g}, or "
            "it never joined); its partitions may belong to another member now - "
            "poll() again to rejoin"
        )

    def call(self, request: GroupRequest, timeout_ms=None):
        c = self.consumer
        try:
            return c._call_coordinator(request, timeout_ms)
        except GENERATION_ERRORS as exc:
            c._needs_join = True
            raise Errors.CommitFailedError(
                f"{type(exc).__name__}: the group rebalanced (generation {c._generation} is over) and the "
                f"partitions may belong to another member now; poll() again to rejoin"
            ) from None

    # ---- leaving -------------------------------------------------------------------------------------
    def leaves_on_close(self) -> bool:
        """A static member (group_instance_id) sends no LeaveGroup: it keeps its partitions until
        session_timeout_ms passes, so a quick restart does not rebalance the group."""
        return self.consumer.config["group_instance_id"] is None

    def leave(self) -> None:
        """LeaveGroup, unanswered (kafka-python does not wait for it either)."""
        c = self.consumer
        c._send_coordinator(LeaveGroupRequest(group=c._group, member_id=c._member_id), None)

    def generation_shown(self) -> int:
        """kafka-python's current generation."""
        return self.consumer._generation
