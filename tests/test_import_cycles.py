"""course_lib has no import cycle: its import graph, built with ``ast`` from the source (nothing
is imported), has no strongly connected component of more than one module.

What counts as an edge: every ``import`` / ``from ... import`` of a course_lib module, at module
level, inside functions *and* under ``if TYPE_CHECKING:``. A module-level cycle can fail at
import time (a half-initialised module, an ImportError that depends on which module a notebook
imports first - the old grading/exercises.py registered its last two lesson modules by an import
at its last line for this reason). A cycle through a function-level (lazy) import, or through an
import only the type checker runs, does not fail at import time, but the two modules still
cannot be read, tested or moved apart (spark/faults.py once named spark/harness.py's classes
under ``TYPE_CHECKING`` while the harness imported the faults); deferring an import is for heavy
optional dependencies (pyspark, kafka), not for hiding a cycle. So all of them count: what both
sides need goes into a module of its own.

``from package import name`` is an edge to ``package.name`` when that is a module, else to the
package; importing a module is not counted as importing its parent packages (Python runs those
first and allows them to be in progress, which is how a package's ``__init__`` re-exports).
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _modules(root: Path, package: str) -> dict[str, tuple[Path, bool]]:
    """Dotted name -> (file, is a package's __init__) for every module of ``package``."""
    found = {}
    for path in sorted((root / package).rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        found[".".join(parts[:-1] if is_package else parts)] = (path, is_package)
    return found


def _imported(node: ast.Import | ast.ImportFrom, package: str, modules) -> set[str]:
    """The course modules one import statement in ``package`` brings in."""
    if isinstance(node, ast.Import):
        names = [alias.name for alias in node.names]
    else:
        base = node.module or ""
        if node.level:
            parts = package.split(".")
            base = ".".join(parts[: len(parts) - node.level + 1] + ([node.module] if node.module else []))
        names = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names]
    found = set()
    for name in names:
        while name not in modules and "." in name:  # `import a.b.c` where c is a name, not a module
            name = name.rsplit(".", 1)[0]
        if name in modules:
            found.add(name)
    return found


def import_graph(root: Path, package: str) -> dict[str, set[str]]:
    """Module -> the modules of ``package`` it imports (module level, function level, type checking)."""
    modules = _modules(root, package)
    graph: dict[str, set[str]] = {}
    for name, (path, is_package) in modules.items():
        own_package = name if is_package else name.rsplit(".", 1)[0]
        edges: set[str] = set()

        def visit(node: ast.AST) -> None:
            for child in ast.iter_child_nodes(node):
                if isinstance(child, (ast.Import, ast.ImportFrom)):
                    edges.update(_imported(child, own_package, modules))
                visit(child)

        visit(ast.parse(path.read_text(), filename=str(path)))
        graph[name] = edges - {name}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, iterative),
    each given as one cycle through its members so the message can name the path."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    components.append(_one_cycle(graph, set(component)))
    return components


def _one_cycle(graph: dict[str, set[str]], component: set[str]) -> list[str]:
    """A path first -> ... -> first inside a strongly connected component (breadth first)."""
    first = min(component)
    paths = {first: [first]}
    queue = [first]
    while queue:
        node = queue.pop(0)
        for child in sorted(graph[node] & component):
            if child == first:
                return paths[node] + [first]
            if child not in paths:
                paths[child] = paths[node] + [child]
                queue.append(child)
    raise AssertionError(f"{sorted(component)} is not strongly connected")


def test_course_lib_has_no_import_cycle():
    graph = import_graph(ROOT, "course_lib")
    assert len(graph) > 50 and graph["course_lib.grading.registry"], "the graph was not built from the source"
    found = cycles(graph)
    assert not found, (
        "import cycles in course_lib (break each by moving what both sides need into a module of its own):\n"
        + "\n".join(" -> ".join(cycle) for cycle in found)
    )


def test_the_cycle_finder_finds_cycles_at_module_and_function_level(tmp_path):
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("from . import a\n")
    (package / "a.py").write_text("from .b import thing\n")
    (package / "b.py").write_text("def thing():\n    from pkg.sub import c\n")
    (package / "sub" / "__init__.py").write_text("")
    (package / "sub" / "c.py").write_text("from .. import a\n")  # a -> b -> sub.c -> a
    graph = import_graph(tmp_path, "pkg")
    assert graph["pkg.sub.c"] == {"pkg.a"}
    assert cycles(graph) == [["pkg.a", "pkg.b", "pkg.sub.c", "pkg.a"]]


def test_the_cycle_finder_finds_the_spark_cycle_through_type_checking_and_lazy_imports(tmp_path):
    """The shape spark/faults.py and spark/harness.py had: the harness imports the faults, and the
    faults import the harness's classes back - under ``TYPE_CHECKING``, or lazily inside a
    function. Both are cycles. Moving what both need into a module of its own (as
    spark/experiment_options.py and spark/job_process.py did) leaves none."""
    package = tmp_path / "lab"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "harness.py").write_text("from .faults import Kill\n\n\nclass Options: ...\n")
    faults = package / "faults.py"

    faults.write_text("from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n    from lab.harness import Options\n")
    assert cycles(import_graph(tmp_path, "lab")) == [["lab.faults", "lab.harness", "lab.faults"]]

    faults.write_text("def kill(opts):\n    from .harness import Options\n")
    assert cycles(import_graph(tmp_path, "lab")) == [["lab.faults", "lab.harness", "lab.faults"]]

    (package / "options.py").write_text("class Options: ...\n")
    (package / "harness.py").write_text("from .faults import Kill\nfrom .options import Options\n")
    faults.write_text("from .options import Options\n\n\nclass Kill: ...\n")
    assert import_graph(tmp_path, "lab")["lab.faults"] == {"lab.options"}
    assert cycles(import_graph(tmp_path, "lab")) == []


