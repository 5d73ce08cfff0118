"""The graded exercises of lesson 05b (consumer groups and rebalances), run on
:class:`course_lib.application.consumer_groups.GroupRun`: each check plans the instances, runs the group on
the simulator's clock and counts duplicates, failed commits and rebalances.

Registered by :mod:`course_lib.grading.registry`.
"""

from __future__ import annotations

import functools
import warnings

from ..framework import Experiment, Measured, Part, exercise, expect_choice, expect_dict, expect_int, predicted

#: the import a failed prediction's "reproduce" line needs (course_lib.grading.experiments)
_IMPORT = "from course_lib.grading.experiments import "

NOTEBOOK = "05b_consumer_groups"

#: ex05b_q1: the slow instance's time per record and its max_poll_interval_ms
SLOW_RECORD_MS, SLOW_INTERVAL_MS = 900, 5000


def _quiet_run(seed: int, messages: int = 40):
    from ...application.consumer_groups import GroupRun

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return GroupRun(seed=seed, messages=messages)


@functools.lru_cache(maxsize=None)
def slow_handler(seed: int, max_poll_records: int, handler_ms: float, max_poll_interval_ms: int) -> tuple[int, int]:
    """Lesson 05b's `fast` + `slow` instances: (failed commits, messages processed more than once)."""
    run = _quiet_run(seed)
    for name, ms in (("fast", 20), ("slow", handler_ms)):
        run.start(name, handler_ms=ms, max_poll_records=max_poll_records, max_poll_interval_ms=max_poll_interval_ms)
    run.run(60_000)
    evidence = f"{run.summary()}\n{run.timeline()}"
    return (
        Measured(len(run.failed_commits), "failed commits", evidence),
        Measured(run.duplicates(), "processed more than once", evidence),
    )


@exercise(
    id="ex05b_q1",
    notebook=NOTEBOOK,
    kind="choose",
    expect=expect_int,
    public_seeds=(0, 1, 2),
    question="The slow instance spends 900 ms per record and max_poll_interval_ms is 5000. Choose "
    "max_poll_records (at least 3: smaller batches cost throughput) so that it is never thrown out of "
    "the group: no failed commit, nothing processed twice.",
    hint="The time between two polls is the whole batch in the handler: records x handler time, and it "
    "must stay under max_poll_interval_ms.",
)
def _ex05b_q1(answer, seeds):
    if answer < 3:
        return [Part("batch size", False, f"max_poll_records={answer}: at least 3 records per poll, please")]
    from ...clients.config import CONSUMER_DEFAULTS

    between_polls = answer * SLOW_RECORD_MS
    heartbeat_ms = CONSUMER_DEFAULTS["heartbeat_interval_ms"]  # when kafka-python looks at the poll timer
    parts = []
    if between_polls > SLOW_INTERVAL_MS:
        # kafka-python's heartbeat thread looks at the time since the last poll() only when it
        # wakes to heartbeat: a batch a little over the interval can end between two wake-ups
        # and go unnoticed on these runs; the Java client looks every retry.backoff.ms
        parts.append(
            Part(
                "time between polls",
                False,
                f"{answer} x {SLOW_RECORD_MS} ms = {between_polls:,} ms between two polls, over "
                f"max_poll_interval_ms={SLOW_INTERVAL_MS:,}. If the runs below pass, it is luck: kafka-python "
                f"checks the interval only when its heartbeat thread wakes (every heartbeat_interval_ms, "
                f"{heartbeat_ms:,} ms), and no wake-up fell in the {between_polls - SLOW_INTERVAL_MS:,} ms over "
                "the limit; the Java client checks every retry.backoff.ms (100 ms) and would throw it out",
            )
        )
    for s in seeds:
        failed, dup = slow_handler(s, answer, SLOW_RECORD_MS, SLOW_INTERVAL_MS)
        rerun = f"{_IMPORT}slow_handler; slow_handler({s}, {answer}, {SLOW_RECORD_MS}, {SLOW_INTERVAL_MS})"
        parts.append(
            Part(
                f"slow handler, seed {s}",
                not (failed or dup),
                f"{failed} failed commit(s), {dup} processed twice",
                s,
                rerun=rerun,
            )
        )
    return parts


