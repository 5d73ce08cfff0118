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
from enum import StrEnum
from typing import Callable

from .broker.broker import node_name
from .broker.controller import CONTROLLER
from .clusters.faults import FaultTarget
from .history import Nemesis


class FaultKind(StrEnum):
    """What a scheduled fault does. Faults that are also a nemesis operation carry its name
    (:class:`~course_lib.history.Nemesis`): one spelling in schedules, histories and lessons."""

    # The order is part of every seeded schedule (``rng.choice`` picks by position): append only.
    CRASH = Nemesis.CRASH
    CRASH_LEADER = "crash_leader"
    CRASH_LEADER_AFTER_ACK = "crash_leader_after_ack"
    PAUSE = Nemesis.PAUSE
    ISOLATE = Nemesis.ISOLATE
    LOSE_NEXT_ACK = Nemesis.LOSE_NEXT_ACK
    LOSE_NEXT_REQUEST = Nemesis.LOSE_NEXT_REQUEST
    SLOW_LINK = "slow_link"
    SHRINK_ISR_THEN_CRASH_LEADER = "shrink_isr_then_crash_leader"


FAULT_KINDS = tuple(FaultKind)
#: faults aimed at one broker drawn from the schedule's brokers (the others find their target)
TARGETED = frozenset({FaultKind.CRASH, FaultKind.PAUSE, FaultKind.ISOLATE, FaultKind.SLOW_LINK})
#: faults that last ``duration_ms`` and then heal themselves
LASTING = frozenset(FAULT_KINDS) - {FaultKind.LOSE_NEXT_ACK, FaultKind.LOSE_NEXT_REQUEST}
#: faults that find their target as the leader of the schedule's topic
NEEDS_TOPIC = frozenset(
    {FaultKind.CRASH_LEADER, FaultKind.CRASH_LEADER_AFTER_ACK, FaultKind.SHRINK_ISR_THEN_CRASH_LEADER}
)


def fault_kind(kind: str) -> FaultKind:
    """``kind`` as a :class:`FaultKind` (raises ``ValueError`` naming the known kinds).

    >>> fault_kind("lose_next_ack") is FaultKind.LOSE_NEXT_ACK
    True
    """
    try:
        return FaultKind(kind)
    except ValueError:
        raise ValueError(f"unknown fault kind {kind!r}; kinds are {[str(k) for k in FAULT_KINDS]}") from None


@dataclass(frozen=True)
class Fault:
    at_ms: float
    kind: FaultKind
    target: int | None = None  # broker id (None: the current leader / any link)
    duration_ms: float = 0.0

    def __str__(self) -> str:
        who = "" if self.target is None else f" broker {self.target}"
        lasting = f" for {self.duration_ms:g} ms" if self.duration_ms else ""
        return f"t={self.at_ms:g} ms: {self.kind}{who}{lasting}"


def random_schedule(
    rng: random.Random, duration_ms: float, brokers: list[int], kinds: tuple | None = FAULT_KINDS, faults: int = 4
) -> list[Fault]:
    """``faults`` faults drawn from ``kinds`` (None: every kind); the same ``rng`` state gives the
    same schedule."""
    kinds = tuple(fault_kind(k) for k in (FAULT_KINDS if kinds is None else kinds))
    out = []
    for _ in range(faults):  # the draws, in this order, are what a seed means: keep them
        kind = rng.choice(kinds)
        at = round(rng.uniform(0, duration_ms), 1)
        target = rng.choice(brokers) if kind in TARGETED else None
        lasting = round(rng.uniform(200, 4000), 1) if kind in LASTING else 0.0
        out.append(Fault(at, kind, target, lasting))
    return sorted(out, key=lambda f: f.at_ms)


def apply_schedule(
    cluster: FaultTarget, schedule: list[Fault], topic: str | None, client_id: str | None = None, origin_ms: float = 0.0
) -> list:
    """Schedule every fault (and its healing) on the cluster's event loop, ``at_ms`` after
    ``origin_ms`` of its clock (0: its start, as the simulator's seeded trials count; a cluster
    that has been running for a while passes its ``now``). ``cluster`` is a
    :class:`~course_lib.clusters.faults.FaultTarget`: a simulated :class:`~course_lib.broker.Cluster`
    or :class:`course_lib.wire.nemesis.ScheduleTarget` (the same schedule over TCP). Returns what
    ``cluster.at`` returned for each fault's start (the simulator's: a handle to cancel it)."""
    if topic is None and any(fault.kind in NEEDS_TOPIC for fault in schedule):
        raise ValueError(
            f"faults of the kinds {sorted(str(k) for k in NEEDS_TOPIC)} aim at the leader of a topic: pass topic="
        )
    starts = []
    for fault in schedule:
        due = origin_ms + fault.at_ms
        starts.append(
            cluster.at(due - cluster.now if due > cluster.now else 0, _start, cluster, fault, topic, client_id)
        )
    return starts


