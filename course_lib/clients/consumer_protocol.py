"""The simulated ``KafkaConsumer`` in a *consumer group* (KIP-848, ``group_protocol="consumer"``),
as the Java client 4.3.1 does it with ``group.protocol=consumer`` (``ConsumerMembershipManager``,
``ConsumerHeartbeatRequestManager``); the classic protocol's membership is :mod:`.group_membership`.

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
from ..broker.protocol import ConsumerGroupHeartbeatRequest
from ..history import INFO, OpName
from .group_membership import GroupMembership
from .rpc import COORDINATOR_MOVED

#: answers that fence the member: drop the partitions, rejoin with epoch 0
FENCING_ERRORS = (Errors.FencedMemberEpochError, Errors.UnknownMemberIdError)


class ConsumerGroupMembership(GroupMembership):
    """Membership of a consumer group when ``group_protocol="consumer"``; the classic protocol's
    otherwise (every override falls back to :class:`GroupMembership`)."""

    _kip848: bool
    _target: set | None  # the partitions the coordinator last assigned (None: none yet)
    _sent: dict  # the fields sent in the last heartbeat (sent again only when changed)
    _reconciling: bool
    _heartbeat_in_flight: bool
    _heartbeat_interval_ms: float
    _fatal: BaseException | None
    _last_epoch: int  # the last member epoch above 0: what group_metadata() shows

    def _init_consumer_protocol(self) -> None:
        self._kip848 = self.config["group_protocol"] == "consumer"
        self._target = None
        self._sent = {}
        self._reconciling = False
        self._heartbeat_in_flight = False
        self._heartbeat_interval_ms = 5000.0
        self._fatal = None
        self._last_epoch = -1
        if self._kip848 and self._group is not None:
            # KIP-1082: the client makes its member id (a UUID) and keeps it across rejoins
            self._member_id = "%032x" % self._sim.rng.getrandbits(128)

    # ---- joining and heartbeats ----------------------------------------------------------------
    def _join(self):
        if not self._kip848:
            return super()._join()
        self._joining = True
        self._generation = JOIN_EPOCH
        self._sent = {}  # a join sends every field
        if self._pattern is not None:
            self._subscription = self._matching_topics(self._pattern)
        self._send_heartbeat()

    def _start_heartbeats(self) -> None:
        if not self._kip848:
            return super()._start_heartbeats()
        self._heartbeat_gen += 1
        self._sim.schedule(self._heartbeat_interval_ms, self._heartbeat, self._heartbeat_gen)

    def _heartbeat(self, gen) -> None:
        if not self._kip848:
            return super()._heartbeat(gen)
        if not self.alive or gen != self._heartbeat_gen or self._generation < 0:
            return
        idle_ms = self._sim.now - self._last_poll_ms
        if not self._polling and idle_ms > self.config["max_poll_interval_ms"]:
            return self._leave_after_poll_timeout(idle_ms)
        if not self._heartbeat_in_flight:
            self._send_heartbeat()
        self._sim.schedule(self._heartbeat_interval_ms, self._heartbeat, gen)

    def _arm_poll_timer(self) -> None:
        """After each ``poll()``: the Java client's background thread leaves the group as soon as
        ``max_poll_interval_ms`` has passed without another (its poll timer), not at the next
        heartbeat - so the simulated consumer checks at that moment too."""
        if self._kip848:
            self._sim.schedule(self.config["max_poll_interval_ms"], self._poll_timer_expired, self._last_poll_ms)

    def _poll_timer_expired(self, armed_at: float) -> None:
        if not self.alive or self._polling or self._last_poll_ms != armed_at or self._generation <= 0:
            return  # polled since, or not a member
        self._leave_after_poll_timeout(self._sim.now - self._last_poll_ms)

    def _heartbeat_request(self, epoch: int) -> ConsumerGroupHeartbeatRequest:
        """``HeartbeatState.buildRequestData``: a field is sent when joining or when it changed."""
        fields = {
            "topics": tuple(sorted(self._subscription)),
            "owned": tuple(sorted(self._partitions)),
            "assignor": self.config["group_remote_assignor"],
            "rebalance_timeout_ms": self.config["max_poll_interval_ms"],
        }
        changed = {k: v for k, v in fields.items() if self._sent.get(k, ...) != v and v is not None}
        self._sent.update(changed)
        return ConsumerGroupHeartbeatRequest(
            group=self._group,
            member_id=self._member_id,
            member_epoch=epoch,
            client_id=self.node_id,
            instance_id=self.config["group_instance_id"],
            **changed,
        )

    def _send_heartbeat(self) -> None:
        self._heartbeat_in_flight = True
        request = self._heartbeat_request(self._generation)
        self._send_coordinator(request, self._on_heartbeat, timeout_ms=self.config["request_timeout_ms"])

    def _on_heartbeat(self, error, result) -> None:
        self._heartbeat_in_flight = False
        if not self.alive or self._generation < 0:
            return  # left (or closed) meanwhile: the answer is ignored, as the Java client does
        if error in FENCING_ERRORS:
            return self._fenced(error)
        if error is not None:
            self._sent = {}  # resend everything with the next try
            if error in COORDINATOR_MOVED:
                return self._later(self._retry_heartbeat)
            self._fatal = error(f"ConsumerGroupHeartbeat: {error.__name__}")  # raised by the next poll()
            self._heartbeat_gen += 1
            self._joining = False
            return
        first = self._joining
        self._joining = self._needs_join = False
        if result.member_epoch != self._generation:
            self._generation = result.member_epoch
        if result.member_epoch > 0:
            self._last_epoch = result.member_epoch
        self._heartbeat_interval_ms = result.heartbeat_interval_ms or self._heartbeat_interval_ms
        if first:
            self._start_heartbeats()
        if result.assignment is not None:
            self._target = {(t, p) for t, ps in result.assignment.items() for p in ps}
        self._maybe_reconcile()
        if not self._reconciling and self._sent.get("owned") != tuple(sorted(self._partitions)):
            self._send_heartbeat()  # a reconciliation finished while this heartbeat was out: acknowledge now
        self._advance()

    def _retry_heartbeat(self) -> None:
        if self.alive and not self._heartbeat_in_flight and self._generation >= 0:
            self._send_heartbeat()

    def _fenced(self, error) -> None:
        """``transitionToFenced``: the partitions are lost (no commit), then rejoin with epoch 0."""
        self._history.record(
            self.node_id,
            INFO,
            OpName.LEFT_GROUP,
            sorted([list(tp) for tp in self._partitions]),
            evidence={"reason": error.__name__, "generation": self._generation, "member_id": self._member_id},
        )
        lost = {TopicPartition(*tp) for tp in self._partitions}
        self._set_assignment([])
        self._target = None
        self._reconciling = False
        if lost and self._listener is not None:
            self._listener.on_partitions_lost(lost)
        self._heartbeat_gen += 1
        self._needs_join = True
        self._joining = False
        self._join()

    # ---- reconciliation ------------------------------------------------------------------------
    def _maybe_reconcile(self) -> None:
        """``AbstractMembershipManager.maybeReconcile``: commit (auto-commit) -> revoke -> assign
        -> acknowledge with a heartbeat now."""
        if self._target is None or self._reconciling:
            return
        owned = set(self._partitions)
        revoked, added = sorted(owned - self._target), sorted(self._target - owned)
        if not revoked and not added:
            return
        self._reconciling = True
        target = set(self._target)
        epoch = self._generation

        def revoke_and_assign(*_) -> None:
            self._reconciling = False
            if not self.alive or self._generation != epoch or self._target != target:
                return self._maybe_reconcile()  # fenced, left or a newer target meanwhile
            if revoked and self._listener is not None:
                self._listener.on_partitions_revoked({TopicPartition(*tp) for tp in revoked})
            self._set_assignment(sorted(target))
            self._history.record(
                self.node_id,
                INFO,
                OpName.ASSIGNED,
                sorted([list(tp) for tp in target]),
                evidence={"generation": self._generation, "member_id": self._member_id},
            )
            if added:
                self._assigned_pending = {TopicPartition(*tp) for tp in added}
            if not self._heartbeat_in_flight:
                self._send_heartbeat()  # acknowledge at once (state ACKNOWLEDGING)
            self._advance()

        offsets = {
            tp: s.position for tp, s in sorted(self._partitions.items()) if s.position is not None and not s.early
        }
        if revoked and self.config["enable_auto_commit"] and offsets:
            # maybeAutoCommitSyncBeforeRevocation: every consumed position, before giving any up
            self._send_coordinator(self._commit_request(offsets), revoke_and_assign)
        else:
            revoke_and_assign()

    def _on_revoke(self) -> None:
        if not self._kip848:
            return super()._on_revoke()
        # only a member that left (poll timeout) gets here, inside the poll() that rejoins: its
        # partitions were lost when it left (transitionToStale)
        lost = {TopicPartition(*tp) for tp in self._partitions}
        self._set_assignment([])
        self._target = None
        if self._listener is not None:
            self._listener.on_partitions_lost(lost)

    # ---- leaving -------------------------------------------------------------------------------
    def _leave_after_poll_timeout(self, idle_ms: float) -> None:
        if not self._kip848:
            return super()._leave_after_poll_timeout(idle_ms)
        self._record_poll_timeout(idle_ms)
        self._leave_group()
        self._generation = LEAVE_EPOCH
        self._needs_join = True
        self._left_group = True
        self._heartbeat_gen += 1

    def _metadata_generation(self) -> int:
        """The Java client's ``groupMetadata().generationId``: the last member epoch above 0. A
        member that leaves, is fenced or rejoins keeps showing it until it gets a new one
        (``AbstractMembershipManager.updateMemberEpoch`` notifies only epochs above 0)."""
        return self._last_epoch if self._kip848 else super()._metadata_generation()

    def _leaves_on_close(self) -> bool:
        """Every member of a consumer group says so when it closes: a static one with epoch -2,
        "away, back soon" (it keeps its partitions until its session timeout)."""
        return self._kip848 or super()._leaves_on_close()

    def _leave_group(self) -> None:
        if not self._kip848:
            return super()._leave_group()
        if self._generation <= 0 and not self._joining:
            return  # not a member (never joined, or already left)
        epoch = STATIC_LEAVE_EPOCH if self.config["group_instance_id"] is not None else LEAVE_EPOCH
        self._send_coordinator(self._heartbeat_request(epoch), None)
        self._generation = LEAVE_EPOCH
        self._target = None
        self._heartbeat_gen += 1

    # ---- commits -------------------------------------------------------------------------------
    def _check_membership(self) -> None:
        if not self._kip848:
            return super()._check_membership()
        if self._fatal is not None:
            raise self._fatal
        if not self._subscription or self._generation > 0:
            return
        if (self._joining or self._needs_join) and not self._left_group:
            raise Errors.RebalanceInProgressError(
                "the consumer is joining its consumer group: poll() until it has partitions, then commit"
            )
        raise Errors.CommitFailedError(
            "the consumer is not a member of its consumer group (it left: no poll() within "
            f"max_poll_interval_ms={self.config['max_poll_interval_ms']:g}); poll() again to rejoin"
        )

    def _call_group(self, request, timeout_ms=None):
        if not self._kip848:
            return super()._call_group(request, timeout_ms)
        try:
            return self._call_coordinator(request, timeout_ms)
        except (Errors.StaleMemberEpochError, *FENCING_ERRORS) as exc:
            raise Errors.CommitFailedError(
                f"{type(exc).__name__}: member epoch {self._generation} is no longer the member's (it was "
                "fenced or reconciled meanwhile); poll() again"
            ) from None
