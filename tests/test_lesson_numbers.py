"""Every paragraph that quotes measured numbers sits under the cell that prints them.

A lesson's "**Measured:**" paragraphs, and the first paragraph after an experiment, quote numbers
a reader checks against the output right above. Walking up from the paragraph, past other text
and past cells that show nothing checked (a prediction widget, its reveal, an app), the first code
cell must be a checked cell (``# NBVAL_CHECK_OUTPUT``) whose stored output contains every number
the paragraph quotes outside code spans. A figure cell is looked through only if it draws what
the checked cell above it ran; a figure that runs its own experiment prints no numbers, so no
paragraph quoting numbers may sit under it (06 and 07 had text under the wrong picture).

A prediction's explanation is such a paragraph too, moved into its reveal cell
(``name.reveal(value, explanation=...)``) so it shows only after lock-in: it is read from
there and checked against the same checked experiment cell above.

Paragraphs about real-Kafka runs ("**Measured on this machine:**") quote timings no test can
reproduce; they are the exception, by name.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import nbformat
import pytest
from tools.notebook_outputs import is_checked, with_expectations

ROOT = Path(__file__).resolve().parents[1]
# 09 and 10 run real Kafka and Spark: their numbers are this machine's, not checked by nbval
LESSONS = sorted((ROOT / "notebooks").glob("0[0-8]*.ipynb"))
NUMBER = re.compile(r"(?<![\w.\-/])\d[\d,]*(?:\.\d+)?(?![\w\-])")
# cells that show no checked text: the prediction widget, its reveal, the try-it apps
QUIET = re.compile(r"\bPrediction\(|\.reveal\(|\b(DeliverySimulator|ConsumerCrashDemo|TransactionsDemo|GroupDemo)\(")
RUNS = re.compile(r"\b(run_scenario|GroupRun|Cluster|run_pipeline)\(")
UNCHECKABLE = "**Measured on this machine"


# not measurements: versions, other lessons and claims, KIPs, and numbers the text derives ("about 2.5 ms")
NOT_MEASURED = re.compile(
    r"\b(?:notebooks?|lessons?|lab|claims?|KIP|Kafka|kafka-python|Java|version|since|about|Pyodide)[\s-]+"
    r"\d[\d.]*(?:(?:,\s*|\s+(?:and|or|to)\s+)\d[\d.]*)*",
    re.I,
)


def _joined(text: str) -> str:
    """'77 507' and '30 000' (the lessons' thousands) as one number."""
    return re.sub(r"(?<=\d) (?=\d{3}\b)", "", text)


def quoted_numbers(paragraph: str) -> set[str]:
    """Numbers in the prose: not in code spans, links, list markers or names like m-3."""
    prose = re.sub(r"`[^`]*`", " ", paragraph)
    prose = re.sub(r'"[^"\n]*"|“[^”]*”', " ", prose)  # quotations from the articles and the docs
    prose = re.sub(r"\]\([^)]*\)", "]", prose)
    prose = re.sub(r"^\s*\d+\.\s", " ", prose, flags=re.M)  # numbered list items
    prose = NOT_MEASURED.sub(" ", _joined(prose))
    return {n.replace(",", "") for n in NUMBER.findall(prose)}


def _variants(text: str) -> set[str]:
    """Every number in ``text`` as prose may write it: 90.00 as 90, 10003 ms as 10 (s)."""
    found = set()
    for n in re.findall(r"\d[\d_,]*(?:\.\d+)?", text):
        n = n.replace(",", "").replace("_", "")
        value = float(n)
        found |= {n, n.rstrip("0").rstrip(".") if "." in n else n}
        if value >= 1000:  # milliseconds quoted in seconds
            found |= {f"{value / 1000:g}", str(round(value / 1000))}
    return found


def printed_numbers(cell) -> set[str]:
    outputs = cell.get("outputs", [])
    return _variants("".join(o.get("text", "") or o.get("data", {}).get("text/plain", "") for o in outputs))


def input_numbers(nb) -> set[str]:
    """The lesson's inputs (seeds, sizes, timeouts in its code): quoting a setting is no measurement."""
    code = [c.source for c in nb.cells if c.cell_type == "code"]
    for k, source in enumerate(code):  # an explanation is text, not a setting
        for text in explanations(source):
            code[k] = code[k].replace(text, "")
    return _variants("\n".join(code))


def explanations(source: str) -> list[str]:
    """The ``explanation`` texts handed to ``.reveal(...)`` in a code cell's source.

    >>> explanations("p.reveal(3, explanation='**Measured:** 3 twice.')\\nx = 1")
    ['**Measured:** 3 twice.']
    """
    if ".reveal(" not in source:
        return []
    return [
        kw.value.value
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "reveal"
        for kw in node.keywords
        if kw.arg == "explanation" and isinstance(kw.value, ast.Constant) and isinstance(kw.value.value, str)
    ]


def measured_paragraphs(nb):
    """(cell index, paragraph) for each paragraph that reports an experiment: in markdown cells
    and in a reveal's explanation (reported on by the cell above the reveal, like a paragraph
    under it)."""
    for i, cell in enumerate(nb.cells):
        if cell.cell_type == "code":
            for text in explanations(cell.source):
                paragraphs = [p for p in re.split(r"\n\s*\n", text) if p.strip()]
                yield from ((i, p) for k, p in enumerate(paragraphs) if k == 0 or p.startswith("**Measured"))
            continue
        if cell.cell_type != "markdown":
            continue
        paragraphs = [p for p in re.split(r"\n\s*\n", cell.source) if p.strip()]
        after_code = i > 0 and nb.cells[i - 1].cell_type == "code" and not QUIET.search(nb.cells[i - 1].source)
        for k, p in enumerate(paragraphs):
            if p.startswith(UNCHECKABLE):
                continue
            if p.startswith("**Measured") or (k == 0 and after_code and not p.startswith(("#", "**Predict", "**Now"))):
                yield i, p


def source_of_numbers(nb, index: int):
    """The checked cell a paragraph in cell ``index`` reports on, or a sentence saying why none."""
    figure = None
    for j in range(index - 1, -1, -1):
        cell = nb.cells[j]
        if cell.cell_type == "markdown" or QUIET.search(cell.source):
            continue
        if is_checked(cell):
            return cell
        if RUNS.search(cell.source):
            return f"cell {j} draws a run of its own, and prints none of its numbers"
        figure = figure or j  # a figure of the checked cell above: look through it
    return f"no checked cell above (figure cell {figure})"


@pytest.mark.parametrize("lesson", LESSONS, ids=lambda p: p.stem)
def test_measured_numbers_are_printed_by_the_cell_above(lesson):
    nb = with_expectations(lesson)
    inputs = input_numbers(nb)
    wrong = []
    for index, paragraph in measured_paragraphs(nb):
        numbers = quoted_numbers(paragraph)
        if not numbers:
            continue
        source = source_of_numbers(nb, index)
        if isinstance(source, str):
            wrong.append(f"cell {index}: {source}: {paragraph[:90]!r}")
            continue
        missing = sorted(numbers - printed_numbers(source) - inputs)
        if missing:
            wrong.append(f"cell {index}: {missing} not printed by the cell above: {paragraph[:90]!r}")
    assert not wrong, f"{lesson.name}:\n" + "\n".join(wrong)


def test_the_rule_catches_text_under_the_wrong_picture():
    """06 once said 'the three markers took offsets 3, 7 and 11' under a log whose markers are at 2
    and 5, and 07 'writes 5 messages twice' under a figure of a run that writes 2 twice."""
    nb = nbformat.v4.new_notebook()
    checked = nbformat.v4.new_code_cell("# NBVAL_CHECK_OUTPUT\nprint(log)")
    checked.outputs = [nbformat.v4.new_output("stream", name="stdout", text="markers at 2 and 5\n")]
    nb.cells = [checked, nbformat.v4.new_markdown_cell("**Measured:** the markers took offsets 3, 7 and 11.")]
    assert quoted_numbers(nb.cells[1].source) - printed_numbers(source_of_numbers(nb, 1)) == {"3", "7", "11"}
    nb.cells.insert(1, nbformat.v4.new_code_cell('offsets_figure(run_scenario("consumer_crash", seed=1));'))
    assert "draws a run of its own" in source_of_numbers(nb, 2)


def test_an_explanation_is_checked_against_the_experiment_above_its_reveal():
    """Moved into the reveal cell, the text still has to quote the experiment's numbers."""
    nb = nbformat.v4.new_notebook()
    checked = nbformat.v4.new_code_cell("# NBVAL_CHECK_OUTPUT\nwith p.experiment():\n    print(run)")
    checked.outputs = [nbformat.v4.new_output("stream", name="stdout", text="duplicated 3\n")]
    reveal = nbformat.v4.new_code_cell('p.reveal(3, explanation="""**Measured:** 5 are duplicated.""")')
    nb.cells = [checked, reveal]
    ((index, paragraph),) = measured_paragraphs(nb)
    assert quoted_numbers(paragraph) - printed_numbers(source_of_numbers(nb, index)) == {"5"}
