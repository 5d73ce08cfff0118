"""Run lesson notebooks in Pyodide under Node and compare their checked cells with CPython's.

The stored outputs of the ``# NBVAL_CHECK_OUTPUT`` cells are what CPython printed (nbval checks
them on every ``make test``); :func:`parity` re-runs every code cell of each notebook, top to
bottom in one namespace as a kernel would, in Pyodide, and returns the checked cells whose output
differs. Magics (``%matplotlib inline``) are dropped: they only configure IPython's display.

The Node runs use Pyodide :data:`PARITY_PYODIDE` from npm, whose standard library includes the
``ssl`` and ``sqlite3`` modules the course needs; the site's own runtime (0.29) gets those two as
compiled packages from the full distribution, which is not on npm.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path

from tools.pyodide_local import SSL_SHIM_FROM, local_distribution, run_python

PARITY_PYODIDE = SSL_SHIM_FROM
CHECK_MARK = "# NBVAL_CHECK_OUTPUT"
_RESULT = "@@notebook-results@@"

# Runs inside Pyodide: every cell of every notebook, stdout captured per cell, errors recorded.
_EXECUTOR = r"""
import ast, contextlib, io, json, time
notebooks = json.loads(NOTEBOOKS)
results = {}
for name, cells in notebooks.items():
    namespace = {"__name__": "__main__"}
    outputs = []
    for source in cells:
        code = "\n".join(line for line in source.splitlines() if not line.lstrip().startswith(("%", "!")))
        buffer, error, started = io.StringIO(), None, time.perf_counter()
        with contextlib.redirect_stdout(buffer):
            try:
                tree = ast.parse(code)
                last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
                exec(compile(tree, name, "exec"), namespace)
                if last is not None:  # what IPython shows as the cell's result
                    value = eval(compile(ast.Expression(last.value), name, "eval"), namespace)
                    if value is not None and not source.rstrip().endswith(";"):
                        print(repr(value))
            except Exception as e:
                error = f"{type(e).__name__}: {e}"
        outputs.append({"stdout": buffer.getvalue(), "error": error, "seconds": time.perf_counter() - started})
    results[name] = outputs
print(RESULT_MARK + json.dumps(results))
"""


@dataclass
class CellRun:
    notebook: str
    index: int  # position among the notebook's code cells
    source: str
    checked: bool
    expected: str  # CPython's stored output (checked cells)
    got: str
    error: str | None

    @property
    def first_line(self) -> str:
        return next((line for line in self.source.splitlines() if line.strip() and line.strip() != CHECK_MARK), "")


def code_cells(notebook: Path) -> list[dict]:
    """The code cells, with the checked outputs stored in tests/notebook_expectations/."""
    from tools.notebook_outputs import with_expectations

    return [c for c in with_expectations(notebook).cells if c["cell_type"] == "code"]


def stored_output(cell: dict) -> str:
    """The text nbval compares: streams and plain-text results, in order."""
    parts = []
    for out in cell.get("outputs", []):
        if out["output_type"] == "stream":
            parts.append("".join(out["text"]))
        elif out["output_type"] in ("execute_result", "display_data") and "text/plain" in out.get("data", {}):
            parts.append("".join(out["data"]["text/plain"]) + "\n")
    return "".join(parts)


def _normal(text: str) -> str:
    return "\n".join(line.rstrip() for line in text.strip().splitlines())


def parity_wheels(site_wheels) -> list[Path]:
    """The course's wheels plus IPython and friends (widgets import them) for the Node runtime."""
    return [*site_wheels, *sorted(local_distribution(PARITY_PYODIDE).glob("*.whl"))]


def run_notebooks(notebooks: list[Path], wheels, timeout_s: float = 900) -> tuple[list[CellRun], str]:
    """Every code cell of ``notebooks`` in Pyodide; returns the cell runs and Node's stderr."""
    sources = {nb.name: ["".join(c["source"]) for c in code_cells(nb)] for nb in notebooks}
    code = f"NOTEBOOKS = {json.dumps(json.dumps(sources))}\nRESULT_MARK = {_RESULT!r}\n" + _EXECUTOR
    done = run_python(code, wheels, version=PARITY_PYODIDE, timeout_s=timeout_s)
    marker = done.stdout.rfind(_RESULT)
    if done.returncode != 0 or marker < 0:
        raise RuntimeError(f"Pyodide under Node failed ({done.returncode}):\n{done.stderr[-3000:]}")
    results = json.loads(done.stdout[marker + len(_RESULT) :].splitlines()[0])
    runs = []
    for nb in notebooks:
        for i, (cell, res) in enumerate(zip(code_cells(nb), results[nb.name])):
            source = "".join(cell["source"])
            runs.append(
                CellRun(nb.name, i, source, CHECK_MARK in source, stored_output(cell), res["stdout"], res["error"])
            )
    return runs, done.stderr


def differences(runs: list[CellRun]) -> list[CellRun]:
    """Checked cells whose Pyodide output is not CPython's."""
    return [r for r in runs if r.checked and (r.error or _normal(r.got) != _normal(r.expected))]


if __name__ == "__main__":  # python -m tools.notebook_pyodide NOTEBOOK...: a quick report
    import tempfile
    from tools.site_build import wheels as site_wheels

    with tempfile.TemporaryDirectory() as tmp:
        runs, _ = run_notebooks([Path(p) for p in sys.argv[1:]], parity_wheels(site_wheels(Path(tmp))))
    for r in runs:
        mark = "DIFF" if r in differences(runs) else ("error" if r.error else "ok")
        print(
            f"{r.notebook} cell {r.index:>2} {'checked' if r.checked else '       '} {mark:<5} {r.first_line[:60]} {r.error or ''}"
        )
