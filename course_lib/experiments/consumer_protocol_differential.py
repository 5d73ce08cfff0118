"""The consumer-protocol differential (KIP-848): seeded sequences of consumer calls with faults
between them, through the simulator's own consumer with ``group_protocol="consumer"`` (on a
simulated :class:`~course_lib.broker.Cluster`) and through the Java client 4.3.1 with
``group.protocol=consumer`` (its driver process, :mod:`course_lib.java_client`, on the same
simulated brokers over TCP).

Members ``A``, ``B``, ``C`` of one group subscribe to a 4-partition topic; a sequence joins,
commits, closes (leave, epoch -1), crashes (no leave: a Java member that will crash runs in a
driver process of its own, killed; the coordinator removes it after its session timeout), produces, and crashes
the group coordinator's broker (the new coordinator restores the group from ``__consumer_offsets``:
nobody rejoins). After every call both sides poll their live
members until the group is settled - the coordinator's group ``Stable``, every live member
holding exactly what the coordinator assigned it at the epoch it has, and every member caught up
to the end of its partitions - and then compare:

- each member's partition count and member epoch (the client's own view, ``groupMetadata()``),
  the group epoch, and the partitions that moved between members since the last call;
- the committed offsets, and how many records each member has seen (records seen twice show as
  more records).

The assignors order members by member id, and the Java client draws its ids at random (KIP-1082):
so the Java side runs first and the simulated consumers take the ids the Java members drew, join
by join - then which member gets the odd partition is decided alike, and the comparison is exact
(each member's partitions, the committed offset of each partition, the records each member saw).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field

from ..broker import Cluster
from ..broker.group_coordinator import OFFSETS_TOPIC
from ..client_adapters import group_member, library_producer
from ..client_adapters.call_sequences import Action, Failures, SequenceCluster, replay
from ..wire.cluster import WireCluster
from .java_differential import JavaDifference
from .sequence_clusters import VirtualClock, WallClock

PARTITIONS = 4
#: the group coordinator's timers, short so that a crashed member is removed in seconds (the wire
#: cluster runs in real time); the same on both sides
OPTIONS = {
    "group_initial_rebalance_delay_ms": 0,
    "group_consumer_session_timeout_ms": 6000,
    "group_consumer_heartbeat_interval_ms": 500,
}
NAMES = ("A", "B", "C")


class ConsumerProtocolDifference(JavaDifference):
    WHAT = "consumer protocol"


def steps(seed: int) -> tuple[str, ...]:
    """``join:A``, then 5-8 calls drawn among join, commit, close, crash, produce and a crash of
    the group coordinator, each valid for the members live at that point."""
    rng = random.Random(seed)
    out = ["join:A"]
    live = ["A"]
    for _ in range(rng.randint(5, 8)):
        idle = [n for n in NAMES if n not in live]
        choices = ["produce", "fault:coordinator"]
        choices += [f"commit:{n}" for n in live] * 2
        choices += [f"join:{n}" for n in idle] * 3
        choices += [f"{verb}:{n}" for n in live if len(live) > 1 for verb in ("close", "crash")]
        step = rng.choice(choices)
        verb, _, name = step.partition(":")
        if verb == "join":
            live.append(name)
        elif verb in ("close", "crash"):
            live.remove(name)
        out.append(step)
    return tuple(out)


# ---- what both sides read from the simulated cluster -------------------------------------------
def coordinator(cluster: Cluster, group: str):
    """The live broker leading the group's ``__consumer_offsets`` partition (its coordinator), or None."""
    for broker in cluster.brokers.values():
        coord = broker.groups
        if broker.alive and coord.partition() is not None and group in coord.consumer_groups:
            return coord
    return None


def _end(cluster: Cluster, topic: str, partition: int) -> int:
    leader = cluster.leader_of(topic, partition)
    return -1 if leader is None else cluster.brokers[leader].partitions[(topic, partition)].log.hw


