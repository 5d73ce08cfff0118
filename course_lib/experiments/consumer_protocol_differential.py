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
import time

from ..broker import Cluster
from ..broker.group_coordinator import OFFSETS_TOPIC
from ..client_adapters import group_member, library_producer
from ..wire.cluster import WireCluster
from .java_differential import JavaDifference

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


class _Side:
    """The calls of a sequence with one client's group members (built by
    :func:`~course_lib.client_adapters.group_member`) and producer (its library's own,
    :func:`~course_lib.client_adapters.library_producer`) on one cluster; a subclass says how that
    cluster is faulted, read and waited on."""

    def __init__(self, client: str, bootstrap, topic: str, group: str, plan: tuple, member_ids=(), driver=None):
        self.client, self.bootstrap = client, bootstrap
        self.topic, self.group = topic, group
        self.plan, self.at = plan, 0
        self.borrowed = list(member_ids)  # the ids the members join with, in order (module docstring)
        self.members: dict = {}  # name -> GroupMember (live ones)
        self.seen: dict = {n: 0 for n in NAMES}
        self.owners: dict = {}  # partition -> name, at the last observation
        self.errors: list[str] = []
        self.member_ids: list[str] = []  # the member id of each join, in order
        self.producer = library_producer(client, bootstrap, {"acks": "all"}, driver=driver)

    # what a subclass provides
    def fault_coordinator(self) -> None:
        raise NotImplementedError

    def view(self) -> dict:
        raise NotImplementedError

    def settle_loop(self, settled) -> bool:
        """Poll the live members until ``settled()`` (False: it never was)."""
        raise NotImplementedError

    def _will_crash(self, name: str) -> bool:
        for later in self.plan[self.at :]:
            if later in (f"crash:{name}", f"join:{name}", f"close:{name}"):
                return later == f"crash:{name}"
        return False

    def make(self, name: str):
        """A member; one that will crash in a process of its own, so that killing it is a crash
        (a Java ``close()`` with REMAIN_IN_GROUP is not: a dynamic member still leaves)."""
        config = {
            "bootstrap.servers": self.bootstrap,
            "group.id": self.group,
            "group.protocol": "consumer",
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
        }
        member_id = self.borrowed.pop(0) if self.borrowed else None
        return group_member(self.client, config, [self.topic], own_process=self._will_crash(name), member_id=member_id)

    def poll_members(self) -> None:
        for name, member in sorted(self.members.items()):
            self.seen[name] += member.poll(POLL_S)

    def produce(self) -> None:
        for p in range(PARTITIONS):
            self.producer.send(self.topic, b"v", partition=p)
        self.producer.flush()

    def step(self, step: str) -> str:
        self.at += 1
        verb, _, name = step.partition(":")
        outcome = "ok"
        try:
            if verb == "join":
                self.members[name] = self.make(name)
            elif verb == "commit":
                self.members[name].commit()
            elif verb == "close":
                self.members.pop(name).close()
            elif verb == "crash":
                self.members.pop(name).kill()
            elif verb == "produce":
                self.produce()
            elif verb == "fault":
                self.fault_coordinator()
        except Exception as exc:  # noqa: BLE001 - success or failure is compared, not the class
            outcome = "failed"
            self.errors.append(f"{step}: {type(exc).__name__}: {exc}"[:300])
        if not self.settle_loop(self._settled):
            return f"{outcome} / not settled: {self._last}"
        if verb == "join" and name in self.members:
            self.member_ids.append(self._last[1][name][0])
        return f"{outcome} / {self.observe()}"

    _last: tuple = ({}, {})  # (group view, {name: MemberState}) at the last settle check

    def _settled(self) -> bool:
        view = self.view()
        clients = {name: member.state() for name, member in sorted(self.members.items())}
        self._last = (view, clients)
        if view["state"] not in ("Stable", "Empty") or len(view.get("members", {})) != len(clients):
            return False
        for member_id, epoch, partitions, positions in clients.values():
            if view["members"].get(member_id) != (epoch, partitions):
                return False
            if any(positions.get(p) != view["ends"][p] for p in partitions):
                return False
        return True

    def observe(self) -> str:
        view, clients = self._last
        owners = {p: name for name, (_, _, parts, _) in clients.items() for p in parts}
        moved = sum(1 for p, name in owners.items() if p in self.owners and self.owners[p] != name)
        self.owners = owners
        members = {name: (parts, epoch) for name, (_, epoch, parts, _) in clients.items()}
        seen = {n: s for n, s in self.seen.items() if s}
        return (
            f"members {members} group epoch {view.get('group_epoch')} moved {moved} "
            f"committed {dict(sorted(view['committed'].items()))} seen {seen}"
        )