def _rebalance_run(seed: int, settings: dict):
    run = _quiet_run(seed)
    run.start("a", handler_ms=100, **settings)
    run.start("b", at_ms=5000, handler_ms=100, **settings)
    return run.run(30_000)


def group_run_shown(experiment: str, seed: int, settings) -> None:
    """Print one of the 05b checks' runs, the way lesson 05b prints its own: its summary and its
    timeline. ``experiment``: "b joins" (ex05b_q2, ``settings`` the instances' start settings) or
    "new group" (ex05b_q4, ``settings`` the auto_offset_reset)."""
    if experiment == "b joins":
        run = _rebalance_run(seed, settings)
    else:
        run = _new_group_run(seed, settings)
    print(run.summary())
    print(run.timeline())


def _new_group_run(seed: int, reset: str):
    run = _quiet_run(seed)
    run.start("a", auto_offset_reset=reset)
    run.produce(10, at_ms=8000)
    return run.run(20_000)


@exercise(
    id="ex05b_q2",
    notebook=NOTEBOOK,
    kind="choose",
    expect=expect_dict(),
    public_seeds=(1, 2, 3),
    question="Instances a and b commit every 4 batches (commit_every=4 is imposed: commits are costly). "
    "Choose the other GroupRun.start settings (a dict) so that b joining at 5 s makes nobody process a "
    "message twice.",
    hint="The rebalance takes partitions away from a: what could a do at that moment?",
)
def _ex05b_q2(answer, seeds):
    if answer.get("commit_every", 4) != 4:
        return [Part("commit_every", False, "the exercise imposes commit_every=4")]
    fixed = sorted(set(answer) & {"name", "at_ms", "handler_ms"})
    if fixed:  # the experiment's own arguments: passed twice, GroupRun.start() would raise a TypeError
        return [
            Part(
                "settings",
                False,
                f"{', '.join(fixed)} {'is' if len(fixed) == 1 else 'are'} part of the experiment (both instances "
                f"spend 100 ms per record, b joins at 5 s): leave {'it' if len(fixed) == 1 else 'them'} out and "
                f"choose only the other GroupRun.start settings, such as {{'max_poll_records': 5}}",
            )
        ]
    settings = {**answer, "commit_every": 4}
    parts = []
    for s in seeds:
        try:
            run = _rebalance_run(s, settings)
        except (TypeError, ValueError) as exc:
            return [Part("settings", False, f"GroupRun.start refused them: {exc}")]
        dup, lost = run.duplicates(), len(run.never_processed())
        rerun = f'{_IMPORT}group_run_shown; group_run_shown("b joins", {s}, {settings!r})'
        parts.append(
            Part(
                f"b joins, seed {s}",
                not (dup or lost),
                f"{dup} processed twice, {lost} never processed",
                s,
                rerun=rerun,
            )
        )
    return parts


