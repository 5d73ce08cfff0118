"""Share-group invariants, checked after *every* event of the simulation (like
:mod:`.invariants` for replication): a broken one raises :class:`InvariantViolation` at the step
that broke it, with the seed.

>>> from course_lib.broker import Cluster
>>> cluster = Cluster(brokers=3, seed=4)
>>> checker = ShareInvariants.attach(cluster)
>>> cluster.create_topic("t")
>>> cluster.run_for(100)
>>> checker.checks > 0
True

The invariants (KIP-932's promises, on the simulator's state):

1. ``single_holder``: a record is never acquired by two members at once - no two current
   share-partitions (leaders that believe they lead) hold it, and a share-partition never hands
   a record held under a live lock to another member without it being released first.
2. ``lock_honoured``: a record acquired on a running leader is released when its lock runs out
   (never held past its deadline).
3. ``delivery_count_monotonic``: a record's delivery count never decreases while one leader
   keeps it, and no leader counts it below what the share coordinator has persisted.
4. ``acknowledged_final``: a record whose ACKNOWLEDGED or ARCHIVED state a leader has persisted
   (the share coordinator confirmed the write: the consumer was told its ACCEPT or REJECT
   succeeded) is never acquired again, on this leader or any later one - archived records stay
   archived across failover - and the persisted start offset never moves back.

5. ``dead_letter_of_archived`` (KIP-1191): a dead letter is begun only for a record its
   share-partition has archived (rejected, or over the delivery count limit) - never for one
   still available, acquired or acknowledged - and once per archiving.

"Persisted" for counts and start offsets means committed in ``__share_group_state`` (below its
high watermark), folded here independently of the share coordinator's own cache. (A write whose
answer was lost may be committed although its leader rolled it back, as Kafka's
``SharePartition`` does; the consumer was then told nothing - its acknowledgement's outcome is
unknown - so such a record may be delivered again.)
"""

from __future__ import annotations

from .invariants import InvariantViolation
from .share_coordinator import SHARE_STATE_TOPIC
from .share_partition import ACQUIRED, ARCHIVED, FINAL

__all__ = ["InvariantViolation", "ShareInvariants"]


