"""Exercises link back to their lesson, and one overview (exercises/00_progress.ipynb,
``course_lib.grading.progress()``) shows what is done and what is left over every set."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import nbformat
import pytest

from course_lib.grading import EXERCISES, progress
from course_lib.grading.overview import ANSWERED, FAILED, PASSED, TO_DO
from course_lib.grading.registry import evaluate

ROOT = Path(__file__).resolve().parents[1]
SETS = sorted(p for p in (ROOT / "exercises").glob("*.ipynb") if p.name != "00_progress.ipynb")


@pytest.mark.parametrize("path", SETS, ids=lambda p: p.name)
def test_every_set_links_to_its_lesson_and_to_the_overview(path):
    first = "".join(json.loads(path.read_text())["cells"][0]["source"])
    links = re.findall(r"\]\(([^)]+\.ipynb)\)", first)
    lessons = [link for link in links if link.startswith("../notebooks/")]
    assert lessons, f"{path.name} does not link to a lesson"
    assert all((path.parent / link).resolve().exists() for link in links), links
    if path.stem in {p.stem for p in (ROOT / "notebooks").glob("*.ipynb")}:
        assert f"../notebooks/{path.name}" in lessons
    assert "00_progress.ipynb" in links


def _set_answer(nb, exercise: str, value: str, output: str | None) -> None:
    """Write ``exercise = value`` into its answer cell and, if given, the check cell's saved output."""
    for i, cell in enumerate(nb.cells):
        if cell.cell_type == "code" and re.match(rf"{exercise}\s*=", cell.source):
            cell.source = f"{exercise} = {value}"
            if output is not None:
                check_cell = next(c for c in nb.cells[i + 1 :] if f'check("{exercise}")' in c.source)
                check_cell.outputs = [
                    nbformat.v4.new_output("execute_result", {"text/plain": output}, execution_count=i)
                ]
            return
    raise AssertionError(f"no answer cell for {exercise}")


def test_progress_reads_what_the_saved_notebooks_say(tmp_path):
    folder = tmp_path / "exercises"
    shutil.copytree(ROOT / "exercises", folder)
    assert {r.status for r in progress(folder).rows} == {TO_DO}  # a fresh copy: everything left

    solution = nbformat.read(ROOT / "solutions" / "01_replicated_log.ipynb", as_version=4)
    right = next(c.source for c in solution.cells if c.cell_type == "code" and c.source.startswith("ex01_q1"))
    value = right.split("=", 1)[1].strip()
    passed = evaluate("ex01_q1", eval(value)).text()  # the real report, as check() prints it
    failed = evaluate("ex01_q2", 987).text()
    nb = nbformat.read(folder / "01_replicated_log.ipynb", as_version=4)
    _set_answer(nb, "ex01_q1", value, passed)
    _set_answer(nb, "ex01_q2", "987", failed)
    _set_answer(nb, "ex01_q3", "2", None)  # answered, never checked
    nbformat.write(nb, folder / "01_replicated_log.ipynb")

    overview = progress(folder)
    status = {r.exercise: r.status for r in overview.rows}
    assert (status["ex01_q1"], status["ex01_q2"], status["ex01_q3"], status["ex01_q4"]) == (
        PASSED,
        FAILED,
        ANSWERED,
        TO_DO,
    )
    assert set(status) == set(EXERCISES) and len(overview.done) == 1
    points = sum(ex.points for ex in EXERCISES.values())
    assert overview.summary().startswith(f"1 of {len(EXERCISES)} exercises passed (1 of {points:g} points)")
    assert "01_replicated_log" in overview.summary()  # still to do there: q2, q3, q4
    page = overview._repr_html_()
    assert "href='01_replicated_log.ipynb'" in page and page.count("data-status='passed'") == 1
    assert "ex01_q1" in str(overview)


def test_progress_refuses_a_folder_that_is_not_there(tmp_path):
    with pytest.raises(FileNotFoundError, match="not a folder"):
        progress(tmp_path / "nowhere")


def test_the_overview_notebook_calls_progress_and_is_left_out_of_the_site():
    import importlib.util

    nb = nbformat.read(ROOT / "exercises" / "00_progress.ipynb", as_version=4)
    assert any("progress()" in c.source for c in nb.cells if c.cell_type == "code")
    spec = importlib.util.spec_from_file_location("site_build", ROOT / "tools" / "site_build.py")
    site_build = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(site_build)
    assert "00_progress.ipynb" not in [p.name for p in site_build.browser_notebooks(ROOT / "exercises")]