# ---- packages: no cycle between them either, and every arrow runs down the layers ----------------
def package_graph(graph: dict[str, set[str]], package: str) -> dict[str, set[str]]:
    """The module graph folded onto the entries at the top of ``package`` (its subpackages and
    top-level modules; ``package`` itself for its ``__init__``): an arrow for every import that
    crosses from one entry to another."""

    def entry(module: str) -> str:
        return ".".join(module.split(".")[:2])

    folded: dict[str, set[str]] = {}
    for module, imported in graph.items():
        folded.setdefault(entry(module), set()).update(entry(m) for m in imported if entry(m) != entry(module))
    return folded


#: course_lib's entries from the top down: an entry imports only entries of the layers below its own
#: (an import inside a function or under TYPE_CHECKING counts). A new entry is placed here.
LAYERS = (
    ("lessons and the workshop", {"grading", "workshop"}),
    ("the lessons' text", {"explain"}),
    ("views", {"viz"}),
    ("experiments, and the Spark lab", {"experiments", "spark"}),
    ("the consuming application", {"application"}),
    ("the seam", {"backend"}),
    ("the backends: a client library x a cluster", {"backends"}),
    ("the clusters reached over TCP: real Kafka, the simulated cluster", {"real", "wire"}),
    ("the client adapters: every client library's clients, the learner's included", {"client_adapters"}),
    ("the clients: the simulated ones, the Java driver", {"clients", "java_client"}),
    ("the simulated brokers", {"broker"}),
    ("what a cluster provides, fault schedules, the judge", {"clusters", "nemesis", "judge"}),
    (
        "neutral ground",
        {"course_lib", "history", "sim", "cache", "client_config", "datasets", "progress", "in_thread"},
    ),
    ("the interpreter mend the package root runs first", {"ast_lock"}),
)


def arrows_up(folded: dict[str, set[str]], layers, package: str = "course_lib") -> list[str]:
    """Every arrow from an entry to one of its own layer or a layer above, and every entry no layer
    places."""
    depth = {
        f"{package}.{name}" if name != package else name: i for i, (_, names) in enumerate(layers) for name in names
    }
    wrong = [f"{entry}: in no layer (place it in LAYERS)" for entry in sorted(folded) if entry not in depth]
    for entry, imported in sorted(folded.items()):
        for target in sorted(imported):
            if entry in depth and target in depth and depth[target] <= depth[entry]:
                wrong.append(f"{entry} ({layers[depth[entry]][0]}) -> {target} ({layers[depth[target]][0]})")
    return wrong


def test_course_lib_s_packages_have_no_cycle_and_every_arrow_runs_down_the_layers():
    folded = package_graph(import_graph(ROOT, "course_lib"), "course_lib")
    found = cycles(folded)
    assert not found, "package cycles in course_lib:\n" + "\n".join(" -> ".join(c) for c in found)
    wrong = arrows_up(folded, LAYERS)
    assert not wrong, "imports that run up (or across) the layers:\n" + "\n".join(wrong)


def test_the_top_of_course_lib_holds_at_most_ten_modules():
    top = sorted(p.name for p in (ROOT / "course_lib").glob("*.py"))
    assert len(top) <= 10, f"{len(top)} modules at the top of course_lib (a new one goes into a package): {top}"


def test_the_layer_check_finds_an_arrow_up_and_a_package_cycle(tmp_path):
    package = tmp_path / "pkg"
    for sub in ("low", "high"):
        (package / sub).mkdir(parents=True)
        (package / sub / "__init__.py").write_text("")
    (package / "__init__.py").write_text("")
    (package / "high" / "a.py").write_text("from ..low import b\n")
    (package / "low" / "b.py").write_text("def f():\n    from pkg.high.a import x\n")  # deferred: still an arrow
    folded = package_graph(import_graph(tmp_path, "pkg"), "pkg")
    assert folded["pkg.low"] == {"pkg.high"} and folded["pkg.high"] == {"pkg.low"}
    assert cycles(folded) == [["pkg.high", "pkg.low", "pkg.high"]]
    layers = (("top", {"high"}), ("bottom", {"low", "pkg"}))
    assert arrows_up(folded, layers, "pkg") == ["pkg.low (bottom) -> pkg.high (top)"]
    assert arrows_up(folded, layers[1:], "pkg") == ["pkg.high: in no layer (place it in LAYERS)"]
    (package / "low" / "b.py").write_text("x = 1\n")
    folded = package_graph(import_graph(tmp_path, "pkg"), "pkg")
    assert cycles(folded) == [] and folded["pkg.low"] == set()
    assert arrows_up(folded, layers, "pkg") == []
