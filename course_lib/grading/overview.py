"""A learner's progress over every exercise: what is done, what is left (exercises/00_progress.ipynb).

It reads the exercise notebooks as saved (nothing is run, no answer is graded again): an exercise
is *passed* or *failed* when the output under its ``check(...)`` cell says so, *answered* when its
answer no longer holds the ``...`` placeholder but no check output says how it went, and *to do*
otherwise. Run the check cells (or ``check_all()``) to turn "answered" into a verdict.

>>> import nbformat
>>> nb = nbformat.v4.new_notebook(cells=[
...     nbformat.v4.new_code_cell("ex01_q1 = 4"),
...     nbformat.v4.new_code_cell('check("ex01_q1")', outputs=[nbformat.v4.new_output(
...         "execute_result", {"text/plain": "✓ ex01_q1: passed (1/1 points)"}, execution_count=2)]),
...     nbformat.v4.new_code_cell("ex01_q2 = ...  # YOUR ANSWER HERE")])
>>> statuses(nb)["ex01_q1"], statuses(nb).get("ex01_q2", TO_DO)
('passed', 'to do')
"""

from __future__ import annotations

import html
import json
import re
from dataclasses import dataclass
from pathlib import Path

from .registry import EXERCISES

PASSED, FAILED, ANSWERED, TO_DO = "passed", "failed", "answered", "to do"
_VERDICT = re.compile(r"\b(ex\w+): (passed|failed|not attempted|wrong type|error|skipped) \(")
_PLACEHOLDER = re.compile(r"(=|:)\s*\.\.\.,?\s*# YOUR ANSWER HERE|\.\.\.\s*# YOUR CODE HERE")
_ASSIGNED = re.compile(r"^\s*(ex\w+_q\w+)\s*=", re.M)
#: the exercises folder next to the lessons (a checkout of the course: exercises/, notebooks/)
EXERCISES_DIR = Path(__file__).resolve().parents[2] / "exercises"


def _joined(value) -> str:
    return "".join(value) if isinstance(value, list) else (value or "")


def _text(output) -> str:
    return _joined(output["text"]) if "text" in output else _joined(output.get("data", {}).get("text/plain"))


def _code_cells(nb) -> list[tuple[str, list]]:
    """(source, outputs) of each code cell: a notebook as JSON or as nbformat reads it (the browser
    copy of the course has no nbformat)."""
    return [(_joined(c.get("source")), c.get("outputs", [])) for c in nb["cells"] if c.get("cell_type") == "code"]


def statuses(nb) -> dict[str, str]:
    """``{exercise id: status}`` for the exercises a notebook answers or checks."""
    found: dict[str, str] = {}
    for source, outputs in _code_cells(nb):
        for exercise in _ASSIGNED.findall(source):
            if not _PLACEHOLDER.search(source):
                found.setdefault(exercise, ANSWERED)
        for match in (m for o in outputs for m in _VERDICT.finditer(_text(o))):
            exercise, verdict = match.groups()
            if verdict == "passed":
                found[exercise] = PASSED
            elif verdict in ("failed", "wrong type", "error"):
                found[exercise] = FAILED
    return found


def _implemented(nb, functions: tuple) -> bool:
    """An implementation exercise is answered once its functions' cells lost their placeholder."""
    cells = [source for source, _ in _code_cells(nb) if any(f"def {f}(" in source for f in functions)]
    return bool(cells) and not any(_PLACEHOLDER.search(c) for c in cells)


@dataclass
class Row:
    exercise: str
    notebook: str
    kind: str
    points: float
    status: str


@dataclass
class Progress:
    """Every exercise and its status; prints as a table, renders as one with links."""

    rows: list[Row]
    folder: Path

    @property
    def done(self) -> list[Row]:
        return [r for r in self.rows if r.status == PASSED]

    @property
    def left(self) -> list[Row]:
        return [r for r in self.rows if r.status != PASSED]

    def summary(self) -> str:
        points = sum(r.points for r in self.done)
        total = sum(r.points for r in self.rows)
        left = sorted({r.notebook for r in self.left})
        where = f"; still to do in: {', '.join(left)}" if left else "; every exercise passed"
        return f"{len(self.done)} of {len(self.rows)} exercises passed ({points:g} of {total:g} points){where}"

    def __str__(self) -> str:
        lines = [f"{'exercise':<10} {'set':<30} {'kind':<10} {'points':>6}  status"]
        lines += [f"{r.exercise:<10} {r.notebook:<30} {r.kind:<10} {r.points:>6g}  {r.status}" for r in self.rows]
        return "\n".join([*lines, self.summary()])

    __repr__ = __str__

    def _repr_html_(self) -> str:
        colour = {PASSED: "#1a7f37", FAILED: "#cf222e", ANSWERED: "#9a6700", TO_DO: "#57606a"}
        rows = "".join(
            f"<tr data-status='{r.status}'><td><a href='{html.escape(r.notebook)}.ipynb'>{html.escape(r.notebook)}</a></td>"
            f"<td>{r.exercise}</td><td>{r.kind}</td><td style='text-align:right'>{r.points:g}</td>"
            f"<td style='color:{colour[r.status]}'><b>{r.status}</b></td></tr>"
            for r in self.rows
        )
        return (
            f"<p><b>{html.escape(self.summary())}</b></p><table><tr><th>set</th><th>exercise</th><th>kind</th>"
            f"<th>points</th><th>status</th></tr>{rows}</table>"
        )


def _default_folder() -> Path:
    """The folder this notebook runs in when it holds the exercises (exercises/00_progress.ipynb,
    a learner's own copy), else the course's exercises/ beside course_lib."""
    here = Path.cwd()
    return here if any(here.glob("01_*.ipynb")) and (here / "11_capstone.ipynb").exists() else EXERCISES_DIR


def progress(folder: str | Path | None = None) -> Progress:
    """Your progress over all exercises, from the exercise notebooks as you saved them
    (``folder``: default the exercises beside this notebook, else the course's exercises/).
    Save a notebook (Ctrl+S) to count its latest checks."""
    folder = Path(folder) if folder is not None else _default_folder()
    if not folder.is_dir():
        raise FileNotFoundError(f"{folder} is not a folder: pass the folder of your exercise notebooks")
    rows = []
    cache: dict[str, object] = {}
    for ex in sorted(EXERCISES.values(), key=lambda e: (e.notebook, e.id)):  # course order: 05 before 05b
        path = folder / f"{ex.notebook}.ipynb"
        if ex.notebook not in cache:
            cache[ex.notebook] = json.loads(path.read_text(encoding="utf-8")) if path.exists() else None
        nb = cache[ex.notebook]
        status = TO_DO
        if nb is not None:
            status = statuses(nb).get(ex.id, TO_DO)
            if status == TO_DO and ex.is_implementation and _implemented(nb, ex.functions):
                status = ANSWERED
        rows.append(Row(ex.id, ex.notebook, ex.kind, ex.points, status))
    return Progress(rows, folder)
