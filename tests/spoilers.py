"""Where a lesson could give away a prediction's answer before the learner locks one in: the
checked experiment cells between ``name = Prediction(...)`` and ``name.reveal(...)``, and the
text they print. Shared by the headless Run All test (tests/test_lesson_widgets.py), the
JupyterLab ones (tests/test_browser_lab.py, tests/test_browser_predictions.py) and the check of
the lessons' source (tests/test_prediction_sources.py)."""

from __future__ import annotations

import ast
import io
import re
import tokenize
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


# --- the lesson's *source* (tests/test_prediction_sources.py): what a learner reads before
# running anything, against what each prediction reveals once locked in (its measured value and
# explanation, recorded by tools/notebook_outputs.py --execute)

# a measured result stated in markdown ("**Measured:**", "Measured: ...", a verdict), and the
# static "lock in ..." hint, which could not go away at lock-in (the widget says it, then stops)
MEASURED_TEXT = re.compile(
    r"\*\*\s*(Measured|Verdict|Result)\b|\b(Measured|Verdict)\s*:|lock in your prediction above", re.I
)
PREDICT = re.compile(r"\*\*Predict\b")


def stated_in_markdown(nb) -> list[str]:
    """Markdown paragraphs that state a measured result (or carry the static lock-in hint).

    >>> nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("Intro.\\n\\n**Measured:** 3 lost.")])
    >>> stated_in_markdown(nb)
    ["cell 0: '**Measured:** 3 lost.'"]
    """
    found = []
    for i, cell in enumerate(nb.cells):
        if cell.cell_type == "markdown":
            found += [f"cell {i}: {p[:80]!r}" for p in re.split(r"\n\s*\n", cell.source) if MEASURED_TEXT.search(p)]
    return found


def unlocked_questions(nb) -> list[str]:
    """Each "**Predict:**" must be followed by its own lock-in: the next code cell makes as many
    ``Prediction(...)`` as the questions above it."""
    found, pending = [], []
    for i, cell in enumerate(nb.cells):
        if cell.cell_type == "markdown":
            pending += [(i, line) for line in cell.source.splitlines() if PREDICT.search(line)]
        elif cell.cell_type == "code" and pending:
            made = len(re.findall(r"\bPrediction\(", cell.source))
            found += [f"cell {j}: no lock-in for {line[:70]!r}" for j, line in pending[made:]]
            pending = []
    return found + [f"cell {j}: no lock-in for {line[:70]!r}" for j, line in pending]


def literal_explanations(nb) -> list[str]:
    """``reveal(..., explanation="...")`` with the text in the source: it must come from an
    explanation function fed the run's values (course_lib.explain)."""
    found = []
    for i, cell in enumerate(nb.cells):
        if cell.cell_type != "code" or ".reveal(" not in cell.source:
            continue
        for node in ast.walk(ast.parse(_python(cell.source))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "reveal":
                for kw in node.keywords:
                    if kw.arg == "explanation" and isinstance(kw.value, (ast.Constant, ast.JoinedStr)):
                        found.append(f"cell {i}: a literal explanation in the source")
    return found


def _python(source: str) -> str:
    """A cell's code without IPython's magics and shell escapes."""
    return "\n".join("" if line.lstrip().startswith(("%", "!")) else line for line in source.splitlines())


def readable(cell) -> str:
    """What a cell's source says in words: all of a markdown cell; a code cell's strings and
    comments (its numbers outside strings are settings, not statements)."""
    if cell.cell_type == "markdown":
        return cell.source
    words = []
    try:
        for tok in tokenize.generate_tokens(io.StringIO(_python(cell.source)).readline):
            if tok.type in (tokenize.STRING, tokenize.COMMENT, getattr(tokenize, "FSTRING_MIDDLE", -1)):
                words.append(tok.string)
    except (tokenize.TokenError, SyntaxError):
        return cell.source
    return "\n".join(words)


def _normal(text: str) -> str:
    return " ".join(re.sub(r"[*_`]", "", text).lower().split())


def phrases(text: str, words: int = 5) -> list[str]:
    """The clauses of ``text`` long enough to be a statement, not a label.

    >>> phrases("**Measured:** 13 sends were acknowledged; 9 are lost. Each one: gone.")
    ['13 sends were acknowledged']
    """
    clauses = re.split(r"[.;:!?]+(?:\s|$)|[()]|\n\s*\n", re.sub(r"\*\*[^*]*:\*\*", "", text))
    return [c.strip() for c in (_normal(c) for c in clauses) if len(c.split()) >= words - 1 and len(c) >= 20]


def premise_numbers(nb, before: int, stored: dict[int, str]) -> set[str]:
    """Every number on screen above cell ``before`` (sources and checked outputs): the question's
    givens, which its explanation may repeat."""
    text = "\n".join(c.source + "\n" + stored.get(i, "") for i, c in enumerate(nb.cells[:before]))
    return set(re.findall(NUMBER, text))


def without_choices(text: str, choices: list[str] | None) -> str:
    """``text`` without a prediction's worded choices, which are on screen anyway (numbers stay:
    they are givens, and "3" must not be taken out of "13")."""
    for choice in choices or []:
        text = text if re.fullmatch(NUMBER, choice) else text.replace(choice, " ")
    return text


def given_away(nb, reveals: list[dict], stored: dict[int, str] | None = None) -> list[str]:
    """Between each prediction and its reveal (both cells included), the sources a learner reads
    before locking in must not contain what the reveal prints: a clause of its explanation, its
    measured value (a number or a note's answer; a choice is on screen anyway), or a number of the
    explanation that is not a given of the question (on screen above the prediction)."""
    stored = stored or {}
    by_name = {r["name"]: r for r in reveals}
    found = []
    for name, made, reveal in predictions(nb):
        r = by_name.get(name)
        if r is None or r["actual"] is None:
            found.append(f"{name}: nothing recorded as revealed (run: python tools/notebook_outputs.py --execute)")
            continue
        explanation = r["explanation"] or ""
        givens = premise_numbers(nb, made, stored) | set(r["choices"] or [])
        values = set(re.findall(NUMBER, re.sub(r"(?<=\d) (?=\d{3}\b)", "", explanation))) - givens  # 8 090: one
        if r["kind"] != "choice" and r["actual"] not in givens:
            values.add(r["actual"])
        said = phrases(explanation) + ([_normal(r["actual"])] if r["kind"] == "note" else [])
        for i in range(made, reveal + 1):
            text = without_choices(readable(nb.cells[i]), r["choices"])
            found += [f"cell {i}: {name}'s reveal says {p!r}" for p in said if p in _normal(text)]
            found += [f"cell {i}: {name}'s measured {v} in the source" for v in sorted(values) if shows(text, v)]
    return found
