"""Installing the course from a copy of the checkout, as a learner's ``pip install`` would:
shared by tests/test_install.py and tests/test_datasets.py.

Only course_lib itself is built; a fresh virtualenv reuses the course's dependencies from the
current environment through a ``.pth`` file (``--no-deps``), so a test takes seconds, not minutes.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: what the build reads: the code, the data sets setup.py copies into the wheel, the metadata
SOURCE = ("course_lib", "datasets", "pyproject.toml", "setup.py", "MANIFEST.in", "README.md")


def copy_checkout(dest: Path) -> Path:
    """The files a checkout has (a build artefact of the working tree cannot hide a missing file)."""
    dest.mkdir(parents=True)
    for name in SOURCE:
        path = ROOT / name
        if path.is_dir():
            shutil.copytree(path, dest / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info"))
        elif path.exists():
            shutil.copy2(path, dest / name)
    return dest


def clean_env() -> dict[str, str]:
    """This environment without what would put another course_lib on the path."""
    return {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}


def fresh_venv(tmp: Path) -> Path:
    """A virtualenv without course_lib that sees this environment's other packages; its python."""
    venv = tmp / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    # the dependencies (kafka-python, matplotlib, ipykernel, nbclient...) of this environment; a
    # .pth line only adds the folder to sys.path (its own .pth files, among them this checkout's
    # editable install, are not run), so course_lib comes from the fresh install alone
    (Path(site) / "course-deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return python


def pip_install(*args: str, python: Path | None = None) -> None:
    """``pip install --no-deps ARGS`` with this environment's pip (into ``python``'s environment,
    if given); skips when building needs a setuptools the package index cannot give."""
    into = ["--python", str(python)] if python else []
    done = subprocess.run(
        [sys.executable, "-m", "pip", *into, "install", "--no-deps", "--no-input", *args],
        capture_output=True,
        text=True,
        env=clean_env(),
        timeout=600,
    )
    if done.returncode != 0 and "satisfies the requirement setuptools" in done.stdout + done.stderr:
        pytest.skip(f"building needs setuptools>=68 from the package index, which is not reachable:\n{done.stderr}")
    assert done.returncode == 0, f"pip install {' '.join(args)} failed:\n{done.stdout}\n{done.stderr}"
