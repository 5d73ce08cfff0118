"""Lesson 08 (claims from the articles): which scenario refutes a claim.

Registered by :mod:`course_lib.grading.registry`.
"""

from __future__ import annotations

from typing import Callable

from ..framework import (
    Part,
    exercise,
    expect_choice,
)
from .common import _scenario


SCENARIO_NAMES = (
    "leader_crash_after_ack",
    "not_enough_replicas",
    "lost_ack_retry",
    "retries_reorder",
    "unclean_election",
    "fire_and_forget_crash",
    "producer_restart_gap",
)


def _acks_all(config: dict) -> bool:
    """Does a producer with ``config`` wait for every in-sync replica (kafka-python's default)?"""
    return config.get("acks", "all") in ("all", -1)


def _refutes(name: str, setting: str, holds: Callable[[dict], bool], anomaly: str) -> list[Part]:
    """Does scenario ``name`` (seed 0, its defaults) run with ``setting`` and still show ``anomaly``?"""
    run = _scenario(name, 0)
    # the run itself: its producer's settings, and what the checker found in it
    rerun = (
        f'from course_lib.experiments.scenarios import run_scenario; r = run_scenario("{name}", seed=0); '
        "print(r.producer_config); print(r.result.summary())"
    )
    return [
        Part(f"uses {setting}", holds(run.producer_config), f"{name} runs with {run.producer_config}", 0, rerun=rerun),
        Part(
            f"shows {anomaly}",
            anomaly in run.result.found,
            f"{name} shows {sorted(run.result.found) or 'no anomaly'}",
            0,
            rerun=rerun,
        ),
    ]


@exercise(
    id="ex08_q1",
    notebook="08_claims_tested",
    kind="choose",
    expect=expect_choice(*SCENARIO_NAMES),
    question="Refute the claim 'acks=all gives exactly-once': name a scenario that, run with its defaults "
    "(seed 0), uses acks='all' and still shows a duplicate.",
    hint="acks decides when a write counts as durable; what happens when the answer to a durable write is lost?",
)
def _ex08_q1(answer, seeds):
    return _refutes(answer, "acks='all'", _acks_all, "duplicate")


@exercise(
    id="ex08_q2",
    notebook="08_claims_tested",
    kind="choose",
    expect=expect_choice(*SCENARIO_NAMES),
    question="Refute the claim 'the idempotent producer never writes a duplicate': name a scenario that runs "
    "with enable_idempotence=True and still shows a duplicate.",
    hint="The broker deduplicates by producer id and sequence number. When does the producer id change?",
)
def _ex08_q2(answer, seeds):
    return _refutes(answer, "enable_idempotence=True", lambda c: c.get("enable_idempotence") is True, "duplicate")


@exercise(
    id="ex08_q3",
    notebook="08_claims_tested",
    kind="choose",
    expect=expect_choice(*SCENARIO_NAMES),
    question="Refute the claim 'with acks=all an acknowledged write is never lost': name a scenario that "
    "runs with acks='all' and still loses an acknowledged message.",
    hint="acks=all waits for the in-sync replicas. How many can there be, and who may become leader?",
)
def _ex08_q3(answer, seeds):
    return _refutes(answer, "acks='all'", _acks_all, "lost")
