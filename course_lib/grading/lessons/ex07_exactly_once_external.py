"""Lesson 07 (exactly-once into external systems): a store that keeps output and offsets together.

Registered by :mod:`course_lib.grading.registry`.
"""

from __future__ import annotations


from ..framework import (
    Part,
    exercise,
    expect_choice,
    expect_function,
)
from .common import _lost_and_twice


@exercise(
    id="ex07_q1",
    notebook="07_exactly_once_external",
    kind="implement",
    expect=expect_function(2),
    functions=("store", "resume_positions"),
    public_seeds=tuple(range(6)),
    points=3,
    question="Write store(db, record) and resume_positions(db) so that the output table has every input "
    "message exactly once, however often the application dies between SQL statements.",
    hint="The output row and the next offset must commit together (BEGIN ... COMMIT), and a restart must "
    "start from the stored offsets, not Kafka's.",
)
def _ex07_q1(store, resume_positions, seeds):
    from ..harness import run_external_store

    parts = []
    for s in seeds:
        lost, dup = _lost_and_twice(run_external_store(store, resume_positions, s))
        parts.append(
            Part(
                f"crash run, seed {s}", not (lost or dup), f"{len(lost)} never processed, {len(dup)} processed twice", s
            )
        )
    return parts


def _output_then_offset(db, record):
    db.execute("INSERT INTO output VALUES (?)", (record.value.decode(),))
    db.execute("INSERT OR REPLACE INTO offsets VALUES (?, ?, ?)", (record.topic, record.partition, record.offset + 1))


def _offset_then_output(db, record):
    db.execute("INSERT OR REPLACE INTO offsets VALUES (?, ?, ?)", (record.topic, record.partition, record.offset + 1))
    db.execute("INSERT INTO output VALUES (?)", (record.value.decode(),))


def _one_transaction(db, record):
    db.execute("BEGIN")
    _output_then_offset(db, record)
    db.execute("COMMIT")


def _stored_positions(db):
    return {(t, p): o for t, p, o in db.execute("SELECT topic, partition, next_offset FROM offsets")}


#: ex07_q2's options: how store(db, record) writes the row and the next offset
STORE_ORDERS = {
    "row, then offset": _output_then_offset,
    "offset, then row": _offset_then_output,
    "row and offset in one transaction": _one_transaction,
}


@exercise(
    id="ex07_q2",
    notebook="07_exactly_once_external",
    kind="choose",
    expect=expect_choice(*STORE_ORDERS),
    public_seeds=tuple(range(4)),
    question="The application resumes from the offsets it stored in SQLite. How must store(db, record) write "
    "the output row and the next offset so that a crash between any two SQL statements neither loses "
    "nor duplicates a message? " + "; ".join(map(repr, STORE_ORDERS)),
    hint="Each order leaves a window between two statements: what does a crash in that window leave behind?",
)
def _ex07_q2(answer, seeds):
    from ..harness import run_external_store

    parts = []
    for s in seeds:
        lost, dup = _lost_and_twice(run_external_store(STORE_ORDERS[answer], _stored_positions, s))
        parts.append(Part(f"crash run, seed {s}", not (lost or dup), f"{len(lost)} lost, {len(dup)} duplicated", s))
        # (no one-line rerun: the run needs the exercise's store() of this order; check() reruns it)
    return parts
