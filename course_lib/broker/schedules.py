"""A fault schedule (:mod:`course_lib.nemesis`) applied to a simulated cluster: each fault started
on the cluster's event loop at its time, and healed after its duration.

The schedules themselves are neutral (drawn, printed, replayed anywhere); starting a fault is the
simulator's mechanism, so it lives with the simulator. The wire cluster, the simulator behind TCP,
runs the same functions on its simulation thread (:class:`course_lib.wire.nemesis.ScheduleTarget`).
"""

from __future__ import annotations

from typing import Callable

from ..clusters.faults import FaultTarget
from ..nemesis import NEEDS_TOPIC, Fault, FaultKind, fault_kind
from .broker import node_name
from .controller import CONTROLLER


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
