"""Lesson 04 (the idempotent producer): why a restarted producer still duplicates, sequence numbers.

Registered by :mod:`course_lib.grading.registry`.
"""

from __future__ import annotations

import warnings

from ..framework import (
    Experiment,
    Part,
    exercise,
    expect_choice,
    expect_dict,
    expect_int,
    predicted,
)
from ...nemesis import FaultKind
from .common import _fault_rerun, _fault_trials
from .ex03_retries_ordering_duplicates import lost_ack_log

#: the import a failed prediction's "reproduce" line needs (course_lib.grading.experiments)
_IMPORT = "from course_lib.grading.experiments import lost_ack_log"


EX04_CHOICES = {
    "A": "the broker forgot the sequence numbers when the ACK was lost",
    "B": "the restarted application got a new producer id, so the broker could not recognise the resend",
    "C": "the producer used acks=1",
}


@exercise(
    id="ex04_q1",
    notebook="04_idempotent_producer",
    kind="read",
    expect=expect_choice(*EX04_CHOICES),
    question="In run_scenario('producer_restart_gap') an idempotent producer still writes a duplicate. Why? "
    + "; ".join(f"{k}: {v}" for k, v in EX04_CHOICES.items()),
    hint="Look at result.notes['producer_ids'] and result.producer_config.",
)
def _ex04_q1(answer, seeds):
    from ...experiments.scenarios import run_scenario

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        run = run_scenario("producer_restart_gap", seed=0)
    ids = run.notes["producer_ids"]
    truth = (
        "B"
        if ids[0] != ids[1] and run.producer_config.get("acks") == "all" and run.result.by_kind("duplicate")
        else "A"
    )
    return [
        Part(
            "explanation matches the run's evidence",
            answer == truth,
            f"{answer}: {EX04_CHOICES[answer]} - the run's evidence says otherwise",
        )
    ]


@exercise(
    id="ex04_q2",
    notebook="04_idempotent_producer",
    kind="predict",
    expect=expect_int,
    public_seeds=(1, 2),
    question="Idempotence ON: one record, then a batch of 6 records whose ACK is lost and which the producer "
    "retries. What is the partition's log end offset afterwards?",
    hint="The broker recognises the retried batch by its producer id and sequence numbers.",
    copied=lambda: len(lost_ack_log(3, idempotent=True)),
    copied_from="lesson 04's run (3 records, then one whose ACK is lost: 4 in the log)",
)
def _ex04_q2(answer, seeds):
    return predicted(
        "log end offset",
        answer,
        Experiment(
            "len(lost_ack_log(6, seed={seed}, idempotent=True))",
            _IMPORT,
            evidence="lost_ack_log(6, seed={seed}, idempotent=True)",
        ),
        seeds,
    )


@exercise(
    id="ex04_q3",
    notebook="04_idempotent_producer",
    kind="choose",
    expect=expect_dict(),
    public_seeds=tuple(range(10)),
    question="Choose KafkaProducer settings (a dict) so that lost ACKs, lost requests and leader crashes "
    "never duplicate, lose or reorder an acknowledged message.",
    hint="One setting deduplicates retries; it needs the strongest acks.",
)
def _ex04_q3(answer, seeds):
    kinds = (FaultKind.LOSE_NEXT_ACK, FaultKind.LOSE_NEXT_REQUEST, FaultKind.CRASH_LEADER)
    results = _fault_trials(answer, {"min_insync_replicas": 2}, seeds, kinds=kinds)
    return [
        Part(
            f"random faults, seed {s}",
            not r.result.found,
            f"found {sorted(r.result.found)}",
            s,
            rerun=_fault_rerun(s, answer, {"min_insync_replicas": 2}, kinds),
        )
        for s, r in results
    ]
