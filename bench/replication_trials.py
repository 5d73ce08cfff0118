"""Seeded random trials for the replication invariants: one seed draws a topic configuration,
a producer, and a fault schedule (always with an ISR shrink followed by the leader's death), runs
them with :class:`course_lib.broker.invariants.ReplicationInvariants` checking every event, and
returns what happened. A violation raises with the seed, so it can be replayed:

>>> trial = checked_trial(11)
>>> trial.events > 1000 and trial.checks == trial.events
True
>>> replay = checked_trial(11)
>>> (replay.events, replay.config) == (trial.events, trial.config)
True

Used by tests/test_replication_invariants.py (>= 1,000 seeds in ``make test``) and by
``python -m bench invariants`` (10,000 seeds).
"""

from __future__ import annotations

import contextlib
import random
from dataclasses import dataclass

from kafka.errors import KafkaTimeoutError

from course_lib.broker import Cluster
from course_lib.broker.invariants import ReplicationInvariants
from course_lib.clients import KafkaProducer
from course_lib.broker.schedules import apply_schedule
from course_lib.nemesis import FAULT_KINDS, Fault, FaultKind, random_schedule
from course_lib.experiments.scenarios import FAST_FAILOVER

TOPIC = "inv"
#: fast failure detection so a 10 s trial sees ISR shrinks (the course's FAST_FAILOVER settings)
TIMING = FAST_FAILOVER


@dataclass
class Trial:
    seed: int
    config: dict
    schedule: list
    events: int
    checks: int
    clean_elections: int
    unclean_elections: int
    acknowledged: int


def checked_trial(seed: int, duration_ms: float = 10_000, messages: int = 30) -> Trial:
    """One seeded trial under the invariant checker; raises InvariantViolation on a broken one."""
    rng = random.Random(f"invariants-{seed}")
    config = {
        "min_insync_replicas": rng.choice((1, 2, 3)),
        "unclean_leader_election_enable": rng.random() < 0.3,
        "eligible_leader_replicas_enable": rng.random() < 0.8,
        "acks": rng.choice((0, 1, "all")),
        "enable_idempotence": rng.random() < 0.5,
    }
    if config["enable_idempotence"]:
        config["acks"] = "all"  # kafka-python refuses idempotence without acks=all
    cluster = Cluster(
        brokers=3, seed=seed, eligible_leader_replicas_enable=config["eligible_leader_replicas_enable"], **TIMING
    )
    checker = ReplicationInvariants.attach(cluster)
    cluster.create_topic(
        TOPIC,
        replication_factor=3,
        min_insync_replicas=config["min_insync_replicas"],
        unclean_leader_election_enable=config["unclean_leader_election_enable"],
    )
    producer = KafkaProducer(
        bootstrap_servers=cluster,
        acks=config["acks"],
        enable_idempotence=config["enable_idempotence"],
        request_timeout_ms=1000,
        retries=5,
        delivery_timeout_ms=8000,
        linger_ms=0,
    )
    schedule = random_schedule(rng, duration_ms, cluster.broker_ids, FAULT_KINDS, faults=rng.randint(1, 5))
    # the fault this suite is about: the ISR shrinks to the leader alone, then the leader dies
    schedule = sorted(
        schedule
        + [
            Fault(
                round(rng.uniform(0, duration_ms / 2), 1),
                FaultKind.SHRINK_ISR_THEN_CRASH_LEADER,
                None,
                round(rng.uniform(500, 6000), 1),
            )
        ],
        key=lambda f: f.at_ms,
    )
    apply_schedule(cluster, schedule, TOPIC, producer.node_id)
    futures = []
    for i, at in enumerate(sorted(rng.uniform(0, duration_ms) for _ in range(messages))):
        cluster.at(at, lambda i=i: futures.append(producer.send(TOPIC, f"m-{i}".encode())))
    cluster.run_for(duration_ms + max(f.duration_ms for f in schedule) + 10_000)
    cluster.heal_all()
    # an idempotent producer whose retried batch expired is wedged, as kafka-python 3.0.12's is
    # (it never gets a new producer id): what it still holds is never sent, which is fine here -
    # the invariants are about the brokers
    with contextlib.suppress(KafkaTimeoutError):
        producer.flush(timeout=30)
    return Trial(
        seed,
        config,
        schedule,
        cluster.sim.events_run,
        checker.checks,
        checker.clean_elections,
        cluster.unclean_elections,
        sum(1 for f in futures if f.succeeded()),
    )
