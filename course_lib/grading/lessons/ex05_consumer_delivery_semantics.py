"""Lesson 05 (consumer delivery semantics): crash points and consumer loops run by the crash harness.

Registered by :mod:`course_lib.grading.registry`.
"""

from __future__ import annotations


from ..framework import (
    Experiment,
    Part,
    exercise,
    expect_function,
    expect_set_of,
)


CRASH_POINTS = ("after_poll", "mid_batch", "after_process", "after_commit")


def lossy_crash_points(semantics: str, seed: int, buffered: bool) -> set:
    """The crash points at which a run of ``semantics`` never processes some message."""
    from ...application.processing import run_pipeline

    return {
        p
        for p in CRASH_POINTS
        if "lost_in_processing" in run_pipeline(semantics, p, seed=seed, buffered=buffered).result.found
    }


@exercise(
    id="ex05_q1",
    notebook="05_consumer_delivery_semantics",
    kind="predict",
    expect=expect_set_of(*CRASH_POINTS),
    public_seeds=(0,),
    question="An auto-commit consumer that hands each poll's records to a worker queue (processed one poll "
    "later: run_pipeline(..., buffered=True)) crashes once. At which crash points are messages never "
    "processed? Answer with a set of crash point names.",
    hint="Auto-commit commits what the last poll returned - whether or not the worker has processed it.",
    copied=lambda: {"after_poll"},
    copied_from="lesson 05's one buffered auto-commit run (crash after_poll)",
)
def _ex05_q1(answer, seeds):
    experiment = Experiment(
        'lossy_crash_points("auto-commit", seed={seed}, buffered=True)',
        "from course_lib.grading.experiments import lossy_crash_points",
    )
    parts = []
    for s in seeds:
        truth = experiment.run(s)
        wrong = sorted(set(answer) ^ truth)
        parts.append(
            Part(
                f"crash points, seed {s}",
                not wrong,
                f"wrong about {', '.join(wrong)}: for each, ask what the committed offset covers at that moment",
                s,
                rerun=experiment.code(s),
            )
        )
    return parts


def _consumer_loop_parts(fn, seeds, semantics: str, bad: str, what: str, crash: bool = True) -> list[Part]:
    from ..harness import LoopDidNotStop, run_consumer_loop

    parts = []
    for s in seeds:
        name = f"{'crash' if crash else 'no-crash'} run, seed {s}"
        try:
            result = run_consumer_loop(fn, s, semantics=semantics, crash=crash)
        except LoopDidNotStop:
            parts.append(Part(name, False, LoopDidNotStop.message, s))
            continue
        found = result.by_kind(bad)
        parts.append(
            Part(name, not found, f"{len(found)} message(s) {what}: {found[0].explanation if found else ''}", s)
        )
    return parts


@exercise(
    id="ex05_q2",
    notebook="05_consumer_delivery_semantics",
    kind="implement",
    expect=expect_function(2),
    functions=("consume_at_least_once",),
    public_seeds=tuple(range(6)),
    points=2,
    question="Write consume_at_least_once(consumer, sink): poll, sink.write(record) every record, commit; "
    "return once a poll returns no records twice in a row. After a crash anywhere, no message may be "
    "never processed.",
    hint="What must already be in the sink when an offset is committed?",
)
def _ex05_q2(fn, seeds):
    return _consumer_loop_parts(fn, seeds, "at-least-once", "lost_in_processing", "never processed")


@exercise(
    id="ex05_q3",
    notebook="05_consumer_delivery_semantics",
    kind="implement",
    expect=expect_function(2),
    functions=("consume_at_most_once",),
    public_seeds=tuple(range(4)),
    points=2,
    question="Write consume_at_most_once(consumer, sink): same loop, but no message may ever be processed "
    "twice, whatever the crash; without a crash, every message is processed once.",
    hint="Which must come first for a record: the commit that covers it, or its write to the sink?",
)
def _ex05_q3(fn, seeds):
    return _consumer_loop_parts(
        fn, seeds, "at-most-once", "duplicate_processing", "processed twice"
    ) + _consumer_loop_parts(fn, seeds[:2], "at-most-once", "lost_in_processing", "never processed", crash=False)
