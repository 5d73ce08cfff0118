"""The simulated ``KafkaConsumer`` in a *consumer group* (KIP-848, ``group_protocol="consumer"``),
as the Java client 4.3.1 does it with ``group.protocol=consumer`` (``ConsumerMembershipManager``,
``ConsumerHeartbeatRequestManager``); the classic protocol's is :mod:`.classic_membership`.

- One request, ConsumerGroupHeartbeat, does everything: the first (member epoch 0) joins with the
  subscription, ``max_poll_interval_ms`` as the rebalance timeout and ``group_remote_assignor``
  (None: the coordinator's default, ``uniform``); the coordinator answers the member epoch and,
  when it changed, the partitions the member should own. The member id is the client's own
  (KIP-1082), kept for the consumer's life.
- Later heartbeats, every ``heartbeat_interval_ms`` *the coordinator* sets, carry only what
  changed since the last one - the owned partitions right after a reconciliation.
- **Reconciliation is incremental**: the member gives up only the partitions it is asked to give
  up (committing their positions first when auto-commit is on, then ``on_partitions_revoked``),
  keeps the others and goes on fetching them, takes the new ones (``on_partitions_assigned``) and
  heartbeats at once to acknowledge. No stop-the-world: nobody else stops when a member joins or
  leaves.
- ``FENCED_MEMBER_EPOCH`` / ``UNKNOWN_MEMBER_ID``: the partitions are *lost* (no commit,
  ``on_partitions_lost``) and the member rejoins at once with epoch 0.
- No ``poll()`` for ``max_poll_interval_ms``: the member leaves (epoch -1, its partitions go to
  the others) and its partitions are lost; the next ``poll()`` rejoins.
- ``close()`` / ``unsubscribe()``: commit (auto-commit), then a heartbeat with epoch -1; a static
  member's (``group_instance_id``) with epoch -2: the coordinator keeps it and its partitions until
  its session timeout, and a consumer joining with its instance id meanwhile takes them back.
- A commit carries the member epoch; the coordinator refuses an old one (``STALE_MEMBER_EPOCH``).

tests/java_client/test_consumer_protocol_differential.py checks this against the Java client over
the wire, call by call.
"""

from __future__ import annotations

from kafka import errors as Errors
from kafka.structs import TopicPartition

from ..broker.consumer_group import JOIN_EPOCH, LEAVE_EPOCH, STATIC_LEAVE_EPOCH
from ..broker.protocol import ConsumerGroupHeartbeatRequest, GroupRequest
from ..history import INFO, OpName
from .group_membership import GroupMembership, Member
from .rpc import COORDINATOR_MOVED

#: answers that fence the member: drop the partitions, rejoin with epoch 0
FENCING_ERRORS = (Errors.FencedMemberEpochError, Errors.UnknownMemberIdError)


