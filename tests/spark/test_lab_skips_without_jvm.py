"""notebooks/10 on a machine without Java and Maven: every cell runs, and the lab says it was
skipped and why - no cluster start, no JvmToolMissing, no NameError in later cells."""

import os
import subprocess
import sys
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK = ROOT / "notebooks" / "10_pyspark_exactly_once_lab.ipynb"

RUN = """
import sys, nbformat
from nbclient import NotebookClient
nb = nbformat.read(sys.argv[1], as_version=4)
NotebookClient(nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": sys.argv[2]}}).execute()
nbformat.write(nb, sys.argv[3])
"""


def test_spark_lab_cells_all_say_skipped_without_java(tmp_path):
    # A PATH with python but neither java nor mvn (JAVA_HOME unset), as on a fresh laptop.
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "python").symlink_to(sys.executable)
    env = {k: v for k, v in os.environ.items() if k not in ("JAVA_HOME", "SPARK_HOME")}
    env["PATH"] = str(bindir)
    env["PYTHONPATH"] = str(ROOT)
    out_nb = tmp_path / "out.ipynb"
    run = subprocess.run(
        [sys.executable, "-c", RUN, str(NOTEBOOK), str(NOTEBOOK.parent), str(out_nb)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, (run.stdout + run.stderr)[-3000:]  # a cell raising fails here
    cells = [c for c in nbformat.read(out_nb, as_version=4).cells if c.cell_type == "code"]
    texts = ["".join(o.get("text", "") for o in c["outputs"] if o["output_type"] == "stream") for c in cells]
    assert all(o["output_type"] != "error" for c in cells for o in c["outputs"])
    setup = next(t for t in texts if "Spark lab" in t)
    assert "Spark lab skipped:" in setup and "Java" in setup, setup
    assert "Kafka:" not in setup  # no cluster was started
    skipped = [t for t in texts if t.startswith("skipped:")]
    # the eleven Spark cells each say so; the data-set cell still runs (it needs no JVM)
    assert len(skipped) == 11, texts
    assert any("data set:" in t for t in texts)
    assert texts[-1].strip() == "nothing to stop"
