"""tools/client_suites.py: the table of a client's own integration suite per cluster (issue 39).
Running the suite itself needs PyPI and a JVM (``make client-suites``); here, how outcomes are
counted and compared, on made-up outcomes."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tools"))

import client_suites as cs  # noqa: E402 - a tool, not a package


def outcomes(**by_test):
    return [cs.Outcome(test, outcome, 1.0) for test, outcome in by_test.items()]


def test_table_counts_errors_and_timeouts_as_failures():
    results = {
        "kafka": outcomes(a="passed", b="failed", c="skipped", d="own brokers"),
        "wire": outcomes(a="passed", b="error", c="timeout", d="own brokers"),
    }
    rows = cs.table(results).splitlines()
    assert rows[2] == f"| Kafka {cs.kafka_version()} | 1 | 1 | 1 | 1 |"
    assert rows[3] == "| wire cluster | 1 | 2 | 0 | 1 |"


def test_differences_name_only_the_tests_whose_outcome_differs():
    results = {"wire": outcomes(a="passed", b="failed"), "kafka": outcomes(a="passed", b="passed")}
    assert [line.split(":")[0] for line in cs.differences(results)] == ["b"]
    assert cs.differences({"wire": outcomes(a="failed")}) == []


def failed(test, detail):
    return cs.Outcome(test, "failed", 1.0, detail)


def test_failure_differences_ignore_generated_names_and_flag_known_races():
    race = "test/integration/test_admin_integration.py::test_delete_records"
    results = {
        "wire": [
            failed("same", "E   Error 39: topic test_create_partitions_tYvETAgWUY at 127.0.0.1:4021"),
            failed("other", "E   broker 0 is unknown"),
            failed(race, "E   assert 70 == ((((600 - 100) - 50) - 40) - 30)"),
            cs.Outcome("passes", "passed", 1.0),
        ],
        "kafka": [
            failed("same", "E   Error 39: topic test_create_partitions_LJYeUirNon at 127.0.0.1:39313"),
            failed("other", "E   no such broker 0"),
            failed(race, "E   assert 220 == ((((600 - 100) - 50) - 40) - 30)"),
            cs.Outcome("passes", "passed", 1.0),
        ],
    }
    lines = cs.failure_differences(results)
    assert [line.split(":")[0] for line in lines] == ["other", race.split(":")[0]]
    assert "a race on Kafka too" in lines[1] and "a race" not in lines[0]
