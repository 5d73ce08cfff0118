"""The consumer group protocol (KIP-848): one ConsumerGroupHeartbeat does join, heartbeat,
assignment and leave, and the coordinator computes the assignment itself.

The state machine of Kafka's group coordinator (``GroupMetadataManager.consumerGroupHeartbeat``
and ``modern/consumer/CurrentAssignmentBuilder``), without the network - the coordinator
(:mod:`.group_coordinator`) feeds it requests and timer events:

- **Epochs.** The *group epoch* grows on every membership or subscription change (a join, a
  leave, a subscription or topic-size change, a fenced member). The coordinator then computes a
  *target assignment* for that epoch (``assignmentEpoch = groupEpoch``) with the group's
  server-side assignor (:mod:`.assignors`). Each member has a *member epoch*: the target epoch it
  has reconciled to. A new group starts at group epoch 1 with an empty target assignment of
  epoch 1 (:data:`INITIAL_EPOCH`, Kafka 4.3's KAFKA-20268), so its first member's join bumps the
  epoch to 2 and that member reaches epoch 2, not 1. (Kafka starts there so that a member joining
  a new group whose first assignment is not computed yet - KIP-1263's assignment batching and
  offload - can be given epoch 1: above 0, which means "joining", and below the group epoch.)
- **Assignment batching** (KIP-1263, Kafka 4.3: ``assignment_interval_ms``, Kafka's
  ``group.consumer.assignment.interval.ms``). A target is computed only at a heartbeat at least
  that long after the last one (no timer: Kafka 4.3.1's consumer groups compute it lazily); until
  then the group epoch runs ahead (state ``Assigning``) and a member joining reconciles towards
  the last target, where it has nothing, at that target's epoch.
- **Incremental reconciliation.** A member moves towards its target one heartbeat at a time and
  keeps every partition it is not asked to give up (no stop-the-world rebalance). If it owns
  partitions it must give up, it is told to revoke them first (state ``unrevoked_partitions``,
  its epoch stays); once a heartbeat reports them gone it gets the new epoch. A partition still
  owned by another member (assigned or pending revocation) is *unreleased*: the member gets it
  only on a later heartbeat, after its owner revoked it (state ``unreleased_partitions``).
  So no partition is ever owned by two members of the group at once.
- **Fencing.** A heartbeat with an epoch other than the member's (except its previous epoch with
  owned partitions still a subset of its assignment - the answer may have been lost) gets
  ``FENCED_MEMBER_EPOCH``; an unknown member id gets ``UNKNOWN_MEMBER_ID``. Either way the
  client drops its partitions and rejoins with epoch 0. A member silent for
  ``group.consumer.session.timeout.ms`` is removed; one that does not revoke within its
  rebalance timeout (``max.poll.interval.ms``) too.
- **Leave** is a heartbeat with epoch -1.
- **Static members** (``group.instance.id``; ``getOrMaybeSubscribeStaticConsumerGroupMember``).
  A static member's leave with epoch -2 is temporary: it stays in the group at epoch -2 and keeps
  its partitions (nobody else gets them, the group epoch stays, the group is ``Reconciling``)
  until its session timeout removes it. A member joining with that instance id meanwhile
  *replaces* it: a copy under the new member id, at epoch 0, with the same target - it reconciles
  at once to the same partitions, with no rebalance. While the instance id's member is active, a
  join with it is refused (``UNRELEASED_INSTANCE_ID``); a heartbeat from a member the instance id
  no longer names is ``FENCED_INSTANCE_ID``. A leave with -2 and no instance id is a leave.

- **Persistence.** What the group is - epochs, members, targets, current assignments - is
  :meth:`ConsumerGroup.snapshot`; the coordinator writes it to ``__consumer_offsets`` whenever it
  changes (:attr:`ConsumerGroup.version` moved) and answers the heartbeat once the write is
  replicated, and a new coordinator restores it (:mod:`.consumer_group_requests`). So a
  coordinator failover moves nothing: members carry on at their epochs, as on Kafka. Timers are
  not persisted: a new coordinator gives every member a fresh session timeout, as Kafka's
  ``onLoaded`` does.

>>> g = ConsumerGroup("g", {"t": 4}.get)
>>> a = g.heartbeat(0, Heartbeat("a", 0, topics=("t",), owned=()))
>>> a.member_epoch, a.assignment   # a new group is at epoch 1: the first join makes it 2
(2, {'t': frozenset({0, 1, 2, 3})})
>>> b = g.heartbeat(10, Heartbeat("b", 0, topics=("t",), owned=()))
>>> b.member_epoch, b.assignment   # partitions 2, 3 are still a's: pending
(3, {})
>>> r = g.heartbeat(20, Heartbeat("a", 2, owned=(("t", 0), ("t", 1), ("t", 2), ("t", 3))))
>>> r.member_epoch, r.assignment   # revoke 2 and 3 first, keep 0 and 1
(2, {'t': frozenset({0, 1})})
>>> g.heartbeat(30, Heartbeat("a", 2, owned=(("t", 0), ("t", 1)))).member_epoch
3
>>> g.heartbeat(40, Heartbeat("b", 3, owned=())).assignment
{'t': frozenset({2, 3})}
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field, replace
from typing import Callable

from kafka import errors as Errors

from .assignors import ASSIGNORS

#: ConsumerGroupHeartbeat's member epochs with a meaning of their own
JOIN_EPOCH, LEAVE_EPOCH, STATIC_LEAVE_EPOCH = 0, -1, -2

STABLE, UNREVOKED, UNRELEASED = "stable", "unrevoked_partitions", "unreleased_partitions"

#: a new group's group epoch and assignment epoch (its target: nobody owns anything). Kafka 4.3
#: (KAFKA-20268) creates groups at 1, not 0, so the first computed assignment is epoch 2
INITIAL_EPOCH = 1


@dataclass(frozen=True)
class Heartbeat:
    """One ConsumerGroupHeartbeat. ``None`` means "unchanged since my last heartbeat", as on the
    wire (``topics``, ``owned``, ``assignor``, ``rebalance_timeout_ms`` -1)."""

    member_id: str
    member_epoch: int
    topics: tuple | None = None
    owned: tuple | None = None  # ((topic, partition), ...)
    assignor: str | None = None
    rebalance_timeout_ms: float = -1
    client_id: str = ""
    instance_id: str | None = None


@dataclass(frozen=True)
class HeartbeatAnswer:
    error: type | None
    member_id: str
    member_epoch: int
    heartbeat_interval_ms: float
    #: {topic: frozenset(partitions)}, or None: not sent (unchanged)
    assignment: dict | None = None


@dataclass
class ConsumerMember:
    member_id: str
    client_id: str = ""
    topics: tuple = ()
    assignor: str | None = None
    rebalance_timeout_ms: float = 300_000
    member_epoch: int = 0
    previous_epoch: int = -1
    state: str = STABLE
    assigned: dict = field(default_factory=dict)  # topic -> frozenset
    revoking: dict = field(default_factory=dict)  # topic -> frozenset (still owned, to give up)
    last_heartbeat_ms: float = 0.0
    revoke_deadline_ms: float | None = None
    instance_id: str | None = None

    def owned(self) -> set:
        """Partitions the coordinator counts as this member's: assigned or pending revocation."""
        return {(t, p) for part in (self.assigned, self.revoking) for t, ps in part.items() for p in ps}


