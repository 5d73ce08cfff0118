"""Lesson 03 (retries, ordering and duplicates): a lost ACK's resend, reordering with in-flight requests.

Registered by :mod:`course_lib.grading.registry`.
"""

from __future__ import annotations

import functools

from ..framework import (
    Experiment,
    Part,
    exercise,
    expect_dict,
    expect_int,
    predicted,
)
from .common import _acked_fraction, _fault_rerun, _fault_trials, _quiet, _scenario

#: the import a failed prediction's "reproduce" line needs (course_lib.grading.experiments)
_IMPORT = "from course_lib.grading.experiments import lost_ack_log, smallest_in_flight_that_reorders"


@functools.lru_cache(maxsize=None)
def lost_ack_log(batch: int, seed: int = 1, idempotent: bool = False, retries=None) -> tuple[str, ...]:
    """One record, then a batch of ``batch`` records whose ACK is lost (acks='all'); the values
    the partition holds afterwards. Lesson 03 prints it for one record."""
    from ...broker import Cluster
    from ...clients import KafkaProducer

    ctx = _quiet()
    try:
        cluster = Cluster(brokers=3, seed=seed)
        cluster.create_topic("events", min_insync_replicas=2)
        extra = {} if retries is None else {"retries": retries}
        producer = KafkaProducer(
            bootstrap_servers=cluster, acks="all", enable_idempotence=idempotent, request_timeout_ms=500, **extra
        )
        producer.send("events", b"m-0")
        producer.flush()
        cluster.lose_next_ack(producer.node_id)
        for i in range(1, batch + 1):  # no flush in between: one batch, one request
            producer.send("events", f"m-{i}".encode())
        producer.flush()
        cluster.final_read("events")
        return tuple(v.decode() for _, _, v in cluster.committed_records("events"))
    finally:
        ctx.__exit__(None, None, None)


def _duplicates(values) -> int:
    return len(values) - len(set(values))


@exercise(
    id="ex03_q1",
    notebook="03_retries_ordering_duplicates",
    kind="predict",
    expect=expect_int,
    public_seeds=(1, 2),
    question="acks='all', idempotence off: one record is written, then ONE batch of 6 records whose ACK is "
    "lost; the producer retries it. How many messages end up in the log more than once?",
    hint="A retry resends the whole batch, and the broker had appended all of it the first time.",
    copied=lambda: _duplicates(lost_ack_log(1)),
    copied_from="lesson 03's lost-ACK run (a batch of one record)",
)
def _ex03_q1(answer, seeds):
    return predicted(
        "duplicated messages",
        answer,
        Experiment(
            "(lambda log: len(log) - len(set(log)))(lost_ack_log(6, seed={seed}))",
            _IMPORT,
            evidence="lost_ack_log(6, seed={seed})",
        ),
        seeds,
    )


@exercise(
    id="ex03_q2",
    notebook="03_retries_ordering_duplicates",
    kind="choose",
    expect=expect_dict(),
    public_seeds=tuple(range(20)),
    question="Your brokers do not allow the idempotent producer (enable_idempotence=False is imposed). Choose "
    "the other producer settings so that nothing acknowledged is lost and no message is ever "
    "reordered under random faults.",
    hint="A retried batch can overtake... or be overtaken. How many requests per connection may be in flight "
    "for that to be impossible?",
)
def _ex03_q2(answer, seeds):
    if answer.get("enable_idempotence", False) is not False:
        return [Part("enable_idempotence", False, "the exercise imposes enable_idempotence=False")]
    results = _fault_trials(answer, {"min_insync_replicas": 2}, seeds)
    parts = [
        Part(
            f"random faults, seed {s}",
            not (r.result.by_kind("lost") or r.result.by_kind("reordered")),
            f"{len(r.result.by_kind('lost'))} lost, {len(r.result.by_kind('reordered'))} reordered",
            s,
            rerun=_fault_rerun(s, answer, {"min_insync_replicas": 2}),
        )
        for s, r in results
    ]
    fraction = _acked_fraction(results)
    parts.append(Part("availability", fraction >= 0.9, f"only {fraction:.0%} of the messages were acknowledged"))
    return parts


@exercise(
    id="ex03_q3",
    notebook="03_retries_ordering_duplicates",
    kind="predict",
    expect=expect_int,
    public_seeds=(0, 1),
    question="Idempotence off, retries on: what is the SMALLEST max_in_flight_requests_per_connection at "
    "which run_scenario('retries_reorder') writes the messages out of order?",
    hint="For a retried request to land behind a later one, how many requests must have been on the "
    "connection at the same time?",
    copied=lambda: 5,  # lesson 03 prints max_in_flight=5 (reordered) and 1 (in order)
    copied_from="lesson 03's retries_reorder runs (max_in_flight 5 and 1)",
)
def _ex03_q3(answer, seeds):
    parts = []
    for s in seeds:
        ok = _reorders(s, answer) and not _reorders(s, answer - 1)
        # the same words either way: "still holds" / "a smaller value" would point up or down
        detail = f"{answer} is not the smallest value at which this run reorders; run it with a few values"
        rerun = f"{_IMPORT}; smallest_in_flight_that_reorders(seed={s})"
        parts.append(Part(f"retries_reorder, seed {s}", ok, detail, s, rerun=rerun))
    return parts


def _reorders(seed: int, max_in_flight: int) -> bool:
    return max_in_flight >= 1 and bool(
        _scenario("retries_reorder", seed, max_in_flight=max_in_flight).result.by_kind("reordered")
    )


def smallest_in_flight_that_reorders(seed: int, largest: int = 10) -> int | None:
    """The experiment behind ex03_q3: run_scenario('retries_reorder') with max_in_flight 1, 2, ...
    up to ``largest``; the first value whose run writes out of order (None: none did)."""
    return next((n for n in range(1, largest + 1) if _reorders(seed, n)), None)


@exercise(
    id="ex03_q4",
    notebook="03_retries_ordering_duplicates",
    kind="predict",
    expect=expect_int,
    public_seeds=(1, 2),
    question="Same lost ACK, but retries=0 and a batch of 5 records: the application's future fails. How many "
    "of those 5 records are in the log anyway?",
    hint="The ACK was lost, not the request: what had the broker done before answering?",
    copied=lambda: len(lost_ack_log(1, retries=0)) - 1,
    copied_from="lesson 03's retries=0 run (a batch of one record)",
)
def _ex03_q4(answer, seeds):
    return predicted(
        "records of the failed batch in the log",
        answer,
        Experiment(
            "len(lost_ack_log(5, seed={seed}, retries=0)) - 1",
            _IMPORT,
            evidence="lost_ack_log(5, seed={seed}, retries=0)",
        ),
        seeds,
    )
