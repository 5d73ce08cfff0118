"""Each fault is declared once: a row of :data:`course_lib.clusters.faults.FAULTS`.

The backends' fault methods and the clusters' message faults are built from the rows; what is
left written by hand is each cluster's mechanism and the protocols. :data:`ALLOWED` lists every
``def`` in course_lib named after a fault (or a fault's hook), class by class, with why it is one:
a new hand-written fault method fails :func:`test_every_def_named_after_a_fault_is_allowed`.
The protocols are checked against the table (each part's declares its rows, each with its aim's
one signature); ``python tests/test_faults.py`` prints how often each fault is written
(:func:`fault_counts`), and :data:`MOST_DEFS` keeps the hand-written ``def``s from growing back.
"""

from __future__ import annotations

import ast
import inspect
import re
from pathlib import Path

import pytest

from course_lib.backend import ComposedBackend, MissingFault, SimBackend
from course_lib.broker.simulated_cluster import SimulatedCluster
from course_lib.backends.base import NemesisRole
from course_lib.clusters import (
    FAULTS,
    PART_FAULTS,
    Aim,
    BrokerFaults,
    BrokerProcessFaults,
    FaultSchedules,
    FaultTarget,
    LostRequests,
    MessageFaults,
    MessageFaultsAtLeader,
    NetworkPartitions,
    Part,
    RefusedRequests,
    VirtualTime,
    cluster_faults,
)
from course_lib.history import Nemesis
from course_lib.real.cluster import LocalCluster
from course_lib.real.connect import RemoteCluster
from course_lib.wire.cluster import WireCluster

PACKAGE = Path(__file__).resolve().parent.parent / "course_lib"

#: the names a hand-written fault method would have
FAULT_NAMES = {f.name for f in FAULTS} | {f.hook for f in FAULTS if f.aim is not Aim.MOMENT}  # "at": any clock's

BROKER = {"crash", "restart", "pause", "resume"}
MESSAGES = {"lose_next_ack", "lose_next_request"}

#: (module, class) -> (the fault-named defs it may have, why they are written by hand)
ALLOWED: dict[tuple[str, str], tuple[set[str], str]] = {
    # the protocols: what a part or a role promises
    ("clusters/parts.py", "BrokerProcessFaults"): (BROKER, "the broker faults of every part, role and target"),
    ("clusters/parts.py", "FaultSchedules"): ({"run_schedule"}, "protocol of the fault-schedules part"),
    ("clusters/parts.py", "NetworkPartitions"): ({"isolate"}, "protocol of the network-partitions part"),
    ("clusters/parts.py", "VirtualTime"): ({"lose_next_coordinator_response"}, "protocol of the virtual-time part"),
    ("clusters/faults.py", "FaultTarget"): (MESSAGES | {"isolate"}, "a schedule's faults aimed at a client, a broker"),
    ("backends/base.py", "NemesisRole"): (
        {"schedule_faults", "lose_next_coordinator_response"},
        "protocol of a backend's nemesis role: the faults no row's aim gives a signature",
    ),
    # the backends: what the table cannot build (a schedule's draws, a fault timed on a clock)
    ("backends/base.py", "Common"): (
        {"lose_next_coordinator_response"},
        "the cluster's virtual time loses it, a wall clock says why it cannot",
    ),
    ("backends/sim.py", "SimBackend"): ({"schedule_faults"}, "draws a schedule and runs it on the virtual clock"),
    ("backends/composed.py", "ComposedBackend"): ({"schedule_faults"}, "draws a schedule, recorded as it starts"),
    # the simulator's mechanism: the simulation itself, and the seam's simulated cluster
    ("broker/cluster.py", "Cluster"): (BROKER | MESSAGES | {"isolate"}, "the simulation's processes and network"),
    ("broker/broker.py", "Broker"): (BROKER, "what a crash, restart or pause does to one simulated broker"),
    ("sim/network.py", "Network"): ({"isolate"}, "the simulated network cuts a node off"),
    ("broker/simulated_cluster.py", "SimulatedCluster"): (
        {"restart", "run_schedule", "lose_next_coordinator_response"},
        "the seam's parts on the simulation: restart waits on the virtual clock (the rest: BrokerFaultsHandedOn)",
    ),
    # the wire cluster's mechanism: what a fault means for TCP sockets
    ("wire/cluster.py", "WireCluster"): (
        {"restart", "run_schedule"},
        "a restart waits on the wall clock; a schedule runs on the simulation thread (the rest: BrokerFaultsHandedOn)",
    ),
    ("wire/nemesis.py", "WireNemesis"): (
        {"crash", "restart", "refuse_next_request", "run_schedule"},
        "the wire nemesis: a killed listener, a refusal armed for the gateway",
    ),
    # real Kafka's mechanism: processes this program runs, or a cluster run elsewhere
    ("real/cluster.py", "LocalCluster"): (BROKER, "signals to broker JVMs"),
    # not a cluster's fault: a button, and client or application processes that crash
    ("clients/consumer.py", "KafkaConsumer"): ({"crash", "pause", "resume"}, "a client: crash_client, pause()"),
    ("clients/producer.py", "KafkaProducer"): ({"crash"}, "a client process crashes (crash_client)"),
    ("clients/share_consumer.py", "ShareConsumer"): ({"crash"}, "a client process crashes (crash_client)"),
    ("client_adapters/recorded.py", "RecordedProducer"): ({"crash"}, "a client process crashes (crash_client)"),
    ("client_adapters/recorded.py", "RecordedConsumer"): ({"crash"}, "a client process crashes (crash_client)"),
    ("client_adapters/recording.py", "RecordingProducer"): ({"crash"}, "a client process crashes (crash_client)"),
    ("client_adapters/recording.py", "RecordingConsumer"): ({"crash"}, "a client process crashes (crash_client)"),
    ("client_adapters/share_worker.py", "ShareWorker"): (
        {"crash"},
        "a share worker's process crashes (its client's kill)",
    ),
    ("client_adapters/share_worker.py", "SteppedWorker"): (
        {"crash"},
        "a share scenario's worker process crashes (the simulator's client, in virtual time)",
    ),
    ("broker/partition.py", "Partition"): ({"crash"}, "a replica loses its memory with its broker"),
    ("broker/share_partition.py", "SharePartitionManager"): ({"crash"}, "share state lost with its broker"),
    ("broker/dead_letter_queue.py", "DeadLetterWriter"): ({"crash"}, "pending writes lost with its broker"),
    ("application/consumer_groups.py", "App"): ({"crash"}, "an application process crashes"),
    ("application/consumer_groups.py", "GroupRun"): (
        {"crash", "restart"},
        "a group member's application crashes, restarts",
    ),
    ("application/processing.py", "Processor"): ({"crash"}, "an application process crashes"),
    ("application/supervisor.py", "Instance"): ({"crash"}, "a supervised application instance crashes"),
}