@functools.lru_cache(maxsize=None)
def restart_rebalances(seed: int, session_timeout_ms: int) -> int:
    """Two static members (group_instance_id); `a` restarts at 6 s and is down 3 s."""
    run = _quiet_run(seed)
    for name in ("a", "b"):
        run.start(
            name,
            handler_ms=500,
            group_instance_id=name,
            session_timeout_ms=session_timeout_ms,
            heartbeat_interval_ms=min(3000, session_timeout_ms // 3),
        )
    run.restart("a", at_ms=6000, down_ms=3000)
    run.run(30_000)
    return Measured(run.rebalances(after_ms=5000), "rebalances after 5 s", f"{run.summary()}\n{run.timeline()}")


@exercise(
    id="ex05b_q3",
    notebook=NOTEBOOK,
    kind="predict",
    expect=expect_int,
    public_seeds=(1, 2),
    question="Static members a and b (group_instance_id set), but session_timeout_ms=2000. Instance a "
    "restarts and is down for 3 s. How many rebalances does the restart cause?",
    hint="A static member that comes back before its session times out keeps its partitions; one that "
    "comes back later is a member the coordinator already removed.",
    copied=lambda: restart_rebalances(1, 10_000),
    copied_from="lesson 05b's static-membership run (session timeout 10 s)",
)
def _ex05b_q3(answer, seeds):
    return predicted(
        "rebalances caused by the restart",
        answer,
        Experiment("restart_rebalances({seed}, 2000)", _IMPORT + "restart_rebalances"),
        seeds,
    )


@exercise(
    id="ex05b_q4",
    notebook=NOTEBOOK,
    kind="choose",
    expect=expect_choice("earliest", "latest"),
    public_seeds=(1, 2),
    question="A brand-new application (a group with no committed offsets) must process every order already "
    "in the topic and every later one. Which auto_offset_reset?",
    hint="Where does a group without a committed offset start reading?",
)
def _ex05b_q4(answer, seeds):
    parts = []
    for s in seeds:
        run = _new_group_run(s, answer)
        missed = run.never_processed()
        rerun = f'{_IMPORT}group_run_shown; group_run_shown("new group", {s}, {answer!r})'
        parts.append(
            Part(
                f"new group, seed {s}",
                not missed,
                f"{len(missed)} of {len(run.sent)} never processed",
                s,
                rerun=rerun,
            )
        )
    return parts


@exercise(
    id="ex05b_q5",
    notebook=NOTEBOOK,
    kind="predict",
    expect=expect_int,
    public_seeds=(0, 1),
    question="Lesson 05b's slow handler again (800 ms per record, 10 records per poll), but with "
    "max_poll_interval_ms=9000. How many of its commits fail?",
    hint="Compare the time between two polls with the interval.",
    copied=lambda: slow_handler(1, 10, 800, 5000)[0],
    copied_from="lesson 05b's slow-handler run (max_poll_interval_ms=5000)",
)
def _ex05b_q5(answer, seeds):
    return predicted(
        "failed commits", answer, Experiment("slow_handler({seed}, 10, 800, 9000)[0]", _IMPORT + "slow_handler"), seeds
    )


@functools.lru_cache(maxsize=None)
def consumer_group_twice(
    seed: int, slow_ms: float, max_poll_records: int, commit_every: int, slow_at_ms: float = 0
) -> int:
    """Lesson 05b's `fast` (20 ms per record) and `slow` instances on a consumer group
    (``group_protocol="consumer"``, KIP-848), ``max_poll_interval_ms=5000``, `slow` starting
    ``slow_at_ms`` after `fast`: messages processed more than once."""
    run = _quiet_run(seed)
    for name, ms, at_ms in (("fast", 20, 0), ("slow", slow_ms, slow_at_ms)):
        run.start(
            name,
            at_ms=at_ms,
            handler_ms=ms,
            max_poll_records=max_poll_records,
            max_poll_interval_ms=5000,
            commit_every=commit_every,
            group_protocol="consumer",
        )
    run.run(60_000)
    return Measured(run.duplicates(), "processed more than once", f"{run.summary()}\n{run.timeline()}")


# slow starts 1 s after fast: fast, alone in the group, takes both partitions (when both start at
# once, which of them joins first is a race the seed decides, and so is the answer)
@exercise(
    id="ex05b_q6",
    notebook=NOTEBOOK,
    kind="predict",
    expect=expect_int,
    public_seeds=(0, 1, 2),
    question='Lesson 05b\'s two instances on a consumer group (group_protocol="consumer"), but slow starts '
    "1 s after fast and spends 500 ms per record, both take 15 records per poll and commit only every "
    "4 batches (commit_every=4); max_poll_interval_ms=5000. How many messages are processed more than once?",
    hint="Who owns both partitions first, and has it committed anything when one of them moves? Where does "
    "the new owner start?",
    copied=lambda: consumer_group_twice(1, 800, 10, 1),
    copied_from="lesson 05b's consumer-group run (800 ms per record, 10 per poll, a commit per batch)",
)
def _ex05b_q6(answer, seeds):
    return predicted(
        "messages processed twice or more",
        answer,
        Experiment("consumer_group_twice({seed}, 500, 15, 4, slow_at_ms=1000)", _IMPORT + "consumer_group_twice"),
        seeds,
    )
