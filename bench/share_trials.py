"""Seeded random trials for the share-group invariants: one seed draws the group's settings
(lock duration, delivery count limit), workers with random handlers and acknowledgements
(ACCEPT, RELEASE, REJECT, a handler slower than the lock), and a fault schedule (the partition
leader or the share coordinator crashing and restarting, a paused broker, a lost ShareFetch or
ShareAcknowledge answer, a crashed or frozen worker); runs them with
:class:`course_lib.broker.share_invariants.ShareInvariants` checking every event. A violation
raises with the seed, so it can be replayed:

>>> trial = checked_share_trial(7)
>>> trial.checks == trial.events and trial.deliveries > 0
True
>>> checked_share_trial(7) == trial
True

Used by tests/test_share_invariants.py (1,000 seeds).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from functools import partial

from course_lib.broker import Cluster
from course_lib.broker.share_invariants import ShareInvariants
from course_lib.client_adapters.share_worker import SteppedWorker
from course_lib.history import OpName
from course_lib.experiments.share_scenarios import GROUP, TOPIC, _processed, _produce, run_workers

#: fast failure detection, so a 10 s trial sees failovers
TIMING = {"broker_session_timeout_ms": 3000, "broker_heartbeat_interval_ms": 500, "replica_lag_time_max_ms": 2000}
FAULTS = (
    "crash_leader",
    "crash_share_coordinator",
    "pause_leader",
    "lose_ack_answer",
    "lose_fetch_answer",
    "crash_worker",
    "freeze_worker",
)


@dataclass
class ShareTrial:
    seed: int
    settings: dict
    faults: list
    events: int
    checks: int
    deliveries: int
    acquisitions: int
    failovers: int  # share-partitions that moved to a new leader term
    redelivered: int  # deliveries with a delivery count above 1


def checked_share_trial(seed: int, duration_ms: float = 10_000, records: int = 10) -> ShareTrial:
    """One seeded trial under the share invariant checker; raises InvariantViolation on a broken one."""
    rng = random.Random(f"share-invariants-{seed}")
    partitions = rng.choice((1, 1, 2))
    settings = {
        "share.auto.offset.reset": "earliest",
        "share.record.lock.duration.ms": rng.choice((1000, 2000, 5000)),
        "share.delivery.count.limit": rng.randint(2, 5),
    }
    cluster = Cluster(3, seed=seed, group_initial_rebalance_delay_ms=0, **TIMING)
    checker = ShareInvariants.attach(cluster)
    cluster.create_topic(TOPIC, partitions=partitions, replication_factor=3, min_insync_replicas=2)
    cluster.alter_share_group_config(GROUP, settings)
    # records in producer batches of 1 to all of them: Kafka hands out whole batches, splits
    # them once acknowledged piecemeal and throttles them near the delivery count limit
    _produce(cluster, records, partitions, per_batch=rng.choice((1, 2, 3, records)))
    lock = settings["share.record.lock.duration.ms"]

    def handler(m):
        roll = rng.random()
        if roll < 0.1:
            return lock * 1.5, True  # slower than the lock
        ack = rng.choices((True, False, "reject"), weights=(0.8, 0.15, 0.05))[0]
        return rng.uniform(5, 300), ack

    # coarser steps than the lessons' workers: the trials are about the broker's invariants
    processed = partial(_processed, cluster)
    workers = [
        SteppedWorker(cluster, GROUP, TOPIC, handler, processed, rng.randint(1, 4), poll_s=0.1, idle_ms=100)
        for _ in range(rng.randint(2, 3))
    ]
    faults = []
    for _ in range(rng.randint(1, 3)):
        kind = rng.choice(FAULTS)
        at = rng.uniform(200, duration_ms / 2)
        faults.append((at, kind, _fault(cluster, workers, kind, rng)))
    run_workers(cluster, workers, lambda: False, duration_ms, faults=[(at, action) for at, _, action in faults])
    deliveries = sum(len(op.value) for op in cluster.history if op.f == OpName.SHARE_POLL)
    return ShareTrial(
        seed,
        settings,
        [(round(at), kind) for at, kind, _ in faults],
        cluster.sim.events_run,
        checker.checks,
        deliveries,
        checker.acquisitions,
        checker.failovers,
        sum(1 for op in cluster.history if op.f == OpName.SHARE_POLL for row in op.value if row[3] > 1),
    )


def _fault(cluster, workers, kind: str, rng):
    down_ms = rng.uniform(500, 6000)
    victim = rng.choice(workers)

    def leader_of(topic):
        try:
            return cluster.leader_of(topic)
        except ValueError:  # not created yet
            return None

    def crash_then_restart(topic):
        broker = leader_of(topic)
        if broker is not None and cluster.brokers[broker].alive:
            cluster.crash(broker)
            cluster.at(down_ms, cluster.restart, broker)

    def pause_leader():
        broker = leader_of(TOPIC)
        if broker is not None and cluster.brokers[broker].alive and not cluster.brokers[broker].paused:
            cluster.pause(broker)
            cluster.at(down_ms, cluster.resume, broker)

    actions = {
        "crash_leader": lambda: crash_then_restart(TOPIC),
        "crash_share_coordinator": lambda: crash_then_restart("__share_group_state"),
        "pause_leader": pause_leader,
        "lose_ack_answer": lambda: cluster.network.drop_next(
            src=None, dst=victim.name, kind="share_acknowledge_response"
        ),
        "lose_fetch_answer": lambda: cluster.network.drop_next(src=None, dst=victim.name, kind="share_fetch_response"),
        "crash_worker": lambda: None if victim.crashed else victim.crash(),
        "freeze_worker": lambda: victim.freeze(until_ms=victim.next_ms),  # frozen for good
    }
    return actions[kind]