def fault_named_defs() -> dict[tuple[str, str], set[str]]:
    """Every ``def`` in course_lib named after a fault, by (module, class); a nested def counts
    for its enclosing class (WireNemesis.crash's inner ``crash``)."""
    found: dict[tuple[str, str], set[str]] = {}

    def walk(node: ast.AST, module: str, owner: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef):
                walk(child, module, child.name)
                continue
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)) and child.name in FAULT_NAMES:
                found.setdefault((module, owner), set()).add(child.name)
            walk(child, module, owner)

    for path in sorted(PACKAGE.rglob("*.py")):
        walk(ast.parse(path.read_text()), str(path.relative_to(PACKAGE)), "")
    return found


def test_every_def_named_after_a_fault_is_allowed():
    found = fault_named_defs()
    new = {where: sorted(names - ALLOWED.get(where, (set(), ""))[0]) for where, names in found.items()}
    assert not {where: names for where, names in new.items() if names}, (
        "a fault method written by hand: add a row to course_lib/clusters/faults.py (the backends' and "
        "clusters' methods follow from it) and write only the cluster's mechanism; or, if it is one, "
        "list it in ALLOWED with why"
    )
    gone = {where: sorted(names - found.get(where, set())) for where, (names, _) in ALLOWED.items()}
    assert not {where: names for where, names in gone.items() if names}, "ALLOWED lists defs that are gone"


def test_the_table_is_the_parts_faults():
    assert [f.op for f in FAULTS] == list(dict.fromkeys(f.op for f in FAULTS)), "one row per fault"
    assert set(PART_FAULTS) == set(Part) and all(PART_FAULTS.values()), "every part provides a fault"
    assert cluster_faults({}) == {f.op for f in FAULTS}
    assert all(getattr(Nemesis, f.op.upper()) == f.op for f in FAULTS if f.op != Nemesis.SCHEDULE)


# ---- every row reachable where its part is, a MissingFault naming the part where it is not -------
#: a cluster of each kind, not started (no JVM, no thread, no port)
CLUSTERS = {
    "simulated": lambda: SimulatedCluster(seed=1),
    "wire": lambda: WireCluster.lab(seed=1),
    "local": LocalCluster,
    "remote": lambda: RemoteCluster("kafka.example:9092", prefix="alice"),
}


@pytest.mark.parametrize("kind", CLUSTERS)
def test_every_cluster_has_the_hook_of_each_fault_of_its_parts(kind):
    cluster = CLUSTERS[kind]()
    try:
        missing = cluster.missing_parts()
        hooks = {f.hook for f in FAULTS if f.part not in missing}
        assert {hook for hook in hooks if not callable(getattr(cluster, hook, None))} == set()
    finally:
        getattr(cluster, "stop", lambda: None)()


