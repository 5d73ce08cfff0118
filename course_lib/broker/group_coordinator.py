"""The group coordinator: consumer groups, generations, rebalances and committed offsets.

- Members join; the coordinator waits until every known member has (re)joined, bumps the
  *generation*, and hands out partitions with the range assignor (in Kafka the group leader's
  client computes the assignment and SyncGroup distributes it; here both steps are one round
  trip, with the same result).
- Members heartbeat; one silent for ``session_timeout_ms`` is removed and the rest rebalance.
  A heartbeat during a rebalance answers ``RebalanceInProgress``: rejoin.
- A rebalance waits for every known member to rejoin for at most the *rebalance timeout* - the
  largest ``max.poll.interval.ms`` the members sent in JoinGroup, as Kafka's classic group
  coordinator does (not the session timeout): a member busy in its handler has until its poll
  interval ends to call ``poll()`` again. Members still missing then are removed.
- Static members (``group.instance.id``, KIP-345): a member that rejoins with a known instance id
  takes over the old member's slot and, if the group is stable, gets the same partitions back
  without a rebalance; the old member id is fenced (``FencedInstanceIdError``). A static member
  sends no LeaveGroup: only the session timeout removes it.
- Offset commits carry the member id and generation; a commit from an old generation (a member
  that was removed while it was busy) is refused - kafka-python raises ``CommitFailedError``.
- Committed offsets are records in ``__consumer_offsets``; transactional commits
  (``send_offsets_to_transaction``) stay pending until the transaction's COMMIT marker lands
  there, and vanish on ABORT.

- Committed offsets of a group that has been *empty* (no members) for ``offsets.retention.minutes``
  (Kafka default 7 days, KIP-211) expire: tombstones are written and a member that comes back
  later starts by ``auto_offset_reset``. Kafka looks every ``offsets.retention.check.interval.ms``
  (10 min); the simulator looks when a member joins or the offsets are fetched - what a
  returning member observes is the same, minus Kafka's up-to-10-minute delay.

Classic group membership is kept in memory: after a coordinator failover members simply rejoin
(Kafka persists a classic group's assignment too; the simulator does not). KIP-848 consumer
groups are persisted (:mod:`.consumer_group_requests`): a failover moves none of their partitions.

Taught in notebooks/05_consumer_delivery_semantics and notebooks/05b_consumer_groups.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, ClassVar

from kafka import errors as Errors

from . import consumer_group_requests as kip848
from .consumer_group import ConsumerGroup
from .coordinator_log import CoordinatorLog
from .session_sweep import SessionSweep
from .protocol import (
    ConsumerGroupDescribeRequest,
    ConsumerGroupHeartbeatRequest,
    GroupRequest,
    HeartbeatRequest,
    JoinGroupRequest,
    LeaveGroupRequest,
    OffsetCommitRequest,
    OffsetFetchRequest,
    TxnOffsetCommitRequest,
)

OFFSETS_TOPIC = "__consumer_offsets"


#: the append errors a transactional offset commit answers as they are: the producer is a zombie
_FENCED = (Errors.ProducerFencedError, Errors.InvalidProducerEpochError)


@dataclass
class Member:
    member_id: str
    client: str
    topics: tuple
    session_timeout_ms: float
    last_heartbeat_ms: float
    rebalance_timeout_ms: float = 0.0
    instance_id: str | None = None
    assignment: list = field(default_factory=list)


@dataclass
class Group:
    group_id: str
    generation: int = 0
    state: str = "Empty"  # Empty / PreparingRebalance / Stable
    members: dict = field(default_factory=dict)
    joining: dict = field(default_factory=dict)  # member id -> (src, request)
    rebalance_deadline_ms: float = 0.0
    next_member: int = 0
    static: dict = field(default_factory=dict)  # group.instance.id -> member id
    empty_since_ms: float | None = None  # when the last member left (offsets expire from then)
    fenced: set = field(default_factory=set)  # member ids replaced by a newer static member


class GroupCoordinator(CoordinatorLog, SessionSweep):
    TOPIC = OFFSETS_TOPIC

    def __init__(self, broker):
        super().__init__(broker)
        self.groups: dict[str, Group] = {}
        self.reset()

    def reset(self) -> None:
        self.offsets: dict[str, dict] = {}  # group -> {tp: offset}
        self.pending: dict[int, dict] = {}  # producer id -> {group: {tp: offset}}
        self.groups = {}
        #: KIP-848 consumer groups (:mod:`.consumer_group_requests`); a group id is in one of the two
        self.consumer_groups: dict[str, ConsumerGroup] = {}
        #: share group -> {(topic, partition)} whose share-partition state is initialized
        #: (Kafka's ShareGroupStatePartitionMetadata records; :mod:`.share_group` writes them)
        self.share_initialized: dict[str, set] = {}
        #: client -> its requests that came while its offset commit was being written (see handle)
        self.muted: dict[str, list] = {}

    def apply(self, stored) -> None:
        batch = stored.batch
        if batch.control is not None:
            staged = self.pending.pop(batch.producer_id, {})
            if batch.control == "commit":
                for group, offsets in staged.items():
                    self.offsets.setdefault(group, {}).update(offsets)
            return
        for record in batch.records:
            if record.key[0] == kip848.RECORD:
                kip848.apply_record(self, record.key, record.value)
                continue
            kind, group, topic, partition = record.key
            if kind == "share_initialized":
                initialized = self.share_initialized.setdefault(group, set())
                if record.value is None:
                    initialized.discard((topic, partition))
                else:
                    initialized.add((topic, partition))
            elif record.value is None:  # a tombstone: the offset expired
                self.offsets.get(group, {}).pop((topic, partition), None)
            elif batch.is_transactional:
                self.pending.setdefault(batch.producer_id, {}).setdefault(group, {})[(topic, partition)] = record.value
            else:
                self.offsets.setdefault(group, {})[(topic, partition)] = record.value

    def loaded(self) -> None:
        kip848.loaded(self)

    def on_topics_deleted(self, topics: set) -> None:
        """Committed offsets of a deleted topic go (``GroupCoordinator.onPartitionsDeleted``: the
        coordinator writes their tombstones), so a topic created again under the name starts
        with none."""
        if not self.refresh():
            return  # not the coordinator: the one that is does it
        gone = [
            (("offset", group, t, p), None)
            for group, committed in sorted(self.offsets.items())
            for t, p in sorted(committed)
            if t in topics
        ] + [
            (("share_initialized", group, t, p), None)
            for group, initialized in sorted(self.share_initialized.items())
            for t, p in sorted(initialized)
            if t in topics
        ]
        if gone:
            self.write(gone, lambda err: None)

    # ---- requests ------------------------------------------------------------------------------
    def handle(self, src: str, req: GroupRequest) -> None:
        if not self.refresh():
            return self.respond(src, req, Errors.NotCoordinatorError)
        if src in self.muted:
            # Kafka's SocketServer reads a connection's next request only once the one in progress
            # is answered: an OffsetFetch sent right behind an OffsetCommit (commit_async, then
            # committed()) is handled after the commit is written, and sees it (found by the
            # client differential, seed 854; the wire gateway already handles one at a time). A
            # coordinator that moves forgets it (reset): the connection closed
            return self.muted[src].append(req)
        self._ensure_checking()
        self.HANDLERS[type(req)](self, src, req)

    def _group(self, group_id: str) -> Group:
        group = self.groups.get(group_id)
        if group is None:
            group = self.groups[group_id] = Group(group_id)
        return group

    def _join_group(self, src: str, req: JoinGroupRequest) -> None:
        group, member_id, client_id, topics = req.group, req.member_id, req.client_id, req.topics
        session_timeout_ms, rebalance_timeout_ms = req.session_timeout_ms, req.rebalance_timeout_ms
        group_instance_id = req.group_instance_id
        refused = kip848.refuse_classic_join(self, group)
        if refused is not None:
            return self.respond(src, req, refused)
        self._expire_offsets(group)
        g = self._group(group)
        now = self.broker.sim.now
        if member_id in g.fenced:
            return self.respond(src, req, Errors.FencedInstanceIdError)
        if member_id and member_id not in g.members:
            return self.respond(src, req, Errors.UnknownMemberIdError)
        if not member_id:
            g.next_member += 1
            member_id = f"{client_id}-{g.next_member}"
            old = g.members.get(g.static.get(group_instance_id)) if group_instance_id is not None else None
            if old is not None and self._replace_static(g, old, member_id, client_id, tuple(topics), src, req):
                return
            if old is None:
                g.members[member_id] = Member(
                    member_id,
                    client_id,
                    tuple(topics),
                    session_timeout_ms,
                    now,
                    rebalance_timeout_ms or session_timeout_ms,
                    group_instance_id,
                )
                if group_instance_id is not None:
                    g.static[group_instance_id] = member_id
        member = g.members[member_id]
        member.topics, member.last_heartbeat_ms = tuple(topics), now
        if rebalance_timeout_ms is not None:
            member.rebalance_timeout_ms = rebalance_timeout_ms
        g.joining[member_id] = (src, req)
        if g.state != "PreparingRebalance":
            self._prepare_rebalance(g, now)
        self._maybe_complete_rebalance(g)

    def _replace_static(self, g: Group, old: Member, member_id: str, client_id: str, topics: tuple, src, req) -> bool:
        """A static member came back (a restart): the new member id replaces the old one, which
        is fenced. In a stable group with the same subscription it gets its old partitions back at
        once, without a rebalance (Kafka's GroupCoordinator.updateStaticMemberAndRebalance).
        Returns True when answered."""
        del g.members[old.member_id]
        g.joining.pop(old.member_id, None)
        g.fenced.add(old.member_id)
        old.member_id, old.client, old.last_heartbeat_ms = member_id, client_id, self.broker.sim.now
        g.members[member_id] = old
        g.static[old.instance_id] = member_id
        self.broker.cluster.record(
            f"coordinator-{self.broker.broker_id}",
            "static_member_replaced",
            {"group": g.group_id, "instance": old.instance_id, "member": member_id},
        )
        if g.state != "Stable" or old.topics != topics:
            old.topics = topics
            return False
        self._join_answer(src, req, g, member_id)
        return True

    def _join_answer(self, src: str, req, g: Group, member_id: str) -> None:
        """The JoinGroup answer of a member of ``g``'s generation: its assignment and the members."""
        self.respond(
            src,
            req,
            None,
            {
                "member_id": member_id,
                "generation": g.generation,
                "assignment": list(g.members[member_id].assignment),
                "members": sorted(g.members),
            },
        )

    def _prepare_rebalance(self, g: Group, now: float) -> None:
        g.state = "PreparingRebalance"
        # a new group waits group.initial.rebalance.delay.ms for more members; later rebalances wait
        # for every known member to rejoin, at most the rebalance timeout (the members' largest
        # max.poll.interval.ms - Kafka's classic protocol), not the session timeout
        g.rebalance_deadline_ms = now + (
            self.broker.options.group_initial_rebalance_delay_ms
            if g.generation == 0
            else max(m.rebalance_timeout_ms for m in g.members.values())
        )
        self.broker.schedule_timer(g.rebalance_deadline_ms - now, self._rebalance_deadline, g.group_id)

    def _rebalance_deadline(self, group_id: str) -> None:
        g = self.groups.get(group_id)
        if g is None or g.state != "PreparingRebalance" or self.broker.sim.now < g.rebalance_deadline_ms:
            return
        for member_id in [m for m in g.members if m not in g.joining]:
            member = g.members.pop(member_id)  # did not rejoin in time
            if member.instance_id is not None:
                g.static.pop(member.instance_id, None)
            self.broker.cluster.record(
                f"coordinator-{self.broker.broker_id}",
                "member_removed",
                {
                    "group": g.group_id,
                    "member": member_id,
                    "reason": f"did not rejoin within the rebalance timeout ({member.rebalance_timeout_ms:g} ms)",
                },
            )
        self._maybe_complete_rebalance(g, deadline_passed=True)

    def _maybe_complete_rebalance(self, g: Group, deadline_passed: bool = False) -> None:
        if g.state != "PreparingRebalance":
            return
        all_in = set(g.joining) >= set(g.members)
        initial_wait = g.generation == 0 and self.broker.sim.now < g.rebalance_deadline_ms
        if not all_in or (initial_wait and not deadline_passed):
            return
        g.generation += 1
        g.state = "Stable" if g.members else "Empty"
        g.empty_since_ms = None if g.members else self.broker.sim.now
        self._assign(g)
        joining, g.joining = g.joining, {}
        for member_id, (src, req) in joining.items():
            if member_id in g.members:
                m = g.members[member_id]
                m.last_heartbeat_ms = self.broker.sim.now  # Kafka restarts the session clock on the join answer
                self._join_answer(src, req, g, member_id)
        self.broker.cluster.record(
            f"coordinator-{self.broker.broker_id}",
            "rebalance",
            {
                "group": g.group_id,
                "generation": g.generation,
                "assignment": {m: [list(tp) for tp in mem.assignment] for m, mem in sorted(g.members.items())},
            },
        )

    def _assign(self, g: Group) -> None:
        """Range assignor: per topic, consecutive partitions to members in member-id order."""
        for m in g.members.values():
            m.assignment = []
        topics = sorted({t for m in g.members.values() for t in m.topics})
        for topic in topics:
            config = self.broker.topic_configs.get(topic)
            if config is None:
                continue
            members = sorted(m for m, mem in g.members.items() if topic in mem.topics)
            n, k = config.partitions, len(members)
            start = 0
            for i, member_id in enumerate(members):
                count = n // k + (1 if i < n % k else 0)
                g.members[member_id].assignment += [(topic, p) for p in range(start, start + count)]
                start += count

    def _heartbeat(self, src: str, req: HeartbeatRequest) -> None:
        member_id = req.member_id
        g = self.groups.get(req.group)
        if g is not None and member_id in g.fenced:
            return self.respond(src, req, Errors.FencedInstanceIdError)
        if g is None or member_id not in g.members:
            return self.respond(src, req, Errors.UnknownMemberIdError)
        g.members[member_id].last_heartbeat_ms = self.broker.sim.now
        if g.state == "PreparingRebalance":
            return self.respond(src, req, Errors.RebalanceInProgressError)
        if req.generation != g.generation:
            return self.respond(src, req, Errors.IllegalGenerationError)
        self.respond(src, req)

    def _leave_group(self, src: str, req: LeaveGroupRequest) -> None:
        g = self.groups.get(req.group)
        if g is not None and req.member_id in g.members:
            self._remove(g, req.member_id, "left the group")
        self.respond(src, req)

    def _remove(self, g: Group, member_id: str, reason: str) -> None:
        member = g.members.pop(member_id)
        if member.instance_id is not None:
            g.static.pop(member.instance_id, None)
        g.joining.pop(member_id, None)
        self.broker.cluster.record(
            f"coordinator-{self.broker.broker_id}",
            "member_removed",
            {"group": g.group_id, "member": member_id, "reason": reason},
        )
        if g.members:
            if g.state != "PreparingRebalance":
                self._prepare_rebalance(g, self.broker.sim.now)
            self._maybe_complete_rebalance(g)
        else:
            g.state = "Empty"
            g.generation += 1
            g.empty_since_ms = self.broker.sim.now

    def _check_sessions(self) -> bool:
        """Remove members whose heartbeats stopped (a crashed or frozen consumer)."""
        if self.partition() is None:
            return False
        now = self.broker.sim.now
        for g in list(self.groups.values()):
            for member_id, m in sorted(g.members.items()):
                if now - m.last_heartbeat_ms > m.session_timeout_ms and member_id not in g.joining:
                    self._remove(g, member_id, f"no heartbeat for {m.session_timeout_ms:g} ms")
        return True

    def _check_generation(self, group: str, member_id: str, generation: int, transactional: bool = False):
        handled, error = kip848.validate_commit(self, group, member_id, generation)
        if handled:
            return error
        g = self.groups.get(group)
        if g is None or not g.members:
            return None if generation < 0 else Errors.IllegalGenerationError  # a standalone consumer
        if transactional and generation < 0 and not member_id:
            # ClassicGroup.validateOffsetCommit: a transactional commit that names no member and
            # no generation is not checked against the members - TxnOffsetCommit below v3 has
            # neither field (aiokafka's consume-transform-produce loop sends v0)
            return None
        if member_id in g.fenced:
            return Errors.FencedInstanceIdError
        if member_id not in g.members:
            return Errors.UnknownMemberIdError
        # no RebalanceInProgress check: Kafka accepts a commit of the current generation while the
        # group is PreparingRebalance (ClassicGroup.validateOffsetCommit refuses only while
        # CompletingRebalance, a state this one-round-trip join does not have) - that window is
        # where a member commits on revocation before rejoining
        if generation != g.generation:
            return Errors.IllegalGenerationError
        return None

    def _offset_commit(self, src: str, req: OffsetCommitRequest) -> None:
        error = self._check_generation(req.group, req.member_id, req.generation)
        if error is not None:
            return self.respond(src, req, error)
        records = [(("offset", req.group, t, p), o) for (t, p), o in sorted(req.offsets.items())]
        self.muted[src] = []
        self.write(records, lambda err: self._committed(src, req, err and Errors.CoordinatorNotAvailableError))

    def _committed(self, src: str, req: OffsetCommitRequest, error) -> None:
        """Answer an offset commit; then the requests its client sent meanwhile, in order."""
        self.respond(src, req, error)
        for queued in self.muted.pop(src, ()):
            self.handle(src, queued)

    def _txn_offset_commit(self, src: str, req: TxnOffsetCommitRequest) -> None:
        error = self._check_generation(req.group, req.member_id, req.generation, transactional=True)
        if error is not None:
            return self.respond(src, req, error)
        if req.transaction_version >= 2:
            # TxnOffsetCommit v5 (KIP-890): no AddOffsetsToTxn came first - the offsets partition
            # joins the transaction now, with the producer's current epoch only
            def added(err) -> None:
                if err is not None:
                    return self.respond(src, req, err)
                self._write_txn_offsets(src, req)

            self.broker.verifier.add_then(
                req.transactional_id, req.producer_id, req.producer_epoch, [self.tp], 30_000, added
            )
            return
        self._write_txn_offsets(src, req)

    def _write_txn_offsets(self, src: str, req: TxnOffsetCommitRequest) -> None:
        records = [(("offset", req.group, t, p), o) for (t, p), o in sorted(req.offsets.items())]
        self.write(
            records,
            # a zombie's commit (its epoch is older than the offsets partition's producer state)
            # gets INVALID_PRODUCER_EPOCH, as from Kafka 4.3.1 for TxnOffsetCommit v0 and v3
            # (tests/real/test_confluent_txn_offsets.py); other write failures are retriable
            lambda err: self.respond(
                src, req, err and (err if err in _FENCED else Errors.CoordinatorNotAvailableError)
            ),
            req.producer_id,
            req.producer_epoch,
            transactional=True,
        )

    def _expire_offsets(self, group: str) -> None:
        """KIP-211: an empty group's offsets expire offsets.retention.minutes after it emptied."""
        g = self.groups.get(group)
        committed = self.offsets.get(group)
        if g is None or g.members or g.empty_since_ms is None or not committed:
            return
        retention_ms = self.broker.options.offsets_retention_minutes * 60_000
        if self.broker.sim.now - g.empty_since_ms < retention_ms:
            return
        expired = sorted(committed)
        self.offsets[group] = {}
        self.write([(("offset", group, t, p), None) for t, p in expired], lambda err: None)
        self.broker.cluster.record(
            f"coordinator-{self.broker.broker_id}",
            "offsets_expired",
            {
                "group": group,
                "partitions": [list(tp) for tp in expired],
                "empty_for_ms": round(self.broker.sim.now - g.empty_since_ms),
            },
        )

    def _offset_fetch(self, src: str, req: OffsetFetchRequest) -> None:
        self._expire_offsets(req.group)
        committed = self.offsets.get(req.group, {})
        self.respond(src, req, None, {tuple(tp): committed.get(tuple(tp), -1) for tp in req.partitions})

    #: request class -> its handler (the broker sends this coordinator every class named here)
    HANDLERS: ClassVar[dict[type, Callable[[Any, str, Any], None]]] = {
        JoinGroupRequest: _join_group,
        HeartbeatRequest: _heartbeat,
        LeaveGroupRequest: _leave_group,
        OffsetCommitRequest: _offset_commit,
        OffsetFetchRequest: _offset_fetch,
        TxnOffsetCommitRequest: _txn_offset_commit,
        ConsumerGroupHeartbeatRequest: kip848.consumer_group_heartbeat,
        ConsumerGroupDescribeRequest: kip848.consumer_group_describe,
    }
