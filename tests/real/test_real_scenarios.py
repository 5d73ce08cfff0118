"""The simulator's producer scenarios on real Kafka: same history, same checker, same verdicts.

This is the fidelity table of notebooks/09_real_kafka_lab: for each scenario the anomaly classes
found on the real cluster must equal those found by the simulator and those the scenario
expects (an unsafe configuration must show its anomaly, a safe one must show none).
"""
import pytest

from course_lib.real.scenarios import FIDELITY_CASES, fidelity_table

pytestmark = pytest.mark.real_kafka


@pytest.fixture(scope="module")
def table(cluster):
    return fidelity_table(cluster)


@pytest.mark.parametrize("case", range(len(FIDELITY_CASES)),
                         ids=[f"{n}-{'-'.join(f'{k}={v}' for k, v in kw.items())}"
                              for n, kw in FIDELITY_CASES])
def test_real_kafka_shows_what_the_simulator_shows(table, case):
    row = table[case]
    real = row["real"]
    assert row["real Kafka"] == row["expected"], (
        f"{row['scenario']} {row['parameters']} on real Kafka: {real.result.summary()} "
        f"(notes {real.notes})")
    assert row["simulator"] == row["expected"]
    assert real.result.valid, real.result.summary()
    assert real.result.final_read


def test_lost_ack_scenario_really_dropped_an_ack(table):
    for row in table:
        if row["scenario"] == "lost_ack_retry":
            assert row["real"].notes["dropped_responses"] >= 1


def test_not_enough_replicas_refuses_acks_all_writes(table):
    (row,) = [r for r in table if r["scenario"] == "not_enough_replicas"
              and r["parameters"]["acks"] == "all"]
    outcome = row["real outcome"]
    assert outcome["not delivered (producer told)"] == 5 and outcome["delivered once"] == 0


def _row(table, name, **params):
    (row,) = [r for r in table if r["scenario"] == name
              and all(r["parameters"].get(k) == v for k, v in params.items())]
    return row


def test_read_committed_consumer_skips_the_aborted_transaction(table):
    committed = _row(table, "aborted_transaction", isolation_level="read_committed")["real"]
    uncommitted = _row(table, "aborted_transaction", isolation_level="read_uncommitted")["real"]
    assert [v for _, v in committed.notes["seen"]] == ["a-0", "a-1", "a-2", "c-0", "c-1", "c-2"]
    assert {v for _, v in uncommitted.notes["seen"]} >= {"b-0", "b-1", "b-2"}
    # the markers take offsets: c-0 is not at offset 6
    assert dict((v, o) for o, v in committed.notes["seen"])["c-0"] > 6


def test_zombie_is_fenced(table):
    assert _row(table, "zombie_fencing")["real"].notes["zombie_error"] == "ProducerFencedError"


def test_consumer_crash_really_crashed_once(table):
    for row in table:
        if row["scenario"] in ("consumer_crash", "consume_transform_produce"):
            assert len(row["real"].notes["crashes"]) == 1, row["real"].notes


def test_restart_gap_lost_an_ack_before_the_restart(table):
    assert _row(table, "producer_restart_gap")["real"].notes["dropped_responses"] == 1
