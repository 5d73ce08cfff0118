"""Kafka's replication invariants, checked after *every* event of the simulation.

Attach a checker to a cluster and any event that breaks one of them raises
:class:`InvariantViolation` at once, naming the invariant, the partition, the virtual time and
the cluster's seed - the step that broke it, not a symptom found at the end:

>>> from course_lib.broker import Cluster
>>> cluster = Cluster(brokers=3, seed=4)
>>> checker = ReplicationInvariants.attach(cluster)
>>> cluster.create_topic("t", replication_factor=3, min_insync_replicas=2)
>>> cluster.crash(1)
>>> cluster.run_for(12_000)
>>> checker.checks > 0, checker.clean_elections
(True, 1)

The invariants (after Kafka's TLA+ specifications of replication and KIP-966):

1. ``leader_in_isr``: a partition's leader is in its ISR; the ISR and the ELR are disjoint, hold
   only assigned replicas, and the ELR is empty whenever the ISR reaches the effective min ISR.
   Without ELR the ISR is never empty.
2. ``hw_within_isr``: the leader's high watermark never exceeds the log end offset of any ISR
   member (the leader's own view of it and the member's real log), and no replica's HW exceeds
   its own LEO.
3. ``hw_frozen_under_min_isr``: the leader's HW does not advance while the ISR is smaller than
   the effective min ISR (KAFKA-15583).
4. ``committed_kept``: every record that was ever below a leader's HW is in the log of every
   later leader chosen by a clean election, at the same offset (unclean elections reset what
   counts as committed: losing it is what they allow).
5. ``follower_matches_leader``: a follower whose fetch the current leader has accepted holds no
   record beyond the leader's end offset for that record's epoch: its log matches the leader's,
   epoch for epoch, up to its LEO.
6. ``epochs_ordered``: every replica's leader-epoch cache is strictly increasing in epoch and
   non-decreasing in start offset.
7. ``deleted_replicas_gone``: a live broker that has applied the controller's latest metadata
   holds no replica of a deleted topic (nor of an earlier topic of the same name).

A topic is known by its id: one deleted and created again under the same name is a new topic
whose committed records start again from nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import pairwise


class InvariantViolation(AssertionError):
    """An invariant failed; the message says which, where, when and with which seed."""


@dataclass
class _Committed:
    """What counts as committed in one partition: the records below the highest HW seen."""

    records: list = field(default_factory=list)  # offset -> (leader epoch, producer id, values)
    leader: tuple | None = None  # (broker, leader epoch) whose log was last verified in full


class ReplicationInvariants:
    def __init__(self, cluster):
        self.cluster = cluster
        self.checks = 0
        self.clean_elections = 0
        self._committed: dict[tuple, _Committed] = {}  # (tp, topic id) -> what is committed
        self._hw_seen: dict[tuple, tuple] = {}  # (tp, topic id, broker) -> (leader epoch, hw)
        self._unclean_seen = 0

    @classmethod
    def attach(cls, cluster) -> ReplicationInvariants:
        checker = cls(cluster)
        cluster.sim.observers.append(checker.check)
        return checker

    # ---- the check ----------------------------------------------------------------------------
    def check(self) -> None:
        self.checks += 1
        controller = self.cluster.controller
        for tp, state in controller.partitions.items():
            self._check_metadata(tp, state)
            for broker_id in state.replicas:
                broker = self.cluster.brokers[broker_id]
                replica = broker.partitions.get(tp)
                if replica is not None:
                    self._check_replica(tp, replica)
            leader = self._live_leader(tp, state)
            if leader is not None:
                self._check_leader(tp, state, leader)
        if controller.topics_deleted:  # (nothing to look for otherwise: the check runs after every event)
            self._check_deleted(controller)

    def _check_deleted(self, controller) -> None:
        for broker in self.cluster.brokers.values():
            if not broker.alive or broker.metadata_version != controller.metadata_version:
                continue  # the latest decisions have not reached it (yet)
            for tp, replica in broker.partitions.items():
                state = controller.partitions.get(tp)
                if state is None or state.topic_id != replica.topic_id:
                    self._fail(
                        "deleted_replicas_gone",
                        tp,
                        f"broker {broker.broker_id} still holds a replica of deleted topic id {replica.topic_id}",
                    )

    def _fail(self, name: str, tp, detail: str) -> None:
        raise InvariantViolation(
            f"invariant {name} broken for {tp[0]}-{tp[1]} at t={self.cluster.now:g} ms "
            f"(seed={self.cluster.seed}): {detail}"
        )

    def _live_leader(self, tp, state):
        if state.leader is None:
            return None
        broker = self.cluster.brokers[state.leader]
        replica = broker.partitions.get(tp)
        if (
            not broker.alive
            or replica is None
            or replica.topic_id != state.topic_id  # a cut-off broker's replica of a deleted topic
            or not replica.is_leader
            or replica.leader_epoch != state.leader_epoch
        ):
            return None  # the decision has not reached the new leader yet
        return replica

    def _check_metadata(self, tp, state) -> None:
        controller = self.cluster.controller
        if state.leader is not None and state.leader not in state.isr:
            self._fail("leader_in_isr", tp, f"leader {state.leader} not in ISR {list(state.isr)}")
        if set(state.isr) & set(state.elr):
            self._fail("leader_in_isr", tp, f"ISR {list(state.isr)} and ELR {list(state.elr)} overlap")
        if not set(state.isr) | set(state.elr) <= set(state.replicas):
            self._fail("leader_in_isr", tp, f"ISR/ELR outside the replicas {list(state.replicas)}")
        if controller.options.eligible_leader_replicas_enable:
            if state.elr and len(state.isr) >= controller.effective_min_isr(tp, state):
                self._fail("leader_in_isr", tp, f"ELR {list(state.elr)} kept with ISR {list(state.isr)} at min ISR")
        elif not state.isr:
            self._fail("leader_in_isr", tp, "empty ISR without ELR")

    def _check_replica(self, tp, replica) -> None:
        log = replica.log
        if log.hw > log.leo:
            self._fail("hw_within_isr", tp, f"broker {replica.me}: HW {log.hw} > its LEO {log.leo}")
        epochs = log.epochs
        for (e1, s1), (e2, s2) in pairwise(epochs):
            if not (e1 < e2 and s1 <= s2):
                self._fail("epochs_ordered", tp, f"broker {replica.me}: epoch cache {epochs}")

    def _check_leader(self, tp, state, leader) -> None:
        log = leader.log
        brokers = self.cluster.brokers
        for r in leader.isr:
            if r == leader.me:
                continue
            seen = leader.followers.get(r)
            follower = brokers[r].partitions.get(tp)
            if seen is not None and seen.leo >= 0 and seen.leo < log.hw:
                self._fail("hw_within_isr", tp, f"HW {log.hw} > LEO {seen.leo} the leader knows for ISR member {r}")
            if follower is not None and follower.log.leo < log.hw:
                self._fail("hw_within_isr", tp, f"HW {log.hw} > LEO {follower.log.leo} of ISR member {r}")
        key = (tp, state.topic_id, leader.me)
        epoch_hw = (leader.leader_epoch, log.hw)
        before = self._hw_seen.get(key)
        min_isr = self.cluster.controller.effective_min_isr(tp, state)  # computed here, not by the leader
        if before is not None and before[0] == epoch_hw[0] and log.hw > before[1] and len(leader.isr) < min_isr:
            self._fail(
                "hw_frozen_under_min_isr",
                tp,
                f"HW {before[1]} -> {log.hw} with ISR {list(leader.isr)} < min ISR {min_isr}",
            )
        self._hw_seen[key] = epoch_hw
        self._check_committed(tp, state.topic_id, leader)
        self._check_followers(tp, leader)

    def _check_committed(self, tp, topic_id: int, leader) -> None:
        committed = self._committed.setdefault((tp, topic_id), _Committed())
        unclean = self.cluster.controller.unclean_elections
        if unclean != self._unclean_seen:
            # an unclean election happened: what it dropped was allowed to go; start again from
            # what the new leaders hold
            self._unclean_seen = unclean
            for c in self._committed.values():
                c.records, c.leader = [], None
        log = leader.log
        who = (leader.me, leader.leader_epoch)
        if committed.leader != who:  # a new leader: it must hold everything committed so far
            if committed.leader is not None and committed.leader[0] != leader.me:
                self.clean_elections += 1
            end = min(len(committed.records), log.leo)
            if log.leo < len(committed.records) or _records(log, 0, end) != committed.records[:end]:
                self._fail(
                    "committed_kept",
                    tp,
                    f"leader {leader.me} (epoch {leader.leader_epoch}, LEO {log.leo}) lacks records "
                    f"committed before (committed up to offset {len(committed.records)})",
                )
            committed.leader = who
        if log.hw > len(committed.records):
            committed.records.extend(_records(log, len(committed.records), log.hw))

    def _check_followers(self, tp, leader) -> None:
        brokers = self.cluster.brokers
        for r, seen in leader.followers.items():
            follower = brokers[r].partitions.get(tp)
            if (
                seen.leo < 0
                or follower is None
                or follower.topic_id != leader.topic_id
                or not brokers[r].alive
                or follower.is_leader
                or follower.leader_epoch != leader.leader_epoch
            ):
                continue  # not (yet) accepted by this leader
            flog, llog = follower.log, leader.log
            upto = min(flog.leo, llog.leo)
            for offset in sorted({s for _, s in flog.epochs} | {s for _, s in llog.epochs}):
                if offset >= upto:
                    break
                if _epoch_at(flog.epochs, offset) != _epoch_at(llog.epochs, offset):
                    self._fail(
                        "follower_matches_leader",
                        tp,
                        f"follower {r} has epoch {_epoch_at(flog.epochs, offset)} at offset {offset}, "
                        f"leader {leader.me} has {_epoch_at(llog.epochs, offset)}",
                    )
            if flog.leo > llog.leo:
                self._fail(
                    "follower_matches_leader",
                    tp,
                    f"follower {r} LEO {flog.leo} beyond leader {leader.me} LEO {llog.leo}",
                )


def _epoch_at(epochs: list, offset: int) -> int:
    epoch = -1
    for e, start in epochs:
        if start > offset:
            break
        epoch = e
    return epoch


def _records(log, start: int, end: int) -> list:
    """One entry per offset in ``[start, end)``: transaction markers too, since they take offsets
    (``log.records`` skips them, which would shift every later record's place)."""
    out = []
    for stored in log.read(start, below=end):
        batch = stored.batch
        for i, record in enumerate(batch.records):
            if start <= stored.base_offset + i < end:
                out.append((stored.leader_epoch, batch.producer_id, batch.control or record.value))
    return out
