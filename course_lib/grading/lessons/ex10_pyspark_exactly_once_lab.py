"""Lesson 10 (PySpark exactly-once lab): the foreachBatch writer, replayed and on real Spark.

Registered by :mod:`course_lib.grading.registry`.
"""

from __future__ import annotations


from ..framework import (
    Part,
    exercise,
    expect_function,
)


@exercise(
    id="ex10_q1",
    notebook="10_pyspark_exactly_once_lab",
    kind="implement",
    expect=expect_function(3),
    functions=("write_batch",),
    public_seeds=tuple(range(5)),
    points=2,
    question="Write write_batch(batch_df, batch_id, db), the foreachBatch writer: insert every row's "
    "(key, value) into the orders table so that a replayed batch (same batch_id, after a crash or "
    "a restart from the checkpoint) changes nothing.",
    hint="Remember which batch ids are already written - in the same transaction as the rows.",
)
def _ex10_q1(write_batch, seeds):
    from ..spark_check import replay_batches, spark_part

    parts = []
    for s in seeds:
        ok, detail = replay_batches(write_batch, s)
        parts.append(Part(f"replayed batches, seed {s}", ok, detail, s))
    parts.append(spark_part(write_batch))
    return parts
