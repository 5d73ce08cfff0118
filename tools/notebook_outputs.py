"""Keep lessons committed with no outputs at all, and the outputs nbval checks beside them.

A cell marked ``# NBVAL_CHECK_OUTPUT`` (or tagged ``nbval-check-output``) has its output compared
with a fresh run by nbval on every ``make test``. Those outputs answer the lessons' predictions, so
they are not in the notebooks a learner opens: they are kept in
``tests/notebook_expectations/<lesson>.json`` (cell position, its source, its text outputs), and
``notebooks/conftest.py`` puts them back into the notebook nbval reads (:func:`with_expectations`).

    python tools/notebook_outputs.py notebooks/02_acks_and_durability.ipynb   # strip
    python tools/notebook_outputs.py --execute notebooks/*.ipynb               # run, store, strip
    python tools/notebook_outputs.py --check notebooks                         # report, exit 1 if bad

``--execute`` runs the notebook top to bottom in this environment first (use it after editing a
lesson so its checked outputs are current). Demos (``notebooks/demos``) are stripped entirely.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import nbformat

MARKER = "NBVAL_CHECK_OUTPUT"
TAG = "nbval-check-output"
ROOT = Path(__file__).resolve().parents[1]
EXPECTATIONS = ROOT / "tests" / "notebook_expectations"


class StaleExpectations(Exception):
    """The stored outputs no longer fit the notebook (a cell moved or changed)."""


def is_checked(cell) -> bool:
    if cell.get("cell_type") != "code":
        return False
    first = cell.source.lstrip().splitlines()[0] if cell.source.strip() else ""
    return MARKER in first or TAG in cell.get("metadata", {}).get("tags", [])


def _text_outputs(outputs: list) -> list:
    """The outputs nbval compares: stdout and plain-text results (it does not compare images)."""
    kept = []
    for out in outputs:
        if out.output_type == "stream" and out.name == "stdout":
            kept.append(out)
        elif out.output_type in ("execute_result", "display_data") and (
            "application/vnd.jupyter.widget-view+json" not in out.get("data", {})
        ):
            data = {k: v for k, v in out.get("data", {}).items() if k == "text/plain"}
            if data:
                out["data"] = data
                out.pop("execution_count", None)
                out["metadata"] = {}
                kept.append(out)
    return _coalesce(kept)


def strip(nb) -> list[dict]:
    """Remove every output and execution count; return the checked cells' text outputs as the
    expectations to store (one entry per checked cell that has any)."""
    expectations = []
    for i, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        if is_checked(cell) and cell.outputs:
            expectations.append({"cell": i, "source": cell.source, "outputs": _text_outputs(cell.outputs)})
        cell.outputs, cell.execution_count = [], None
        cell.metadata.pop("execution", None)
    nb.metadata.pop("widgets", None)
    return expectations


def expectations_path(path: Path) -> Path:
    return EXPECTATIONS / f"{Path(path).stem}.json"


def load_expectations(path: Path) -> list[dict]:
    """The checked outputs stored for the lesson at ``path`` ([] for any other notebook: a
    solution or exercise of the same name is not the lesson)."""
    stored = expectations_path(path)
    if not stored.exists():
        return []
    body = json.loads(stored.read_text())
    try:
        mine = str(Path(path).resolve().relative_to(ROOT))
    except ValueError:  # a copy outside the repository (e.g. a test's tmp dir): matched by name
        mine = body["notebook"]
    return body["cells"] if body["notebook"] == mine else []


def load_reveals(path: Path) -> list[dict] | None:
    """What each prediction of the lesson at ``path`` shows once locked in (its measured value and
    explanation), as the last ``--execute`` recorded it (None: never recorded)."""
    stored = expectations_path(path)
    return json.loads(stored.read_text()).get("reveals") if stored.exists() else None


def load_run_all_s(path: Path) -> float | None:
    """How long the last ``--execute`` of the lesson at ``path`` took, Run All in a fresh kernel
    (seconds; None: never recorded). The instructor guide's Run All column comes from it."""
    stored = expectations_path(path)
    return json.loads(stored.read_text()).get("run_all_s") if stored.exists() else None


def save_expectations(
    path: Path, expectations: list[dict], reveals: list[dict] | None = None, run_all_s: float | None = None
) -> None:
    """Store the checked outputs, and the reveals and Run All time if given (else keep those stored)."""
    stored = expectations_path(path)
    stored.parent.mkdir(parents=True, exist_ok=True)
    reveals = reveals if reveals is not None else load_reveals(path)
    run_all_s = run_all_s if run_all_s is not None else load_run_all_s(path)
    body: dict = {"notebook": str(Path(path).resolve().relative_to(ROOT)), "cells": expectations}
    if reveals:
        body["reveals"] = reveals
    if run_all_s is not None:
        body["run_all_s"] = round(run_all_s, 1)
    stored.write_text(json.dumps(body, indent=1, ensure_ascii=False, sort_keys=True) + "\n")  # stable diffs


