"""Notebooks are committed stripped, except the outputs nbval compares (tools/notebook_outputs.py)."""

import importlib.util
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted(p for p in (ROOT / "notebooks").rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts)
spec = importlib.util.spec_from_file_location("notebook_outputs", ROOT / "tools" / "notebook_outputs.py")
tool = importlib.util.module_from_spec(spec)
spec.loader.exec_module(tool)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: str(p.relative_to(ROOT)))
def test_only_checked_cells_carry_outputs(path):
    assert tool.problems(path) == []


@pytest.mark.parametrize("path", [p for p in NOTEBOOKS if "demos" not in p.parts], ids=lambda p: p.name)
def test_lessons_follow_the_course_shape(path):
    nb = nbformat.read(path, as_version=4)
    text = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    assert "Learning goals" in text or "learning goals" in text.lower()
    assert "## Summary" in text and "## Exercises" in text
    assert "**Predict:**" in text or "prediction question" in text


def test_strip_keeps_checked_text_and_drops_the_rest():
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
    tool.strip(nb)
    assert [o.text for o in checked.outputs] == ["1\n"] and checked.execution_count == 1
    assert other.outputs == [] and other.execution_count is None


def test_problems_reports_missing_checked_output(tmp_path):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("# NBVAL_CHECK_OUTPUT\nprint(1)")]
    path = tmp_path / "x.ipynb"
    nbformat.write(nb, path)
    assert "no stored output" in tool.problems(path)[0]
