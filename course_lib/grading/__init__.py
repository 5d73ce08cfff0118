"""Graded exercises: ``check("ex05_q2")`` in a notebook, ``python -m course_lib.grading grade``
for the instructor. See course_lib/grading/README.md.

>>> ex02_q1 = ...
>>> print(check("ex02_q1"))  # doctest: +ELLIPSIS
✏ ex02_q1: not attempted (0/1 points)
   not attempted yet: ...
>>> ex02_q1 = "10"
>>> print(check("ex02_q1"))  # doctest: +ELLIPSIS
⚠ ex02_q1: wrong type (0/1 points)
   ex02_q1 expects a whole number (int), such as 4; you gave a str: '10'.
...
"""

from __future__ import annotations

import inspect
import os
import signal
import threading

from . import registry as _registry
from .answers import syntax_error
from .framework import is_placeholder
from .overview import progress
from .registry import EXERCISES, MISSING
from .report import ERROR, Report

__all__ = ["check", "check_all", "progress", "EXERCISES"]


def _answer_from(namespace: dict, exercise_id: str):
    ex = EXERCISES[exercise_id]
    if ex.is_implementation:
        return tuple(namespace.get(name, MISSING) for name in ex.functions)
    return namespace.get(exercise_id, MISSING)


class _TooSlow(BaseException):
    pass


def _with_time_limit(seconds: float, fn, *args):
    """Run fn, raising _TooSlow after ``seconds`` (main thread only: SIGALRM; elsewhere no limit,
    and none in the browser: Pyodide has no ``signal.setitimer``)."""
    if seconds is None or threading.current_thread() is not threading.main_thread() or not hasattr(signal, "setitimer"):
        return fn(*args)

    def on_alarm(signum, frame):
        raise _TooSlow()

    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        return fn(*args)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def check(
    exercise_id: str, namespace: dict | None = None, time_limit_s: float | None = 120, seeds: list[int] | None = None
) -> Report:
    """Check your answer to one exercise (the variable or functions it names in your notebook)
    and say what passed, what failed and how to reproduce a failure. Code that runs longer than
    ``time_limit_s`` (an infinite loop?) is stopped and reported. ``seeds``: only these runs
    (a failure's "reproduce" line gives the call)."""
    if exercise_id not in EXERCISES:
        raise ValueError(f"no exercise {exercise_id!r}; the exercises are {', '.join(sorted(EXERCISES))}")
    if seeds is not None and (
        not isinstance(seeds, (list, tuple)) or not seeds or not all(type(s) is int for s in seeds)
    ):
        raise ValueError(f"seeds must be a non-empty list of whole numbers, such as [3]; got {seeds!r}")
    if os.environ.get("COURSE_GRADING_SUBMISSION"):
        return None  # inside the instructor's grader: it evaluates the answers itself
    if namespace is None:  # the caller's variables: a notebook's globals (or a function's locals)
        frame = inspect.currentframe().f_back
        namespace = {**frame.f_globals, **frame.f_locals}
    answer = _answer_from(namespace, exercise_id)
    broken = _syntax_error(namespace, exercise_id, answer)
    if broken:
        return broken
    try:
        return _with_time_limit(time_limit_s, _registry.evaluate, exercise_id, answer, seeds)
    except _TooSlow:
        ex = EXERCISES[exercise_id]
        return Report(
            exercise_id,
            ERROR,
            0,
            ex.points,
            f"your code did not finish within {time_limit_s:g} s (an infinite loop?); the check stopped it",
            ex.hint,
        )


def _syntax_error(namespace: dict, exercise_id: str, answer) -> Report | None:
    """An unanswered exercise whose answer cell does not compile (IPython keeps every cell it was
    given in ``In``, even one that never ran): say so, with the line, not "not attempted yet"."""
    ex = EXERCISES[exercise_id]
    answers = answer if ex.is_implementation else (answer,)
    cells = namespace.get("In")
    if not isinstance(cells, list) or not any(is_placeholder(a) for a in answers):
        return None
    problem = syntax_error(cells, ex.functions or (ex.id,))
    return Report(exercise_id, ERROR, 0, ex.points, problem, ex.hint) if problem else None


def check_all(notebook_prefix: str = "", namespace: dict | None = None) -> list[Report]:
    """Check every exercise whose notebook starts with ``notebook_prefix`` (e.g. "05")."""
    if namespace is None:
        frame = inspect.currentframe().f_back
        namespace = {**frame.f_globals, **frame.f_locals}
    return [check(i, namespace) for i, ex in EXERCISES.items() if ex.notebook.startswith(notebook_prefix)]
