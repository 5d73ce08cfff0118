"""The Kafka-version table (the README's and lesson 09's) is what ``python -m bench versions``
measured, never typed: every experiment and observable of the matrix, on every release the course
measures; and the simulator's cells of each release are what the simulator gives now, so a change
of the simulator that moves one fails here until ``make versions`` measures again."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench import kafka_versions
from course_lib.clusters.releases import SUPPORTED_KAFKA_VERSIONS, kafka_version
from course_lib.explain import lesson09
from course_lib.experiments.fidelity import FIDELITY_CASES, MATRIX_CLIENTS
from course_lib.experiments.protocol_matrix import ROWS

README = Path(__file__).resolve().parents[1] / "README.md"


@pytest.fixture(scope="module")
def table() -> dict:
    return lesson09.version_table()


def _key(row: dict) -> tuple[str, str, str]:
    return row["experiment"], row["observable"], row["client"]


def test_the_readme_shows_the_measured_table(table):
    readme = README.read_text()
    shown = readme[readme.index(lesson09.VERSIONS_START) : readme.index(lesson09.VERSIONS_END)]
    assert shown + lesson09.VERSIONS_END == lesson09.version_markdown(table), (
        "README.md's version table is not course_lib/explain/kafka_versions.json's: run `make versions`"
    )


def test_every_experiment_and_observable_was_measured_on_every_release(table):
    assert table["versions"] == list(SUPPORTED_KAFKA_VERSIONS)
    rows = {_key(r): r for r in table["rows"]}
    for name, _ in FIDELITY_CASES:
        for client in ("simulator", *MATRIX_CLIENTS):
            assert any(k[0] == name and k[2] == client for k in rows), (name, client)
    for spec in ROWS:
        experiment, observable = spec.title.split(": ", 1)
        for client in ("simulator", "java", "confluent-kafka"):
            assert (f"{experiment}: {spec.experiment}", observable, client) in rows, (spec.title, client)
    for row in table["rows"]:
        for version in SUPPORTED_KAFKA_VERSIONS:
            cell = row.get(version)
            assert cell is not None, f"{_key(row)} was not measured on {version}"
            assert " failed: " not in cell, f"{_key(row)} on {version}: a run that failed measures nothing: {cell}"


def test_the_changes_are_the_dead_letter_topic_of_kip_1191_and_the_simulator_follows_them(table):
    """What 4.4.0 changed for an application, as measured: KIP-1191's configs and dead letters;
    the simulator of each release gives each changed cell (its row of the same observable)."""
    versions = table["versions"]
    moved = [r for r in table["rows"] if r["client"] != "simulator" and lesson09.changed(r, versions)]
    assert moved, "Kafka 4.4.0 adds dead-letter topics: the table must show them"
    assert "the simulator does not follow" not in lesson09.version_changes(table)
    assert all("KIP-1191" in r["experiment"] for r in moved), lesson09.version_changes(table)


@pytest.mark.parametrize("version", SUPPORTED_KAFKA_VERSIONS)
def test_the_simulators_cells_are_what_it_gives_now(table, version):
    """The quick side (a few fidelity cases and the dead-letter topic on the simulator) measured
    again: in this process for the lab's release, in a child process for the other one."""
    if version == kafka_version():
        now = kafka_versions.observe(None, quick=True)
    else:
        now = kafka_versions.measure(version, quick=True)["rows"]
    recorded = {_key(r): r[version] for r in table["rows"]}
    for row in now:
        assert recorded[_key(row)] == row["cell"], (version, _key(row), json.dumps(row))