def group_view(cluster: Cluster, group: str, topic: str) -> dict:
    """The coordinator's group (state, epochs, members' assignments) and the committed offsets;
    ``state`` ``None`` while no coordinator knows the group."""
    coord = coordinator(cluster, group)
    ends = [_end(cluster, topic, p) for p in range(PARTITIONS)]
    if coord is None:
        return {"state": None, "ends": ends, "committed": {}}
    g = coord.consumer_groups[group]
    return {
        "state": g.state,
        "group_epoch": g.group_epoch,
        "members": {
            m.member_id: (m.member_epoch, sorted(p for t, ps in m.assigned.items() for p in ps))
            for m in g.members.values()
        },
        "ends": ends,
        "committed": {p: o for (t, p), o in coord.offsets.get(group, {}).items() if t == topic},
    }


def _whole(cluster: Cluster, topic: str) -> bool:
    if not all(b.alive for b in cluster.brokers.values()):
        return False
    for tp, state in cluster.controller.partitions.items():
        if tp[0] in (topic, OFFSETS_TOPIC) and (state.leader is None or len(state.isr) < len(state.replicas)):
            return False
    return True


def _coordinator_broker(cluster: Cluster, group: str) -> int | None:
    coord = coordinator(cluster, group)
    return None if coord is None else coord.broker.broker_id


# ---- one client on one cluster -----------------------------------------------------------------
#: the two clients compared: the simulator's on a simulated Cluster, Java's on the wire cluster
SIMULATED, JAVA = "simulator", "java"
#: how long each poll of a member waits, on either side
POLL_S = 0.05


def _joins_that_crash(plan: tuple) -> list[bool]:
    """For each join of ``plan``, in order: whether that member crashes (before it joins again or
    closes) - then it runs in a process of its own, so that killing it is a crash (a Java
    ``close()`` with REMAIN_IN_GROUP is not: a dynamic member still leaves)."""
    crashes = []
    for at, step in enumerate(plan):
        verb, _, name = step.partition(":")
        if verb == "join":
            ends = (s for s in plan[at + 1 :] if s in (f"crash:{name}", f"join:{name}", f"close:{name}"))
            crashes.append(next(ends, None) == f"crash:{name}")
    return crashes


def produce(producer, topic: str) -> None:
    """A record to each partition of ``topic``, flushed."""
    for p in range(PARTITIONS):
        producer.send(topic, b"v", partition=p)
    producer.flush()


@dataclass
class _Watch:
    """What a sequence has observed so far (no client: the group's view and the members' states)."""

    #: (group view, {name: MemberState}) at the last settle check
    last: tuple = ({}, {})
    owners: dict = field(default_factory=dict)  # partition -> name, at the last observation
    member_ids: list[str] = field(default_factory=list)  # the member id of each join, in order

    def settled(self, view: dict, clients: dict) -> bool:
        """The group ``Stable`` (or ``Empty``), every live member holding what the coordinator
        assigned it at its epoch, each caught up to the end of its partitions."""
        self.last = (view, clients)
        if view["state"] not in ("Stable", "Empty") or len(view.get("members", {})) != len(clients):
            return False
        for member_id, epoch, partitions, positions in clients.values():
            if view["members"].get(member_id) != (epoch, partitions):
                return False
            if any(positions.get(p) != view["ends"][p] for p in partitions):
                return False
        return True

    def observe(self, seen: dict) -> str:
        view, clients = self.last
        owners = {p: name for name, (_, _, parts, _) in clients.items() for p in parts}
        moved = sum(1 for p, name in owners.items() if p in self.owners and self.owners[p] != name)
        self.owners = owners
        members = {name: (parts, epoch) for name, (_, epoch, parts, _) in clients.items()}
        seen = {n: s for n, s in seen.items() if s}
        return (
            f"members {members} group epoch {view.get('group_epoch')} moved {moved} "
            f"committed {dict(sorted(view['committed'].items()))} seen {seen}"
        )


def _member_call(verb: str, name: str, members: dict, join: Callable[[str], None]) -> Action:
    """A plan's step on member ``name``: it joins, commits, leaves (close) or dies (kill)."""
    if verb == "join":
        return lambda _: join(name)
    if verb == "commit":
        return lambda _: members[name].commit()
    return lambda _: getattr(members.pop(name), "close" if verb == "close" else "kill")()


