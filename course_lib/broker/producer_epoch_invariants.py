"""Producer epochs only grow: checked after *every* event, next to the replication invariants
(:mod:`.invariants`), for the state transactions v1 and v2 (KIP-890) keep.

1. ``coordinator_epoch_grows``: for every ``transactional.id``, the producer epoch the
   transaction coordinator holds never goes back (init_transactions, a timeout's abort and - v2 -
   every EndTxn bump it; a coordinator elected elsewhere replays the same records).
2. ``partition_epoch_grows``: for every producer id, the epoch a partition leader's producer
   state holds never goes back while that leader leads (a marker with a bumped epoch fences the
   older one; nothing may bring it back).

A schedule with an unclean election may lose committed records, and with them the state built
from them: these invariants, like ``committed_kept``, are about clean histories (the trials that
check them elect cleanly).

>>> from course_lib.broker import Cluster
>>> from course_lib.clients import KafkaProducer
>>> cluster = Cluster(brokers=3, seed=2, group_initial_rebalance_delay_ms=0)
>>> checker = ProducerEpochInvariants.attach(cluster)
>>> cluster.create_topic("t", min_insync_replicas=2)
>>> p = KafkaProducer(bootstrap_servers=cluster, transactional_id="x", transaction_version=2)
>>> p.init_transactions(); p.begin_transaction(); _ = p.send("t", b"v"); p.commit_transaction()
>>> checker.checks > 0, checker.highest_coordinator_epoch["x"]
(True, 1)
"""

from __future__ import annotations

from .invariants import InvariantViolation


class ProducerEpochInvariants:
    def __init__(self, cluster):
        self.cluster = cluster
        self.checks = 0
        #: transactional id -> the highest epoch a coordinator held for it
        self.highest_coordinator_epoch: dict[str, int] = {}
        #: (tp, leader broker, leader epoch, producer id) -> the highest epoch that leader held
        self._partition_epochs: dict[tuple, int] = {}

    @classmethod
    def attach(cls, cluster) -> ProducerEpochInvariants:
        checker = cls(cluster)
        cluster.sim.observers.append(checker.check)
        return checker

    def check(self) -> None:
        self.checks += 1
        for broker in self.cluster.brokers.values():
            if not broker.alive:
                continue
            coordinator = broker.txns
            partition = coordinator.partition()
            # a coordinator's cache counts once it has loaded its current leadership (a broker
            # that leads again still holds what it knew before, until it is first asked)
            if partition is not None and coordinator._epoch == partition.leader_epoch:
                for tid, meta in coordinator.txns.items():
                    seen = self.highest_coordinator_epoch.get(tid, -1)
                    if meta.producer_epoch < seen:
                        self._fail(
                            "coordinator_epoch_grows",
                            f"broker {broker.broker_id} holds epoch {meta.producer_epoch} for {tid!r} after {seen}",
                        )
                    self.highest_coordinator_epoch[tid] = meta.producer_epoch
            for tp, partition in broker.partitions.items():
                if not partition.is_leader:
                    continue
                for pid, entry in partition.producers.entries.items():
                    key = (tp, broker.broker_id, partition.leader_epoch, pid)
                    seen = self._partition_epochs.get(key, -1)
                    if entry.epoch < seen:
                        self._fail(
                            "partition_epoch_grows",
                            f"{tp[0]}-{tp[1]} leader {broker.broker_id} holds epoch {entry.epoch} for "
                            f"producer {pid} after {seen}",
                        )
                    self._partition_epochs[key] = entry.epoch

    def _fail(self, name: str, detail: str) -> None:
        raise InvariantViolation(
            f"invariant {name} broken at t={self.cluster.now:g} ms (seed={self.cluster.seed}): {detail}"
        )
