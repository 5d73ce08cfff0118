"""Lesson 02 (acks and durability): unclean election, topic settings under faults, NOT_ENOUGH_REPLICAS.

Registered by :mod:`course_lib.grading.registry`.
"""

from __future__ import annotations


from ..framework import (
    Experiment,
    Part,
    exercise,
    expect_choice,
    expect_dict,
    expect_int,
    predicted,
)
from .common import _acked_fraction, _fault_rerun, _fault_trials, _scenario

#: the import a failed prediction's "reproduce" line needs (course_lib.grading.experiments)
_IMPORT = "from course_lib.experiments.scenarios import run_scenario"


@exercise(
    id="ex02_q1",
    notebook="02_acks_and_durability",
    kind="predict",
    expect=expect_int,
    public_seeds=(0, 1),
    question="run_scenario('unclean_election', messages=8, unclean=True): the lone leader acknowledges 8 "
    "writes, crashes, and an out-of-sync follower is elected. How many acknowledged messages are lost "
    "(for any seed)?",
    hint="Which of the acknowledged writes ever reached the follower that now leads?",
    copied=lambda: len(_scenario("unclean_election", 1, unclean=True).result.by_kind("lost")),
    copied_from="lesson 02's unclean_election run (5 messages)",
)
def _ex02_q1(answer, seeds):
    return predicted(
        "acknowledged messages lost",
        answer,
        Experiment(
            'len(run_scenario("unclean_election", seed={seed}, unclean=True, messages=8).result.by_kind("lost"))',
            _IMPORT,
            evidence='print(run_scenario("unclean_election", seed={seed}, unclean=True, messages=8).result.summary())',
        ),
        seeds,
    )


@exercise(
    id="ex02_q2",
    notebook="02_acks_and_durability",
    kind="choose",
    expect=expect_dict("producer", "topic"),
    public_seeds=tuple(range(20)),
    question="Choose {'producer': {...}, 'topic': {...}} so that no acknowledged message is ever lost under "
    "random broker faults, while at least 90% of the messages are still acknowledged.",
    hint="Which acks value waits for the followers, and how many in-sync replicas must a write reach so "
    "that one crash cannot take the only copy?",
)
def _ex02_q2(answer, seeds):
    results = _fault_trials(answer["producer"], answer["topic"], seeds)
    parts = [
        Part(
            f"random faults, seed {s}",
            not r.result.by_kind("lost"),
            f"{len(r.result.by_kind('lost'))} acknowledged message(s) lost",
            s,
            rerun=_fault_rerun(s, answer["producer"], answer["topic"]),
        )
        for s, r in results
    ]
    fraction = _acked_fraction(results)
    parts.append(
        Part(
            "availability",
            fraction >= 0.9,
            f"only {fraction:.0%} of the messages were acknowledged (90% needed): too strict a setting "
            f"refuses writes instead of storing them safely",
        )
    )
    return parts


@exercise(
    id="ex02_q3",
    notebook="02_acks_and_durability",
    kind="predict",
    expect=expect_int,
    public_seeds=(0, 1),
    question="run_scenario('not_enough_replicas', acks='all', min_insync_replicas=1): both followers crash "
    "and the ISR shrinks to the leader. How many of the 5 sends does the application see fail?",
    hint="min.insync.replicas is the smallest ISR a write with acks='all' accepts.",
    copied=lambda: _scenario("not_enough_replicas", 1).notes["failed"],
    copied_from="lesson 02's not_enough_replicas run (min_insync_replicas=2)",
)
def _ex02_q3(answer, seeds):
    return predicted(
        "failed sends",
        answer,
        Experiment(
            'run_scenario("not_enough_replicas", seed={seed}, acks="all", min_insync_replicas=1).notes["failed"]',
            _IMPORT,
            evidence='print(run_scenario("not_enough_replicas", seed={seed}, acks="all", min_insync_replicas=1).result.summary())',
        ),
        seeds,
    )


ACKS_CHOICES = {"0": 0, "1": 1, "all": "all"}


@exercise(
    id="ex02_q4",
    notebook="02_acks_and_durability",
    kind="choose",
    expect=expect_choice(*ACKS_CHOICES),
    public_seeds=tuple(range(5)),
    question="The followers stall and the leader crashes right after acknowledging (leader_crash_after_ack). "
    "Which acks setting ('0', '1' or 'all') loses no acknowledged message?",
    hint="Which setting makes the leader wait for the followers before it answers?",
)
def _ex02_q4(answer, seeds):
    parts = []
    for s in seeds:
        lost = _scenario("leader_crash_after_ack", s, acks=ACKS_CHOICES[answer]).result.by_kind("lost")
        rerun = (
            f'{_IMPORT}; print(run_scenario("leader_crash_after_ack", seed={s}, '
            f"acks={ACKS_CHOICES[answer]!r}).result.summary())"
        )
        parts.append(
            Part(f"leader crash, seed {s}", not lost, f"acks={answer}: {len(lost)} acknowledged lost", s, rerun=rerun)
        )
    return parts
