"""The data sets (top-level ``datasets/``) are what their generator makes, their cards describe
their fields, and the library finds them however the course is installed: from a checkout
(editable install or ``PYTHONPATH``: read in place) here, from a wheel (they ship inside the
package) in tests/test_install.py, which installs non-editable into a fresh virtualenv."""

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from course_lib.datasets import NAMES, data_dir, load
from tests.install_support import clean_env, copy_checkout, fresh_venv, pip_install

ROOT = Path(__file__).resolve().parents[1]

#: run from an unrelated folder: where course_lib and its data came from, and what loads
PROBE = textwrap.dedent(
    """
    import json
    import course_lib
    from course_lib.datasets import NAMES, data_dir, load
    from course_lib.spark.orders import read_lines
    print(json.dumps({
        "course_lib": course_lib.__file__,
        "data": str(data_dir()),
        "rows": {name: len(load(name)) for name in NAMES},
        "cards": all((data_dir(name) / "README.md").is_file() for name in NAMES),
        "orders": len(read_lines()),
    }))
    """
)
EXPECTED = {"rows": {"sensor_readings": 240, "clicks": 300, "payments": 120}, "cards": True, "orders": 5000}


def _probe(python, cwd: Path) -> dict:
    run = subprocess.run(
        [str(python), "-c", PROBE],
        cwd=cwd,
        capture_output=True,
        text=True,
        env=clean_env(),
        timeout=300,
    )
    assert run.returncode == 0, f"loading the data sets from {cwd} failed:\n{run.stdout}\n{run.stderr}"
    return json.loads(run.stdout.strip().splitlines()[-1])


def test_committed_files_match_the_seeded_generator():
    run = subprocess.run([sys.executable, "datasets/generate.py", "--check"], cwd=ROOT, capture_output=True, text=True)
    assert run.returncode == 0, run.stdout


def test_a_checkout_reads_the_top_level_datasets_folder():
    assert data_dir() == ROOT / "datasets"
    assert not (ROOT / "course_lib" / "data").exists(), "the data sets live in datasets/, not in the package"


@pytest.mark.parametrize("name", NAMES)
def test_data_card_lists_every_field(name):
    card = (ROOT / "datasets" / name / "README.md").read_text()
    for field in load(name)[0]:
        assert f"`{field}`" in card
    assert f"{len(load(name))} rows" in card and "seed" in card.lower()


def test_ids_are_unique_and_unknown_names_are_explained():
    assert len({r["payment_id"] for r in load("payments")}) == 120
    with pytest.raises(ValueError, match="choose one of"):
        load("orders")


def test_an_editable_install_reads_the_checkouts_datasets_in_place(tmp_path):
    source = copy_checkout(tmp_path / "checkout")
    python = fresh_venv(tmp_path)
    pip_install("--editable", str(source), python=python)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    got = _probe(python, elsewhere)
    assert Path(got["course_lib"]).is_relative_to(source), f"course_lib came from {got['course_lib']}"
    assert got.pop("data") == str(source / "datasets")
    assert {k: got[k] for k in EXPECTED} == EXPECTED
