"""``python -m bench versions``: every experiment on each Kafka release the course measures, and
what changed from one release to the next (the Kafka-version axis of the matrix).

Each release (:data:`~course_lib.clusters.releases.SUPPORTED_KAFKA_VERSIONS`) is measured in a
process of its own with ``COURSE_KAFKA_VERSION`` set, so its brokers, its Java client and the
simulator all take that release (:mod:`course_lib.clusters.releases`): a LocalCluster
(``controllers=1``, the lab's) runs every case of the fidelity matrix with each client, every
experiment of the protocol matrix (the KIP-848 consumer groups, share groups) with the Java client
and confluent-kafka, and the dead-letter queue of KIP-1191 with confluent-kafka; the simulator
runs the same cases in that release. Each observable becomes a row: its experiment, what is
counted, the client, and a cell per release (:func:`observe`).

The rows are written to :data:`~course_lib.explain.lesson09.VERSIONS_FILE`; the README's version
table and lesson 09's are generated from that file (:func:`course_lib.explain.lesson09.version_markdown`),
never typed - ``tests/test_kafka_versions_table.py`` checks the README shows it, and that the
simulator's cells of each release are what this machine's simulator gives now.

``--quick`` (what ``make test`` runs): the simulator's side only, both releases, a few cases, no
file written. ``--release V``: measure one release into the file, keeping the others' rows.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from course_lib.clusters.releases import KAFKA_VERSION_ENV, SUPPORTED_KAFKA_VERSIONS

ROOT = Path(__file__).resolve().parent.parent


def fidelity_observations(kafka, cases) -> list[dict]:
    """The fidelity matrix's cases (without the wire columns): the anomaly classes each column found."""
    from course_lib.experiments.fidelity import BY_DESIGN, MATRIX, classes_cell, fidelity_table

    rows = fidelity_table(kafka, cases=cases, wire=False, real_why_not="the simulator's side only")
    out = []
    for row in rows:
        params = ", ".join(f"{k}={v}" for k, v in row["parameters"].items())
        for col in [
            c for c in MATRIX if c.place.name == "simulated" or (c.place.name == "kafka" and kafka is not None)
        ]:
            why = row["not run"].get(col.key)
            out.append(
                {
                    "experiment": row["scenario"],
                    "observable": f"anomalies{' (' + params + ')' if params else ''}",
                    "client": col.client or "simulator",
                    "cell": f"not run: {why}" if why else classes_cell(row[col.key]),
                    # the outcome depends on timing by design: a change between releases says nothing
                    **({"timing": True} if (row["scenario"], col.client) in BY_DESIGN else {}),
                }
            )
    return out


def protocol_observations(kafka) -> list[dict]:
    """The protocol matrix's rows (KIP-848 groups, share groups) on the simulator and on ``kafka``."""
    from course_lib.experiments.protocol_matrix import COLUMNS, protocol_table

    clusters = ("simulated", "kafka") if kafka is not None else ("simulated",)
    rows = protocol_table(kafka, clusters=clusters)
    out = []
    for row in rows:
        experiment, observable = row["row"].split(": ", 1)
        for col in [c for c in COLUMNS if c.place.name in clusters]:
            if col.key in row["not run"]:
                cell = f"not run: {row['not run'][col.key]}"
            elif col.key in row["not shown"]:
                cell = f"not shown: {row['not shown'][col.key]}"
            else:
                cell = row[col.key]
            out.append(
                {
                    "experiment": f"{experiment}: {row['experiment']}",
                    "observable": observable,
                    "client": col.client or "simulator",
                    "cell": cell,
                }
            )
    return out


def _dead_letter_cells(got: dict, client: str) -> list[dict]:
    experiment = "share group: a dead-letter topic (KIP-1191)"
    refused = got["group_config"] != "ok"
    letters = got["dlq"] or []
    return [
        {
            "experiment": experiment,
            "observable": "the group's dead-letter configs",
            "client": client,
            "cell": "refused: unknown config" if refused else "accepted",
        },
        {
            "experiment": experiment,
            "observable": "dead letters written (a REJECT, a record over the limit)",
            "client": client,
            "cell": str(len(letters)),
        },
        {
            "experiment": experiment,
            "observable": "deliveries of the released record",
            "client": client,
            "cell": " ".join(str(n) for n in got["deliveries"].get("job-2", [])) or "-",
        },
    ]


