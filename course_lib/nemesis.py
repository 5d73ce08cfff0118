"""Random fault schedules (Jepsen's "nemesis"), drawn from one seed.

A schedule is a list of :class:`Fault` - what happens, to whom, when, for how long - so a failing
trial can be printed, read and replayed. Faults heal themselves after their duration; the
trial then heals everything and does a final read.

>>> import random
>>> schedule = random_schedule(random.Random(3), duration_ms=3000, brokers=[1, 2, 3])
>>> [str(f) for f in schedule][:2]
['t=778.1 ms: slow_link broker 1 for 928.6 ms', 't=1622.9 ms: slow_link broker 3 for 2010.1 ms']

``shrink_isr_then_crash_leader`` is the schedule that makes ``min.insync.replicas`` matter:
the ISR shrinks to the leader alone (which takes ``broker_session_timeout_ms``), the leader keeps
acknowledging what its min ISR allows, then the leader dies.

Taught in notebooks/02_acks_and_durability (loss over many seeded trials).
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from .broker.broker import node_name

FAULT_KINDS = (
    "crash",
    "crash_leader",
    "crash_leader_after_ack",
    "pause",
    "isolate",
    "lose_ack",
    "lose_request",
    "slow_link",
    "shrink_isr_then_crash_leader",
)
#: faults that last ``duration_ms`` and then heal themselves
LASTING = frozenset(
    {"crash", "crash_leader", "pause", "isolate", "slow_link", "crash_leader_after_ack", "shrink_isr_then_crash_leader"}
)


@dataclass(frozen=True)
class Fault:
    at_ms: float
    kind: str
    target: int | None = None  # broker id (None: the current leader / any link)
    duration_ms: float = 0.0

    def __str__(self) -> str:
        who = "" if self.target is None else f" broker {self.target}"
        lasting = f" for {self.duration_ms:g} ms" if self.duration_ms else ""
        return f"t={self.at_ms:g} ms: {self.kind}{who}{lasting}"


def random_schedule(
    rng: random.Random, duration_ms: float, brokers: list[int], kinds: tuple = FAULT_KINDS, faults: int = 4
) -> list[Fault]:
    out = []
    for _ in range(faults):
        kind = rng.choice(kinds)
        at = round(rng.uniform(0, duration_ms), 1)
        target = rng.choice(brokers) if kind in ("crash", "pause", "isolate", "slow_link") else None
        lasting = round(rng.uniform(200, 4000), 1) if kind in LASTING else 0.0
        out.append(Fault(at, kind, target, lasting))
    return sorted(out, key=lambda f: f.at_ms)


def apply_schedule(cluster, schedule: list[Fault], topic: str, client_id: str | None = None) -> None:
    """Schedule every fault (and its healing) on the cluster's event loop."""
    for fault in schedule:
        cluster.at(
            fault.at_ms - cluster.now if fault.at_ms > cluster.now else 0, _start, cluster, fault, topic, client_id
        )


def _start(cluster, fault: Fault, topic: str, client_id):
    kind, target = fault.kind, fault.target
    if kind in ("crash", "crash_leader"):
        broker = target if kind == "crash" else cluster.leader_of(topic)
        if broker is None or not cluster.brokers[broker].alive:
            return
        cluster.crash(broker)
        cluster.at(fault.duration_ms, _restart, cluster, broker)
    elif kind == "crash_leader_after_ack":
        leader = cluster.leader_of(topic)
        if leader is None:
            return

        def crash(_msg):
            if cluster.brokers[leader].alive:
                cluster.crash(leader)
                cluster.at(fault.duration_ms, _restart, cluster, leader)

        cluster.network.after_send(crash, src=node_name(leader), kind="produce_response")
    elif kind == "shrink_isr_then_crash_leader":
        _shrink_isr_then_crash_leader(cluster, fault, topic)
    elif kind == "pause":
        broker = cluster.brokers[target]
        if broker.alive and not broker.paused:
            cluster.pause(target)
            cluster.at(fault.duration_ms, _resume, cluster, target)
    elif kind == "isolate":
        cluster.isolate(target)
        cluster.at(fault.duration_ms, cluster.heal)
    elif kind == "slow_link":
        cluster.network.delay(node_name(target), cluster.controller.node_id, 0)  # keep heartbeats
        for other in cluster.brokers:
            if other != target:
                cluster.network.delay(node_name(target), node_name(other), 50.0)
        cluster.at(fault.duration_ms, cluster.heal)
    elif kind == "lose_ack":
        cluster.lose_next_ack(client_id)
    elif kind == "lose_request":
        cluster.lose_next_request(client_id)
    else:
        raise ValueError(f"unknown fault kind {kind!r}; kinds are {FAULT_KINDS}")


def _shrink_isr_then_crash_leader(cluster, fault: Fault, topic: str) -> None:
    """Kill every follower, wait until the controller has fenced them (the ISR is the leader alone,
    so only ``min.insync.replicas`` decides what the leader still acknowledges), then kill the
    leader. The followers come back first: with unclean election one of them leads without what
    the old leader acknowledged alone; without it the partition waits for the old leader."""
    leader = cluster.leader_of(topic)
    if leader is None or not cluster.brokers[leader].alive:
        return
    followers = [
        r for r in cluster.controller.partitions[(topic, 0)].replicas if r != leader and cluster.brokers[r].alive
    ]
    for follower in followers:
        cluster.crash(follower)
    shrunk_after = cluster.options.broker_session_timeout_ms + 1000  # fenced, out of the ISR

    def crash_leader():
        if cluster.brokers[leader].alive:
            cluster.crash(leader)
            cluster.at(fault.duration_ms, _restart, cluster, leader)

    cluster.at(shrunk_after, crash_leader)
    for follower in followers:
        cluster.at(shrunk_after + fault.duration_ms / 2, _restart, cluster, follower)


def _restart(cluster, broker_id: int) -> None:
    if not cluster.brokers[broker_id].alive:
        cluster.restart(broker_id)


def _resume(cluster, broker_id: int) -> None:
    if cluster.brokers[broker_id].paused:
        cluster.resume(broker_id)
