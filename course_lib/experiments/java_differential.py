"""The transactions-v2 differential: seeded sequences of transactional calls, with broker
crashes between calls, through the simulator's own producer with ``transaction_version=2`` (on a
simulated :class:`~course_lib.broker.Cluster`) and through the Java client 4.3.1 (its driver
process, :mod:`course_lib.java_client`, on the same simulated brokers over TCP, where it speaks
transactions v2: Produce 13, EndTxn 5).

What is compared after every call: whether it succeeded, and the transaction coordinator's record
of the transactional id (producer epoch and state) once the transactions settled - so an epoch
bump the simulated producer misses or adds, a partition it adds differently, a transaction left
open, shows at the call that caused it; at the end, the ``read_committed`` records of each
partition. Exception classes are not compared (the simulated producer raises kafka-python's).

The sequences keep the calls in a valid order (wrong orders are kafka-python's API, compared in
:mod:`.differential`); a fault is a broker - the coordinator or a partition leader - crashed and
restarted between two calls, the next call made once the cluster is whole again.
"""

from __future__ import annotations

import random
import warnings
from dataclasses import dataclass
from typing import ClassVar

from ..broker import Cluster
from ..broker.txn_coordinator import TXN_TOPIC
from ..client_adapters import library_producer
from ..client_adapters.call_sequences import Action, Failures, Said, SequenceCluster, method, replay
from ..wire.cluster import WireCluster
from .differential import transactions_settled
from .sequence_clusters import VirtualClock, WallClock

FAULTS = ("none", "none", "crash_coordinator", "crash_leader_p0", "crash_leader_p1")
#: the producer's own calls in a plan (besides its sends and its "abort")
CALLS = ("init_transactions", "begin_transaction", "commit_transaction")
#: the two clients compared: the simulator's on a simulated Cluster, Java's on the wire cluster
SIMULATED, JAVA = "simulator", "java"


@dataclass(frozen=True)
class JavaDifference:
    """What the simulated client and the Java client answered differently at one step of a
    seeded sequence (:data:`WHAT` names the differential)."""

    seed: int
    steps: tuple
    step: str
    simulated: str
    java: str
    WHAT: ClassVar[str] = "Java differential"

    def __str__(self) -> str:
        return (
            f"{self.WHAT} seed {self.seed}: {list(self.steps)}: at {self.step}: "
            f"simulator {self.simulated}, Java {self.java}"
        )


class V2Difference(JavaDifference):
    WHAT = "transactions v2"


def steps(seed: int) -> tuple[str, ...]:
    """init, then 2-4 transactions of 0-3 sends each ending in a commit or an abort, with a fault
    drawn before every call."""
    rng = random.Random(seed)
    out = ["init_transactions"]
    for _ in range(rng.randint(2, 4)):
        out.append("begin_transaction")
        for _ in range(rng.randint(0, 3)):
            out += [f"fault:{rng.choice(FAULTS)}", f"send:p{rng.randint(0, 1)}"]
        out += [f"fault:{rng.choice(FAULTS)}", rng.choice(("commit_transaction", "commit_transaction", "abort"))]
    return tuple(s for s in out if s != "fault:none")


def _whole(cluster: Cluster, topic: str) -> bool:
    """Every broker up and every partition of ``topic`` and of the coordinator's topic led, with
    its full ISR."""
    if not all(b.alive for b in cluster.brokers.values()):
        return False
    for tp, state in cluster.controller.partitions.items():
        if tp[0] in (topic, TXN_TOPIC) and (state.leader is None or len(state.isr) < len(state.replicas)):
            return False
    return True


def _settled(cluster: Cluster, topic: str) -> bool:
    """The transactions decided are complete and ``__transaction_state`` is fully replicated.

    A broker that became the coordinator finishes what the old one decided (writes the pending
    markers) when it is first asked (Kafka: as soon as it is elected); the differential asks it
    here, the same way on both sides, so a settled state does not wait for the client's next call."""
    if not _whole(cluster, topic):
        return False
    leader_id = cluster.leader_of(TXN_TOPIC, 0) if (TXN_TOPIC, 0) in cluster.controller.partitions else None
    if leader_id is not None:
        leader = cluster.brokers[leader_id]
        leader.txns.refresh()
        log = leader.partitions[(TXN_TOPIC, 0)].log
        if log.hw < log.leo:
            return False
    return transactions_settled(cluster, topic)


def _victim(cluster: Cluster, fault: str, topic: str) -> int | None:
    if fault == "crash_coordinator":
        return cluster.leader_of(TXN_TOPIC, 0) if (TXN_TOPIC, 0) in cluster.controller.partitions else None
    return cluster.leader_of(topic, int(fault[-1]))


def _read_committed(cluster: Cluster, topic: str) -> list[int]:
    """How many records ``read_committed`` reads of each partition."""
    return [len(cluster.committed_records(topic, p, read_committed=True)) for p in (0, 1)]


