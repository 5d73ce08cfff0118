"""Invariants of KIP-848 consumer groups, checked after *every* event next to the replication
invariants (:mod:`.invariants`):

1. ``member_epoch_grows``: a member's epoch never goes back (a member removed and joining again
   with its id gets the group's newer epoch; a static member away at epoch -2 comes back at the
   group's current epoch);
2. ``single_owner``: no partition is owned - assigned, or pending revocation - by two members of
   one consumer group at once (Kafka's ``ConsumerGroup.addPartitionEpochs`` refuses it too), and
   the group's partition-epoch index says the same as its members.

The coordinator keeps groups in memory: a coordinator elected elsewhere starts from nothing, so
epochs are tracked per coordinator incarnation (broker, coordinator partition leader epoch).

>>> from course_lib.broker.consumer_group import ConsumerGroup, Heartbeat
>>> g = ConsumerGroup("g", {"t": 2}.get)
>>> checker = ConsumerGroupInvariants()
>>> _ = g.heartbeat(0, Heartbeat("a", 0, topics=("t",), owned=()))
>>> checker.check_group(g); checker.checks
1
"""

from __future__ import annotations

from .consumer_group import STATIC_LEAVE_EPOCH
from .invariants import InvariantViolation


class ConsumerGroupInvariants:
    def __init__(self, cluster=None):
        self.cluster = cluster
        self.checks = 0
        #: (where, group, member id) -> the highest member epoch seen
        self._epochs: dict[tuple, int] = {}

    @classmethod
    def attach(cls, cluster) -> ConsumerGroupInvariants:
        checker = cls(cluster)
        cluster.sim.observers.append(checker.check)
        return checker

    def check(self) -> None:
        """Every live coordinator's consumer groups (the observer of :meth:`attach`)."""
        for broker in self.cluster.brokers.values():
            partition = broker.groups.partition() if broker.alive else None
            if partition is None:
                continue
            for group in broker.groups.consumer_groups.values():
                self.check_group(group, (broker.broker_id, partition.leader_epoch))

    def check_group(self, group, where: tuple = ()) -> None:
        self.checks += 1
        owners: dict = {}
        for member_id, member in sorted(group.members.items()):
            key = (where, group.group_id, member_id)
            seen = self._epochs.get(key, -1)
            if member.member_epoch == STATIC_LEAVE_EPOCH:
                pass  # a static member's temporary leave: not an epoch it reconciled to
            elif member.member_epoch < seen:
                self._fail(
                    "member_epoch_grows", f"{group.group_id}/{member_id} at epoch {member.member_epoch} after {seen}"
                )
            else:
                self._epochs[key] = member.member_epoch
            for tp in sorted(member.owned()):
                if tp in owners:
                    self._fail(
                        "single_owner",
                        f"{group.group_id}: {tp[0]}-{tp[1]} owned by {owners[tp]} and {member_id}",
                    )
                owners[tp] = member_id
        if owners != group.owners:
            self._fail("single_owner", f"{group.group_id}: partition index {group.owners} != members' {owners}")

    def _fail(self, name: str, detail: str) -> None:
        when = f" at t={self.cluster.now:g} ms (seed={self.cluster.seed})" if self.cluster is not None else ""
        raise InvariantViolation(f"invariant {name} broken{when}: {detail}")
