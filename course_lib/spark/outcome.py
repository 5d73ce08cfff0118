"""Read what each sink holds and compare it with what went in: lost and duplicated orders.

- :func:`read_kafka_sink` - every record of the output topic (with the source coordinates the
  pipeline put into each value, so a duplicate can be traced to its micro-batch);
- :func:`read_store` - the SQLite store of the foreachBatch sink;
- :func:`read_file_sink` - the file sink *as Spark's readers see it*: only files listed in
  ``_spark_metadata``; :func:`read_file_sink_naively` lists every file in the directory;
- :func:`batch_ranges` - from a checkpoint's offsets log: which source offsets batch N covered;
- :func:`compare` - lost / duplicated / unexpected ids for one sink.

This is a per-sink comparison written for the Spark lab; the course-wide checker
(:mod:`course_lib.judge.checker`) can replace :func:`compare` by reading the same history.

Taught in notebooks/10_pyspark_exactly_once_lab.

>>> compare(["o-1", "o-2", "o-3"], ["o-1", "o-3", "o-3"])
{'expected': 3, 'observed': 3, 'distinct': 2, 'lost': ['o-2'], 'duplicated': {'o-3': 2}, 'unexpected': []}
"""

from __future__ import annotations

import json
import sqlite3
from collections import Counter
from pathlib import Path
from urllib.parse import urlparse


def compare(expected_ids, observed_ids) -> dict:
    """Lost (expected, never seen), duplicated (seen more than once), unexpected (never sent)."""
    expected = list(expected_ids)
    counts = Counter(observed_ids)
    exp = set(expected)
    return {
        "expected": len(expected),
        "observed": sum(counts.values()),
        "distinct": len(counts),
        "lost": sorted(exp - set(counts)),
        "duplicated": {k: n for k, n in sorted(counts.items()) if n > 1},
        "unexpected": sorted(set(counts) - exp),
    }


def read_kafka_sink(bootstrap_servers: str, topic: str, client_config: dict | None = None) -> list[dict]:
    """All records of the Kafka sink's topic: output partition/offset + the enriched order."""
    from course_lib.spark.loader import committed_records

    rows = []
    # The Kafka sink is not transactional: read_uncommitted sees exactly what it wrote.
    for partition, offset, _key, value in committed_records(
        bootstrap_servers, topic, isolation_level="read_uncommitted", client_config=client_config
    ):
        order = json.loads(value)
        rows.append({"partition": partition, "offset": offset, **order})
    return rows


def read_store(path: str | Path) -> dict:
    """The foreachBatch store: orders, balances, dead letters, committed batches, replays."""
    path = Path(path)
    if not path.exists():
        return {"orders": [], "balances_cents": {}, "dead_letters": [], "batches": [], "replays": []}
    conn = sqlite3.connect(path)
    conn.row_factory = sqlite3.Row
    try:
        q = lambda sql: [dict(r) for r in conn.execute(sql)]
        return {
            "orders": q("SELECT rowid AS row, * FROM orders ORDER BY batch_id, src_partition, src_offset"),
            "balances_cents": {r["account"]: r["cents"] for r in q("SELECT * FROM balances ORDER BY account")},
            "dead_letters": q("SELECT * FROM dead_letters ORDER BY src_partition, src_offset"),
            "batches": q("SELECT * FROM batches ORDER BY batch_id"),
            "replays": q("SELECT * FROM replays ORDER BY seen_at"),
        }
    finally:
        conn.close()


def committed_files(sink_dir: str | Path) -> list[Path]:
    """Files the file sink committed, from its log ``_spark_metadata/<batch>[.compact]``.

    Each log file is ``v1`` then one JSON object per line (``path``, ``action``...); compacted
    files repeat the earlier entries, so a set of paths is the union of all of them.
    """
    sink_dir = Path(sink_dir)
    log_dir = sink_dir / "_spark_metadata"
    paths: set[str] = set()
    deleted: set[str] = set()
    if not log_dir.exists():
        return []
    for f in log_dir.iterdir():
        if f.name.startswith(".") or not f.name.split(".")[0].isdigit():
            continue
        for line in f.read_text().splitlines()[1:]:
            if line.strip():
                entry = json.loads(line)
                (deleted if entry.get("action") == "delete" else paths).add(entry["path"])
    return sorted(Path(urlparse(p).path) for p in paths - deleted)


def _read_json_files(files) -> list[dict]:
    rows = []
    for f in files:
        if not Path(f).exists():
            continue
        for i, line in enumerate(Path(f).read_text().splitlines()):
            if line.strip():
                rows.append({"file": Path(f).name, "line": i, **json.loads(line)})
    return rows


def read_file_sink(sink_dir: str | Path) -> list[dict]:
    """The file sink's rows as Spark reads them back: committed files only."""
    return _read_json_files(committed_files(sink_dir))


def read_file_sink_naively(sink_dir: str | Path) -> list[dict]:
    """Every ``part-*`` file in the directory, committed or not - what ``cat *.json`` sees."""
    return _read_json_files(sorted(Path(sink_dir).glob("part-*")))


def batch_ranges(checkpoint: str | Path) -> dict[int, dict[int, tuple[int, int]]]:
    """``{batch_id: {partition: (start, end)}}`` from the checkpoint's offsets log.

    ``offsets/N`` holds the *end* offsets of batch N (written before the batch runs); its start
    is the end of batch N-1 (0 for the first batch of an ``earliest`` query).
    """
    off_dir = Path(checkpoint) / "offsets"
    ends: dict[int, dict[int, int]] = {}
    if off_dir.exists():
        for f in off_dir.iterdir():
            if not f.name.isdigit():
                continue
            lines = [l for l in f.read_text().splitlines() if l.strip()]
            source = json.loads(lines[-1])  # one source (the topic) -> the last line
            topic_offsets = next(iter(source.values())) if source else {}
            ends[int(f.name)] = {int(p): int(o) for p, o in topic_offsets.items()}
    ranges, prev = {}, {}
    for n in sorted(ends):
        ranges[n] = {p: (prev.get(p, 0), end) for p, end in ends[n].items()}
        prev = ends[n]
    return ranges


def batch_of(ranges: dict, partition: int, offset: int) -> int | None:
    """Which micro-batch read source record (partition, offset)."""
    for n, parts in ranges.items():
        start, end = parts.get(partition, (0, 0))
        if start <= offset < end:
            return n
    return None


def committed_batches(checkpoint: str | Path) -> list[int]:
    """Batch ids in the checkpoint's commit log (done, never re-run).

    Empty files are not commits: they are the harness's commit traps.
    """
    d = Path(checkpoint) / "commits"
    return sorted(int(f.name) for f in d.iterdir() if f.name.isdigit() and f.stat().st_size > 0) if d.exists() else []


def planned_batches(checkpoint: str | Path) -> list[int]:
    """Batch ids in the checkpoint's offsets log (started; re-run on restart if not committed)."""
    d = Path(checkpoint) / "offsets"
    return sorted(int(f.name) for f in d.iterdir() if f.name.isdigit()) if d.exists() else []