def _coordinator_view(cluster: Cluster, tid: str) -> str:
    """The last state of ``tid`` committed to ``__transaction_state`` (read from its leader's
    log up to the high watermark, as a new coordinator replays it: not from a coordinator's
    cache, which a broker that lost and regained leadership refreshes only when asked)."""
    if (TXN_TOPIC, 0) not in cluster.controller.partitions:
        return "none"
    # the replica that knows the most of what is committed (a leader elected a moment ago may
    # not have learnt the high watermark yet)
    replicas = [b.partitions[(TXN_TOPIC, 0)] for b in cluster.brokers.values() if (TXN_TOPIC, 0) in b.partitions]
    replica = max(replicas, key=lambda r: r.log.hw)
    meta = None
    for stored in replica.log.read(0, below=replica.log.hw):
        for record in stored.batch.records:
            if record.key == tid:
                meta = record.value
    return "none" if meta is None else f"epoch {meta.producer_epoch} {meta.state}"


def _actions(cluster: SequenceCluster, topic: str) -> dict[str, Action]:
    """What each step of a plan does to the producer on ``topic``; a fault step to ``cluster``:
    the broker crashed and restarted, the next call made once the cluster is whole again."""

    def fault(name: str) -> Action:
        def bounce(_producer):
            victim = cluster.read(lambda c: _victim(c, name, topic))
            if victim is not None:
                cluster.fault("bounce", victim)
            if not cluster.wait_until(lambda c: _whole(c, topic), 60):
                raise AssertionError(f"{cluster.name} did not heal after {name}")
            return Said("ok")

        return bounce

    actions: dict[str, Action] = {f"fault:{name}": fault(name) for name in FAULTS if name != "none"}
    actions |= {f"send:p{p}": _send(topic, p) for p in (0, 1)}
    actions |= {call: method(call) for call in CALLS}
    return actions | {"abort": method("abort_transaction")}


def _send(topic: str, partition: int) -> Action:
    """A send to ``partition``, waited for (30 s at most)."""
    return lambda producer: producer.send(topic, b"v", partition=partition).get(timeout=30)


def producer_steps(producer, cluster: SequenceCluster, plan, topic: str, tid: str) -> tuple[list[str], list[str]]:
    """``producer`` through ``plan`` on ``cluster`` (the call-sequence contract): after each step,
    once the transactions settled, whether it succeeded and the coordinator's record of ``tid``;
    and what each failed step raised."""
    failures = Failures()

    def outcome(step: str, make) -> str:
        # a fault is the cluster's: what fails there fails the run, not the step
        return make() if step.startswith("fault:") else failures(step, make)

    def settled(step: str, said: str) -> str:
        if step.startswith("fault:"):
            return said  # the next call is made once the cluster is whole again
        if not cluster.wait_until(lambda c: _settled(c, topic), 30):
            raise AssertionError(f"{cluster.name}'s transactions did not settle")
        return said + " / " + cluster.read(lambda c: _coordinator_view(c, tid))

    outcomes = replay(producer, plan, _actions(cluster, topic), outcome=outcome, after=settled)
    return outcomes, failures.errors


class TransactionsV2Differential:
    def __init__(self, wire: WireCluster, driver):
        self.wire, self.driver = wire, driver

    def run(self, seed: int) -> list[V2Difference]:
        plan = steps(seed)
        topic, tid = f"v2t{seed}", f"v2tx-{seed}"
        cluster = Cluster(3, seed=seed, group_initial_rebalance_delay_ms=0)
        cluster.create_topic(topic, partitions=2, min_insync_replicas=2)

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            sim_producer = library_producer(SIMULATED, cluster, {"transactional_id": tid, "transaction_version": 2})
        sim_out, sim_errors = producer_steps(sim_producer, VirtualClock(cluster), plan, topic, tid)
        sim_read = VirtualClock(cluster).read(lambda c: _read_committed(c, topic))

        wire = self.wire
        wire.create_topic(topic, partitions=2, min_insync_replicas=2)

        java_producer = library_producer(
            JAVA, wire.bootstrap_servers, {"transactional.id": tid, "max.block.ms": "30000"}, driver=self.driver
        )
        try:
            java_out, java_errors = producer_steps(java_producer, WallClock(wire), plan, topic, tid)
        finally:
            java_producer.close(timeout=10)
        java_read = WallClock(wire).read(lambda c: _read_committed(c, topic))
        errors = f" (simulator raised {sim_errors}, Java raised {java_errors})"
        found = [V2Difference(seed, plan, s + errors, a, b) for s, a, b in zip(plan, sim_out, java_out) if a != b]
        if sim_read != java_read:
            found.append(V2Difference(seed, plan, "read_committed records", str(sim_read), str(java_read)))
        return found[:1]  # after the first difference the two sides have parted
