"""The graded exercises of lesson 05c (queues for Kafka: share groups), run on
:mod:`course_lib.experiments.share_scenarios`: each check runs the seeded share-group scenario the question
describes and counts what the workers processed twice, how often a record was delivered, what
the broker archived.

Registered by :mod:`course_lib.grading.registry`.
"""

from __future__ import annotations

import functools
import warnings

from ..framework import Experiment, Measured, Part, exercise, expect_int, predicted

#: the import a failed prediction's "reproduce" line needs (course_lib.grading.experiments)
_IMPORT = "from course_lib.grading.experiments import "

NOTEBOOK = "05c_share_groups"

#: lesson 05c's slow handler: 3 records, 2 workers, 40 s per record (longer than the 30 s lock)
SLOW_RECORDS, SLOW_WORKERS, SLOW_HANDLER_MS = 3, 2, 40_000
#: what ex05c_q4 lets the learner choose (the share group's settings and the worker's RENEW)
SLOW_CHOICES = ("lock_ms", "renew", "delivery_count_limit")


def _run(name: str, seed: int, **settings):
    from ...experiments.share_scenarios import run_share_scenario

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # kafka-python's deprecated importlib use, nothing of ours
        return run_share_scenario(name, seed=seed, **settings)


@functools.lru_cache(maxsize=None)
def share_crash_twice(seed: int, max_poll_records: int, processed_before_crash: int) -> int:
    """Lesson 05c's crash (20 records, 100 ms each, 2 workers on one partition): a worker crashes
    holding ``max_poll_records`` records, ``processed_before_crash`` of them finished. Records
    processed twice."""
    run = _run(
        "worker_crash",
        seed,
        records=20,
        max_poll_records=max_poll_records,
        processed_before_crash=processed_before_crash,
    )
    return _measured(run, "processed_twice", "records processed twice")


def _measured(run, number: str, what: str) -> Measured:
    """One of the run's numbers, shown with all of them (the block lesson 05c prints)."""
    from ...explain.lesson05c import measured

    value = run.numbers[number]
    return Measured(sum(value.values()) if isinstance(value, dict) else value, what, measured(run))


@exercise(
    id="ex05c_q1",
    notebook=NOTEBOOK,
    kind="predict",
    expect=expect_int,
    public_seeds=(0, 1, 2),
    question="Lesson 05c's crash, but the worker takes 8 records per poll (max.poll.records=8) and crashes "
    "after finishing 6 of them, before acknowledging any. How many records are processed twice?",
    hint="Which of the records it held went through the handler before the crash? None was acknowledged: "
    "when its process dies its connections close, and the broker hands all of them out again at once.",
    copied=lambda: share_crash_twice(1, 5, 3),
    copied_from="lesson 05c's worker crash (5 records held, 3 finished)",
)
def _ex05c_q1(answer, seeds):
    return predicted(
        "records processed twice",
        answer,
        Experiment("share_crash_twice({seed}, 8, 6)", _IMPORT + "share_crash_twice"),
        seeds,
    )


@functools.lru_cache(maxsize=None)
def poison_deliveries(seed: int, delivery_count_limit: int) -> int:
    """Lesson 05c's poison message (10 records, the handler always fails on job-3 and RELEASEs
    it) with ``share.delivery.count.limit`` = ``delivery_count_limit``: deliveries of job-3."""
    run = _run("poison_message", seed, records=10, poison=3, delivery_count_limit=delivery_count_limit)
    return _measured(run, "poison_deliveries", "deliveries of job-3")


@exercise(
    id="ex05c_q2",
    notebook=NOTEBOOK,
    kind="predict",
    expect=expect_int,
    public_seeds=(0, 1, 2),
    question="Lesson 05c's poison message (the handler always fails on job-3 and RELEASEs it), but the "
    "group sets share.delivery.count.limit=3. How many times is job-3 delivered before the broker "
    "archives it?",
    hint="Each RELEASE makes the record available again; the broker counts every delivery and gives up at the limit.",
    copied=lambda: poison_deliveries(1, 5),
    copied_from="lesson 05c's poison message (the default limit, 5)",
)
def _ex05c_q2(answer, seeds):
    return predicted(
        "deliveries of job-3",
        answer,
        Experiment("poison_deliveries({seed}, 3)", _IMPORT + "poison_deliveries"),
        seeds,
    )


def _slow_run(seed: int, **settings):
    return _run(
        "slow_handler", seed, records=SLOW_RECORDS, handler_ms=SLOW_HANDLER_MS, workers=SLOW_WORKERS, **settings
    )


@functools.lru_cache(maxsize=None)
def slow_handler_processings(seed: int, delivery_count_limit: int) -> int:
    """Lesson 05c's slow handler (3 records, 2 workers, 40 s per record, a 30 s lock, no RENEW)
    with ``share.delivery.count.limit`` = ``delivery_count_limit``: how many times in all a
    handler finished processing a record."""
    run = _slow_run(seed, delivery_count_limit=delivery_count_limit)
    return _measured(run, "times_processed", "processings in all")


