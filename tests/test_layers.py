"""The layers of course_lib, checked on the import graph (every ``import`` anywhere in a module,
followed transitively across modules) and on the scenario code itself:

- scenarios, the consumer application and consumer groups reach a cluster only through
  :mod:`course_lib.backend` (the seam): walking their imports without passing through it never
  reaches the simulator (``sim``, ``broker``, ``clients``) or real Kafka (``real``);
- the history and the checker (the judge) reach neither, by any path;
- scenario code says *what* happens, never *which* backend runs it: no ``pick``, ``kafka_ms``,
  ``.kind``, ``.cluster``, and no comparison with a backend's name.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "course_lib"

#: the modules through which the layers above may reach a backend
SEAM = ("course_lib.backend", "course_lib.backends")
#: what a layer above the seam must not reach without it
BACKEND_PACKAGES = ("course_lib.sim", "course_lib.broker", "course_lib.clients", "course_lib.real")
ABOVE_THE_SEAM = (
    "course_lib.scenarios",
    "course_lib.consumer_scenarios",
    "course_lib.scenario_framework",
    "course_lib.processing",
    "course_lib.consumer_groups",
)
JUDGE = ("course_lib.history", "course_lib.checker", "course_lib.check_result", "course_lib.guarantees")
#: scenario code that must not branch on the backend
BACKEND_BLIND = (
    "scenarios.py",
    "consumer_scenarios.py",
    "scenario_framework.py",
    "processing.py",
    "consumer_groups.py",
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
    scen = _imports("course_lib.scenarios", PACKAGE / "scenarios.py", known)
    assert {"course_lib.backend", "course_lib.scenario_framework", "course_lib.processing"} <= scen
