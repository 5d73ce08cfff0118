"""`make lab` / `make demo` as a first-time learner runs them (dry run: nothing installed or started)."""

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")


def _dry_run(target: str, tmp_path) -> str:
    venv = tmp_path / "venv"  # an empty venv path: make prints the whole first-run recipe
    out = subprocess.run(
        ["make", "-n", target, f"VENV={venv}"], cwd=ROOT, capture_output=True, text=True, timeout=60, check=True
    )
    return out.stdout


def test_make_lab_installs_only_the_lab_extra_and_serves_the_repository_root(tmp_path):
    text = _dry_run("lab", tmp_path)
    assert "-e '.[lab]'" in text and ".[all]" not in text
    assert f'--ServerApp.root_dir="{ROOT}"' in text  # lessons' ../exercises/ links resolve
    for clutter in ("conftest.py", "STYLE.md", "artifacts", "__pycache__"):
        assert f"--ContentsManager.hide_globs={clutter}" in text
    assert ("--allow-root" in text) == (os.getuid() == 0)


def test_make_test_still_installs_every_extra(tmp_path):
    assert "-e '.[all]'" in _dry_run("test", tmp_path)


def test_make_demo_uses_the_offline_template(tmp_path):
    text = _dry_run("demo", tmp_path)
    assert "--template=course" in text and "share/jupyter" in text and "index.ipynb" in text
    assert (ROOT / "share/jupyter/voila/templates/course/index.html.j2").exists()
