"""The layers of course_lib, checked on the import graph (every ``import`` anywhere in a module,
followed transitively across modules) and on the scenario code itself:

- scenarios, the consumer application and consumer groups reach a cluster only through
  :mod:`course_lib.backend` (the seam): walking their imports without passing through it never
  reaches the simulator (``sim``, ``broker``, ``clients``) or real Kafka (``real``);
- the history and the checker (the judge) reach neither, by any path;
- scenario code says *what* happens, never *which* backend runs it: no ``pick``, ``kafka_ms``,
  ``.kind``, ``.cluster``, and no comparison with a backend's name;
- below the seam, the clusters and clients are two axes: no cluster package imports another, the
  seam or the scenarios; no module there asks which class a cluster is; every cluster and client
  adapter has a typed conformance line (tests/test_seam_types.py, checked by mypy); each client
  composed with each cluster it supports runs ``aborted_transaction`` here, and one experiment
  per workload in tests/test_composition.py (tests/real/test_composition_real.py on Kafka);
- a client library's clients (kafka-python's, confluent-kafka's, the Java client's) are built by
  the client adapters only (a differential gets the library's own clients from
  ``library_producer`` / ``library_consumer``, its group members from ``group_member``; a
  cluster's own ready check and a shared cluster's learner clients too): no class elsewhere
  builds or subclasses one;
- every registered experiment declares that it returns the one result type,
  :class:`course_lib.judge.result.Result`.
"""

from __future__ import annotations

import ast
import importlib
import tomllib
import typing
from pathlib import Path

import pytest

from course_lib.backend import ComposedBackend, SimBackend
from course_lib.broker.simulated_cluster import SimulatedCluster
from course_lib.client_adapters import CLIENTS, java_missing
from course_lib.client_adapters.simulated import SimulatedClients
from course_lib.experiments.registry import EXPERIMENTS, FAMILIES, Experiment
from course_lib.experiments.scenarios import run_scenario
from course_lib.judge.result import Result

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "course_lib"

#: the modules through which the layers above may reach a backend
SEAM = ("course_lib.backend", "course_lib.backends")
#: what a layer above the seam must not reach without it
BACKEND_PACKAGES = ("course_lib.sim", "course_lib.broker", "course_lib.clients", "course_lib.real")
ABOVE_THE_SEAM = (
    "course_lib.experiments.scenarios",
    "course_lib.experiments.consumer_scenarios",
    "course_lib.experiments.scenario_framework",
    "course_lib.application.processing",
    "course_lib.application.consumer_groups",
)
JUDGE = (
    "course_lib.history",
    "course_lib.judge.checker",
    "course_lib.judge.check_result",
    "course_lib.judge.guarantees",
    "course_lib.judge.result",
)
#: scenario code that must not branch on the backend
BACKEND_BLIND = (
    "experiments/scenarios.py",
    "experiments/consumer_scenarios.py",
    "experiments/scenario_framework.py",
    "application/processing.py",
    "application/consumer_groups.py",
)
BACKEND_NAMES = {"simulator", "kafka", "sim", "real"}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in PACKAGE.rglob("*.py")}


def _under(name: str, prefixes) -> bool:
    return any(name == p or name.startswith(p + ".") for p in prefixes)