class Producer:
    node_id = "producer-1"


class FakeCluster(MessageFaultsAtLeader):
    """A cluster with the parts not in ``missing``, which notes each hook it is asked for."""

    label = "fake"
    description = "a fake cluster"

    def __init__(self, missing: dict[str, str]) -> None:
        self.missing = missing
        self.calls: list[tuple] = []

    def missing_parts(self) -> dict[str, str]:
        return dict(self.missing)

    def record_events_into(self, history) -> None:
        pass

    def _message_fault(self, fault, topic: str, partition: int, followed: bool) -> int:
        self.calls.append((fault.hook, topic, partition))
        return 2

    def __getattr__(self, name: str):
        if name not in BROKER:
            raise AttributeError(name)
        return lambda broker, **how: self.calls.append((name, broker, *how.values()))


#: how a backend's method for a row is called, by the row's aim
CALL = {Aim.BROKER: lambda method: method(1), Aim.PRODUCE: lambda method: method(Producer(), "t")}
BACKEND_ROWS = [f for f in FAULTS if f.aim in CALL]


@pytest.mark.parametrize("fault", BACKEND_ROWS, ids=lambda f: f.name)
def test_a_composed_backend_injects_each_row_through_the_part_and_records_it(fault):
    cluster = FakeCluster({})
    backend = ComposedBackend(cluster)
    CALL[fault.aim](getattr(backend, fault.name))
    assert cluster.calls[0][0] == fault.hook
    assert [op.f for op in backend.history if op.process == "nemesis"] == [fault.op]


@pytest.mark.parametrize("fault", BACKEND_ROWS, ids=lambda f: f.name)
def test_a_backend_lacking_the_part_says_which_and_why(fault):
    why = {part: f"no {part} here, for a reason" for part in Part}
    backend = ComposedBackend(FakeCluster(why))
    with pytest.raises(MissingFault, match=f"{fault.part} are missing: no {fault.part} here, for a reason"):
        CALL[fault.aim](getattr(backend, fault.name))


@pytest.mark.parametrize("fault", BACKEND_ROWS, ids=lambda f: f.name)
def test_the_simulator_injects_each_row_of_its_parts(fault):
    backend = SimBackend.start(seed=1)
    backend.create_topic("t", min_insync_replicas=2)
    if fault.part in backend.missing_parts:
        with pytest.raises(MissingFault, match=f"{fault.part} are missing: the simulated brokers check no"):
            CALL[fault.aim](getattr(backend, fault.name))
        return
    if fault.name in ("restart", "resume"):  # undoes a crash, a pause: one first
        backend.crash(1) if fault.name == "restart" else backend.pause(1)
    CALL[fault.aim](getattr(backend, fault.name))
    assert [op.f for op in backend.history if op.process == "nemesis"][-1] == fault.op


# ---- message faults are the gateway's and the network's, never an API handler's ------------------
def test_no_wire_api_handler_knows_of_a_fault():
    """A request reaches its API handler (course_lib/wire/apis/) as the client sent it, and the
    handler's request to the broker leaves through the gateway (``Gateway._send``), where the
    message faults act: no handler names a fault, its hook or the nemesis."""
    words = {f.name for f in FAULTS if f.aim is Aim.PRODUCE} | {"nemesis", "refuses_next_produce"}
    named = {
        str(path.relative_to(PACKAGE)): sorted(w for w in words if re.search(rf"\b{w}\b", path.read_text()))
        for path in sorted((PACKAGE / "wire" / "apis").rglob("*.py"))
    }
    assert {path: words for path, words in named.items() if words} == {}


# ---- each protocol declares its rows with the signature of their aim --------------------------------
#: the protocol of each part (course_lib.clusters.parts)
PART_PROTOCOL = {
    Part.BROKER_FAULTS: BrokerFaults,
    Part.MESSAGE_FAULTS: MessageFaults,
    Part.LOST_REQUESTS: LostRequests,
    Part.REFUSED_REQUESTS: RefusedRequests,
    Part.FAULT_SCHEDULES: FaultSchedules,
    Part.NETWORK_PARTITIONS: NetworkPartitions,
    Part.VIRTUAL_TIME: VirtualTime,
}


def declared(protocol: type, name: str):
    """What ``protocol`` (or a base) declares ``name`` as: its annotation's name, else the stub."""
    for klass in protocol.__mro__:
        if name in vars(klass).get("__annotations__", {}):
            return klass.__annotations__[name]
        if name in vars(klass):
            return vars(klass)[name]
    return None


def test_each_part_protocol_declares_the_hooks_of_its_rows():
    missing = {
        f.name: PART_PROTOCOL[f.part].__name__ for f in FAULTS if declared(PART_PROTOCOL[f.part], f.hook) is None
    }
    assert missing == {}


