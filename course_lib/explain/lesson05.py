"""What lesson 05 says about its measurements, written from the measured values (never typed into
the notebook, where a learner would read it before locking in a prediction).

Each function takes the runs a cell measured and returns markdown for
``prediction.reveal(actual, explanation=...)``.

>>> from course_lib.experiments.scenarios import run_scenario
>>> runs = {s: run_scenario("consumer_crash", seed=1, semantics=s, crash_point="after_process")
...         for s in ("at-least-once", "at-most-once")}
>>> print(commit_or_process_first(runs))  # doctest: +NORMALIZE_WHITESPACE
**Measured:** at-least-once processes 5 messages twice: the batch it processed but had not
committed is read again by the next instance. At-most-once had already committed, so it repeats
nothing.

Used in notebooks/05_consumer_delivery_semantics.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..viz.consumers import processing_counts

TWICE, NEVER = "processed twice or more", "never processed"


def _count(run, what: str) -> int:
    return processing_counts(run)[what]


def _messages(n: int) -> str:
    """'1 message', '5 messages', 'no message'.

    >>> _messages(0), _messages(1), _messages(5)
    ('no message', '1 message', '5 messages')
    """
    return "no message" if n == 0 else f"{n} message{'' if n == 1 else 's'}"


def commit_or_process_first(runs: Mapping) -> str:
    """Crash after processing, before committing: ``runs`` maps "at-least-once" and
    "at-most-once" to their runs."""
    least, most = _count(runs["at-least-once"], TWICE), _count(runs["at-most-once"], TWICE)
    repeat = "repeats nothing" if most == 0 else f"also processes {_messages(most)} twice"
    return (
        f"**Measured:** at-least-once processes {_messages(least)} twice: the batch it processed but had not\n"
        f"committed is read again by the next instance. At-most-once had already committed, so it {repeat}."
    )


def never_processed(runs: Mapping) -> str:
    """Crash after committing, before processing.

    >>> from course_lib.experiments.scenarios import run_scenario
    >>> runs = {s: run_scenario("consumer_crash", seed=1, semantics=s, crash_point="after_commit")
    ...         for s in ("at-least-once", "at-most-once")}
    >>> print(never_processed(runs))  # doctest: +NORMALIZE_WHITESPACE
    **Measured:** at-most-once never processes 5 messages: their offsets were committed before the
    crash. At-least-once, which commits only after processing, loses nothing.
    """
    most, least = _count(runs["at-most-once"], NEVER), _count(runs["at-least-once"], NEVER)
    other = "loses nothing" if least == 0 else f"never processes {_messages(least)}"
    return (
        f"**Measured:** at-most-once never processes {_messages(most)}: their offsets were committed before the\n"
        f"crash. At-least-once, which commits only after processing, {other}."
    )


def most_duplicating(table: Mapping, among) -> str:
    """The way of committing (of ``among``) that processes messages twice at the most crash points.

    >>> table = {"a": {"p": (0, 1), "q": (0, 2)}, "b": {"p": (0, 0), "q": (0, 5)}}
    >>> most_duplicating(table, ["a", "b"])
    'a'
    """
    return max(among, key=lambda s: sum(1 for _, twice in table[s].values() if twice))


def every_crash_point(table: Mapping) -> str:
    """The (never processed, processed twice) table of every way of committing and crash point.

    >>> table = {"at-most-once": {"mid_batch": (3, 0), "after_commit": (5, 0), "after_poll": (0, 0)},
    ...          "auto-commit": {"mid_batch": (0, 2), "after_commit": (0, 5), "after_poll": (0, 0)},
    ...          "exactly-once-kafka": {"mid_batch": (0, 0), "after_commit": (0, 0), "after_poll": (0, 0)}}
    >>> print(every_crash_point(table))  # doctest: +NORMALIZE_WHITESPACE
    **Measured:**
    - at-most-once: never processes 3 (mid_batch), 5 (after_commit), and processes nothing twice;
    - auto-commit: processes 2 (mid_batch), 5 (after_commit) twice at 2 of the 3 crash points, and loses nothing;
    - exactly-once-kafka: (0, 0) at every crash point (notebooks 06 and 07 build it).
    """
    lines = []
    for semantics, row in table.items():
        lost = [f"{never} ({point})" for point, (never, _) in row.items() if never]
        twice = [f"{dup} ({point})" for point, (_, dup) in row.items() if dup]
        if not lost and not twice:
            where = " (notebooks 06 and 07 build it)" if semantics.startswith("exactly-once") else ""
            lines.append(f"- {semantics}: (0, 0) at every crash point{where};")
            continue
        parts = []
        if lost:
            parts.append(f"never processes {', '.join(lost)}")
        if twice:
            at = f" at {len(twice)} of the {len(row)} crash points" if len(twice) > 1 else ""
            parts.append(f"processes {', '.join(twice)} twice{at}")
        parts.append("processes nothing twice" if not twice else "loses nothing" if not lost else "")
        lines.append(f"- {semantics}: {', and '.join(p for p in parts if p)};")
    lines[-1] = lines[-1][:-1] + "."
    return "**Measured:**\n" + "\n".join(lines)


def lost_or_duplicated(counts: Mapping) -> str:
    """The answer to "lost or duplicated?" from :func:`processing_counts` (also "both", "neither").

    >>> lost_or_duplicated({NEVER: 5, TWICE: 0}), lost_or_duplicated({NEVER: 0, TWICE: 0})
    ('lost', 'neither')
    """
    lost, twice = counts[NEVER] > 0, counts[TWICE] > 0
    return {(True, False): "lost", (False, True): "duplicated", (True, True): "both"}.get((lost, twice), "neither")


def buffered_auto_commit(run) -> str:
    """Auto-commit, records handed to a worker queue, crash right after a poll.

    >>> from course_lib.experiments.scenarios import run_scenario
    >>> r = run_scenario("consumer_crash", seed=1, semantics="auto-commit", crash_point="after_poll", buffered=True)
    >>> print(buffered_auto_commit(r))  # doctest: +NORMALIZE_WHITESPACE
    **Measured:** 5 messages are never processed (and no message twice): the next poll auto-committed
    offsets of records still waiting in the queue. Auto-commit is "at-least-once" only if every
    record is processed before the next `poll()`.
    """
    counts = processing_counts(run)
    return (
        f"**Measured:** {_messages(counts[NEVER])} {'is' if counts[NEVER] == 1 else 'are'} never processed "
        f"(and {_messages(counts[TWICE])} twice): the next poll auto-committed\n"
        'offsets of records still waiting in the queue. Auto-commit is "at-least-once" only if every\n'
        "record is processed before the next `poll()`."
    )
