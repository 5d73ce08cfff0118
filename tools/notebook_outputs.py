"""Keep notebooks committed the way nbval needs them: no outputs, except in cells marked
``# NBVAL_CHECK_OUTPUT`` (or tagged ``nbval-check-output``), whose stored output nbval compares
against a fresh run.

    python tools/notebook_outputs.py notebooks/02_acks_and_durability.ipynb   # strip
    python tools/notebook_outputs.py --execute notebooks/*.ipynb               # run, then strip
    python tools/notebook_outputs.py --check notebooks                         # report, exit 1 if bad

``--execute`` runs the notebook top to bottom in this environment first (use it after editing a
lesson so its checked outputs are current). Demos (``notebooks/demos``) are stripped entirely.
"""

from __future__ import annotations

import sys
from pathlib import Path

import nbformat

MARKER = "NBVAL_CHECK_OUTPUT"
TAG = "nbval-check-output"


def is_checked(cell) -> bool:
    if cell.get("cell_type") != "code":
        return False
    first = cell.source.lstrip().splitlines()[0] if cell.source.strip() else ""
    return MARKER in first or TAG in cell.get("metadata", {}).get("tags", [])


def strip(nb):
    """Remove outputs and execution counts, except outputs of checked cells (their stream and
    text outputs only; nbval does not compare images)."""
    count = 0
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        cell.execution_count = None
        cell.metadata.pop("execution", None)
        if is_checked(cell):
            # nbval only compares cells that have an execution count ("unrun" cells must be empty)
            count += 1
            cell.execution_count = count
            kept = []
            for out in cell.outputs:
                if out.output_type == "stream" and out.name == "stdout":
                    kept.append(out)
                elif out.output_type in (
                    "execute_result",
                    "display_data",
                ) and "application/vnd.jupyter.widget-view+json" not in out.get("data", {}):
                    data = {k: v for k, v in out.get("data", {}).items() if k == "text/plain"}
                    if data:
                        out["data"] = data
                        out.pop("execution_count", None)
                        out["output_type"] = "execute_result" if out.output_type == "execute_result" else "display_data"
                        if out.output_type == "execute_result":
                            out["execution_count"] = count
                        out["metadata"] = {}
                        kept.append(out)
            cell.outputs = _coalesce(kept)
        else:
            cell.outputs = []
    nb.metadata.pop("widgets", None)
    return nb


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
    """What is wrong with a committed notebook (empty list: fine)."""
    nb = nbformat.read(path, as_version=4)
    found = []
    for i, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        if is_checked(cell):
            if not cell.outputs or cell.execution_count is None:
                found.append(
                    f"{path}: cell {i} is marked {MARKER} but has no stored output "
                    f"(run: python tools/notebook_outputs.py --execute {path})"
                )
        elif cell.outputs or cell.execution_count is not None:
            found.append(
                f"{path}: cell {i} carries outputs but is not checked (run: python tools/notebook_outputs.py {path})"
            )
    if "widgets" in nb.metadata:
        found.append(f"{path}: stored widget state in the metadata")
    return found


def execute(nb, path: Path):
    from nbclient import NotebookClient

    NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}).execute()
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
        if "--execute" in argv and "demos" not in p.parts:
            execute(nb, p)
        if "demos" in p.parts:
            for cell in nb.cells:
                if cell.cell_type == "code":
                    cell.outputs, cell.execution_count = [], None
            nb.metadata.pop("widgets", None)
        else:
            strip(nb)
        nbformat.write(nb, p)
        print(f"wrote {p}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
