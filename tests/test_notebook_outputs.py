"""Notebooks are committed with no outputs; the outputs nbval compares are stored in
tests/notebook_expectations/ and put back for nbval by notebooks/conftest.py (tools/notebook_outputs.py)."""

import importlib.util
import re
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted(p for p in (ROOT / "notebooks").rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts)
spec = importlib.util.spec_from_file_location("notebook_outputs", ROOT / "tools" / "notebook_outputs.py")
tool = importlib.util.module_from_spec(spec)
spec.loader.exec_module(tool)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: str(p.relative_to(ROOT)))
def test_learners_open_notebooks_without_outputs_and_every_checked_cell_has_a_stored_one(path):
    assert tool.problems(path) == []


def test_the_stored_outputs_are_what_nbval_compares():
    """nbval reads the lesson with its stored outputs (notebooks/conftest.py), so `make test` still
    checks the numbers the text quotes."""
    lesson = ROOT / "notebooks" / "05b_consumer_groups.ipynb"
    committed = nbformat.read(lesson, as_version=4)
    checked = [i for i, c in enumerate(committed.cells) if tool.is_checked(c)]
    assert checked and all(not committed.cells[i].outputs for i in checked)
    nb = tool.with_expectations(lesson)
    assert all(nb.cells[i].outputs and nb.cells[i].execution_count for i in checked)
    assert "processed more than once: 10" in nb.cells[checked[0]].outputs[0]["text"]


@pytest.mark.parametrize("path", [p for p in NOTEBOOKS if "demos" not in p.parts], ids=lambda p: p.name)
def test_lessons_follow_the_course_shape(path):
    nb = nbformat.read(path, as_version=4)
    text = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    assert "Learning goals" in text or "learning goals" in text.lower()
    assert "## Summary" in text and "## Exercises" in text
    assert "**Predict:**" in text or "prediction question" in text


LESSON_FILES = [p for p in NOTEBOOKS if "demos" not in p.parts]


@pytest.mark.parametrize("path", LESSON_FILES, ids=lambda p: p.name)
def test_every_lesson_ends_with_a_link_to_the_next(path):
    last = nbformat.read(path, as_version=4).cells[-1]
    following = LESSON_FILES[LESSON_FILES.index(path) + 1 :]
    target = following[0].name if following else "../exercises/11_capstone.ipynb"
    assert last.cell_type == "markdown" and last.source.startswith("**Next:**") and f"]({target})" in last.source


def test_the_course_path_links_every_lesson():
    text = nbformat.read(ROOT / "notebooks" / "00_start_here.ipynb", as_version=4).cells
    path = next(c.source for c in text if "## The course path" in c.source).split("## The course path")[1]
    path = path.split("Reference pages")[0]
    for lesson in LESSON_FILES[1:]:
        assert f"]({lesson.name})" in path, f"00's course path does not link {lesson.name}"
    assert not re.search(r"^- `", path, re.M), "a lesson named as code, not linked"


def test_strip_returns_checked_text_and_drops_every_output():
    nb = nbformat.v4.new_notebook()
    checked = nbformat.v4.new_code_cell("# NBVAL_CHECK_OUTPUT\nprint(1)")
    checked.outputs = [
        nbformat.v4.new_output("stream", name="stdout", text="1\n"),
        nbformat.v4.new_output("stream", name="stderr", text="progress\n"),
    ]
    other = nbformat.v4.new_code_cell("print(2)")
    other.outputs = [nbformat.v4.new_output("stream", name="stdout", text="2\n")]
    other.execution_count = 3
    nb.cells = [checked, other]
    stored = tool.strip(nb)
    assert stored == [
        {"cell": 0, "source": checked.source, "outputs": [{"name": "stdout", "output_type": "stream", "text": "1\n"}]}
    ]
    assert checked.outputs == [] and other.outputs == [] and other.execution_count is None


def _lesson(tmp_path, monkeypatch, source="# NBVAL_CHECK_OUTPUT\nprint(1)"):
    monkeypatch.setattr(tool, "EXPECTATIONS", tmp_path / "expectations")
    monkeypatch.setattr(tool, "ROOT", tmp_path)
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(source)]
    path = tmp_path / "x.ipynb"
    nbformat.write(nb, path)
    return path


def test_problems_reports_missing_checked_output(tmp_path, monkeypatch):
    path = _lesson(tmp_path, monkeypatch)
    assert "no stored output" in tool.problems(path)[0]


def test_outputs_stored_for_other_code_are_refused(tmp_path, monkeypatch):
    path = _lesson(tmp_path, monkeypatch)
    tool.save_expectations(path, [{"cell": 0, "source": "# NBVAL_CHECK_OUTPUT\nprint(2)", "outputs": []}])
    with pytest.raises(tool.StaleExpectations, match="belong to other code"):
        tool.with_expectations(path)
    assert any("--execute" in p for p in tool.problems(path))