def _imports(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """Every course_lib module ``name`` imports (at any depth of its code), with the packages
    each import runs on the way (importing a.b.c runs a.b's ``__init__``)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            targets = [base]
            targets += [f"{base}.{a.name}" for a in node.names if f"{base}.{a.name}" in known]
        for target in targets:
            parts = target.split(".")
            found |= {".".join(parts[:i]) for i in range(2, len(parts) + 1)} & known.keys()
    found.discard("course_lib")  # the package root imports nothing heavy (checked below)
    return found


@pytest.fixture(scope="module")
def graph() -> dict[str, set[str]]:
    known = _modules()
    return {name: _imports(name, path, known) for name, path in known.items()}


def _reachable(graph, start: str, stop_at=()) -> dict[str, list[str]]:
    """Every module reachable from ``start`` without passing through ``stop_at``, with one path."""
    paths = {start: [start]}
    todo = [start]
    while todo:
        here = todo.pop()
        for nxt in sorted(graph[here]):
            if nxt in paths or _under(nxt, stop_at):
                continue
            paths[nxt] = [*paths[here], nxt]
            todo.append(nxt)
    return paths


def test_the_package_root_imports_no_course_module():
    # but the interpreter mend that must hold wherever course_lib runs, itself a leaf
    known = _modules()
    assert _imports("course_lib", PACKAGE / "__init__.py", known) <= {"course_lib.ast_lock"}
    assert not _imports("course_lib.ast_lock", PACKAGE / "ast_lock.py", known)


@pytest.mark.parametrize("layer", ABOVE_THE_SEAM)
def test_scenario_layers_reach_a_cluster_only_through_the_backend(graph, layer):
    crossed = {m: p for m, p in _reachable(graph, layer, stop_at=SEAM).items() if _under(m, BACKEND_PACKAGES)}
    assert not crossed, f"{layer} reaches a backend without the seam: " + "; ".join(
        " -> ".join(p) for p in crossed.values()
    )


@pytest.mark.parametrize("layer", JUDGE)
def test_history_and_checker_reach_no_backend_at_all(graph, layer):
    crossed = {m: p for m, p in _reachable(graph, layer).items() if _under(m, BACKEND_PACKAGES + SEAM)}
    assert not crossed, f"{layer} depends on a backend: " + "; ".join(" -> ".join(p) for p in crossed.values())


def _backend_mentions(source: str, filename: str) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(source, filename)):
        where = f"{filename}:{getattr(node, 'lineno', '?')}"
        if isinstance(node, ast.Attribute) and node.attr in ("kind", "cluster", "pick"):
            found.append(f"{where} .{node.attr}")
        elif isinstance(node, ast.Name) and node.id == "pick":
            found.append(f"{where} pick")
        elif isinstance(node, ast.keyword) and node.arg == "kafka_ms":
            found.append(f"{where} kafka_ms=")
        elif isinstance(node, ast.Compare):
            for side in (node.left, *node.comparators):
                if isinstance(side, ast.Constant) and side.value in BACKEND_NAMES:
                    found.append(f"{where} compares with {side.value!r}")
    return found


@pytest.mark.parametrize("filename", BACKEND_BLIND)
def test_scenario_code_never_asks_which_backend_runs_it(filename):
    mentions = _backend_mentions((PACKAGE / filename).read_text(), filename)
    assert not mentions, "say what happens (a Backend intent), not which backend: " + ", ".join(mentions)


#: the client and cluster names an experiment must not dispatch on, besides the backends'
DISPATCH_NAMES = {"wire", "simulated", "kafka-python", "confluent-kafka", "java"}
#: what is left of the dispatch on a backend, cluster or client inside the experiments, per module:
#: (mentions at most, why). The tables' columns carry their place and client (experiments/matrix.py
#: runs every cell by one code path, none asks which one it is); the share experiments reach the
#: wire cluster's simulated ``cluster`` on its thread; the differentials' simulated sides drive the
#: simulated cluster they compare with a client's. A module not listed has none, and a count may
#: only go down.
DISPATCH_LEFT = {
    "experiments/differential.py": (14, "it reads the simulated cluster it compares and its messages' kinds"),
    "experiments/sequence_clusters.py": (3, "the wire cluster's side of a call sequence reads its simulated cluster"),
    "experiments/share_differential.py": (10, "its sides keep the cluster they run on (the simulator's their own)"),
    "experiments/share_group_experiments.py": (1, "the share invariants watch the wire cluster's simulated cluster"),
}


def _dispatch_mentions(path: Path, root: Path = PACKAGE) -> list[str]:
    names = BACKEND_NAMES | DISPATCH_NAMES
    return [
        m
        for m in _backend_mentions(path.read_text(), str(path.relative_to(root)))
        if " compares with " not in m or m.rsplit(" ", 1)[1].strip("'") in names
    ] + [
        f"{path.relative_to(root)}:{node.lineno} compares with {side.value!r}"
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Compare)
        for side in (node.left, *node.comparators)
        if isinstance(side, ast.Constant) and side.value in DISPATCH_NAMES - BACKEND_NAMES
    ]


def test_no_experiment_dispatches_on_a_backend_a_cluster_or_a_client_more_than_it_did():
    found = {}
    for path in sorted([*(PACKAGE / "experiments").rglob("*.py"), *(PACKAGE / "application").rglob("*.py")]):
        mentions = _dispatch_mentions(path)
        allowed, _why = DISPATCH_LEFT.get(str(path.relative_to(PACKAGE)), (0, ""))
        if len(mentions) > allowed:
            found[str(path.relative_to(PACKAGE))] = mentions
    assert not found, (
        "an experiment says which backend, cluster or client runs it (compose it from the contracts, "
        f"or ask a cluster's parts): {found}"
    )
    for module, (allowed, _why) in DISPATCH_LEFT.items():
        assert len(_dispatch_mentions(PACKAGE / module)) == allowed, f"{module}: fewer now - lower DISPATCH_LEFT"


def test_the_dispatch_check_can_fail(tmp_path):
    package = tmp_path / "experiments"
    package.mkdir()
    (package / "x.py").write_text("def f(col):\n    return col.client == 'java' or col.where == 'wire'\n")
    assert len(_dispatch_mentions(package / "x.py", tmp_path)) == 2


def test_the_mention_check_can_fail():
    leaky = (
        "def s(b):\n"
        "    b.wait(0, kafka_ms=500)\n"
        "    step = b.pick(simulator=1, kafka=10)\n"
        "    if b.kind == 'simulator':\n"
        "        b.cluster.network.drop_next()\n"
    )
    kinds = {m.split(" ", 1)[1] for m in _backend_mentions(leaky, "leaky.py")}
    assert kinds == {"kafka_ms=", ".pick", ".kind", ".cluster", "compares with 'simulator'"}


def test_the_layer_walk_follows_imports_across_modules():
    # a -> b (function-level, relative) -> c.d (the simulator): a crosses, through b
    graph = {"x.a": {"x.b"}, "x.b": {"x.c", "x.c.d"}, "x.c": set(), "x.c.d": set()}
    assert _reachable(graph, "x.a")["x.c.d"] == ["x.a", "x.b", "x.c.d"]
    assert "x.c.d" not in _reachable(graph, "x.a", stop_at=("x.b",))
    known = _modules()
    scen = _imports("course_lib.experiments.scenarios", PACKAGE / "experiments" / "scenarios.py", known)
    assert {
        "course_lib.backend",
        "course_lib.experiments.scenario_framework",
        "course_lib.application.processing",
    } <= scen


# ---- the two axes below the seam ------------------------------------------------------------------
#: the cluster packages: each is one cluster (or its plumbing), none knows another
CLUSTER_PACKAGES = ("course_lib.real", "course_lib.wire", "course_lib.broker")
#: what no cluster package may import: the other clusters, the seam, what runs above it
ABOVE_THE_CLUSTERS = ("course_lib.experiments.scenarios", "course_lib.experiments.fidelity", *SEAM, *ABOVE_THE_SEAM)
#: below the seam: the adapters and the clusters
BELOW_THE_SEAM = (*SEAM, "course_lib.clusters", "course_lib.client_adapters", *CLUSTER_PACKAGES)
#: the cluster classes (and the one that pretended to be one)
CLUSTER_CLASSES = {"Cluster", "LocalCluster", "RemoteCluster", "WireCluster", "WireLab"}
#: the scenario each client x cluster composition runs here besides its workloads' experiments
#: (tests/test_composition.py runs leader_crash_after_ack, the producer workload's)
COMPOSED_SCENARIOS = ("aborted_transaction",)


@pytest.mark.parametrize("package", CLUSTER_PACKAGES)
def test_no_cluster_package_imports_another_the_seam_or_the_scenarios(graph, package):
    others = tuple(p for p in CLUSTER_PACKAGES if p != package and p != "course_lib.broker")
    forbidden = (*others, *ABOVE_THE_CLUSTERS)
    for name in (m for m in graph if _under(m, (package,))):
        wrong = sorted(m for m in graph[name] if _under(m, forbidden))
        assert not wrong, f"{name} imports {wrong}: a cluster knows only itself and course_lib.clusters"


def _class_tests(source: str, filename: str) -> list[str]:
    """``isinstance(x, <a cluster class>)``: asking which cluster it is."""
    found = []
    for node in ast.walk(ast.parse(source, filename)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "isinstance":
            classes = node.args[1:] and node.args[1]
            names = {n.id for n in ast.walk(classes) if isinstance(n, ast.Name)} if classes else set()
            names |= {n.attr for n in ast.walk(classes) if isinstance(n, ast.Attribute)} if classes else set()
            if names & CLUSTER_CLASSES:
                found.append(f"{filename}:{node.lineno} isinstance(..., {sorted(names & CLUSTER_CLASSES)})")
    return found


def test_no_module_below_the_seam_asks_which_class_a_cluster_is():
    # what a cluster can do is its parts (missing_parts()), never its class
    below = [
        (m, p) for m, p in _modules().items() if _under(m, BELOW_THE_SEAM) and not _under(m, ("course_lib.broker",))
    ]
    found = [hit for m, p in sorted(below) for hit in _class_tests(p.read_text(), m)]
    assert not found, found


def test_the_class_check_can_fail():
    code = "if isinstance(cluster, LocalCluster): pass\nok = isinstance(b, (int, real.WireCluster))\n"
    assert len(_class_tests(code, "x.py")) == 2


def _conformance_lines() -> str:
    return (ROOT / "tests" / "test_seam_types.py").read_text()


def test_every_cluster_and_client_adapter_has_a_typed_conformance_test():
    mypy_files = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["mypy"]["files"]
    assert "tests/test_seam_types.py" in mypy_files, "the conformance file must be checked by mypy"
    source = _conformance_lines()
    tree = ast.parse(source)
    typed: dict[str, str] = {}  # each adapter a conformance function takes -> the protocols it is returned as
    for fn in (f for f in tree.body if isinstance(f, ast.FunctionDef) and f.returns is not None):
        for arg in fn.args.args:
            if isinstance(arg.annotation, ast.Name):
                typed[arg.annotation.id] = typed.get(arg.annotation.id, "") + " " + ast.unparse(fn.returns)
    clusters = {"LocalCluster", "RemoteCluster", "WireCluster", "SimulatedCluster"}
    clients = {type(make()).__name__ for make in CLIENTS.values()} | {"SimulatedClients"}
    for adapter in clusters:
        assert "Topology" in typed.get(adapter, ""), f"{adapter} has no typed conformance line"
    for adapter in clients:
        assert "ClientSide" in typed.get(adapter, ""), f"client adapter {adapter} has no typed conformance line"
    for backend in ("ComposedBackend", "SimBackend"):
        assert all(role in typed.get(backend, "") for role in ("TopologyRole", "ClockRole", "FinalPhaseRole"))


@pytest.fixture(scope="module")
def wire_cluster():
    from course_lib.wire.cluster import WireCluster

    with WireCluster.lab(seed=1) as wire:
        yield wire
    from course_lib.client_adapters.for_java import stop_driver

    stop_driver()  # the Java client's driver process, if a test started it


@pytest.mark.parametrize("scenario", COMPOSED_SCENARIOS)
def test_the_simulators_clients_on_the_simulated_cluster_run_the_scenarios(scenario):
    # the simulator's pair: its clients on its cluster (one process, one virtual clock)
    pair = SimBackend(SimulatedCluster(seed=1), SimulatedClients())
    result = run_scenario(scenario, backend=pair, seed=1)
    assert result.backend == "simulator" and result.history.ops == run_scenario(scenario, seed=1).history.ops
    assert result.anomalies == result.expected, result.result.summary()


@pytest.mark.parametrize("client", sorted(CLIENTS))
@pytest.mark.parametrize("scenario", COMPOSED_SCENARIOS)
def test_each_client_composed_with_the_wire_cluster_runs_the_scenarios(wire_cluster, client, scenario):
    if client == "java" and java_missing():
        pytest.skip(java_missing())
    backend = ComposedBackend(wire_cluster, CLIENTS[client]())
    try:
        result = run_scenario(scenario, backend=backend, seed=1)
    finally:
        wire_cluster.revive()
    assert result.backend == "wire" and backend.clients.name == client
    assert result.anomalies == result.expected == run_scenario(scenario, seed=1).anomalies, result.result.summary()


# ---- clients are built by their adapters ---------------------------------------------------------
#: the client libraries' client classes: an experiment gets one from an adapter
#: (course_lib/client_adapters: CLIENTS, SHARE_CLIENTS, GROUP_CLIENTS, LIBRARY_PRODUCERS,
#: LIBRARY_CONSUMERS), never builds or wraps one
CLIENT_CLASSES = {
    "kafka": {"KafkaConsumer", "KafkaProducer"},
    "confluent_kafka": {"Consumer", "Producer", "ShareConsumer"},
    "course_lib.java_client": {"JavaConsumer", "JavaProducer", "JavaShareConsumer"},
}


def _bound(nodes) -> dict[str, bool]:
    """The names the imports among ``nodes`` bind -> whether to a library's client class (``from
    kafka import KafkaConsumer as RealConsumer`` binds RealConsumer; ``import confluent_kafka as
    ck`` binds ck.Consumer, ...)."""
    bound: dict[str, bool] = {}
    for node in nodes:
        if isinstance(node, ast.ImportFrom) and node.module:
            module = node.module if node.level == 0 else f"course_lib.{node.module}"
            classes = next(
                (c for lib, c in CLIENT_CLASSES.items() if module == lib or module.startswith(lib + ".")), set()
            )
            bound |= {alias.asname or alias.name: alias.name in classes for alias in node.names}
        if isinstance(node, ast.Import):
            for alias in node.names:
                bound |= {f"{alias.asname or alias.name}.{c}": True for c in CLIENT_CLASSES.get(alias.name, set())}
    return bound


def _client_builders(source: str) -> set[str]:
    """The classes of ``source`` that build (call) or subclass a library's client class (a
    class's own imports hide the module's: the simulator's ShareConsumer is no library's)."""
    tree = ast.parse(source)
    module = _bound(tree.body)
    found = set()
    for cls in (n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)):
        bound = module | _bound(ast.walk(cls))
        used = {ast.unparse(n.func) for n in ast.walk(cls) if isinstance(n, ast.Call)} | {
            ast.unparse(b) for b in cls.bases
        }
        if any(bound.get(name) for name in used):
            found.add(cls.name)
    return found


def test_only_the_adapters_build_a_client_library_s_clients():
    found = {
        (str(path.relative_to(PACKAGE)), name)
        for path in sorted(PACKAGE.rglob("*.py"))
        if path.parent.name not in ("client_adapters", "java_client")
        for name in _client_builders(path.read_text())
    }
    assert not found, (
        f"{sorted(found)} build a client library's client: get it from course_lib.client_adapters (a workload's "
        "contract: CLIENTS, SHARE_CLIENTS, GROUP_CLIENTS; the library's own clients: library_producer, "
        "library_consumer), or extend the contract"
    )


def test_the_client_builder_check_can_fail():
    code = (
        "import confluent_kafka as ck\nfrom kafka import KafkaConsumer as Real\n"
        "class A:\n    def __init__(self): self.c = ck.Consumer({})\n"
        "class B(Real):\n    pass\n"
        "class C:\n    def __init__(self): self.c = dict()\n"
        "class D:\n    def __init__(self):\n        from course_lib.clients import KafkaConsumer as Real\n"
        "        self.c = Real()\n"
    )
    assert _client_builders(code) == {"A", "B"}


# ---- no client wrapper outside the adapters -------------------------------------------------------
#: what hands a class a client: the client_adapters' builders (a ClientSide's ``producer`` /
#: ``consumer`` too), or a parameter of one of these names
CLIENT_BUILDERS = {"library_producer", "library_consumer", "group_member", "share_consumer"}
#: a client built in place: a library's (:data:`CLIENT_CLASSES`, the admins) or the simulator's
#: (``course_lib.clients``: kafka-python's names, confluent-kafka's ShareConsumer)
CLIENT_CONSTRUCTORS = set().union(*CLIENT_CLASSES.values()) | {"KafkaAdminClient", "AdminClient"}
SIDE_BUILDERS = {"producer", "consumer"}
CLIENT_PARAMETERS = {"producer", "consumer", "member", "share_consumer"}  # ("client": often its name)
#: the packages that are clients or servers themselves: their classes hold clients by design
CLIENTS_OR_SERVERS = {
    "client_adapters": "the adapters: where a client is built and driven (call_sequences replays a sequence)",
    "clients": "the simulator's own clients (a consumer keeps its membership, its group its members)",
    "java_client": "the Java driver's proxies: each is a client of the driver process",
    "broker": "the server side: a group coordinator keeps its groups' members",
    "wire": "the server side over TCP (and the learner's clients it serves)",
}
#: the classes outside those that still keep a client, each with why; a count may only go down
CLIENT_HOLDERS_LEFT = {
    "application/consumer_groups.py": ({"GroupRun"}, "a learner's application holds the clients the backend built it"),
    "application/processing.py": ({"Processor"}, "a learner's application holds the clients the backend built it"),
    "backends/base.py": ({"Common"}, "the seam: a backend calls the clients its ClientSide built"),
    "backends/composed.py": ({"ComposedBackend"}, "the seam: a backend calls the clients its ClientSide built"),
    "backends/sim.py": ({"SimBackend"}, "the seam: a backend calls the clients its ClientSide built"),
    "viz/consumers.py": ({"TransactionsDemo"}, "a lesson widget: the producer a learner's code would write"),
    "viz/simulator.py": ({"DeliverySimulator"}, "a lesson widget: the producer a learner's code would write"),
}


def _client_names(target: ast.expr, value: ast.expr) -> list[tuple[ast.expr, ast.expr]]:
    """The (target, value) pairs of one assignment, a tuple unpacked pair by pair."""
    if isinstance(target, ast.Tuple) and isinstance(value, ast.Tuple) and len(target.elts) == len(value.elts):
        return list(zip(target.elts, value.elts))
    return [(target, value)]


def _self_attribute(node: ast.expr) -> str | None:
    node = node.value if isinstance(node, ast.Subscript) else node
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
        return node.attr
    return None


def _client_wrappers(source: str) -> dict[str, list[str]]:
    """The classes of ``source`` that wrap a client, each with how: one that keeps a client it was
    handed, got from a builder (:data:`CLIENT_BUILDERS`) or built (:data:`CLIENT_CONSTRUCTORS`)
    in an attribute (or an item of one)
    and then reaches it (a call, an attribute, handing it on), or whose methods take a client
    (:data:`CLIENT_PARAMETERS`) and call it, hand it on or read its internals. A subclass of
    one wraps one too. Reading a handed client's public attribute (its config) wraps nothing."""

    def built(value: ast.expr) -> bool:
        if isinstance(value, ast.Name):
            return value.id in CLIENT_PARAMETERS
        if not isinstance(value, ast.Call):
            return False
        f = value.func
        return (isinstance(f, ast.Name) and f.id in CLIENT_BUILDERS | CLIENT_CONSTRUCTORS) or (
            isinstance(f, ast.Attribute) and f.attr in CLIENT_BUILDERS | SIDE_BUILDERS
        )

    found: dict[str, list[str]] = {}
    for cls in (n for n in ast.walk(ast.parse(source)) if isinstance(n, ast.ClassDef)):
        assignments = [n for n in ast.walk(cls) if isinstance(n, (ast.Assign, ast.AnnAssign)) and n.value]
        pairs = [
            pair
            for a in assignments
            for t in (a.targets if isinstance(a, ast.Assign) else [a.target])
            for pair in _client_names(t, a.value)
        ]
        kept = {_self_attribute(t) for t, v in pairs if built(v)} - {None}
        # a local name for a kept client (``p = self.producer``) is that client
        aliases = {t.id for t, v in pairs if isinstance(t, ast.Name) and _self_attribute(v) in kept}
        handed = {
            a.arg
            for fn in cls.body
            if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef))
            for a in fn.args.args + fn.args.kwonlyargs
            if a.arg in CLIENT_PARAMETERS
        }
        how = []
        for node in ast.walk(cls):
            if isinstance(node, ast.Attribute):
                client = node.value.value if isinstance(node.value, ast.Subscript) else node.value
                name = ast.unparse(client)
                if _self_attribute(client) in kept or name in aliases:
                    how.append(f"{name}.{node.attr}")
                elif isinstance(client, ast.Name) and client.id in handed and node.attr.startswith("_"):
                    how.append(f"{name}.{node.attr}")
            if isinstance(node, ast.Call):
                func = node.func
                if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id in handed:
                    how.append(f"{func.value.id}.{func.attr}()")
                for arg in node.args:
                    if (isinstance(arg, ast.Name) and arg.id in handed | aliases) or _self_attribute(arg) in kept:
                        how.append(f"{ast.unparse(func)}({ast.unparse(arg)})")
        if how or any(isinstance(b, ast.Name) and b.id in found for b in cls.bases):
            found[cls.name] = sorted(set(how)) or [f"a subclass of {ast.unparse(cls.bases[0])}"]
    return found


