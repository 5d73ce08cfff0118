"""A learner's autosaved outputs never block `git pull` of a course update (tools/notebook_filter.py,
.gitattributes, `make git-filter`), tried in temporary clones: with the filter the pull goes
through, without it git refuses - the same steps, both ways."""

from __future__ import annotations

import doctest
import importlib.util
import json
import shutil
import subprocess
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
LESSON = "notebooks/01_replicated_log.ipynb"
pytestmark = pytest.mark.skipif(not shutil.which("git") or not shutil.which("make"), reason="needs git and make")

spec = importlib.util.spec_from_file_location("notebook_filter", ROOT / "tools" / "notebook_filter.py")
notebook_filter = importlib.util.module_from_spec(spec)
spec.loader.exec_module(notebook_filter)


def git(cwd: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    identity = ["-c", "user.name=course", "-c", "user.email=course@example.invalid", "-c", "pull.rebase=false"]
    return subprocess.run(["git", *identity, *args], cwd=cwd, capture_output=True, text=True, timeout=60, check=check)


def upstream_and_learner(tmp_path: Path, with_filter: bool) -> tuple[Path, Path]:
    """A course repository (the lesson, .gitattributes, the filter, the Makefile) and a learner's clone."""
    upstream = tmp_path / "course"
    for name in (LESSON, ".gitattributes", "tools/notebook_filter.py", "Makefile"):
        (upstream / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / name, upstream / name)
    git(upstream, "init", "-q", "-b", "main")
    git(upstream, "add", "-A")
    git(upstream, "commit", "-q", "-m", "course")
    learner = tmp_path / "learner"
    git(tmp_path, "clone", "-q", str(upstream), str(learner))
    if with_filter:
        subprocess.run(["make", "-s", "git-filter"], cwd=learner, check=True, timeout=60, capture_output=True)
    return upstream, learner


def run_as_jupyterlab_saves_it(path: Path) -> None:
    """Outputs, execution counts, timing metadata and the kernel's language_info, as an autosave writes them."""
    nb = nbformat.read(path, as_version=4)
    for n, cell in enumerate(c for c in nb.cells if c.cell_type == "code"):
        cell.execution_count = n + 1
        cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=f"output {n}\n")]
        cell.metadata["execution"] = {"iopub.status.idle": "2026-11-27T10:00:00Z"}
    nb.metadata["language_info"] = {"name": "python", "version": "3.12.3", "mimetype": "text/x-python"}
    nbformat.write(nb, path)


def update_the_course(upstream: Path) -> None:
    nb = nbformat.read(upstream / LESSON, as_version=4)
    nb.cells[0].source += "\n\n(updated by the course)"
    nbformat.write(nb, upstream / LESSON)
    git(upstream, "commit", "-q", "-am", "update lesson 01")


@pytest.mark.parametrize("with_filter", [True, False], ids=["filter", "no filter"])
def test_a_pull_after_running_a_lesson(tmp_path, with_filter):
    upstream, learner = upstream_and_learner(tmp_path, with_filter)
    run_as_jupyterlab_saves_it(learner / LESSON)
    update_the_course(upstream)
    assert LESSON in git(learner, "status", "--porcelain").stdout  # git trusts the size first
    if with_filter:
        update = subprocess.run(["make", "-s", "update"], cwd=learner, capture_output=True, text=True, timeout=120)
        assert update.returncode == 0, update.stdout + update.stderr
        assert f"only run, not edited: {LESSON}" in update.stdout
        assert "(updated by the course)" in (learner / LESSON).read_text()
        assert git(learner, "status", "--porcelain").stdout == ""
    else:
        pull = git(learner, "pull", "-q", check=False)
        assert pull.returncode != 0 and "overwritten" in pull.stderr, pull.stderr


def test_an_edited_cell_is_still_an_edit(tmp_path):
    upstream, learner = upstream_and_learner(tmp_path, with_filter=True)
    run_as_jupyterlab_saves_it(learner / LESSON)
    nb = nbformat.read(learner / LESSON, as_version=4)
    code = next(c for c in nb.cells if c.cell_type == "code")
    code.source += "\nprint('my own line')"
    nbformat.write(nb, learner / LESSON)
    assert LESSON in git(learner, "status", "--porcelain").stdout
    stored = git(learner, "diff").stdout
    assert "my own line" in stored and "output 0" not in stored and "3.12.3" not in stored
    # make update leaves an edit alone: the course's change to the same lesson is a conflict to resolve
    update_the_course(upstream)
    update = subprocess.run(["make", "-s", "update"], cwd=learner, capture_output=True, text=True, timeout=120)
    assert update.returncode != 0 and "only run" not in update.stdout
    assert "my own line" in (learner / LESSON).read_text()


def test_the_filter_leaves_every_committed_notebook_as_it_is():
    """Committed notebooks are already clean: through the filter, byte for byte the same."""
    names = [
        p for pattern in ("notebooks/**/*.ipynb", "exercises/*.ipynb", "workshop/*.ipynb") for p in ROOT.glob(pattern)
    ]
    assert len(names) > 20
    changed = [str(p.relative_to(ROOT)) for p in names if notebook_filter.clean(p.read_text()) != p.read_text()]
    assert changed == []


def test_doctests():
    assert doctest.testmod(notebook_filter).failed == 0


def test_as_committed_sees_a_run_lesson_as_clean_only_where_the_filter_is_installed(tmp_path):
    """What tests/test_notebook_outputs.py can read so that `make test` in a learner's checkout
    does not fail on their saved outputs - and still fails where no filter would strip them."""
    for with_filter in (True, False):
        _, learner = upstream_and_learner(tmp_path / str(with_filter), with_filter)
        run_as_jupyterlab_saves_it(learner / LESSON)
        seen = json.loads(notebook_filter.as_committed(learner / LESSON))
        has_outputs = any(c.get("outputs") for c in seen["cells"] if c["cell_type"] == "code")
        assert has_outputs is not with_filter
        assert notebook_filter.installed(learner) is with_filter
