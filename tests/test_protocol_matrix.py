"""The fidelity matrix's second part (course_lib/experiments/protocol_matrix.py): KIP-848 and share groups with
the clients kafka-python does not have. Its runs are computed once per test run by the tests that
assert them (tests/wire, tests/java_client, tests/real); here they are read back - this file runs
after them in the same process (tests/xdist_groups.py) - and the rows must agree where they must,
each cell equal to what its experiment fixes. The first tests feed doctored runs: a wrong cell
is named, with the pair of columns that disagrees."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from course_lib.experiments import consumer_protocol_experiments as kip848
from course_lib.experiments import protocol_matrix as matrix
from course_lib.experiments import share_group_experiments as share
from course_lib.clusters.releases import as_released
from course_lib.client_adapters import client_missing
from course_lib.experiments.fidelity import KAFKA_TITLE
from course_lib.judge.result import Result

README = Path(__file__).resolve().parents[1] / "README.md"


def _runs(**doctored) -> dict:
    """Every run of every column as its experiment must give it (librdkafka shows no epochs),
    ``doctored``: column key -> changes to its share group run."""
    runs = {}
    for col in matrix.COLUMNS:
        for experiment in matrix.EXPERIMENTS:
            result = dict(matrix.EXPECTED[experiment])
            if "epochs" in result and col.client == "confluent-kafka":
                result["epochs"] = dict.fromkeys(result["epochs"])
            if experiment == "share group":
                result.update(doctored.get(col.key, {}))
            runs[(experiment, col.key)] = (Result("matrix", experiment, numbers=result), None)
    return runs


def test_runs_as_expected_agree():
    rows = matrix.protocol_rows(_runs())
    assert matrix.wrong_cells(rows) == [] and matrix.unexplained(rows) == []
    assert all(r["agree"] for r in rows)
    (epochs,) = [r for r in rows if r["row"] == "KIP-848: slow handler, member epochs"]
    assert epochs["not shown"] == {
        "wire confluent-kafka": "librdkafka does not show its member epoch",
        "Kafka confluent-kafka": "librdkafka does not show its member epoch",
    }


def test_a_known_difference_disagrees_but_is_explained(monkeypatch):
    """A difference understood and not mended yet (:data:`KNOWN`): the row disagrees and names the
    pair, yet the cell is not wrong (here: the simulated consumer's group_metadata() after a leave
    said -1, before it followed the Java client)."""
    row = "KIP-848: slow handler, member epochs"
    monkeypatch.setitem(matrix.KNOWN, (row, "simulator"), "group_metadata() says -1 after a leave")
    runs = _runs()
    result, _ = runs[("consumer group: slow handler", "simulator")]
    result.numbers["epochs"] = {**result.numbers["epochs"], "a_left": -1}
    rows = matrix.protocol_rows(runs)
    assert matrix.wrong_cells(rows) == [] and matrix.unexplained(rows) == []
    (epochs,) = [r for r in rows if r["agree"] is False]
    assert epochs["row"] == row
    assert epochs["disagree"][0].startswith("simulator vs wire java: the simulator's client differs")
    monkeypatch.delitem(matrix.KNOWN, (row, "simulator"))
    assert matrix.wrong_cells(matrix.protocol_rows(runs)) != []


def test_a_doctored_cell_is_wrong_and_names_the_pairs():
    """Kafka under librdkafka redelivers a poison record once more than it must."""
    rows = matrix.protocol_rows(_runs(**{"Kafka confluent-kafka": {"poison_deliveries": 3}}))
    assert matrix.wrong_cells(rows) == [
        "share: a poison record (limit 3): Kafka confluent-kafka shows 3 more, then archived, "
        "expected 2 more, then archived"
    ]
    assert matrix.unexplained(rows) == [
        "share: a poison record (limit 3): wire confluent-kafka vs Kafka confluent-kafka: the simulated broker "
        "differs from Kafka under confluent-kafka (same client, other brokers)",
        "share: a poison record (limit 3): Kafka java vs Kafka confluent-kafka: the clients differ (same "
        f"brokers: {KAFKA_TITLE})",
    ]
    text = matrix.protocol_text(rows)
    assert "8 of 9 rows agree" in text and "3 more, then archived" in text


def test_a_column_that_did_not_run_says_why():
    runs = {k: v for k, v in _runs().items() if k[1] != "Kafka java"}
    runs[("share group", "Kafka java")] = (None, "the Java client needs a JVM: no java")
    rows = matrix.protocol_rows(runs)
    assert all("Kafka java" in r["not run"] for r in rows)
    assert "- Kafka java, share group: the Java client needs a JVM: no java" in matrix.protocol_foot(rows)
    with pytest.raises(ValueError, match="no protocol matrix run"):
        matrix.result_key("share group", "wire kafka-python")


@pytest.fixture(scope="module")
def rows():
    """This test run's matrix: the simulator's runs, and every client column read back from the
    tests that ran them (none is computed here: a column they did not run says so)."""
    rows = matrix.protocol_table(read_only="not run by tests/wire, tests/java_client or tests/real in this test run")
    print(matrix.protocol_text(rows))
    return rows


def test_this_runs_matrix_agrees_where_it_must(rows):
    assert matrix.wrong_cells(rows) == [], matrix.protocol_text(rows)
    assert matrix.unexplained(rows) == [], matrix.protocol_text(rows)
    assert all(r["simulator"] is not None for r in rows)
    # what the tests of both clusters computed, when this run has Java: the wire columns
    # (tests/wire, tests/java_client) and, with tests/real, the Kafka columns
    for col in matrix.COLUMNS[1:]:
        ran = [r for r in rows if col.key not in r["not run"]]
        if client_missing(col.client) is None and ran:
            assert len(ran) == len(rows), (col.key, [r["not run"].get(col.key) for r in rows])


def test_the_simulator_gives_each_experiments_counts():
    """The simulator's runs, seeded, in virtual time: the counts every cluster must give."""
    crashed = kip848.on_the_simulator("crashed member").numbers
    assert not kip848.check(crashed, kip848.CRASH_EXPECTED, kip848.JAVA_CRASH_EPOCHS)
    slow = kip848.on_the_simulator("slow handler").numbers
    assert not kip848.check(slow, kip848.SLOW_EXPECTED, kip848.JAVA_SLOW_EPOCHS)
    got = share.simulator_run(seed=0).numbers
    got.pop("seconds")
    assert got == share.EXPECTED


@pytest.mark.real_kafka
def test_the_readme_shows_this_matrix(rows):
    """The README's protocol matrix is this run's (generated, never written by hand);
    PROTOCOL_README=write rewrites it from this run."""
    missing = {why for r in rows for why in r["not run"].values()}
    if missing:
        pytest.skip(f"the README's matrix needs every column; not run: {sorted(missing)}")
    text = README.read_text()
    if os.environ.get("PROTOCOL_README") == "write":
        README.write_text(matrix.readme_with_matrix(text, rows))
        return
    # generated on the lab's default release; a run on another one names its own in the titles
    assert as_released(matrix.readme_matrix(text)) == matrix.protocol_markdown(rows), (
        "README.md's protocol matrix is not this run's: rerun the protocol tests with "
        "PROTOCOL_README=write (tests/xdist_groups.py lists them) and review the diff"
    )
