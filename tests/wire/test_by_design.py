"""The clients differ by design (course_lib.experiments.by_design): each observation run with the simulator's
clients and with kafka-python, confluent-kafka and Java on the simulated cluster over TCP, each
client's outcome asserted - so a client whose behaviour changes, either way, fails its own test.
The table is computed once per test run (the three wire columns side by side) and the README's
list is this run's."""

import os
import threading
from pathlib import Path

import pytest

from course_lib.experiments.by_design import (
    OBSERVATIONS,
    README_END,
    README_START,
    WIRE_TABLE,
    by_design_markdown,
    by_design_table,
)
from course_lib.experiments.fidelity import MATRIX, MATRIX_CLIENTS, fidelity_text
from course_lib.experiments.shared_results import once_per_test_run

from .conftest import wire_threads

README = Path(__file__).resolve().parents[2] / "README.md"
COLUMNS = {c.client or "simulator": c.key for c in MATRIX if c.place.name in ("simulated", "wire")}


@pytest.fixture(scope="module")
def rows():
    table = once_per_test_run(WIRE_TABLE, by_design_table)
    print("by design, seconds per column:", {r["scenario"]: r["seconds"] for r in table})
    # every wire cluster's threads are gone, and so are kafka-python's (close_clients() stops
    # the wedged idempotent producer whose close() refused)
    assert not wire_threads()
    assert not [t.name for t in threading.enumerate() if t.name.endswith("-network-thread")]
    return table


@pytest.mark.parametrize("client", ["simulator", *MATRIX_CLIENTS])
@pytest.mark.parametrize("observation", OBSERVATIONS, ids=[o.probe for o in OBSERVATIONS])
def test_each_client_does_what_it_does_by_design(rows, observation, client):
    (row,) = [r for r in rows if r["scenario"] == observation.probe]
    key = COLUMNS[client]
    assert row["not run"][key] is None, row["not run"][key]
    assert row[key] == [observation.expected[client]], (key, row["outcomes"][key])


def test_the_matrix_names_each_difference_and_why(rows):
    text = fidelity_text(rows)
    for obs in OBSERVATIONS:
        (line,) = [x for x in text.splitlines() if x.startswith(f"- {obs.probe}: simulator: ")]
        assert line.endswith(f"clients differ, by design: {obs.why}")
        assert all(f"{COLUMNS[c]}: {obs.expected[c]}" in line for c in obs.expected)
    # the disagreement between kafka-python and Java on the simulated cluster says it is by design
    assert all(any("wire vs wire java" in d and "by design" in d for d in r["disagree"]) for r in rows)


def test_the_readme_lists_this_runs_differences(rows):
    """README.md's list is generated from a run; FIDELITY_README=write rewrites it."""
    text = README.read_text()
    start, end = text.index(README_START), text.index(README_END) + len(README_END)
    if os.environ.get("FIDELITY_README") == "write":
        README.write_text(text[:start] + by_design_markdown(rows) + text[end:])
        return
    assert text[start:end] == by_design_markdown(rows), (
        "README.md's by-design list is not this run's: rerun "
        "`FIDELITY_README=write pytest tests/wire/test_by_design.py -k readme` and review the diff"
    )
