"""``pip install .`` (not editable) gives a working course: from a folder that has nothing to do
with the repository, lesson 02's first experiment prints what the lesson quotes, the data sets
load, and ``make demo``'s notebooks (the gallery and the delivery simulator) run. About 20 s on
2 busy cores, so not marked slow.

Everything the library reads at run time must therefore come from the installed package
(importlib.resources and package data), never from a path into the repository.

To stay fast, the fresh virtualenv reuses the course's dependencies from the current environment
(tests/install_support.py); only course_lib itself is built and installed, from a copy of the
files a checkout has (so a build artefact of the working tree cannot hide a missing file).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import textwrap
from pathlib import Path

import nbformat

from tests.install_support import ROOT, clean_env, copy_checkout, fresh_venv, pip_install


def _lesson_cells(notebook: Path, n: int) -> tuple[list[str], str]:
    """The first ``n`` code cells of a lesson and the output the lesson quotes for the last one
    (lessons carry no outputs: the checked ones are stored in tests/notebook_expectations)."""
    from tools.notebook_outputs import with_expectations

    cells = [c for c in with_expectations(notebook).cells if c.cell_type == "code"][:n]
    quoted = "".join(o.get("text", "") for o in cells[-1].outputs if o.output_type == "stream")
    return [c.source for c in cells], quoted


def test_a_non_editable_install_runs_lesson_02_and_the_demos_from_an_unrelated_folder(tmp_path):
    source = copy_checkout(tmp_path / "checkout")
    python = fresh_venv(tmp_path)
    env = clean_env()
    pip_install(str(source), python=python)

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
        from course_lib.datasets import NAMES, data_dir, load
        from course_lib.clusters.jars import POM
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
            "data": str(data_dir()),
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
    shipped = Path(got["data"])  # the wheel carries the top-level datasets/ as course_lib/data (setup.py)
    assert shipped == Path(got["course_lib"]).parent / "data", f"the data sets came from {shipped}"
    assert all((shipped / name / "README.md").is_file() for name in got["rows"]), "a data card is missing"
    assert not list(shipped.rglob("generate.py")), "the generators are authoring tools, not shipped"
    assert got["orders"] == 5000 and got["pom"]
    assert got["lesson02"][-1] == quoted, "lesson 02's first experiment printed something else than the lesson quotes"
    assert "delivery_simulator.ipynb" in got["index"][-1] and "consumer_crash.ipynb" in got["index"][-1]
    assert "application/vnd.jupyter.widget-view+json" in got["simulator"][-1]