def _start(cluster, fault: Fault, topic: str, client_id) -> None:
    _STARTS[fault_kind(fault.kind)](cluster, fault, topic, client_id)


# ---- one function per kind: what starts the fault and schedules its healing -----------------
def _crash(cluster, fault: Fault, topic: str, client_id) -> None:
    _crash_for(cluster, fault.target, fault.duration_ms)


def _crash_leader(cluster, fault: Fault, topic: str, client_id) -> None:
    _crash_for(cluster, cluster.leader_of(topic), fault.duration_ms)


def _crash_leader_after_ack(cluster, fault: Fault, topic: str, client_id) -> None:
    leader = cluster.leader_of(topic)
    if leader is None:
        return
    cluster.network.after_send(
        lambda _msg: _crash_for(cluster, leader, fault.duration_ms), src=node_name(leader), kind="produce_response"
    )


def _pause(cluster, fault: Fault, topic: str, client_id) -> None:
    target = _target(fault)
    broker = cluster.inspect_broker(target)
    if broker.up and not broker.paused:
        cluster.pause(target)
        cluster.at(fault.duration_ms, _resume, cluster, target)


def _isolate(cluster, fault: Fault, topic: str, client_id) -> None:
    cluster.isolate(_target(fault))
    cluster.at(fault.duration_ms, cluster.heal)


def _slow_link(cluster, fault: Fault, topic: str, client_id) -> None:
    target = _target(fault)
    slow = node_name(target)
    cluster.network.delay(slow, CONTROLLER, 0)  # keep heartbeats
    for other in cluster.broker_ids:
        if other != target:
            cluster.network.delay(slow, node_name(other), 50.0)
    cluster.at(fault.duration_ms, cluster.heal)


def _lose_next_ack(cluster, fault: Fault, topic: str, client_id) -> None:
    cluster.lose_next_ack(client_id)


def _lose_next_request(cluster, fault: Fault, topic: str, client_id) -> None:
    cluster.lose_next_request(client_id)


def _shrink_isr_then_crash_leader(cluster, fault: Fault, topic: str, client_id) -> None:
    """Kill every follower, wait until the controller has fenced them (the ISR is the leader alone,
    so only ``min.insync.replicas`` decides what the leader still acknowledges), then kill the
    leader. The followers come back first: with unclean election one of them leads without what
    the old leader acknowledged alone; without it the partition waits for the old leader."""
    leader = cluster.leader_of(topic)
    if leader is None or not cluster.inspect_broker(leader).up:
        return
    view = cluster.inspect(topic)
    followers = [r.broker_id for r in view.replica_views if r.broker_id != leader and r.up]
    for follower in followers:
        cluster.crash(follower)
    shrunk_after = cluster.options.broker_session_timeout_ms + 1000  # fenced, out of the ISR
    cluster.at(shrunk_after, _crash_for, cluster, leader, fault.duration_ms)
    for follower in followers:
        cluster.at(shrunk_after + fault.duration_ms / 2, _restart, cluster, follower)


_STARTS: dict[FaultKind, Callable] = {
    FaultKind.CRASH: _crash,
    FaultKind.CRASH_LEADER: _crash_leader,
    FaultKind.CRASH_LEADER_AFTER_ACK: _crash_leader_after_ack,
    FaultKind.PAUSE: _pause,
    FaultKind.ISOLATE: _isolate,
    FaultKind.SLOW_LINK: _slow_link,
    FaultKind.LOSE_NEXT_ACK: _lose_next_ack,
    FaultKind.LOSE_NEXT_REQUEST: _lose_next_request,
    FaultKind.SHRINK_ISR_THEN_CRASH_LEADER: _shrink_isr_then_crash_leader,
}
assert set(_STARTS) == set(FaultKind), "every fault kind needs a start function"


def _target(fault: Fault) -> int:
    if fault.target is None:
        raise ValueError(
            f"a {fault.kind} fault needs a target broker: Fault(at_ms, {fault.kind!r}, target=<broker id>)"
        )
    return fault.target


def _crash_for(cluster, broker_id: int | None, duration_ms: float) -> None:
    """Crash a live broker and restart it ``duration_ms`` later (nothing if it is down already)."""
    if broker_id is None or not cluster.inspect_broker(broker_id).up:
        return
    cluster.crash(broker_id)
    cluster.at(duration_ms, _restart, cluster, broker_id)


def _restart(cluster, broker_id: int) -> None:
    if not cluster.inspect_broker(broker_id).up:
        cluster.restart(broker_id)


def _resume(cluster, broker_id: int) -> None:
    if cluster.inspect_broker(broker_id).paused:
        cluster.resume(broker_id)