def test_no_class_outside_the_adapters_wraps_a_client():
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        module = str(path.relative_to(PACKAGE))
        if path.relative_to(PACKAGE).parts[0] in CLIENTS_OR_SERVERS:
            continue
        left, _why = CLIENT_HOLDERS_LEFT.get(module, (set(), ""))
        wrappers = set(_client_wrappers(path.read_text())) - left
        if wrappers:
            found[module] = {name: _client_wrappers(path.read_text())[name] for name in sorted(wrappers)}
    assert not found, (
        f"classes that keep a client and drive it: {found}. Replay the client's calls through the "
        "call-sequence contract (course_lib.client_adapters.call_sequences), the cluster side a "
        "SequenceCluster holding no client"
    )
    for module, (left, _why) in CLIENT_HOLDERS_LEFT.items():
        assert set(_client_wrappers((PACKAGE / module).read_text())) >= left, f"{module}: fewer now - trim the table"


def test_the_client_wrapper_check_can_fail():
    code = (
        "class Kept:\n    def __init__(self, producer): self.producer = producer\n"
        "    def send(self): self.producer.send('t', b'v')\n"
        "class Built:\n    def __init__(self): self.members = {}\n"
        "    def join(self, n): self.members[n] = group_member('java', {}, ['t'])\n"
        "    def close(self, n): self.members[n].close()\n"
        "class Aliased:\n    def __init__(self): self.c = library_consumer('simulator', None, {})\n"
        "    def go(self):\n        c = self.c\n        return c.poll()\n"
        "class Handed:\n    def idle(self, producer): return producer._incomplete\n"
        "class HandedOn:\n    def idle(self, producer): wait(producer)\n"
        "class Sub(Kept):\n    pass\n"
        "class Config:\n    def __init__(self, producer): self.config = producer.config\n"
        "class InPlace:\n    def __init__(self): self.admin = KafkaAdminClient(bootstrap_servers='b:1')\n"
        "    def close(self): self.admin.close()\n"
        "class Faults:\n    def __init__(self, nemesis): self.nemesis = nemesis\n"
        "    def crash(self, b): self.nemesis.crash(b)\n"
    )
    assert set(_client_wrappers(code)) == {"Kept", "Built", "Aliased", "Handed", "HandedOn", "Sub", "InPlace"}