@exercise(
    id="ex05c_q3",
    notebook=NOTEBOOK,
    kind="predict",
    expect=expect_int,
    public_seeds=(0, 1, 2),
    question="Lesson 05c's slow handler (3 records, 2 workers, 40 s per record, the 30 s lock, no RENEW), "
    "but the group sets share.delivery.count.limit=3. How many times in all does a handler finish "
    "processing a record (counting every record, every time)?",
    hint="The lock expires while the handler still works: the record goes out again, and the first "
    "worker finishes anyway. When does the broker stop handing it out?",
    copied=lambda: slow_handler_processings(1, 5),
    copied_from="lesson 05c's slow handler (the default limit, 5)",
)
def _ex05c_q3(answer, seeds):
    return predicted(
        "records processed, in all",
        answer,
        Experiment("slow_handler_processings({seed}, 3)", _IMPORT + "slow_handler_processings"),
        seeds,
    )


@functools.lru_cache(maxsize=None)
def dead_letters_written(seed: int, transient_failures: int, delivery_count_limit: int) -> int:
    """Lesson 05c's dead-letter topic (10 records, Kafka 4.4.0: the handler always fails on job-3,
    the worker REJECTs job-7) where every other record fails (RELEASE) on its first
    ``transient_failures`` deliveries: how many dead letters the group's topic holds."""
    run = _run(
        "dead_letter_topic",
        seed,
        records=10,
        poison=3,
        reject=7,
        transient_failures=transient_failures,
        delivery_count_limit=delivery_count_limit,
        kafka_version="4.4.0",
    )
    from ...explain.lesson05c import dead_letter_table

    return Measured(len(run.numbers["dead_letters"]), "dead letters", dead_letter_table(run))


@exercise(
    id="ex05c_q5",
    notebook=NOTEBOOK,
    kind="predict",
    expect=expect_int,
    public_seeds=(0, 1, 2),
    question="Lesson 05c's dead-letter topic (10 records; the handler always fails on job-3, the worker "
    "REJECTs job-7; Kafka 4.4), but a service the handler calls is down for a while: every other record "
    "fails (RELEASE) on its first 2 deliveries and succeeds on the third. The team set "
    "share.delivery.count.limit=2 to dead-letter poison records sooner. How many records does the "
    "dead-letter topic hold at the end?",
    hint="A record goes to the dead-letter topic when the broker archives it. When does the broker archive a "
    "record that is released at its last allowed delivery?",
    copied=lambda: dead_letters_written(1, 0, 5),
    copied_from="lesson 05c's dead-letter topic (no transient failures, the default limit, 5)",
)
def _ex05c_q5(answer, seeds):
    return predicted(
        "dead letters",
        answer,
        Experiment("dead_letters_written({seed}, 2, 2)", _IMPORT + "dead_letters_written"),
        seeds,
    )


def _expect_settings(answer):
    if not isinstance(answer, dict):
        return (
            f"expects a dict of settings taken from {', '.join(map(repr, SLOW_CHOICES))}, such as "
            f"{{'lock_ms': 30_000}}; you gave a {type(answer).__name__}: {answer!r:.60}"
        )


@exercise(
    id="ex05c_q4",
    notebook=NOTEBOOK,
    kind="choose",
    expect=_expect_settings,
    public_seeds=(0, 1, 2),
    question="Lesson 05c's slow handler: 3 records, 2 workers, 40 s per record (imposed). Choose the "
    "settings (a dict of lock_ms, renew, delivery_count_limit) so that every record is processed "
    "exactly once and none is archived.",
    hint="Why is a record handed to the other worker while the first one still works on it?",
)
def _ex05c_q4(answer, seeds):
    unknown = sorted(set(answer) - set(SLOW_CHOICES))
    if unknown:
        return [
            Part(
                "settings",
                False,
                f"{', '.join(map(repr, unknown))}: not among the settings to choose ({', '.join(SLOW_CHOICES)}); "
                "the records, the workers and the handler's 40 s are part of the experiment",
            )
        ]
    parts = []
    for s in seeds:
        try:
            run = _slow_run(s, **answer)
        except (TypeError, ValueError) as exc:
            return [Part("settings", False, f"the share group refused them: {exc}")]
        twice, archived = run.numbers["processed_twice"], run.numbers["archived"]
        settings = ", ".join(f"{k}={v!r}" for k, v in answer.items())
        rerun = (
            "from course_lib.experiments.share_scenarios import run_share_scenario; from course_lib.explain.lesson05c import "
            f'measured; print(measured(run_share_scenario("slow_handler", seed={s}, records={SLOW_RECORDS}, '
            f"handler_ms={SLOW_HANDLER_MS}, workers={SLOW_WORKERS}{', ' + settings if settings else ''})))"
        )
        parts.append(
            Part(
                f"slow handler, seed {s}",
                not (twice or archived),
                f"{twice} record(s) processed more than once, {archived} archived",
                s,
                rerun=rerun,
            )
        )
    return parts
