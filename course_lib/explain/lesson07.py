"""What lesson 07 says about exactly-once into SQLite, written from the measured runs, for
``prediction.reveal(actual, explanation=...)``.

>>> from course_lib.experiments.scenarios import run_scenario
>>> runs = {s: run_scenario("consumer_crash", seed=1, semantics=s, crash_point="after_process")
...         for s in ("at-least-once", "exactly-once-external")}
>>> duplicates_in_table(runs["exactly-once-external"])
'no'
>>> print(offsets_in_the_sink(runs))  # doctest: +NORMALIZE_WHITESPACE
**Measured:** at-least-once writes 5 messages twice; with the offsets in the same SQLite
transaction as the output, exactly-once-external writes no message twice: the restarted instance
starts where the *sink* says the work ended.

Used in notebooks/07_exactly_once_external.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..viz.consumers import processing_counts
from .lesson05 import TWICE, _messages
from .lesson06 import bad_points, crashed_anywhere


def duplicates_in_table(run) -> str:
    """'yes' if the run wrote some message twice into its output, else 'no'."""
    return "yes" if processing_counts(run)[TWICE] else "no"


def offsets_in_the_sink(runs: Mapping) -> str:
    """``runs``: the at-least-once and the exactly-once-external run, crashed at the same point."""
    least = processing_counts(runs["at-least-once"])[TWICE]
    exact = processing_counts(runs["exactly-once-external"])[TWICE]
    return (
        f"**Measured:** at-least-once writes {_messages(least)} twice; with the offsets in the same SQLite\n"
        f"transaction as the output, exactly-once-external writes {_messages(exact)} twice: the restarted instance\n"
        "starts where the *sink* says the work ended."
    )


def every_crash_point(counts: Mapping) -> str:
    """``counts``: :func:`~course_lib.viz.processing_counts` of exactly-once-external per crash point.

    >>> c = {"input messages": 20, "processed once": 20, "never processed": 0, "processed twice or more": 0}
    >>> print(every_crash_point({"after_poll": c, "after_commit": c}))  # doctest: +NORMALIZE_WHITESPACE
    **Measured:** 20 processed once at every crash point (of 20 inputs): a crash anywhere aborts the
    SQLite transaction that was open, output and offset together.
    """
    if bad_points(counts):
        return crashed_anywhere(counts)
    first = next(iter(counts.values()))
    return (
        f"**Measured:** {first['processed once']} processed once at every crash point (of {first['input messages']} "
        "inputs): a crash anywhere aborts the\nSQLite transaction that was open, output and offset together."
    )
