"""Sample submissions derived from the instructor notebooks in solutions/ (generated from
exercises_src/ by ``make exercises``), so that a set that gains a question gains it here too: a
hand-kept "correct" sample once scored 3/5 after set 05 got its third question.

Used by the grading tests and by ``python -m bench grading``.
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]
# a cell that only calls check(...): the learner's own try, not an answer (and it costs a cell's time)
_CHECK_ONLY = re.compile(r"^(\s*check\([^\n]*\)\s*)+$")


def solution_notebook(exercise_set: str, root: Path = ROOT) -> Path:
    """solutions/<set>_*.ipynb, e.g. ``"05"`` -> solutions/05_consumer_delivery_semantics.ipynb."""
    found = sorted((root / "solutions").glob(f"{exercise_set}_*.ipynb"))
    if len(found) != 1:
        raise FileNotFoundError(f"expected one solutions/{exercise_set}_*.ipynb under {root}, found {found}")
    return found[0]


def correct_submission(exercise_set: str, dest: Path, root: Path = ROOT) -> Path:
    """Write to ``dest`` what a learner who solved every question of the set hands in: the code
    cells of its solution notebook without the ``check(...)`` cells. Returns ``dest``."""
    solution = nbformat.read(solution_notebook(exercise_set, root), as_version=4)
    cells = [
        nbformat.v4.new_code_cell(cell.source)
        for cell in solution.cells
        if cell.cell_type == "code" and not _CHECK_ONLY.match(cell.source)
    ]
    dest = Path(dest)
    nbformat.write(nbformat.v4.new_notebook(cells=cells), dest)
    return dest
