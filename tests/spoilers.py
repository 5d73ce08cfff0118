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


def predictions(nb) -> list[tuple[str, int, int]]:
    """(variable, cell making it, cell revealing it) for each prediction of a notebook."""
    found = []
    for made, cell in enumerate(nb.cells):
        m = re.search(r"^(\w+) = Prediction\(", cell.source, re.M) if cell.cell_type == "code" else None
        if m:
            reveal = next(i for i in range(made + 1, len(nb.cells)) if f"{m.group(1)}.reveal(" in nb.cells[i].source)
            found.append((m.group(1), made, reveal))
    return found


def reported(nb, reveal: int) -> range:
    """The cells after a reveal that report on its experiment: up to the next section, question,
    app or prediction."""
    end = reveal + 1
    while end < len(nb.cells):
        source = nb.cells[end].source
        if nb.cells[end].cell_type == "markdown" and re.search(r"^#|\*\*(Predict|Now try)", source, re.M):
            break
        if nb.cells[end].cell_type == "code" and re.search(r"Prediction\(|DeliverySimulator\(|Demo\(", source):
            break
        end += 1
    return range(reveal + 1, end)


def giveaways(nb, measured: dict[str, str]) -> list[str]:
    """What a learner can read of each prediction's answer before locking one in, in a notebook as
    Run All left it (an Output widget's capture is in the widget, not the cell): a "**Measured"
    paragraph from the question to the end of the report, the measured value in the first text
    after the reveal or in any output shown, a figure drawn after the reveal."""
    found = []
    for name, made, reveal in predictions(nb):
        value, first_text = measured[name], True
        for i in [*range(made + 1, reveal), *reported(nb, reveal)]:
            cell = nb.cells[i]
            if cell.cell_type == "markdown":
                said = [p for p in re.split(r"\n\s*\n", cell.source) if p.startswith(("**Measured", "**Verdict"))]
                found += [f"cell {i}: {name}'s answer in the text: {p[:80]!r}" for p in said]
                if i > reveal and first_text and shows(cell.source, value):
                    found.append(f"cell {i}: the text under {name}'s reveal says {value}")
                first_text = first_text and i < reveal
                continue
            shown = output_text(cell.get("outputs", []))
            if shows(shown, value):
                found.append(f"cell {i} shows {name}'s answer {value}: {shown[:80]!r}")
            if i > reveal and any("image/png" in out.get("data", {}) for out in cell.get("outputs", [])):
                found.append(f"cell {i} draws {name}'s experiment for all to see")
    return found


NUMBER = r"(?<![\w.\-])\d+(?:\.\d+)?(?![\w\-]|\.\d)"


def retold(lesson: Path) -> list[str]:
    """Text that retells a held cell before lock-in: the paragraphs right under a checked
    ``with p.after_lock_in():`` cell (up to the next question or heading) are always visible, so
    they must not quote the numbers only that hidden output prints (lesson 02 once said "m-1 was
    acknowledged at offset 4 ... truncated" under the hidden explanation of a lost message)."""
    nb = nbformat.read(lesson, as_version=4)
    stored = {e["cell"]: output_text(e["outputs"]) for e in load_expectations(lesson)}
    found = []
    for i, cell in enumerate(nb.cells[:-1]):
        if cell.cell_type != "code" or ".after_lock_in()" not in cell.source or i not in stored:
            continue
        below = nb.cells[i + 1]
        if below.cell_type != "markdown":
            continue
        for paragraph in re.split(r"\n\s*\n", below.source):
            if re.match(r"#|\*\*(Predict|Now try)", paragraph):
                break
            quoted = sorted({n for n in re.findall(NUMBER, paragraph) if shows(stored[i], n)})
            if quoted:
                found.append(f"cell {i + 1} retells hidden cell {i} ({', '.join(quoted)}): {paragraph[:80]!r}")
    return found
