"""Seeded random trials for the producer-epoch invariants: one seed draws a transactional call
sequence with broker crashes between calls (:func:`course_lib.experiments.java_differential.steps`) and a
transaction protocol (even seeds v2, odd seeds v1), runs it on a simulated cluster with
:class:`course_lib.broker.producer_epoch_invariants.ProducerEpochInvariants` and the replication
invariants checking every event, and returns what happened. A violation raises with the seed:

>>> trial = checked_transaction_trial(4)
>>> trial.checks == trial.events > 0 and trial.transaction_version == 2
True
>>> checked_transaction_trial(4) == trial
True

Used by tests/test_producer_epoch_invariants.py (1,000 seeds).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

from course_lib.broker import Cluster
from course_lib.broker.invariants import InvariantViolation, ReplicationInvariants
from course_lib.broker.producer_epoch_invariants import ProducerEpochInvariants
from course_lib.broker.txn_coordinator import TXN_TOPIC
from course_lib.clients import KafkaProducer
from course_lib.experiments.java_differential import steps

TOPIC = "txn-inv"


@dataclass(frozen=True)
class TransactionTrial:
    seed: int
    transaction_version: int
    steps: tuple
    outcomes: tuple
    final_epoch: int
    events: int
    checks: int


def _call(producer, step: str) -> str:
    try:
        if step.startswith("send:"):
            producer.send(TOPIC, b"v", partition=int(step[-1])).get(timeout=30)
        elif step == "abort":
            producer.abort_transaction()
        else:
            getattr(producer, step)()
    except InvariantViolation:
        raise
    except Exception as exc:  # noqa: BLE001 - an outcome of the trial, not its failure
        return type(exc).__name__
    return "ok"


def checked_transaction_trial(seed: int) -> TransactionTrial:
    tv = 2 if seed % 2 == 0 else 1
    plan = steps(seed)
    cluster = Cluster(3, seed=seed, group_initial_rebalance_delay_ms=0)
    events = {"n": 0}
    cluster.sim.observers.append(lambda: events.__setitem__("n", events["n"] + 1))
    replication = ReplicationInvariants.attach(cluster)
    epochs = ProducerEpochInvariants.attach(cluster)
    cluster.create_topic(TOPIC, partitions=2, min_insync_replicas=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        producer = KafkaProducer(
            bootstrap_servers=cluster, transactional_id="tx", transaction_version=tv, max_block_ms=20_000
        )
    outcomes = []
    for step in plan:
        if step.startswith("fault:"):
            fault = step[6:]
            topic, partition = (TXN_TOPIC, 0) if fault == "crash_coordinator" else (TOPIC, int(fault[-1]))
            known = (topic, partition) in cluster.controller.partitions
            victim = cluster.leader_of(topic, partition) if known else None
            if victim is not None:
                # a fast restart (before the controller fences it), on odd and even seeds alike
                cluster.crash(victim)
                cluster.run_for(100)
                cluster.restart(victim)
            outcomes.append("ok")
        else:
            outcomes.append(_call(producer, step))
    cluster.run_for(500)  # the last markers written
    assert replication.checks == epochs.checks == events["n"], "a check was missed"
    return TransactionTrial(seed, tv, plan, tuple(outcomes), producer.producer_epoch, events["n"], epochs.checks)
