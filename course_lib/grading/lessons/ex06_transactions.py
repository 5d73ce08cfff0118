"""Lesson 06 (transactions): log end offset and records read with aborted transactions, a transform loop.

Registered by :mod:`course_lib.grading.registry`.
"""

from __future__ import annotations

import functools

from ..framework import (
    Experiment,
    Part,
    exercise,
    expect_choice,
    expect_function,
    expect_int,
    predicted,
)
from .common import _lost_and_twice, _quiet

#: the import a failed prediction's "reproduce" line needs (course_lib.grading.experiments)
_IMPORT = "from course_lib.grading.experiments import TX_PLAN, transaction_log"


TX_PLAN = (True, False, True, False, True)  # commit, abort, commit, abort, commit


@functools.lru_cache(maxsize=None)
def transaction_log(plan: tuple, per_transaction: int, seed: int = 1) -> tuple[int, int]:
    """A transactional producer runs one transaction of ``per_transaction`` records per entry of
    ``plan`` (True: commit, False: abort); (log end offset, records a read_uncommitted consumer
    reads). Lesson 06 prints them for (commit, abort, commit) x 3 records."""
    from ...backend import open_backend

    ctx = _quiet()
    try:
        b = open_backend(None, seed)
        topic = b.create_topic("events", replication_factor=3, min_insync_replicas=2, partitions=1)
        producer = b.producer(transactional_id=b.transactional_id("writer"))
        producer.init_transactions()
        for n, commit in enumerate(plan):
            producer.begin_transaction()
            for i in range(per_transaction):
                producer.send(topic, f"t{n}-{i}".encode())
            producer.flush()
            producer.commit_transaction() if commit else producer.abort_transaction()
        consumer = b.consumer(isolation_level="read_uncommitted", auto_offset_reset="earliest", client_id="reader")
        consumer.assign([(topic, 0)])
        seen = sum(len(rs) for _ in range(5) for rs in consumer.poll(timeout_ms=200).values())
        return b.end_offset(topic), seen
    finally:
        ctx.__exit__(None, None, None)


@exercise(
    id="ex06_q1",
    notebook="06_transactions",
    kind="predict",
    expect=expect_int,
    public_seeds=(0, 1),
    question="Five transactions of 2 records each: commit, abort, commit, abort, commit. What is the "
    "partition's log end offset afterwards?",
    hint="Aborted records stay in the log, and every commit or abort writes a marker that takes an offset.",
    copied=lambda: transaction_log((True, False, True), 3)[0],
    copied_from="lesson 06's aborted_transaction run (3 transactions of 3 records)",
)
def _ex06_q1(answer, seeds):
    return predicted(
        "log end offset",
        answer,
        Experiment(
            "transaction_log(TX_PLAN, 2, seed={seed})[0]", _IMPORT, evidence="transaction_log(TX_PLAN, 2, seed={seed})"
        ),
        seeds,
    )


@exercise(
    id="ex06_q4",
    notebook="06_transactions",
    kind="predict",
    expect=expect_int,
    public_seeds=(0, 1),
    question="Same five transactions. How many records does a read_uncommitted consumer read from offset 0?",
    hint="read_uncommitted reads aborted records too - but is a marker a record the application sees?",
    copied=lambda: transaction_log((True, False, True), 3)[1],
    copied_from="lesson 06's read_uncommitted run (3 transactions of 3 records)",
)
def _ex06_q4(answer, seeds):
    return predicted(
        "records read",
        answer,
        Experiment(
            "transaction_log(TX_PLAN, 2, seed={seed})[1]", _IMPORT, evidence="transaction_log(TX_PLAN, 2, seed={seed})"
        ),
        seeds,
    )


@exercise(
    id="ex06_q2",
    notebook="06_transactions",
    kind="choose",
    expect=expect_choice("read_committed", "read_uncommitted"),
    question="Which isolation_level must a consumer use so that it never reads the aborted transaction's records?",
    hint="Which records does each isolation level let a consumer see?",
)
def _ex06_q2(answer, seeds):
    from ...experiments.scenarios import run_scenario

    run = run_scenario("aborted_transaction", seed=0, isolation_level=answer)
    seen_aborted = [v for _, v in run.notes["seen"] if v.startswith("b-")]
    rerun = (
        "from course_lib.experiments.scenarios import run_scenario; "
        f'run_scenario("aborted_transaction", seed=0, isolation_level={answer!r}).notes["seen"]'
    )
    return [Part("consumer run", not seen_aborted, f"with {answer} the consumer read {seen_aborted}", 0, rerun=rerun)]


@exercise(
    id="ex06_q3",
    notebook="06_transactions",
    kind="implement",
    expect=expect_function(3),
    functions=("process_batch",),
    public_seeds=tuple(range(5)),
    points=3,
    question="Write process_batch(consumer, producer, records), the heart of a consume-transform-produce "
    "application: send every record's value to the topic 'output' and commit the consumed offsets "
    "in the same transaction. The application dies at seeded points and restarts with the same "
    "transactional_id: the committed output must hold every input exactly once.",
    hint="begin_transaction(), send, then send_offsets_to_transaction(next offsets, consumer.group_metadata()) "
    "before commit_transaction(): offsets committed outside the transaction can disagree with it.",
)
def _ex06_q3(process_batch, seeds):
    from ..harness import run_transform_loop

    parts = []
    for s in seeds:
        lost, dup = _lost_and_twice(run_transform_loop(process_batch, s))
        detail = f"{len(lost)} never processed, {len(dup)} processed twice (committed output)"
        if lost or dup:
            detail += f"; first: {(lost or dup)[0].explanation}"
        parts.append(Part(f"crash run, seed {s}", not (lost or dup), detail, s))
    return parts


@exercise(
    id="ex06_q5",
    notebook="06_transactions",
    kind="predict",
    expect=expect_int,
    public_seeds=(0, 1),
    question="Kafka 4's transactions: a producer with transaction_version=2 runs the same five transactions "
    "(commit, abort, commit, abort, commit). init_transactions() gives it epoch 0: what is its epoch afterwards?",
    hint="Under v2 the coordinator bumps the epoch at every transaction's end - does an abort end one too?",
    copied=lambda: _epoch_after(3, seed=1),
    copied_from="lesson 06's transactions v2 run (3 transactions)",
)
def _ex06_q5(answer, seeds):
    return predicted(
        "producer epoch",
        answer,
        Experiment(
            "epochs_per_transaction(2, seed={seed}, transactions=5).epochs[-1]",
            "from course_lib.experiments.transaction_versions import epochs_per_transaction",
            evidence="epochs_per_transaction(2, seed={seed}, transactions=5).epochs",
        ),
        seeds,
    )


def _epoch_after(transactions: int, seed: int) -> int:
    """The v2 producer's epoch after ``transactions`` transactions (what lesson 06 prints for 3)."""
    from ...experiments.transaction_versions import epochs_per_transaction

    return epochs_per_transaction(2, seed=seed, transactions=transactions).epochs[-1]
