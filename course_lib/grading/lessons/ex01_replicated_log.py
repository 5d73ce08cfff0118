"""Lesson 01 (the replicated log): predictions about a paused follower's high watermark and the ISR.

Registered by :mod:`course_lib.grading.registry`.
"""

from __future__ import annotations

import functools

from ..framework import (
    Experiment,
    Part,
    exercise,
    expect_int,
    predicted,
)
from .common import _quiet

#: the import a failed prediction's "reproduce" line needs (course_lib.grading.experiments)
_IMPORT = "from course_lib.grading.experiments import paused_follower_state"
#: the run behind a number: (high watermark, ISR size) with its arguments
_STATE = "('high watermark, ISR size:', paused_follower_state({args}))"


@functools.lru_cache(maxsize=None)
def paused_follower_state(
    wait_ms: float, before: int = 2, after: int = 3, seed: int = 1, brokers: int = 3, paused: int = 1, lag_ms=10_000
) -> tuple[int, int]:
    """acks=1, replication factor ``brokers``: ``before`` records replicated, then ``paused``
    followers pause and the leader appends ``after`` more; (high watermark, ISR size) ``wait_ms``
    later. The exercise notebook prints this for before=2, after=3 (the lesson's experiment)."""
    from ...broker import Cluster
    from ...clients import KafkaProducer

    ctx = _quiet()
    try:
        cluster = Cluster(brokers=brokers, seed=seed, replica_lag_time_max_ms=lag_ms)
        cluster.create_topic("events", replication_factor=brokers, min_insync_replicas=1)
        producer = KafkaProducer(bootstrap_servers=cluster, acks=1, enable_idempotence=False)
        for i in range(before):
            producer.send("events", f"m-{i}".encode())
        producer.flush()
        cluster.run_for(100)
        leader = cluster.leader_of("events")
        for follower in [b for b in cluster.partition_state("events")["replicas"] if b != leader][:paused]:
            cluster.pause(follower)
        for i in range(before, before + after):
            producer.send("events", f"m-{i}".encode())
        producer.flush()
        cluster.run_for(wait_ms)
        state = cluster.partition_state("events")
        return state["replicas"][leader]["hw"], len(state["isr"])
    finally:
        ctx.__exit__(None, None, None)


@exercise(
    id="ex01_q1",
    notebook="01_replicated_log",
    kind="predict",
    expect=expect_int,
    public_seeds=(1, 2),
    question="acks=1, replication factor 3: 4 records replicated, then one follower pauses and the leader "
    "appends 6 more. What is the high watermark 100 ms later?",
    hint="The high watermark is the smallest log end offset among the replicas in the ISR - and a paused "
    "follower stays in the ISR until replica.lag.time.max.ms passes.",
    copied=lambda: paused_follower_state(100)[0],
    copied_from="the experiment cell of exercises/01 (2 records, then 3)",
)
def _ex01_q1(answer, seeds):
    return predicted(
        "high watermark 100 ms after the pause",
        answer,
        Experiment(
            "paused_follower_state(100, 4, 6, seed={seed})[0]",
            _IMPORT,
            evidence=_STATE.format(args="100, 4, 6, seed={seed}"),
        ),
        seeds,
    )


@exercise(
    id="ex01_q2",
    notebook="01_replicated_log",
    kind="predict",
    expect=expect_int,
    public_seeds=(1, 2),
    question="Same run (4 records, then 6), but 15 s later (replica.lag.time.max.ms is 10 s). What is the high "
    "watermark now?",
    hint="After replica.lag.time.max.ms the leader drops the paused follower from the ISR; which replicas "
    "decide the high watermark then?",
    copied=lambda: paused_follower_state(15_000)[0],
    copied_from="lesson 01's run of the 2-then-3 experiment, 15 s after the pause",
)
def _ex01_q2(answer, seeds):
    return predicted(
        "high watermark 15 s after the pause",
        answer,
        Experiment(
            "paused_follower_state(15_000, 4, 6, seed={seed})[0]",
            _IMPORT,
            evidence=_STATE.format(args="15_000, 4, 6, seed={seed}"),
        ),
        seeds,
    )


@exercise(
    id="ex01_q3",
    notebook="01_replicated_log",
    kind="predict",
    expect=expect_int,
    public_seeds=(1, 2),
    question="Replication factor 5 this time: 4 records replicated, then TWO followers pause and the leader "
    "appends 6 more. How many replicas are in the ISR 15 s later?",
    hint="Which replicas keep fetching? The leader counts itself.",
    copied=lambda: paused_follower_state(15_000)[1],
    copied_from="the ISR of the replication-factor-3 run with one paused follower",
)
def _ex01_q3(answer, seeds):
    return predicted(
        "ISR size 15 s after the pause",
        answer,
        Experiment(
            "paused_follower_state(15_000, 4, 6, seed={seed}, brokers=5, paused=2)[1]",
            _IMPORT,
            evidence=_STATE.format(args="15_000, 4, 6, seed={seed}, brokers=5, paused=2"),
        ),
        seeds,
    )


def _isr_never_shrinks(lag_ms: int, seed: int) -> bool:
    """A healthy cluster under steady writes for 10 s: does the ISR stay complete?"""
    from ...broker import Cluster
    from ...clients import KafkaProducer

    ctx = _quiet()
    try:
        cluster = Cluster(brokers=3, seed=seed, replica_lag_time_max_ms=lag_ms)
        cluster.create_topic("events", replication_factor=3, min_insync_replicas=1)
        producer = KafkaProducer(bootstrap_servers=cluster, acks=1, enable_idempotence=False)
        for i in range(100):
            producer.send("events", f"m-{i}".encode())
            producer.flush()
            cluster.run_for(100)
            if len(cluster.partition_state("events")["isr"]) < 3:
                return False
        return True
    finally:
        ctx.__exit__(None, None, None)


@exercise(
    id="ex01_q4",
    notebook="01_replicated_log",
    kind="choose",
    expect=expect_int,
    public_seeds=(1, 2, 3),
    question="Choose replica_lag_time_max_ms (an int, in ms) so that, with acks=1, the high watermark "
    "moves on within 3 s after a follower stops (4 records, then 6, as in ex01_q1), while a healthy "
    "follower is never dropped from the ISR under steady writes.",
    hint="Too large and the leader waits for a follower that is gone; too small and a follower that "
    "fetches normally is dropped between two of its fetches. Try a few values in the experiment cell.",
)
def _ex01_q4(answer, seeds):
    if answer <= 0:
        return [Part("a positive lag", False, f"replica_lag_time_max_ms={answer} is not a duration")]
    parts = []
    for s in seeds:
        hw = paused_follower_state(3000, 4, 6, s, lag_ms=answer)[0]
        parts.append(
            Part(
                f"stopped follower, seed {s}",
                hw == 10,
                f"the high watermark is still {hw} after 3 s",
                s,
                rerun=f"{_IMPORT}; " + _STATE.format(args=f"3000, 4, 6, seed={s}, lag_ms={answer}"),
            )
        )
        parts.append(
            Part(
                f"healthy followers, seed {s}",
                _isr_never_shrinks(answer, s),
                f"with {answer} ms a healthy follower left the ISR between two fetches",
                s,
            )
        )
    return parts