class ConsumerGroup:
    """``partitions(topic)`` answers a topic's partition count (None: no such topic)."""

    def __init__(
        self,
        group_id: str,
        partitions: Callable[[str], int | None],
        session_timeout_ms: float = 45_000,
        heartbeat_interval_ms: float = 5_000,
        assignment_interval_ms: float = 0,
    ):
        self.group_id = group_id
        self.partitions = partitions
        self.session_timeout_ms = session_timeout_ms
        self.heartbeat_interval_ms = heartbeat_interval_ms
        self.assignment_interval_ms = assignment_interval_ms
        self.last_assignment_ms = float("-inf")  # when the target was last computed
        self.group_epoch = INITIAL_EPOCH
        self.assignment_epoch = INITIAL_EPOCH
        self.members: dict[str, ConsumerMember] = {}
        self.target: dict = {}  # member id -> {topic: frozenset}
        self.subscription_metadata: dict = {}  # topic -> partition count, as last assigned
        self.partition_epochs: dict = {}  # (topic, partition) -> epoch of the member owning it
        self.owners: dict = {}  # (topic, partition) -> member id
        self.static: dict[str, str] = {}  # group.instance.id -> member id
        self.log: list = []  # (time, event, detail): what the coordinator did, for traces
        #: grows with every change of the persisted state (:data:`PERSISTED`; a restore counts as
        #: one) and only then, so the coordinator knows whether a heartbeat changed the group
        #: without copying it before and after: an unchanged version is an unchanged
        #: :meth:`snapshot`. So the group changes only through its methods, which keep it.
        self.version = 0
        self._persisted: tuple[int, dict] | None = None  # (version, its snapshot)

    # ---- state ---------------------------------------------------------------------------------
    #: what Kafka's records in __consumer_offsets hold of a group (not its timers)
    PERSISTED = (
        "group_epoch",
        "assignment_epoch",
        "last_assignment_ms",
        "members",
        "target",
        "subscription_metadata",
        "partition_epochs",
        "owners",
        "static",
    )
    #: a member's timers, kept in memory only
    TIMERS = ("last_heartbeat_ms", "revoke_deadline_ms")

    def snapshot(self) -> dict:
        """The group's persisted state, a copy (equal snapshots: nothing to write)."""
        state = {name: copy.deepcopy(getattr(self, name)) for name in self.PERSISTED}
        state["members"] = {
            m: {k: v for k, v in vars(member).items() if k not in self.TIMERS} for m, member in state["members"].items()
        }
        return state

    def persisted(self) -> dict:
        """:meth:`snapshot`, copied only once per :attr:`version` (do not modify it)."""
        if self._persisted is None or self._persisted[0] != self.version:
            self._persisted = (self.version, self.snapshot())
        return self._persisted[1]

    def _changed(self) -> None:
        self.version += 1

    def restore(self, state: dict, now: float) -> None:
        """A coordinator's replay: the snapshot's state, every member's session starting ``now``
        and a member still revoking given its whole rebalance timeout again."""
        self._changed()
        state = copy.deepcopy(state)
        for name in self.PERSISTED:
            setattr(self, name, state[name])
        self.members = {m: ConsumerMember(**fields, last_heartbeat_ms=now) for m, fields in state["members"].items()}
        for member in self.members.values():
            if member.state == UNREVOKED:
                member.revoke_deadline_ms = now + member.rebalance_timeout_ms

    @property
    def state(self) -> str:
        """ConsumerGroupDescribe's GroupState (Kafka's ``ConsumerGroup.ConsumerGroupState``)."""
        if not self.members:
            return "Empty"
        if self.group_epoch != self.assignment_epoch:
            return "Assigning"
        if any(m.member_epoch != self.assignment_epoch or m.state != STABLE for m in self.members.values()):
            return "Reconciling"
        return "Stable"

    def assignor_name(self) -> str:
        """The first assignor a member asked for, else Kafka's default (``uniform``)."""
        asked = sorted(m.assignor for m in self.members.values() if m.assignor)
        return asked[0] if asked else next(iter(ASSIGNORS))

    def current_partition_epoch(self, tp: tuple) -> int:
        return self.partition_epochs.get(tp, -1)

    # ---- the heartbeat -------------------------------------------------------------------------
    def heartbeat(self, now: float, hb: Heartbeat) -> HeartbeatAnswer:
        try:
            return self._heartbeat(now, hb)
        except _Refused as refused:
            return HeartbeatAnswer(refused.error, hb.member_id, hb.member_epoch, self.heartbeat_interval_ms)

    def _heartbeat(self, now: float, hb: Heartbeat) -> HeartbeatAnswer:
        if hb.assignor is not None and hb.assignor not in ASSIGNORS:
            raise _Refused(Errors.UnsupportedAssignorError)
        if hb.member_epoch in (LEAVE_EPOCH, STATIC_LEAVE_EPOCH):
            return self._leave(now, hb)
        member, new = self._member(now, hb)
        before = (dict(member.assigned), member.member_epoch)
        described = (member.topics, member.assignor, member.rebalance_timeout_ms, member.client_id)
        subscription_changed = new or (hb.topics is not None and tuple(sorted(hb.topics)) != member.topics)
        subscription_changed |= hb.assignor is not None and hb.assignor != member.assignor
        if hb.topics is not None:
            member.topics = tuple(sorted(hb.topics))
        if hb.assignor is not None:
            member.assignor = hb.assignor
        if hb.rebalance_timeout_ms != -1:
            member.rebalance_timeout_ms = hb.rebalance_timeout_ms
        member.client_id = hb.client_id or member.client_id
        member.last_heartbeat_ms = now  # a timer: not persisted
        if new or (member.topics, member.assignor, member.rebalance_timeout_ms, member.client_id) != described:
            self._changed()
        if new:
            self.members[member.member_id] = member
            if hb.instance_id is not None:
                member.instance_id = hb.instance_id
                self.static[hb.instance_id] = member.member_id
            self._record(now, "member_joined", {"member": member.member_id, "topics": list(member.topics)})
        if subscription_changed or self._metadata() != self.subscription_metadata:
            self._bump(now, "subscription changed" if subscription_changed else "topic metadata changed")
        if self.group_epoch > self.assignment_epoch and now >= self.last_assignment_ms + self.assignment_interval_ms:
            self._compute_target(now)
        self._reconcile(now, member, hb.owned)
        full = hb.member_epoch == JOIN_EPOCH or (
            hb.rebalance_timeout_ms != -1 and hb.topics is not None and hb.owned is not None
        )
        changed = (dict(member.assigned), member.member_epoch) != before
        return HeartbeatAnswer(
            None,
            member.member_id,
            member.member_epoch,
            self.heartbeat_interval_ms,
            dict(member.assigned) if full or changed else None,
        )

    def _member(self, now: float, hb: Heartbeat) -> tuple[ConsumerMember, bool]:
        """The member a heartbeat is from, and whether it is new (``getOrMaybeSubscribe...``)."""
        static = self.members.get(self.static.get(hb.instance_id, "")) if hb.instance_id is not None else None
        if hb.member_epoch == JOIN_EPOCH and static is not None:
            if static.member_epoch != STATIC_LEAVE_EPOCH:
                raise _Refused(Errors.UnreleasedInstanceIdError)  # its member has not left
            return self._replace(now, static, hb.member_id), False
        if hb.instance_id is not None and hb.member_epoch != JOIN_EPOCH:
            if static is None:
                raise _Refused(Errors.UnknownMemberIdError)
            if static.member_id != hb.member_id:
                raise _Refused(Errors.FencedInstanceIdError)  # another member took the instance id
        member = self.members.get(hb.member_id)
        if member is None:
            if hb.member_epoch != JOIN_EPOCH:
                raise _Refused(Errors.UnknownMemberIdError)
            if not hb.topics:
                raise _Refused(Errors.InvalidRequestError)  # a join must name its subscription
            return ConsumerMember(hb.member_id), True
        self._check_epoch(member, hb)
        return member, False

    def _replace(self, now: float, old: ConsumerMember, member_id: str) -> ConsumerMember:
        """``replaceMember``: the static member that left comes back under a new member id with
        the old one's subscription, partitions and target, at epoch 0 (no group epoch bump)."""
        new = replace(old, member_id=member_id, member_epoch=JOIN_EPOCH, previous_epoch=JOIN_EPOCH)
        self._changed()  # old is at STATIC_LEAVE_EPOCH: the epoch moves, if not the member id
        self._release(old)
        del self.members[old.member_id]
        if old.member_id in self.target:
            self.target[member_id] = self.target.pop(old.member_id)
        self.members[member_id] = new
        self.static[old.instance_id or ""] = member_id
        self._record(
            now, "static_member_replaced", {"instance": old.instance_id, "old": old.member_id, "member": member_id}
        )
        return new

    def _leave(self, now: float, hb: Heartbeat) -> HeartbeatAnswer:
        """``consumerGroupLeave``: -1 (or a dynamic member's -2) removes the member; a static
        member's -2 keeps it, at epoch -2, with its assigned partitions."""
        if hb.instance_id is None:
            if hb.member_id not in self.members:
                raise _Refused(Errors.UnknownMemberIdError)
            self.remove(now, hb.member_id, "left the group")
            return HeartbeatAnswer(None, hb.member_id, hb.member_epoch, self.heartbeat_interval_ms)
        static = self.members.get(self.static.get(hb.instance_id, ""))
        if static is None:
            raise _Refused(Errors.UnknownMemberIdError)
        if static.member_id != hb.member_id:
            raise _Refused(Errors.FencedInstanceIdError)
        if hb.member_epoch == LEAVE_EPOCH:
            self.remove(now, static.member_id, "left the group")
            return HeartbeatAnswer(None, hb.member_id, hb.member_epoch, self.heartbeat_interval_ms)
        # consumerGroupStaticMemberGroupLeave: partitions pending revocation are let go
        if (static.member_epoch, static.revoking) != (STATIC_LEAVE_EPOCH, {}):
            self._changed()  # (a repeated leave changes nothing)
        self._release(static)
        static.member_epoch, static.revoking, static.revoke_deadline_ms = STATIC_LEAVE_EPOCH, {}, None
        self._claim(static)
        self._record(now, "static_member_left", {"member": static.member_id, "instance": hb.instance_id})
        return HeartbeatAnswer(None, static.member_id, STATIC_LEAVE_EPOCH, self.heartbeat_interval_ms)

    def _check_epoch(self, member: ConsumerMember, hb: Heartbeat) -> None:
        """``throwIfConsumerGroupMemberEpochIsInvalid``: ahead is fenced; behind is fenced unless
        it is the previous epoch and the member owns no more than its assignment (the answer that
        bumped it was lost)."""
        if hb.member_epoch > member.member_epoch:
            raise _Refused(Errors.FencedMemberEpochError)
        if hb.member_epoch < member.member_epoch:
            assigned = {(t, p) for t, ps in member.assigned.items() for p in ps}
            subset = hb.owned is not None and set(hb.owned) <= assigned
            if hb.member_epoch != member.previous_epoch or not subset:
                raise _Refused(Errors.FencedMemberEpochError)

    def _metadata(self) -> dict:
        topics = sorted({t for m in self.members.values() for t in m.topics})
        return {t: n for t in topics if (n := self.partitions(t)) is not None}

    def _bump(self, now: float, reason: str) -> None:
        self._changed()
        self.group_epoch += 1
        self._record(now, "group_epoch", {"epoch": self.group_epoch, "reason": reason})

    def _compute_target(self, now: float) -> None:
        self._changed()  # (the assignment epoch reaches the group epoch, which was ahead)
        self.last_assignment_ms = now
        self.subscription_metadata = self._metadata()
        assign = ASSIGNORS[self.assignor_name()]
        subscriptions = {m: member.topics for m, member in self.members.items()}
        self.target = assign(subscriptions, self.subscription_metadata, self.target)
        self.assignment_epoch = self.group_epoch
        self._record(
            now,
            "target_assignment",
            {
                "epoch": self.assignment_epoch,
                "assignment": {m: {t: sorted(ps) for t, ps in tps.items()} for m, tps in self.target.items()},
            },
        )

    # ---- CurrentAssignmentBuilder --------------------------------------------------------------
    def _reconcile(self, now: float, member: ConsumerMember, owned: tuple | None) -> None:
        """Move ``member`` one step towards its target (``CurrentAssignmentBuilder.build``)."""
        epoch = self.assignment_epoch
        if member.state == STABLE and member.member_epoch == epoch:
            return
        if member.state == UNREVOKED:
            if self._owns_any(owned, member.revoking):
                return  # still owns what it must give up: wait
            nxt = self._next(member, member.member_epoch + 1, owned)
        else:  # STABLE behind the target, or UNRELEASED: look again
            nxt = self._next(member, member.member_epoch, owned)
        state, member_epoch, assigned, revoking = nxt
        # owners and partition_epochs follow from these: the member's owned() at its epoch
        if nxt != (member.state, member.member_epoch, member.assigned, member.revoking):
            self._changed()
        self._release(member)
        if member_epoch != member.member_epoch:
            member.previous_epoch, member.member_epoch = member.member_epoch, member_epoch
        member.state, member.assigned, member.revoking = state, assigned, revoking
        member.revoke_deadline_ms = now + member.rebalance_timeout_ms if state == UNREVOKED else None
        self._claim(member)

    def _next(self, member: ConsumerMember, revoke_epoch: int, owned: tuple | None) -> tuple:
        """``computeNextAssignment``: (state, member epoch, assigned, pending revocation)."""
        target = self.target.get(member.member_id, {})
        assigned: dict = {}
        revoking: dict = {}
        pending: dict = {}
        unreleased = False
        for topic in sorted(set(target) | set(member.assigned)):
            want, have = target.get(topic, frozenset()), member.assigned.get(topic, frozenset())
            keep, give_up, get = have & want, have - want, want - have
            free = frozenset(p for p in get if self.current_partition_epoch((topic, p)) == -1)
            unreleased |= free != get
            for part, value in ((assigned, keep), (revoking, give_up), (pending, free)):
                if value:
                    part[topic] = frozenset(value)
        if revoking and self._owns_any(owned, revoking):
            return UNREVOKED, revoke_epoch, assigned, revoking
        for topic, ps in pending.items():
            assigned[topic] = assigned.get(topic, frozenset()) | ps
        return (UNRELEASED if unreleased else STABLE), self.assignment_epoch, assigned, {}

    @staticmethod
    def _owns_any(owned: tuple | None, partitions: dict) -> bool:
        """``ownsRevokedPartitions``: a member that did not report its partitions still owns them."""
        if owned is None:
            return True
        return any(p in partitions.get(t, ()) for t, p in owned)

    def _release(self, member: ConsumerMember) -> None:
        for tp in member.owned():
            if self.owners.get(tp) == member.member_id:
                del self.owners[tp]
                del self.partition_epochs[tp]

    def _claim(self, member: ConsumerMember) -> None:
        for tp in sorted(member.owned()):
            owner = self.owners.get(tp)
            # ConsumerGroup.addPartitionEpochs refuses the same (IllegalStateException)
            assert owner in (None, member.member_id), f"{tp} is still owned by {owner}"
            self.owners[tp], self.partition_epochs[tp] = member.member_id, member.member_epoch

    # ---- removal and timers --------------------------------------------------------------------
    def remove(self, now: float, member_id: str, reason: str) -> None:
        """A member leaves or is fenced: its partitions are free, the group epoch grows, and the
        target assignment is recomputed on the next heartbeat (``consumerGroupFenceMember``)."""
        self._changed()
        member = self.members.pop(member_id)
        self._release(member)
        if member.instance_id is not None and self.static.get(member.instance_id) == member_id:
            del self.static[member.instance_id]
        self.target.pop(member_id, None)
        self._record(now, "member_removed", {"member": member_id, "reason": reason})
        self._bump(now, f"{member_id} {reason}")

    def expire(self, now: float) -> list[str]:
        """Fence members past their session timeout or their revocation's rebalance timeout;
        returns their ids."""
        gone = []
        for member_id, m in sorted(self.members.items()):
            if now - m.last_heartbeat_ms >= self.session_timeout_ms:
                self.remove(now, member_id, f"no heartbeat for {self.session_timeout_ms:g} ms")
                gone.append(member_id)
            elif m.revoke_deadline_ms is not None and now >= m.revoke_deadline_ms:
                self.remove(now, member_id, f"did not revoke within {m.rebalance_timeout_ms:g} ms")
                gone.append(member_id)
        return gone

    def next_deadline(self) -> float | None:
        """When :meth:`expire` may next remove someone (None: no members)."""
        times = [m.last_heartbeat_ms + self.session_timeout_ms for m in self.members.values()]
        times += [m.revoke_deadline_ms for m in self.members.values() if m.revoke_deadline_ms is not None]
        return min(times) if times else None

    # ---- offset commits ------------------------------------------------------------------------
    def validate_commit(self, member_id: str, member_epoch: int):
        """``ConsumerGroup.validateOffsetCommit``: a commit with epoch < 0 is an admin's or a
        standalone consumer's and passes only while the group is empty; a member's must carry
        its current member epoch (``STALE_MEMBER_EPOCH`` otherwise). Returns the error or None."""
        if member_epoch < 0 and not self.members:
            return None
        member = self.members.get(member_id)
        if member is None:
            return Errors.UnknownMemberIdError
        if member_epoch != member.member_epoch:
            return Errors.StaleMemberEpochError
        return None

    def describe(self) -> dict:
        """What ConsumerGroupDescribe answers for this group."""
        return {
            "group_id": self.group_id,
            "state": self.state,
            "group_epoch": self.group_epoch,
            "assignment_epoch": self.assignment_epoch,
            "assignor": self.assignor_name(),
            "members": [
                {
                    "member_id": m.member_id,
                    "client_id": m.client_id,
                    "member_epoch": m.member_epoch,
                    "instance_id": m.instance_id,
                    "topics": list(m.topics),
                    "assignment": {t: sorted(ps) for t, ps in m.assigned.items()},
                    "target": {t: sorted(ps) for t, ps in self.target.get(m.member_id, {}).items()},
                }
                for _, m in sorted(self.members.items())
            ],
        }

    def _record(self, now: float, event: str, detail: dict) -> None:
        self.log.append((now, event, detail))


class _Refused(Exception):
    def __init__(self, error: type):
        super().__init__(error.__name__)
        self.error = error