class ConsumerProtocolMembership(GroupMembership):
    """A member of a consumer group, ``group_protocol="consumer"`` (see the module docstring)."""

    KEEPS_MEMBER_ID = True

    def __init__(self, consumer: Member) -> None:
        super().__init__(consumer)
        self._target: set | None = None  # the partitions the coordinator last assigned (None: none yet)
        self._sent: dict = {}  # the fields sent in the last heartbeat (sent again only when changed)
        self._reconciling = False
        self._heartbeat_in_flight = False
        self._heartbeat_interval_ms = 5000.0  # until the coordinator says
        self._fatal: BaseException | None = None  # raised by the next poll()
        self._last_epoch = -1  # the last member epoch above 0: what group_metadata() shows
        if consumer._group is not None:
            # KIP-1082: the client makes its member id (a UUID) and keeps it across rejoins
            consumer._member_id = "%032x" % consumer._sim.rng.getrandbits(128)

    # ---- joining and heartbeats ----------------------------------------------------------------
    def join(self) -> None:
        c = self.consumer
        c._joining = True
        c._generation = JOIN_EPOCH
        self._sent = {}  # a join sends every field
        if c._pattern is not None:
            c._subscription = c._matching_topics(c._pattern)
        self._send_heartbeat()

    def subscribed(self) -> None:
        if self.consumer._generation > 0:
            # a member sends its new subscription with a heartbeat and stays a member
            if not self._heartbeat_in_flight:
                self._send_heartbeat()
        else:
            self.consumer._needs_join = True

    def check_poll(self) -> None:
        if self._fatal is not None:  # the Java client's poll() throws what the heartbeat got
            raise self._fatal

    def _start_heartbeats(self) -> None:
        c = self.consumer
        c._heartbeat_gen += 1
        c._sim.schedule(self._heartbeat_interval_ms, self._heartbeat, c._heartbeat_gen)

    def _heartbeat(self, gen) -> None:
        c = self.consumer
        if not c.alive or gen != c._heartbeat_gen or c._generation < 0:
            return
        idle_ms = c._sim.now - c._last_poll_ms
        if not c._polling and idle_ms > c.config["max_poll_interval_ms"]:
            return self._leave_after_poll_timeout(idle_ms)
        if not self._heartbeat_in_flight:
            self._send_heartbeat()
        c._sim.schedule(self._heartbeat_interval_ms, self._heartbeat, gen)

    def polled(self) -> None:
        """After each ``poll()``: the Java client's background thread leaves the group as soon as
        ``max_poll_interval_ms`` has passed without another (its poll timer), not at the next
        heartbeat - so the simulated consumer checks at that moment too."""
        c = self.consumer
        c._sim.schedule(c.config["max_poll_interval_ms"], self._poll_timer_expired, c._last_poll_ms)

    def _poll_timer_expired(self, armed_at: float) -> None:
        c = self.consumer
        if not c.alive or c._polling or c._last_poll_ms != armed_at or c._generation <= 0:
            return  # polled since, or not a member
        self._leave_after_poll_timeout(c._sim.now - c._last_poll_ms)

    def _heartbeat_request(self, epoch: int) -> ConsumerGroupHeartbeatRequest:
        """``HeartbeatState.buildRequestData``: a field is sent when joining or when it changed."""
        c = self.consumer
        fields = {
            "topics": tuple(sorted(c._subscription)),
            "owned": tuple(sorted(c._partitions)),
            "assignor": c.config["group_remote_assignor"],
            "rebalance_timeout_ms": c.config["max_poll_interval_ms"],
        }
        changed = {k: v for k, v in fields.items() if self._sent.get(k, ...) != v and v is not None}
        self._sent.update(changed)
        return ConsumerGroupHeartbeatRequest(
            group=c._group,
            member_id=c._member_id,
            member_epoch=epoch,
            client_id=c.node_id,
            instance_id=c.config["group_instance_id"],
            **changed,
        )

    def _send_heartbeat(self) -> None:
        c = self.consumer
        self._heartbeat_in_flight = True
        request = self._heartbeat_request(c._generation)
        c._send_coordinator(request, self._on_heartbeat, timeout_ms=c.config["request_timeout_ms"])

    def _on_heartbeat(self, error, result) -> None:
        c = self.consumer
        self._heartbeat_in_flight = False
        if not c.alive or c._generation < 0:
            return  # left (or closed) meanwhile: the answer is ignored, as the Java client does
        if error in FENCING_ERRORS:
            return self._fenced(error)
        if error is not None:
            self._sent = {}  # resend everything with the next try
            if error in COORDINATOR_MOVED:
                return c._later(self._retry_heartbeat)
            self._fatal = error(f"ConsumerGroupHeartbeat: {error.__name__}")  # raised by the next poll()
            c._heartbeat_gen += 1
            c._joining = False
            return
        first = c._joining
        c._joining = c._needs_join = False
        if result.member_epoch != c._generation:
            c._generation = result.member_epoch
        if result.member_epoch > 0:
            self._last_epoch = result.member_epoch
        self._heartbeat_interval_ms = result.heartbeat_interval_ms or self._heartbeat_interval_ms
        if first:
            self._start_heartbeats()
        if result.assignment is not None:
            self._target = {(t, p) for t, ps in result.assignment.items() for p in ps}
        self._maybe_reconcile()
        if not self._reconciling and self._sent.get("owned") != tuple(sorted(c._partitions)):
            self._send_heartbeat()  # a reconciliation finished while this heartbeat was out: acknowledge now
        c._advance()

    def _retry_heartbeat(self) -> None:
        if self.consumer.alive and not self._heartbeat_in_flight and self.consumer._generation >= 0:
            self._send_heartbeat()

    def _fenced(self, error) -> None:
        """``transitionToFenced``: the partitions are lost (no commit), then rejoin with epoch 0."""
        self.record_left(error.__name__)
        c = self.consumer
        lost = {TopicPartition(*tp) for tp in c._partitions}
        c._set_assignment([])
        self._target = None
        self._reconciling = False
        if lost and c._listener is not None:
            c._listener.on_partitions_lost(lost)
        c._heartbeat_gen += 1
        c._needs_join = True
        c._joining = False
        self.join()

    # ---- reconciliation ------------------------------------------------------------------------
    def _maybe_reconcile(self) -> None:
        """``AbstractMembershipManager.maybeReconcile``: commit (auto-commit) -> revoke -> assign
        -> acknowledge with a heartbeat now."""
        c = self.consumer
        if self._target is None or self._reconciling:
            return
        owned = set(c._partitions)
        revoked, added = sorted(owned - self._target), sorted(self._target - owned)
        if not revoked and not added:
            return
        self._reconciling = True
        target = set(self._target)
        epoch = c._generation

        def revoke_and_assign(*_) -> None:
            self._reconciling = False
            if not c.alive or c._generation != epoch or self._target != target:
                return self._maybe_reconcile()  # fenced, left or a newer target meanwhile
            if revoked and c._listener is not None:
                c._listener.on_partitions_revoked({TopicPartition(*tp) for tp in revoked})
            c._set_assignment(sorted(target))
            c._history.record(
                c.node_id,
                INFO,
                OpName.ASSIGNED,
                sorted([list(tp) for tp in target]),
                evidence={"generation": c._generation, "member_id": c._member_id},
            )
            if added:
                c._assigned_pending = {TopicPartition(*tp) for tp in added}
            if not self._heartbeat_in_flight:
                self._send_heartbeat()  # acknowledge at once (state ACKNOWLEDGING)
            c._advance()

        offsets = {tp: s.position for tp, s in sorted(c._partitions.items()) if s.position is not None and not s.early}
        if revoked and c.config["enable_auto_commit"] and offsets:
            # maybeAutoCommitSyncBeforeRevocation: every consumed position, before giving any up
            c._send_coordinator(c._commit_request(offsets), revoke_and_assign)
        else:
            revoke_and_assign()

    def revoke_before_rejoin(self) -> None:
        # only a member that left (poll timeout) gets here, inside the poll() that rejoins: its
        # partitions were lost when it left (transitionToStale)
        c = self.consumer
        lost = {TopicPartition(*tp) for tp in c._partitions}
        c._set_assignment([])
        self._target = None
        if c._listener is not None:
            c._listener.on_partitions_lost(lost)

    # ---- leaving -------------------------------------------------------------------------------
    def _leave_after_poll_timeout(self, idle_ms: float) -> None:
        c = self.consumer
        self.record_poll_timeout(idle_ms)
        self.leave()
        c._generation = LEAVE_EPOCH
        c._needs_join = True
        c._left_group = True
        c._heartbeat_gen += 1

    def generation_shown(self) -> int:
        """The Java client's ``groupMetadata().generationId``: the last member epoch above 0. A
        member that leaves, is fenced or rejoins keeps showing it until it gets a new one
        (``AbstractMembershipManager.updateMemberEpoch`` notifies only epochs above 0)."""
        return self._last_epoch

    def leaves_on_close(self) -> bool:
        """Every member of a consumer group says so when it closes: a static one with epoch -2,
        "away, back soon" (it keeps its partitions until its session timeout)."""
        return True

    def leave(self) -> None:
        c = self.consumer
        if c._generation <= 0 and not c._joining:
            return  # not a member (never joined, or already left)
        epoch = STATIC_LEAVE_EPOCH if c.config["group_instance_id"] is not None else LEAVE_EPOCH
        c._send_coordinator(self._heartbeat_request(epoch), None)
        c._generation = LEAVE_EPOCH
        self._target = None
        c._heartbeat_gen += 1

    # ---- commits -------------------------------------------------------------------------------
    def check_commit(self) -> None:
        c = self.consumer
        if self._fatal is not None:
            raise self._fatal
        if not c._subscription or c._generation > 0:
            return
        if (c._joining or c._needs_join) and not c._left_group:
            raise Errors.RebalanceInProgressError(
                "the consumer is joining its consumer group: poll() until it has partitions, then commit"
            )
        raise Errors.CommitFailedError(
            "the consumer is not a member of its consumer group (it left: no poll() within "
            f"max_poll_interval_ms={c.config['max_poll_interval_ms']:g}); poll() again to rejoin"
        )

    def call(self, request: GroupRequest, timeout_ms=None):
        c = self.consumer
        try:
            return c._call_coordinator(request, timeout_ms)
        except (Errors.StaleMemberEpochError, *FENCING_ERRORS) as exc:
            raise Errors.CommitFailedError(
                f"{type(exc).__name__}: member epoch {c._generation} is no longer the member's (it was "
                "fenced or reconciled meanwhile); poll() again"
            ) from None
