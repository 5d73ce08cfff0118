"""Every scenario on real Kafka: same body, same history, same checker, same verdicts.

This is the fidelity table of notebooks/09_real_kafka_lab: for each case the anomaly classes
found on the real cluster must equal those found by the simulator, those kafka-python found on
the simulated cluster over the wire, and those the scenario expects (an unsafe configuration must show its anomaly, a safe one must show none). The one
scenario real Kafka cannot run (``random_faults``: a schedule replayed on a virtual clock) must
say why.
"""

import os
from pathlib import Path

import pytest

from course_lib.backend import ComposedBackend
from course_lib.client_adapters import CLIENTS
from course_lib.clusters.releases import as_released
from course_lib.experiments.fidelity import (
    BY_DESIGN,
    FIDELITY_CASES,
    LOCAL_TABLE,
    MATRIX,
    column_seconds,
    fidelity_markdown,
    fidelity_table,
    readme_matrix,
    readme_with_matrix,
    timing_free,
)
from course_lib.experiments.scenarios import run_scenario
from course_lib.experiments.shared_results import once_per_test_run

pytestmark = pytest.mark.real_kafka


@pytest.fixture(scope="module")
def table(cluster):
    # once per test run: notebook 09, run by nbval later in the same run, reads this table back
    rows = once_per_test_run(LOCAL_TABLE, lambda: fidelity_table(cluster, side_by_side=True))
    print("the fidelity matrix's columns, seconds:", column_seconds(rows))
    return rows


@pytest.mark.parametrize(
    "case",
    range(len(FIDELITY_CASES)),
    ids=[f"{n}-{'-'.join(f'{k}={v}' for k, v in kw.items())}" for n, kw in FIDELITY_CASES],
)
def test_real_kafka_shows_what_the_simulator_shows(table, case):
    row = table[case]
    assert row["simulator"] == row["expected"]
    if row["scenario"] == "random_faults":
        assert row["real"] is None and "simulator replays fault schedules" in row["why not"]
        return
    real = row["real"]
    assert row["why not"] is None
    assert row["real Kafka"] == row["expected"], (
        f"{row['scenario']} {row['parameters']} on real Kafka: {real.result.summary()} (notes {real.notes})"
    )
    assert row["wire"] == row["expected"], f"{row['scenario']} {row['parameters']}: {row['disagree']}"
    assert real.result.valid, real.result.summary()
    assert real.result.final_read
    assert real.backend == "kafka"


def _row(table, name, **params):
    (row,) = [r for r in table if r["scenario"] == name and all(r["parameters"].get(k) == v for k, v in params.items())]
    return row


def test_not_enough_replicas_refuses_acks_all_writes(table):
    outcome = _row(table, "not_enough_replicas", acks="all")["real outcome"]
    assert outcome["not delivered (producer told)"] == 5 and outcome["delivered once"] == 0


def test_unclean_election_elected_an_out_of_sync_follower(table):
    assert _row(table, "unclean_election", unclean=True)["real"].notes["leader_while_old_down"] is not None
    assert _row(table, "unclean_election", unclean=False)["real"].notes["leader_while_old_down"] is None


def test_read_committed_consumer_skips_the_aborted_transaction(table):
    committed = _row(table, "aborted_transaction", isolation_level="read_committed")["real"]
    uncommitted = _row(table, "aborted_transaction", isolation_level="read_uncommitted")["real"]
    assert [v for _, v in committed.notes["seen"]] == ["a-0", "a-1", "a-2", "c-0", "c-1", "c-2"]
    assert {v for _, v in uncommitted.notes["seen"]} >= {"b-0", "b-1", "b-2"}
    # the markers take offsets: c-0 is not at offset 6
    assert dict((v, o) for o, v in committed.notes["seen"])["c-0"] > 6


def test_zombie_is_fenced(table):
    assert _row(table, "zombie_fencing")["real"].notes["zombie_error"] == "ProducerFencedError"


def test_transaction_timeout_refuses_the_late_commit(table):
    assert _row(table, "transaction_timeout")["real"].notes["late_commit_error"] is not None


def test_consumer_crash_really_crashed_once(table):
    for row in table:
        if row["scenario"] in ("consumer_crash", "consume_transform_produce", "external_store_exactly_once"):
            assert len(row["real"].notes["crashes"]) == 1, row["real"].notes


def test_every_nemesis_step_is_spelled_as_on_the_simulator(table):
    for row in table:
        if row["real"] is None:
            continue
        real = {op.f for op in row["real"].history if op.process == "nemesis"}
        sim = {op.f for op in row["sim"].history if op.process == "nemesis"}
        # retries_reorder fails one request with the fault each cluster has, each under its one
        # name: the proxy's refused request on Kafka, a request lost on the simulated network
        if "lose_next_request" in sim:
            sim |= {"refuse_next_request"}
        assert real <= sim | {"resume", "pause", "restart"}, (row["scenario"], real, sim)


@pytest.mark.parametrize("client", sorted(CLIENTS))
@pytest.mark.parametrize("scenario", ["leader_crash_after_ack", "aborted_transaction"])
def test_each_client_composed_with_the_local_cluster_runs_the_scenarios(table, cluster, client, scenario):
    # kafka-python x LocalCluster is the table's real column (reused: a run costs real-cluster
    # seconds); any other client adapter runs here, composed with the same cluster
    (row, *_) = [r for r in table if r["scenario"] == scenario]
    (column,) = [c for c in MATRIX if c.place.name == "kafka" and c.client == client]
    result = row["runs"].get(column.key)
    if result is None:  # a client the matrix did not run: composed here with the same cluster
        try:
            result = run_scenario(scenario, backend=ComposedBackend(cluster, CLIENTS[client]()), **row["parameters"])
        finally:
            cluster.revive()
    assert result.backend == "kafka" and result.anomalies == result.expected, result.result.summary()


@pytest.mark.parametrize("column", [c.key for c in MATRIX if c.client not in ("", "kafka-python")])
def test_every_client_column_ran_every_case_and_agrees_or_differs_by_design(table, column):
    (col,) = [c for c in MATRIX if c.key == column]
    for row in table:
        why = row["not run"][column]
        if row["scenario"] == "random_faults" and col.place.name == "kafka":
            assert "simulator replays fault schedules" in why
            continue
        assert why is None, f"{column} did not run {row['scenario']} {row['parameters']}: {why}"
        if (row["scenario"], col.client) not in BY_DESIGN:
            assert row[column] == row["expected"], (row["scenario"], row["parameters"], row["disagree"])


README = Path(__file__).resolve().parents[2] / "README.md"


def test_the_readme_shows_this_matrix(table):
    """The README's matrix is generated from a run's matrix, never written by hand: it must be
    what this run measured, but for the cells whose outcome depends on timing by design
    (fidelity.BY_DESIGN); FIDELITY_README=write rewrites it from this run."""
    text = README.read_text()
    if os.environ.get("FIDELITY_README") == "write":
        README.write_text(readme_with_matrix(text, table))
        return
    # generated on the lab's default release; a run on another one names its own in the titles
    assert timing_free(as_released(readme_matrix(text))) == timing_free(fidelity_markdown(table)), (
        "README.md's fidelity matrix is not this run's: rerun "
        "`FIDELITY_README=write pytest tests/real/test_real_scenarios.py -k readme` and review the diff"
    )