def group_steps(
    client: str, cluster: SequenceCluster, bootstrap, producer, topic: str, group: str, plan: tuple, member_ids=()
) -> tuple[list[str], list[str], list[str]]:
    """``client``'s group members (built by :func:`~course_lib.client_adapters.group_member`,
    joining with ``member_ids`` in order where given) and ``producer`` through ``plan`` on
    ``cluster`` (the call-sequence contract): after each step, once the group settled, what it
    observed; what each failed step raised; the member id each join drew. The members left are
    closed at the end."""
    members: dict = {}  # name -> GroupMember (live ones)
    seen = {n: 0 for n in NAMES}
    borrowed, crashes = list(member_ids), iter(_joins_that_crash(plan))
    watch, failures = _Watch(), Failures()
    config = {
        "bootstrap.servers": bootstrap,
        "group.id": group,
        "group.protocol": "consumer",
        "auto.offset.reset": "earliest",
        "enable.auto.commit": False,
    }

    def join(name: str) -> None:
        member_id = borrowed.pop(0) if borrowed else None
        members[name] = group_member(client, config, [topic], own_process=next(crashes), member_id=member_id)

    def fault_coordinator() -> None:
        victim = cluster.read(lambda c: _coordinator_broker(c, group))
        if victim is not None:
            cluster.fault("bounce", victim)
        if not cluster.wait_until(lambda c: _whole(c, topic), 60):
            raise AssertionError(f"{cluster.name} did not heal after the coordinator's crash")

    def poll() -> bool:
        for name, member in sorted(members.items()):
            seen[name] += member.poll(POLL_S)
        return bool(members)

    def settled() -> bool:
        view = cluster.read(lambda c: group_view(c, group, topic))
        return watch.settled(view, {name: member.state() for name, member in sorted(members.items())})

    def observed(step: str, said: str) -> str:
        if not cluster.poll_until(poll, settled):
            return f"{said} / not settled: {watch.last}"
        verb, _, name = step.partition(":")
        if verb == "join" and name in members:
            watch.member_ids.append(watch.last[1][name][0])
        return f"{said} / {watch.observe(seen)}"

    actions: dict[str, Action] = {
        "produce": lambda p: produce(p, topic),
        "fault:coordinator": lambda _: fault_coordinator(),
    }
    for n in NAMES:
        actions |= {
            f"{verb}:{n}": _member_call(verb, n, members, join) for verb in ("join", "commit", "close", "crash")
        }
    try:
        outcomes = replay(producer, plan, actions, outcome=failures, after=observed)
    finally:
        for member in members.values():
            try:
                member.close()
            except Exception:  # noqa: BLE001 - best effort at the end
                pass
    return outcomes, failures.errors, watch.member_ids


class ConsumerProtocolDifferential:
    """The differential on ``wire``; ``driver``: the Java producer's driver process (the Java
    members run in the Java adapter's shared driver, or in one of their own)."""

    def __init__(self, wire: WireCluster, driver):
        self.wire, self.driver = wire, driver

    def run(self, seed: int) -> list[ConsumerProtocolDifference]:
        plan = steps(seed)
        topic, group = f"cgp{seed}", f"cgp-{seed}"
        wire = self.wire
        wire.create_topic(topic, partitions=PARTITIONS)
        producer = library_producer(JAVA, wire.bootstrap_servers, {"acks": "all"}, driver=self.driver)
        try:
            produce(producer, topic)
            produce(producer, topic)
            java_out, java_errors, member_ids = group_steps(
                JAVA, WallClock(wire), wire.bootstrap_servers, producer, topic, group, plan
            )
        finally:
            producer.close(timeout=5)
        # the simulated members take the ids the Java members drew (module docstring)
        cluster = Cluster(3, seed=seed, **OPTIONS)
        cluster.create_topic(topic, partitions=PARTITIONS)
        producer = library_producer(SIMULATED, cluster, {"acks": "all"})
        produce(producer, topic)
        produce(producer, topic)
        sim_out, sim_errors, _ = group_steps(
            SIMULATED, VirtualClock(cluster), cluster, producer, topic, group, plan, member_ids
        )
        errors = f" (simulator raised {sim_errors}, Java raised {java_errors})"
        found = [
            ConsumerProtocolDifference(seed, plan, s + errors, a, b)
            for s, a, b in zip(plan, sim_out, java_out)
            if a != b
        ]
        return found[:1]  # after the first difference the two sides have parted