class ShareInvariants:
    def __init__(self, cluster):
        self.cluster = cluster
        self.checks = 0
        self.acquisitions = 0
        self.failovers = 0
        #: (group, tp, offset) -> (share-partition id, member, lock, deadline) while acquired
        self._holders: dict[tuple, tuple] = {}
        #: (group, tp, offset) -> (share-partition id, delivery count) last seen
        self._counts: dict[tuple, tuple] = {}
        #: what is committed in __share_group_state, folded from the log
        self._persisted: dict[tuple, list] = {}  # (group, topic, partition) -> [start, {offset: (state, count)}]
        self._folded = (None, 0)  # (topic id of __share_group_state, records folded)
        self._terms: dict[tuple, set] = {}  # (group, tp) -> share-partition serials seen (leader terms)
        self._confirmed: set = set()  # (group, tp, offset) confirmed ACKNOWLEDGED/ARCHIVED
        self._writes_seen: dict[int, int] = {}
        #: share-partition serial -> (what it looked like, its soonest lock deadline, its holders)
        self._cache: dict[int, tuple] = {}
        self._fold_version = 0
        #: broker id -> dead letters of its writer checked so far; (share-partition serial, offset)s seen
        self._letters_seen: dict[int, int] = {}
        self._lettered: set[tuple] = set()

    @classmethod
    def attach(cls, cluster) -> ShareInvariants:
        checker = cls(cluster)
        cluster.sim.observers.append(checker.check)
        return checker

    def _fail(self, name: str, where, detail: str) -> None:
        raise InvariantViolation(
            f"share invariant {name} broken for {where} at t={self.cluster.now:g} ms (seed={self.cluster.seed}): {detail}"
        )

    # ---- the check ----------------------------------------------------------------------------
    def check(self) -> None:
        self.checks += 1
        self._check_dead_letters()
        current = self._current()
        if not current and not self._holders:
            return
        self._fold_persisted()
        now = self.cluster.now
        seen_holders: dict[tuple, tuple] = {}
        for key, (broker, sp) in current.items():
            group, tp = key
            terms = self._terms.setdefault(key, set())
            if sp.serial not in terms:
                terms.add(sp.serial)
                self.failovers += len(terms) > 1
            persisted = self._persisted.get((group, tp[0], tp[1]))
            if self._writes_seen.get(sp.serial) != sp.writes_confirmed:
                self._writes_seen[sp.serial] = sp.writes_confirmed
                for offset, (state, _) in sp.persisted.items():
                    if state in FINAL:
                        self._confirmed.add((group, tp, offset))
            # nothing changed since this share-partition was last checked and no lock ran out:
            # the same holders, nothing new to check (the checks below only depend on these)
            stamp = (sp.version, sp.writes_confirmed, self._fold_version, broker.paused)
            cached = self._cache.get(sp.serial)
            if cached is not None and cached[0] == stamp and now <= cached[1]:
                for rkey, holder in cached[2].items():
                    if rkey in seen_holders:
                        self._fail("single_holder", rkey, f"acquired by {seen_holders[rkey][1]} and {holder[1]}")
                    seen_holders[rkey] = holder
                continue
            mine: dict = {}
            for offset, r in sp.records.items():
                rkey = (group, tp, offset)
                self._check_count(rkey, sp, r.count, persisted)
                if r.state != ACQUIRED:
                    continue
                if rkey in self._confirmed or (persisted is not None and offset < persisted[0]):
                    self._fail(
                        "acknowledged_final",
                        rkey,
                        f"broker {broker.broker_id} acquired it for {r.member} although it was persisted as "
                        f"acknowledged or archived (or is below the start offset)",
                    )
                if not broker.paused and r.deadline < now - 1e-6:
                    self._fail("lock_honoured", rkey, f"held by {r.member} past its lock deadline {r.deadline:g}")
                holder = (sp.serial, r.member, r.lock, r.deadline)
                other = seen_holders.get(rkey)
                if other is not None:
                    self._fail("single_holder", rkey, f"acquired by {other[1]} and {r.member} on two leaders")
                seen_holders[rkey] = mine[rkey] = holder
                before = self._holders.get(rkey)
                if before is None or before[:3] != holder[:3]:
                    self.acquisitions += before is None or before[2] != holder[2]
                    if before is not None and before[0] == holder[0] and before[1] != r.member and before[3] > now:
                        self._fail(
                            "single_holder",
                            rkey,
                            f"{r.member} acquired it while {before[1]}'s lock ran until {before[3]:g}",
                        )
            soonest = min((h[3] for h in mine.values()), default=float("inf"))
            self._cache[sp.serial] = (stamp, soonest, mine)
        self._holders = seen_holders

    def _check_dead_letters(self) -> None:
        for broker_id, broker in self.cluster.brokers.items():
            begun = broker.shares.dead_letters.begun
            for sp, offset in begun[self._letters_seen.get(broker_id, 0) :]:
                r, key = sp.records.get(offset), (sp.group, sp.tp, offset)
                if r is not None and r.state != ARCHIVED:
                    self._fail("dead_letter_of_archived", key, f"a dead letter was begun for a record {r.state}")
                if (sp.serial, offset) in self._lettered:
                    self._fail("dead_letter_of_archived", key, "a second dead letter for one archiving")
                self._lettered.add((sp.serial, offset))
            self._letters_seen[broker_id] = len(begun)

    def _check_count(self, rkey, sp, count: int, persisted) -> None:
        before = self._counts.get(rkey)
        if before is not None and before[0] == sp.serial and count < before[1]:
            self._fail("delivery_count_monotonic", rkey, f"delivery count went from {before[1]} to {count}")
        if persisted is not None and count < persisted[1].get(rkey[2], (None, 0))[1] and sp.ready:
            self._fail(
                "delivery_count_monotonic",
                rkey,
                f"delivery count {count} below the persisted {persisted[1][rkey[2]][1]}",
            )
        self._counts[rkey] = (sp.serial, count)

    def _current(self) -> dict:
        """(group, tp) -> (broker, share-partition) for every share-partition whose broker runs
        and believes it leads the partition in the same epoch."""
        out = {}
        for broker in self.cluster.brokers.values():
            if not broker.alive or not broker.shares.partitions:
                continue
            for key, sp in broker.shares.partitions.items():
                if sp.ready and sp.current:
                    out[key] = (broker, sp)
        return out

    def _fold_persisted(self) -> None:
        controller = self.cluster.controller
        state = controller.partitions.get((SHARE_STATE_TOPIC, 0))
        if state is None or state.leader is None:
            return
        broker = self.cluster.brokers[state.leader]
        p = broker.partitions.get((SHARE_STATE_TOPIC, 0))
        if not broker.alive or p is None or not p.is_leader:
            return
        topic_id, folded = self._folded
        if topic_id != state.topic_id:
            folded = 0
        elif p.log.hw <= folded:
            return
        for offset, record, _ in p.log.records(folded, p.log.hw):
            key, (_epoch, start, updates) = record.key, record.value
            entry = self._persisted.setdefault(key, [start, {}])
            if start < entry[0]:
                self._fail("acknowledged_final", key, f"persisted start offset moved back from {entry[0]} to {start}")
            entry[0] = start
            for o, new_state, count in updates:
                entry[1][o] = (new_state, count)
            folded = offset + 1
            self._fold_version += 1
        self._folded = (state.topic_id, folded)