def test_the_fault_mixins_of_clusters_wrap_no_client():
    source = (PACKAGE / "clusters" / "faults.py").read_text()
    assert not {"BrokerFaultsHandedOn", "BrokerFaultsElsewhere"} & set(_client_wrappers(source))


# ---- one result type ----------------------------------------------------------------------------
#: the modules that declare experiments (importing them fills the registry)
EXPERIMENT_MODULES = (
    "course_lib.experiments.scenarios",
    "course_lib.experiments.share_scenarios",
    "course_lib.experiments.behaviour_probes",
    "course_lib.experiments.consumer_protocol_experiments",
    "course_lib.experiments.share_group_experiments",
    "course_lib.experiments.transaction_versions",
)


def _other_results(experiments) -> list[str]:
    """Each experiment whose declared return annotation is not :class:`Result`, with what it declares."""
    wrong = []
    for e in experiments:
        declared = typing.get_type_hints(e.run).get("return")
        if declared is not Result:
            wrong.append(f"the {e.family} {e.name!r} returns {declared!r}")
    return wrong


def test_every_registered_experiment_returns_the_one_result_type():
    for module in EXPERIMENT_MODULES:
        importlib.import_module(module)
    assert {e.family for e in EXPERIMENTS.values()} == set(FAMILIES), "a family with no experiment imported here"
    wrong = _other_results(EXPERIMENTS.values())
    assert not wrong, "experiments that do not return course_lib.judge.result.Result:\n" + "\n".join(wrong)


def _counts(b) -> dict:
    return {}


def _result(b) -> Result:
    return Result("probe", "result")


def _unannotated(b):
    return Result("probe", "unannotated")


def test_the_result_type_check_can_fail():
    runs = {"counts": _counts, "result": _result, "unannotated": _unannotated}
    found = _other_results([Experiment("probe", name, "producer", run) for name, run in runs.items()])
    assert found == ["the probe 'counts' returns <class 'dict'>", "the probe 'unannotated' returns None"]
