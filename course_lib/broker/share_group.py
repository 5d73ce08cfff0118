"""Share group membership and assignment: the group coordinator's share-group part
(``GroupMetadataManager.shareGroupHeartbeat``, KIP-932).

- A member joins with a ShareGroupHeartbeat of epoch 0 and its subscription; it heartbeats
  every ``group.share.heartbeat.interval.ms`` (5 s) and is removed after
  ``group.share.session.timeout.ms`` (45 s) of silence; epoch -1 leaves.
- **Epochs** (measured on Kafka 4.3.1, tests/real/test_share_groups_real.py). A new group starts
  at epoch 1 (:data:`~.consumer_group.INITIAL_EPOCH`, as consumer groups since KAFKA-20268), so
  its first member joins at epoch 2. Every change of membership or subscription bumps the group
  epoch and recomputes the assignment at once, server-side.
- **Share-partition initialization.** Only partitions whose share-partition state the group has
  *initialized* are assigned. The first join to a topic finds none: the member gets epoch 2 and
  nothing; the coordinator then initializes them (Kafka: InitializeShareGroupState to the share
  coordinator, then a ShareGroupStatePartitionMetadata record in ``__consumer_offsets``; here
  that record alone) and bumps the epoch again, so the member gets its partitions - and epoch
  3 - at its next heartbeat, up to ``group.share.heartbeat.interval.ms`` later. The record
  survives a coordinator failover; a second member, a rejoin, a new group member need nothing
  initialized. (Kafka 4.3.1 also batches assignments, ``group.share.assignment.interval.ms``
  1 s, so a member joining right after another briefly sees the previous epoch with nothing;
  the simulator assigns at every change, as it does for consumer groups.)
- Partitions may be *shared*: there is no revocation to wait for, because a partition's records
  are handed out one by one under locks, never owned. With more members than partitions every
  member still gets a partition (Kafka's ``SimpleAssignor`` spreads the members over the
  partitions); with fewer, the partitions are dealt round-robin.
- Membership is kept in memory, like the consumer groups of :mod:`.group_coordinator`: after a
  coordinator failover the members rejoin (with the member ids they generated, so the records
  they hold stay theirs).

The coordinator of a share group is the one of a consumer group of the same name: the leader of
``__consumer_offsets``. Nothing here runs, and nothing is scheduled, until a share group exists.

Taught in notebooks/05c_share_groups.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, ClassVar

from kafka import errors as Errors

from .consumer_group import INITIAL_EPOCH
from . import share_group_offsets
from .session_sweep import SessionSweep
from .protocol import (
    AlterShareGroupOffsetsRequest,
    DeleteShareGroupOffsetsRequest,
    ShareGroupDescribeRequest,
    ShareGroupHeartbeatRequest,
)


@dataclass
class ShareMember:
    member_id: str
    client_id: str
    topics: tuple
    last_heartbeat_ms: float
    epoch: int = 0
    assignment: list = field(default_factory=list)


@dataclass
class ShareGroup:
    group_id: str
    epoch: int = INITIAL_EPOCH
    members: dict = field(default_factory=dict)
    #: partitions whose initialization is being written (not asked for again meanwhile)
    initializing: set = field(default_factory=set)


def assign(members: list[str], partitions: list[tuple]) -> dict[str, list[tuple]]:
    """Every member gets at least one partition when there is one; each partition goes to at
    least one member.

    >>> assign(["a", "b", "c"], [("t", 0)])
    {'a': [('t', 0)], 'b': [('t', 0)], 'c': [('t', 0)]}
    >>> assign(["a", "b"], [("t", 0), ("t", 1), ("t", 2)])
    {'a': [('t', 0), ('t', 2)], 'b': [('t', 1)]}
    """
    out: dict[str, list[tuple]] = {m: [] for m in members}
    if not members or not partitions:
        return out
    for i in range(max(len(members), len(partitions))):
        member, tp = members[i % len(members)], partitions[i % len(partitions)]
        if tp not in out[member]:
            out[member].append(tp)
    return {m: sorted(tps) for m, tps in out.items()}


class ShareGroupCoordinator(SessionSweep):
    def __init__(self, broker):
        self.broker = broker
        self.groups: dict[str, ShareGroup] = {}
        self._epoch = None

    def handle(self, src: str, req) -> None:
        groups = self.broker.groups
        if self.broker.options.share_version < 1:  # share groups not enabled (``share.version`` 0)
            return groups.respond(src, req, Errors.UnsupportedVersionError)
        if not groups.refresh():
            return groups.respond(src, req, Errors.NotCoordinatorError)
        epoch = groups.partition().leader_epoch
        if epoch != self._epoch:  # a new coordinator term: membership starts again
            self._epoch, self.groups = epoch, {}
        self.HANDLERS[type(req)](self, src, req)

    def settings(self, group: str):
        return self.broker.shares.settings(group)

    def group(self, name: str) -> ShareGroup:
        """The share group of that name, created if new."""
        return self.groups.setdefault(name, ShareGroup(name))

    def _heartbeat(self, src: str, req: ShareGroupHeartbeatRequest) -> None:
        g = self.group(req.group)
        now = self.broker.sim.now
        member = g.members.get(req.member_id)
        if req.member_epoch == -1:
            if member is not None:
                self._remove(g, req.member_id, "left the group")
            return self.broker.groups.respond(src, req, None, {"member_id": req.member_id, "member_epoch": -1})
        if member is None:
            if req.member_epoch != 0:
                return self.broker.groups.respond(src, req, Errors.UnknownMemberIdError)
            member = g.members[req.member_id] = ShareMember(req.member_id, req.client_id, tuple(req.topics or ()), now)
            self._rebalance(g, f"{req.member_id} joined")
        elif req.topics is not None and tuple(req.topics) != member.topics:
            member.topics = tuple(req.topics)
            self._rebalance(g, f"{req.member_id} changed its subscription")
        member.last_heartbeat_ms = now
        self._maybe_initialize(g)
        self._ensure_checking()
        self.broker.groups.respond(
            src,
            req,
            None,
            {
                "member_id": member.member_id,
                "member_epoch": member.epoch,
                "assignment": list(member.assignment),
                "heartbeat_interval_ms": self.settings(req.group).heartbeat_interval_ms,
            },
        )

    def _subscribed(self, g: ShareGroup) -> dict[str, list[tuple]]:
        """topic -> its partitions, for every existing topic a member subscribes to."""
        out = {}
        for topic in sorted({t for m in g.members.values() for t in m.topics}):
            config = self.broker.topic_configs.get(topic)
            if config is not None:
                out[topic] = [(topic, p) for p in range(config.partitions)]
        return out

    def _initialized(self, group: str) -> set:
        return self.broker.groups.share_initialized.get(group, set())

    def _maybe_initialize(self, g: ShareGroup) -> None:
        """Initialize the subscribed partitions not yet initialized; once written, bump the
        epoch so that the next heartbeats hand them out."""
        done = self._initialized(g.group_id)
        wanted = [tp for tps in self._subscribed(g).values() for tp in tps if tp not in done | g.initializing]
        if not wanted:
            return
        g.initializing.update(wanted)
        term = self._epoch

        def written(error) -> None:
            g.initializing.difference_update(wanted)
            # a failed write is asked for again at the next heartbeat; a new term has new groups
            if error is None and term == self._epoch and self.groups.get(g.group_id) is g:
                self._rebalance(g, f"share-partitions initialized: {sorted(wanted)}")

        records = [(("share_initialized", g.group_id, t, p), True) for t, p in wanted]
        self.broker.groups.write(records, written)

    def _rebalance(self, g: ShareGroup, why: str) -> None:
        g.epoch += 1
        for m in g.members.values():
            m.assignment = []
        initialized = self._initialized(g.group_id)
        for topic, tps in self._subscribed(g).items():
            subscribed = sorted(m for m, mem in g.members.items() if topic in mem.topics)
            for member_id, got in assign(subscribed, [tp for tp in tps if tp in initialized]).items():
                g.members[member_id].assignment += got
        for m in g.members.values():
            m.epoch = g.epoch
        self.broker.cluster.record(
            f"coordinator-{self.broker.broker_id}",
            "share_assignment",
            {
                "group": g.group_id,
                "epoch": g.epoch,
                "why": why,
                "assignment": {m: [list(tp) for tp in mem.assignment] for m, mem in sorted(g.members.items())},
            },
        )

    def _remove(self, g: ShareGroup, member_id: str, reason: str) -> None:
        del g.members[member_id]
        self.broker.cluster.record(
            f"coordinator-{self.broker.broker_id}",
            "member_removed",
            {"group": g.group_id, "member": member_id, "reason": reason},
        )
        self._rebalance(g, f"{member_id} {reason}")

    def _check_sessions(self) -> bool:
        if self.broker.groups.partition() is None:
            return False
        now = self.broker.sim.now
        for g in list(self.groups.values()):
            timeout = self.settings(g.group_id).session_timeout_ms
            for member_id, m in sorted(g.members.items()):
                if now - m.last_heartbeat_ms > timeout:
                    self._remove(g, member_id, f"no heartbeat for {timeout:g} ms")
        return True

    def _describe(self, src: str, req: ShareGroupDescribeRequest) -> None:
        g = self.groups.get(req.group)
        if g is None:
            return self.broker.groups.respond(src, req, Errors.GroupIdNotFoundError)
        self.broker.groups.respond(
            src,
            req,
            None,
            {
                "group_epoch": g.epoch,
                "state": "Stable" if g.members else "Empty",
                "members": {
                    m: {"client_id": mem.client_id, "topics": list(mem.topics), "assignment": list(mem.assignment)}
                    for m, mem in sorted(g.members.items())
                },
            },
        )

    #: request class -> its handler (the broker hands this coordinator every class named here)
    HANDLERS: ClassVar[dict[type, Callable[[Any, str, Any], None]]] = {
        ShareGroupHeartbeatRequest: _heartbeat,
        ShareGroupDescribeRequest: _describe,
        AlterShareGroupOffsetsRequest: share_group_offsets.alter,
        DeleteShareGroupOffsetsRequest: share_group_offsets.delete,
    }
