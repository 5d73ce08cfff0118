"""``pip install .`` (not editable) gives a working course: from a folder that has nothing to do
with the repository, lesson 02's first experiment prints what the lesson quotes, the data sets
load, and ``make demo``'s notebooks (the gallery and the delivery simulator) run. About 20 s on
2 busy cores, so not marked slow.

Everything the library reads at run time must therefore come from the installed package
(importlib.resources and package data), never from a path into the repository.

To stay fast, the fresh virtualenv reuses the course's dependencies from the current environment
through a ``.pth`` file (``--no-deps``); only course_lib itself is built and installed, from a copy
of the files a checkout has (so a build artefact of the working tree cannot hide a missing file).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import textwrap
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ("course_lib", "pyproject.toml", "README.md")  # what the build reads


def _lesson_cells(notebook: Path, n: int) -> tuple[list[str], str]:
    """The first ``n`` code cells of a lesson and the output the lesson quotes for the last one
    (lessons carry no outputs: the checked ones are stored in tests/notebook_expectations)."""
    from tools.notebook_outputs import with_expectations

    cells = [c for c in with_expectations(notebook).cells if c.cell_type == "code"][:n]
    quoted = "".join(o.get("text", "") for o in cells[-1].outputs if o.output_type == "stream")
    return [c.source for c in cells], quoted


def _fresh_venv(tmp: Path) -> Path:
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


def test_a_non_editable_install_runs_lesson_02_and_the_demos_from_an_unrelated_folder(tmp_path):
    source = tmp_path / "checkout"
    source.mkdir()
    for name in SOURCE:
        path = ROOT / name
        if path.is_dir():
            shutil.copytree(path, source / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        elif path.exists():
            shutil.copy2(path, source / name)
    python = _fresh_venv(tmp_path)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    install = subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "--no-input", str(source)],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    if install.returncode != 0 and "satisfies the requirement setuptools" in install.stdout + install.stderr:
        pytest.skip(f"building needs setuptools>=68 from the package index, which is not reachable:\n{install.stderr}")
    assert install.returncode == 0, f"pip install . failed:\n{install.stdout}\n{install.stderr}"

    elsewhere = tmp_path / "elsewhere"
    demos = elsewhere / "demos"
    shutil.copytree(ROOT / "notebooks" / "demos", demos)
    lesson_cells, quoted = _lesson_cells(ROOT / "notebooks" / "02_acks_and_durability.ipynb", 3)
    (elsewhere / "lesson02.ipynb").write_text(
        nbformat.writes(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(s) for s in lesson_cells]))
    )
    script = textwrap.dedent(
        """
        import json, sys
        from pathlib import Path

        import nbformat
        from nbclient import NotebookClient

        import course_lib
        from course_lib.datasets import NAMES, load
        from course_lib.real.jars import POM
        from course_lib.spark.orders import read_lines

        class AsNbvalSees(NotebookClient):  # as tools/notebook_outputs.py: what a prediction holds
            def on_comm_open_jupyter_widget(self, msg):  # back until lock-in stays the cell's output
                return None

        def run(path, streams_only=False):
            nb = nbformat.read(path, as_version=4)
            AsNbvalSees(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}).execute()
            return [
                "".join(o.get("text", "") or ("" if streams_only else json.dumps(o.get("data", {}))) for o in c.outputs)
                for c in nb.cells if c.cell_type == "code"
            ]

        print(json.dumps({
            "course_lib": course_lib.__file__,
            "rows": {name: len(load(name)) for name in NAMES},
            "orders": len(read_lines()),
            "pom": POM.is_file(),
            "lesson02": run(Path("lesson02.ipynb"), streams_only=True),  # what it printed (widgets aside)
            "index": run(Path("demos/index.ipynb")),
            "simulator": run(Path("demos/delivery_simulator.ipynb")),
        }))
        """
    )
    run = subprocess.run(
        [str(python), "-c", script], cwd=elsewhere, capture_output=True, text=True, env=env, timeout=900
    )
    assert run.returncode == 0, f"running from {elsewhere} failed:\n{run.stdout[-3000:]}\n{run.stderr[-5000:]}"
    got = json.loads(run.stdout.strip().splitlines()[-1])

    assert Path(got["course_lib"]).is_relative_to(tmp_path / "venv"), f"course_lib came from {got['course_lib']}"
    assert got["rows"] == {"sensor_readings": 240, "clicks": 300, "payments": 120}
    assert got["orders"] == 5000 and got["pom"]
    assert got["lesson02"][-1] == quoted, "lesson 02's first experiment printed something else than the lesson quotes"
    assert "delivery_simulator.ipynb" in got["index"][-1] and "consumer_crash.ipynb" in got["index"][-1]
    assert "application/vnd.jupyter.widget-view+json" in got["simulator"][-1]
