"""Every graded exercise, by id: the one place that lists the lesson modules.

A new exercise is one ``@exercise(...)`` check function in its lesson's module under
:mod:`course_lib.grading.lessons`; a new lesson is one module there, named in :data:`LESSON_MODULES`.
The lesson modules import only :mod:`course_lib.grading.framework` (and shared helpers), never
this module, so there is no import cycle.
"""

from __future__ import annotations

from importlib import import_module

from .framework import MISSING, Exercise, exercises_in, grade
from .report import Report

__all__ = ["EXERCISES", "LESSONS", "MISSING", "evaluate"]

#: the lesson modules under :mod:`course_lib.grading.lessons`, written once; this order is the
#: order of EXERCISES and so of the grader's score columns (05b, 11 and 05c were added after 01-10
#: and keep their place at the end)
LESSON_MODULES = (
    "ex01_replicated_log",
    "ex02_acks_and_durability",
    "ex03_retries_ordering_duplicates",
    "ex04_idempotent_producer",
    "ex05_consumer_delivery_semantics",
    "ex06_transactions",
    "ex07_exactly_once_external",
    "ex08_claims_tested",
    "ex09_real_kafka_lab",
    "ex10_pyspark_exactly_once_lab",
    "ex11_capstone",
    "ex05b_consumer_groups",
    "ex05c_share_groups",
)
LESSONS = tuple(import_module(f"{__package__}.lessons.{name}") for name in LESSON_MODULES)

EXERCISES: dict[str, Exercise] = exercises_in(LESSONS)


def evaluate(exercise_id: str, answer, seeds=None) -> Report:
    """Grade one answer to the exercise ``exercise_id`` (see :func:`framework.grade`)."""
    return grade(EXERCISES[exercise_id], answer, seeds)
