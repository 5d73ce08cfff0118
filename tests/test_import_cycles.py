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
