"""The data sets are what their generator makes, and their cards describe their fields."""

import subprocess
import sys
from pathlib import Path

import pytest

from course_lib.datasets import NAMES, load

ROOT = Path(__file__).resolve().parents[1]


def test_committed_files_match_the_seeded_generator():
    run = subprocess.run(
        [sys.executable, "course_lib/data/generate.py", "--check"], cwd=ROOT, capture_output=True, text=True
    )
    assert run.returncode == 0, run.stdout


@pytest.mark.parametrize("name", NAMES)
def test_data_card_lists_every_field(name):
    card = (ROOT / "course_lib" / "data" / name / "README.md").read_text()
    for field in load(name)[0]:
        assert f"`{field}`" in card
    assert f"{len(load(name))} rows" in card and "seed" in card.lower()


def test_ids_are_unique_and_unknown_names_are_explained():
    assert len({r["payment_id"] for r in load("payments")}) == 120
    with pytest.raises(ValueError, match="choose one of"):
        load("orders")