def inject(nb, expectations: list[dict], path: Path):
    """Put stored outputs back into their cells (nbval compares a cell only if it has an execution
    count). A stored cell whose source differs is refused: its outputs belong to other code."""
    for count, entry in enumerate(expectations, start=1):
        i = entry["cell"]
        cell = nb.cells[i] if i < len(nb.cells) else None
        if cell is None or cell.cell_type != "code" or cell.source != entry["source"]:
            raise StaleExpectations(
                f"{path}: the outputs stored for cell {i} in {expectations_path(path).relative_to(ROOT)} belong to "
                f"other code (run: python tools/notebook_outputs.py --execute {path})"
            )
        cell.outputs = nbformat.from_dict(entry["outputs"])
        cell.execution_count = count
        for out in cell.outputs:
            if out.output_type == "execute_result":
                out["execution_count"] = count
    return nb


def with_expectations(path: Path):
    """The notebook as nbval needs it: the committed one with its stored checked outputs."""
    nb = nbformat.read(path, as_version=4)
    return inject(nb, load_expectations(path), path)


def _coalesce(outputs: list) -> list:
    """Join consecutive stdout chunks (how the kernel splits them varies run to run: less churn)."""
    out = []
    for o in outputs:
        if out and o.output_type == "stream" and out[-1].output_type == "stream":
            out[-1]["text"] = out[-1]["text"] + o["text"]
        else:
            out.append(o)
    return out


def problems(path: Path) -> list[str]:
    """What is wrong with a committed notebook and its stored outputs (empty list: fine). Read as
    git stores it: a learner's autosaved outputs, stripped by the checkout's filter, are no fault
    of the notebook."""
    try:
        from tools.notebook_filter import as_committed
    except ModuleNotFoundError:  # run as a script: tools/ itself is on the path
        from notebook_filter import as_committed  # type: ignore[no-redef]

    nb = nbformat.reads(as_committed(path), as_version=4)
    found = []
    for i, cell in enumerate(nb.cells):
        if cell.cell_type == "code" and (cell.outputs or cell.execution_count is not None):
            found.append(
                f"{path}: cell {i} carries outputs a learner would see (run: python tools/notebook_outputs.py {path})"
            )
    if "widgets" in nb.metadata:
        found.append(f"{path}: stored widget state in the metadata")
    if "demos" in Path(path).parts:
        return found
    stored = {e["cell"]: e for e in load_expectations(path)}
    try:
        inject(nbformat.read(path, as_version=4), list(stored.values()), path)
    except StaleExpectations as exc:
        found.append(str(exc))
    for i, cell in enumerate(nb.cells):
        if is_checked(cell) and i not in stored:
            found.append(
                f"{path}: cell {i} is marked {MARKER} but has no stored output "
                f"(run: python tools/notebook_outputs.py --execute {path})"
            )
    for i in stored:
        if i < len(nb.cells) and not is_checked(nb.cells[i]):
            found.append(f"{path}: outputs are stored for cell {i}, which is not marked {MARKER}")
    return found


# run after the lesson: what its predictions reveal once locked in (course_lib.viz.predict.revealed_in)
_REVEALS_PROBE = "import json as _j, course_lib.viz.predict as _pr\nprint(_j.dumps(_pr.revealed_in(globals())))"


def execute(nb, path: Path, reveals: list | None = None):
    """Run ``nb`` and keep every output in its cell, as nbval sees it. nbclient, like a browser,
    would move output captured by an ``ipywidgets.Output`` (a prediction's experiment, held until
    lock-in) into the widget; nbval knows no widgets and compares it as the cell's own. What the
    predictions reveal is appended to ``reveals`` (if given)."""
    try:
        from tools.notebook_client import NotebookClient
    except ModuleNotFoundError:  # run as a script: tools/ itself is on the path
        from notebook_client import NotebookClient  # type: ignore[no-redef]

    class AsNbvalSees(NotebookClient):
        def on_comm_open_jupyter_widget(self, msg):
            return None  # no stand-in for the Output widget: its captured output stays in the cell

    probe = nbformat.v4.new_code_cell(_REVEALS_PROBE)
    nb.cells.append(probe)
    try:
        AsNbvalSees(
            nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}
        ).execute()
    finally:
        nb.cells.remove(probe)
    if reveals is not None:
        reveals.extend(json.loads("".join(o.get("text", "") for o in probe.outputs if o.output_type == "stream")))
    return nb


def main(argv: list[str]) -> int:
    args = [a for a in argv if not a.startswith("--")]
    paths = []
    for a in args or ["notebooks"]:
        p = Path(a)
        paths.extend(sorted(p.rglob("*.ipynb")) if p.is_dir() else [p])
    paths = [p for p in paths if ".ipynb_checkpoints" not in p.parts]
    if "--check" in argv:
        bad = [msg for p in paths for msg in problems(p)]
        print("\n".join(bad) or f"{len(paths)} notebooks: outputs as nbval needs them")
        return 1 if bad else 0
    for p in paths:
        nb = nbformat.read(p, as_version=4)
        reveals: list[dict] | None = None
        run_all_s = None
        if "--execute" in argv and "demos" not in p.parts:
            reveals = []
            started = time.monotonic()
            execute(nb, p, reveals)
            run_all_s = time.monotonic() - started  # kernel start included: what a learner waits
        expectations = strip(nb)
        if "demos" not in p.parts and expectations:  # a strip of an unrun notebook keeps what is stored
            save_expectations(p, expectations, reveals, run_all_s)
            print(f"wrote {expectations_path(p).relative_to(ROOT)}")
        nbformat.write(nb, p)
        print(f"wrote {p}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
