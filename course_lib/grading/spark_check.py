"""Grading the foreachBatch writer of exercise 10.

Spark calls ``write_batch(batch_df, batch_id)`` at least once per micro-batch: after a crash the
batch is replayed from the checkpoint with the *same* batch id. The writer is exactly-once when a
replay changes nothing. :func:`replay_batches` checks that without a JVM (a tiny stand-in for a
DataFrame: ``collect()`` returns rows with ``row.key`` / ``row["key"]``); :func:`spark_part` runs
the writer on real Spark DataFrames when PySpark and Java are available and the instructor asked
for it (``COURSE_GRADE_SPARK=1``: a SparkSession costs ~10 s).
"""

from __future__ import annotations

import os
import random
import shutil
import sys
import sqlite3

from .harness import AppCrash, CrashingDB
from .report import Part


class Row(dict):
    """Enough of pyspark.sql.Row: attribute and item access."""

    __getattr__ = dict.__getitem__

    def asDict(self):
        return dict(self)


class FakeBatch:
    def __init__(self, rows):
        self._rows = [Row(r) for r in rows]

    def collect(self):
        return list(self._rows)

    def count(self):
        return len(self._rows)

    def toPandas(self):  # pragma: no cover - only if a learner asks for it
        import pandas

        return pandas.DataFrame(self._rows)


def new_orders_db() -> sqlite3.Connection:
    db = sqlite3.connect(":memory:", isolation_level=None)
    db.execute("CREATE TABLE orders (key TEXT, value TEXT)")
    return db


def replay_batches(write_batch, seed: int) -> tuple[bool, str]:
    """Five micro-batches; a seeded crash inside one of them (before an SQL statement), then
    Spark's replay of the batches since the last completed one. Every order must be in the table
    exactly once."""
    rng = random.Random(f"grading-foreachbatch-{seed}")
    batches = [
        [{"key": f"order-{b}-{i}", "value": str(rng.randint(1, 99))} for i in range(rng.randint(1, 4))]
        for b in range(5)
    ]
    raw = new_orders_db()
    db = CrashingDB(raw, rng.randint(1, 12))
    batch_id = 0
    replays = 0
    while batch_id < len(batches):
        try:
            write_batch(FakeBatch(batches[batch_id]), batch_id, db)
            if rng.random() < 0.3 and replays < 3:  # the job died after the write, before the checkpoint
                replays += 1
                continue
            batch_id += 1
        except AppCrash:
            db.died()
            db.disarm()
            replays += 1
    want = sorted(r["key"] for b in batches for r in b)
    got = sorted(k for (k,) in raw.execute("SELECT key FROM orders"))
    if got == want:
        return True, ""
    dup = sorted({k for k in got if got.count(k) > 1})
    lost = sorted(set(want) - set(got))
    return False, (
        f"after {replays} replay(s): {len(dup)} order(s) written twice {dup[:3]}, {len(lost)} missing {lost[:3]}"
    )


def spark_part(write_batch) -> Part:
    if os.environ.get("COURSE_GRADE_SPARK") != "1":
        return Part(
            "real Spark",
            True,
            "skipped: set COURSE_GRADE_SPARK=1 to also run the writer on Spark DataFrames (needs PySpark and Java 17+)",
            skipped=True,
        )
    try:
        from pyspark.sql import SparkSession
    except ImportError:
        return Part("real Spark", True, "skipped: PySpark is not installed (pip install -e '.[spark]')", skipped=True)
    if not shutil.which("java"):
        return Part("real Spark", True, "skipped: no Java on PATH (Spark needs Java 17+)", skipped=True)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")  # no DNS lookups of the host name
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    spark = SparkSession.builder.master("local[1]").appName("grading").config("spark.ui.enabled", "false").getOrCreate()
    raw = new_orders_db()
    rows = [("order-1", "5"), ("order-2", "7")]
    df = spark.createDataFrame(rows, ["key", "value"])
    for batch_id in (0, 0, 1):  # batch 0 replayed
        write_batch(df if batch_id == 0 else df.limit(0), batch_id, raw)
    got = sorted(k for (k,) in raw.execute("SELECT key FROM orders"))
    return Part("real Spark", got == ["order-1", "order-2"], f"the table holds {got} after replaying batch 0")
