"""The habits of the codebase: no lint finding (ruff) anywhere, every file as ``ruff format`` writes it, no type error (mypy) in the core
packages (the simulator, clients, history, checker, scenarios, processing, backend). Both are
configured in pyproject.toml; this test makes the suite fail when either finds something."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _tool(name: str) -> list[str]:
    """The tool next to this Python (the test extra pins it), else on PATH."""
    exe = Path(sys.executable).with_name(name)
    if exe.exists():
        return [str(exe)]
    found = shutil.which(name)
    if found is None:
        pytest.fail(f"{name} is not installed: pip install -e '.[test]' (it is pinned in the test extra)")
    return [found]


def test_ruff_finds_nothing():
    run = subprocess.run(
        [*_tool("ruff"), "check", "--no-cache", "course_lib", "tests", "bench", "tools"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, f"ruff check found problems:\n{run.stdout}{run.stderr}"


def test_ruff_format_leaves_every_file_as_it_is():
    run = subprocess.run(
        [*_tool("ruff"), "format", "--check", "--no-cache", "course_lib", "tests", "bench", "tools"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, (
        f"ruff format would change files (run: ruff format course_lib tests bench tools):\n{run.stdout}"
    )


def test_mypy_finds_no_type_error_in_the_core_packages():
    run = subprocess.run(
        [*_tool("mypy"), "--cache-dir", str(ROOT / ".mypy_cache")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, f"mypy found type errors:\n{run.stdout}{run.stderr}"
    assert "Success" in run.stdout
