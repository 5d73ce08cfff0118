"""Where a lesson could give away a prediction's answer before the learner locks one in: the
checked experiment cells between ``name = Prediction(...)`` and ``name.reveal(...)``, and the
text they print. Shared by the headless Run All test (tests/test_lesson_widgets.py) and the
JupyterLab one (tests/test_browser_lab.py)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import nbformat
from tools.notebook_outputs import is_checked, load_expectations


@dataclass(frozen=True)
class Experiment:
    prediction: str  # the variable holding the Prediction
    cell: int  # index among all cells of the notebook
    printed: str  # what nbval checks it prints


def experiments(lesson: Path) -> list[Experiment]:
    """Every prediction's checked experiment cells, in notebook order."""
    nb = nbformat.read(lesson, as_version=4)
    stored = {e["cell"]: output_text(e["outputs"]) for e in load_expectations(lesson)}
    found = []
    for made, cell in enumerate(nb.cells):
        m = re.search(r"^(\w+) = Prediction\(", cell.source, re.M) if cell.cell_type == "code" else None
        if not m:
            continue
        name = m.group(1)
        reveal = next(i for i in range(made + 1, len(nb.cells)) if f"{name}.reveal(" in nb.cells[i].source)
        found += [Experiment(name, i, stored[i]) for i in range(made + 1, reveal) if is_checked(nb.cells[i])]
    return found


def output_text(outputs) -> str:
    """What a learner reads in these outputs (a widget's own view aside)."""
    parts = []
    for out in outputs:
        data = out.get("data", {})
        parts.append(out.get("text", "") or data.get("text/plain", "") + data.get("text/html", ""))
    return "".join(parts)


def shows(text: str, value: str) -> bool:
    """``value`` appears in ``text`` as a whole (3 in "3 duplicated", not in "13", "m-3" or "3.5").

    >>> shows("duplicated 3", "3"), shows("13 sent, m-3, 3.5 s", "3"), shows("leader 2", "broker 2")
    (True, False, False)
    """
    return re.search(rf"(?<![\w.\-]){re.escape(value)}(?![\w\-]|\.\d)", text) is not None


def spoiled_lines(visible: str, printed: str) -> list[str]:
    """The lines of ``printed`` that can be read in ``visible``."""
    return [line.strip() for line in printed.splitlines() if line.strip() and line.strip() in visible]