def test_the_aim_decides_the_signature_in_every_protocol():
    """A row's method has its aim's one signature wherever it is declared: a broker fault the stub of
    BrokerProcessFaults (a part's, a backend's, a schedule target's), a node's ``(node)`` on a
    cluster and a schedule's target, a message fault AtLeader on a cluster and AtProducer on a
    backend."""
    broker = [f for f in FAULTS if f.aim is Aim.BROKER]
    stubs = {str(inspect.signature(declared(BrokerProcessFaults, f.hook))) for f in broker}
    assert stubs == {"(self, broker_id: 'int', /) -> 'None'"}
    for protocol in (BrokerFaults, NemesisRole, FaultTarget):
        assert all(declared(protocol, f.hook) is vars(BrokerProcessFaults)[f.hook] for f in broker), protocol
    node = [f for f in FAULTS if f.aim is Aim.NODE]
    for protocol in (NetworkPartitions, FaultTarget):
        assert {str(inspect.signature(declared(protocol, f.hook))) for f in node} == {
            "(self, node: 'int | str', /) -> 'None'"
        }, protocol
    produce = [f for f in FAULTS if f.aim is Aim.PRODUCE]
    assert {f.name: declared(PART_PROTOCOL[f.part], f.hook) for f in produce} == dict.fromkeys(
        (f.name for f in produce), "AtLeader"
    )
    assert {f.name: declared(NemesisRole, f.name) for f in produce} == dict.fromkeys(
        (f.name for f in produce), "AtProducer"
    )


# ---- how many times each fault is written: `python tests/test_faults.py` prints it ------------------
#: the faults and hooks counted (a row's name, and its hook where that is another name)
COUNTED = list(dict.fromkeys(name for f in FAULTS for name in (f.name, f.hook) if name != "at"))


def fault_counts() -> dict[str, tuple[int, int, int, int, int]]:
    """Per fault: (``def``s of its name in course_lib, their distinct argument lists, the files with
    such a def, the class attributes of its name - a declaration such as ``lose_next_ack: AtLeader``
    or a method built from the row - and the files that name it at all)."""
    found: dict[str, tuple[int, set[str], set[Path], int, set[Path]]] = {
        n: (0, set(), set(), 0, set()) for n in COUNTED
    }
    for path in sorted(PACKAGE.rglob("*.py")):
        text = path.read_text()
        nodes = list(ast.walk(ast.parse(text)))
        for name in COUNTED:
            defs, sigs, files, attrs, naming = found[name]
            if re.search(rf"\b{name}\b", text):
                naming.add(path)
            for node in nodes:
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
                    defs += 1
                    sigs.add(ast.unparse(node.args))
                    files.add(path)
                elif isinstance(node, ast.ClassDef):
                    attrs += sum(1 for st in node.body if _assigned_name(st) == name)
            found[name] = (defs, sigs, files, attrs, naming)
    return {n: (d, len(s), len(f), a, len(m)) for n, (d, s, f, a, m) in found.items()}


def _assigned_name(statement: ast.stmt) -> str | None:
    target = statement.target if isinstance(statement, ast.AnnAssign) else None
    if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
        target = statement.targets[0]
    return target.id if isinstance(target, ast.Name) else None


#: at most this many hand-written ``def``s per fault (issue 37: a fault is declared once; what is
#: left is each cluster's mechanism and ALLOWED's protocols, so a new one fails here too)
MOST_DEFS = {
    "lose_next_ack": 2,
    "lose_next_request": 2,
    "refuse_next_request": 1,
    "isolate": 4,
    "crash": 25,
    "restart": 9,
    "pause": 5,
    "resume": 5,
    "run_schedule": 4,
    "lose_next_coordinator_response": 4,
}


def test_faults_are_written_no_more_often_than_counted():
    counts = fault_counts()
    print("\nfault: defs / signatures / files with a def / class attributes / files naming it")
    for name, row in counts.items():
        print(f"{name}: " + " / ".join(map(str, row)))
    over = {name: counts[name][0] for name, most in MOST_DEFS.items() if counts[name][0] > most}
    assert over == {}, "a fault method written by hand again: derive it from its row"


if __name__ == "__main__":
    for name, row in fault_counts().items():
        print(f"{name}: " + " / ".join(map(str, row)))


def test_a_coordinator_response_is_lost_on_virtual_time_and_missing_on_a_wall_clock():
    sim = SimBackend.start(seed=1)
    sim.lose_next_coordinator_response()
    assert sim.cluster.cluster.network.armed_drops("coordinator_response")
    why = {Part.VIRTUAL_TIME: "its clock is the wall's"}
    with pytest.raises(MissingFault, match="virtual time are missing: its clock is the wall's"):
        ComposedBackend(FakeCluster(why)).lose_next_coordinator_response()