class _SimulatedSide(_Side):
    """The simulator's members on a simulated Cluster of their own, in virtual time."""

    def __init__(self, seed: int, topic: str, group: str, plan: tuple, member_ids: list[str]):
        self.cluster = Cluster(3, seed=seed, **OPTIONS)
        self.cluster.create_topic(topic, partitions=PARTITIONS)
        super().__init__(SIMULATED, self.cluster, topic, group, plan, member_ids)

    def fault_coordinator(self) -> None:
        victim = _coordinator_broker(self.cluster, self.group)
        if victim is not None:
            self.cluster.crash(victim)
            self.cluster.run_for(100)
            self.cluster.restart(victim)
        self.cluster.run_until(lambda: _whole(self.cluster, self.topic), 60_000)

    def view(self) -> dict:
        return group_view(self.cluster, self.group, self.topic)

    def settle_loop(self, settled) -> bool:
        deadline = self.cluster.now + 120_000
        while self.cluster.now < deadline:
            self.poll_members()
            if settled():
                return True
            if not self.members:
                self.cluster.run_for(50)
        return False


class _WireSide(_Side):
    """``client``'s members on the wire cluster, in wall-clock time."""

    def __init__(self, client: str, wire: WireCluster, driver, topic: str, group: str, plan: tuple):
        self.wire = wire
        wire.create_topic(topic, partitions=PARTITIONS)
        super().__init__(client, wire.bootstrap_servers, topic, group, plan, driver=driver)

    def fault_coordinator(self) -> None:
        victim = self.wire.call(lambda: _coordinator_broker(self.wire.cluster, self.group))
        if victim is not None:
            self.wire.nemesis.crash(victim)
            self.wire.nemesis.restart(victim)
        if not self.wire.wait_until(lambda: _whole(self.wire.cluster, self.topic), 60):
            raise AssertionError("the wire cluster did not heal after the coordinator's crash")

    def view(self) -> dict:
        return self.wire.call(lambda: group_view(self.wire.cluster, self.group, self.topic))

    def settle_loop(self, settled) -> bool:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            self.poll_members()
            if settled():
                return True
            if not self.members:
                time.sleep(0.05)
        return False

    def stop(self) -> None:
        for member in self.members.values():
            try:
                member.close()
            except Exception:  # noqa: BLE001 - best effort at the end
                pass
        self.producer.close(timeout=5)


class ConsumerProtocolDifferential:
    """The differential on ``wire``; ``driver``: the Java producer's driver process (the Java
    members run in the Java adapter's shared driver, or in one of their own)."""

    def __init__(self, wire: WireCluster, driver):
        self.wire, self.driver = wire, driver

    def run(self, seed: int) -> list[ConsumerProtocolDifference]:
        plan = steps(seed)
        topic, group = f"cgp{seed}", f"cgp-{seed}"
        java = _WireSide(JAVA, self.wire, self.driver, topic, group, plan)
        try:
            java.produce()
            java.produce()
            java_out = [java.step(s) for s in plan]
        finally:
            java.stop()
        simulated = _SimulatedSide(seed, topic, group, plan, java.member_ids)
        simulated.produce()
        simulated.produce()
        sim_out = [simulated.step(s) for s in plan]
        errors = f" (simulator raised {simulated.errors}, Java raised {java.errors})"
        found = [
            ConsumerProtocolDifference(seed, plan, s + errors, a, b)
            for s, a, b in zip(plan, sim_out, java_out)
            if a != b
        ]
        return found[:1]  # after the first difference the two sides have parted