def dead_letter_observations(kafka) -> list[dict]:
    """KIP-1191: a share group whose dead-letter topic opted in; on a release without it the
    topic's and the group's configs are refused as unknown."""
    from course_lib.broker import Cluster
    from course_lib.clusters.releases import kafka_version
    from course_lib.experiments.share_dead_letters import dead_letter_queue, dlq_topic

    sim = Cluster(brokers=1, seed=1, kafka_version=kafka_version())
    try:
        topic: str | None = dlq_topic(sim, "dlq.jobs")
    except ValueError:  # Kafka 4.3: the topic config is unknown
        topic = "dlq.jobs"
    out = _dead_letter_cells(dead_letter_queue(sim, topic), "simulator")
    if kafka is not None:
        from kafka.errors import InvalidConfigurationError

        from course_lib.experiments.on_kafka.share_groups import dead_letter_queue as on_kafka

        try:
            name = kafka.create_topic(
                f"dlq.jobs-{os.getpid()}", partitions=1, config={"errors.deadletterqueue.group.enable": "true"}
            )
        except InvalidConfigurationError:  # Kafka 4.3: the topic config is unknown (INVALID_CONFIG)
            name = "dlq.jobs"
        out += _dead_letter_cells(on_kafka(kafka, name, dead_letters=2), "confluent-kafka")
    return out


#: the fidelity cases ``--quick`` runs (the simulator only)
QUICK_CASES = [("retries_reorder", {"idempotent": False}), ("lost_ack_retry", {"idempotent": True})]


def observe(kafka, quick: bool = False) -> list[dict]:
    """Every observable in this process's release (``$COURSE_KAFKA_VERSION``): rows of
    experiment, observable, client and cell. ``kafka``: a LocalCluster of that release (None:
    the simulator's side only)."""
    from course_lib.experiments.fidelity import FIDELITY_CASES

    rows = fidelity_observations(kafka, QUICK_CASES if quick else FIDELITY_CASES)
    if not quick:
        rows += protocol_observations(kafka)
    return rows + dead_letter_observations(kafka)


def measure_here(out: Path, quick: bool) -> None:
    """In the child process: start the release's LocalCluster (unless ``quick``), observe, write."""
    from course_lib.clusters.releases import kafka_version

    started = time.monotonic()
    if quick:
        rows = observe(None, quick=True)
    else:
        from course_lib.real.cluster import LocalCluster

        with LocalCluster(progress=False, controllers=1) as kafka:
            rows = observe(kafka)
    out.write_text(json.dumps({"version": kafka_version(), "seconds": round(time.monotonic() - started), "rows": rows}))


def measure(version: str, quick: bool) -> dict:
    """One release, measured in a child process with ``COURSE_KAFKA_VERSION=version``."""
    with tempfile.TemporaryDirectory(prefix="course-versions-") as tmp:
        out = Path(tmp) / "rows.json"
        env = {**os.environ, KAFKA_VERSION_ENV: version}
        args = [sys.executable, "-m", "bench.kafka_versions", "--child", str(out)] + (["--quick"] if quick else [])
        subprocess.run(args, env=env, cwd=ROOT, check=True)
        return json.loads(out.read_text())


def merge(measured: list[dict], kept: dict | None = None) -> dict:
    """The file's content: one row per experiment, observable and client, a cell per release
    (``kept``: the file as it was, whose releases not measured now stay)."""
    rows: dict[tuple, dict] = {}
    versions = {m["version"]: m["seconds"] for m in measured}
    for old in (kept or {}).get("rows", []):
        key = (old["experiment"], old["observable"], old["client"])
        rows[key] = {k: v for k, v in old.items() if k not in versions}
    for m in measured:
        for r in m["rows"]:
            key = (r["experiment"], r["observable"], r["client"])
            row = rows.setdefault(key, {"experiment": key[0], "observable": key[1], "client": key[2]})
            row[m["version"]] = r["cell"]
            if r.get("timing"):
                row["timing"] = True
    seconds = {**(kept or {}).get("seconds", {}), **versions}
    return {"versions": list(SUPPORTED_KAFKA_VERSIONS), "seconds": seconds, "rows": list(rows.values())}


def main(quick: bool = False, argv: list[str] | None = None) -> dict:
    from course_lib.explain.lesson09 import VERSIONS_FILE, version_changes, version_markdown

    argv = argv or []
    releases = [argv[argv.index("--release") + 1]] if "--release" in argv else list(SUPPORTED_KAFKA_VERSIONS)
    measured = [measure(v, quick) for v in releases]
    kept = None if quick or not VERSIONS_FILE.exists() else json.loads(VERSIONS_FILE.read_text())
    table = merge(measured, kept)
    took = ", ".join(f"{m['version']} ({m['seconds']} s)" for m in measured)
    print(f"Kafka releases measured{' (the simulator only)' if quick else ''}: {took}")
    print(version_changes(table))
    if not quick:
        VERSIONS_FILE.write_text(json.dumps(table, indent=1) + "\n")
        readme = ROOT / "README.md"
        from course_lib.explain.lesson09 import readme_with_versions

        readme.write_text(readme_with_versions(readme.read_text(), table))
        print(f"written: {VERSIONS_FILE.relative_to(ROOT)} and the README's version table")
    else:
        print(version_markdown(table))
    return table


if __name__ == "__main__":
    if "--child" in sys.argv:
        measure_here(Path(sys.argv[sys.argv.index("--child") + 1]), "--quick" in sys.argv)
    else:
        main(quick="--quick" in sys.argv, argv=sys.argv[1:])
