"""The capstone (exercises_src/11_capstone.ipynb): one pipeline, producer and consumer settings
together, judged over seeded fault schedules - the grader's hidden seeds included, so settings
tuned to the public seeds do not pass by luck.

Each seed runs both halves of the pipeline under faults:

- the producer half: :func:`course_lib.experiments.scenarios.random_faults` with the chosen producer and topic
  settings (crashes, pauses, isolation, lost ACKs and requests, an ISR shrink then the leader's death);
- the consumer half: :func:`course_lib.application.processing.random_processing` with the chosen processing
  semantics (1-3 application crashes at a random point, a broker crash and a lost response).

Registered by :mod:`course_lib.grading.registry`.
"""

from __future__ import annotations

from ...history import OK, OpName
from ...nemesis import FaultKind
from ..framework import Part, exercise, expect_dict, expect_function
from .common import _acked_fraction, _fault_trials

NOTEBOOK = "11_capstone"


def _semantics_problem(consumer: dict) -> str | None:
    from ...application.processing import SEMANTICS

    if consumer.get("semantics") not in SEMANTICS:
        return f"answer['consumer']['semantics'] must be one of {', '.join(map(repr, SEMANTICS))}"
    return None


@exercise(
    id="ex11_q1",
    notebook=NOTEBOOK,
    kind="choose",
    expect=expect_dict("producer", "topic", "consumer"),
    public_seeds=tuple(range(8)),
    points=3,
    question="Payments pipeline: choose {'producer': {...}, 'topic': {...}, 'consumer': {'semantics': ...}} "
    "so that, under broker faults and application crashes, every payment is written once, in order, "
    "and processed exactly once - while at least 90% of the writes are still acknowledged.",
    hint="Three layers, three guarantees: durability of an acknowledged write, no duplicate from a retry, "
    "and offsets that cannot disagree with the output.",
)
def _ex11_q1(answer, seeds):
    problem = _semantics_problem(answer["consumer"])
    if problem:
        return [Part("consumer semantics", False, problem)]
    from ...application.processing import random_processing

    results = _fault_trials(answer["producer"], answer["topic"], seeds)

    # each failure names its side and the exact run, configuration included, that reproduces it
    def producer_run(seed: int) -> str:
        return (
            f'from course_lib.experiments.scenarios import run_scenario; run_scenario("random_faults", seed={seed}, '
            f"producer_config={answer['producer']!r}, topic_config={answer['topic']!r})"
        )

    parts = [
        Part(
            f"producer under faults, seed {s}",
            not r.result.found,
            f"found {sorted(r.result.found)}",
            s,
            side="producer",
            rerun=producer_run(s),
        )
        for s, r in results
    ]
    fraction = _acked_fraction(results)
    parts.append(
        Part("availability", fraction >= 0.9, f"only {fraction:.0%} of the writes were acknowledged", side="producer")
    )
    semantics = answer["consumer"]["semantics"]
    for s in seeds:
        found = random_processing(s, semantics, messages=12).result.found
        parts.append(
            Part(
                f"consumer under crashes, seed {s}",
                not found,
                f"found {sorted(found)}",
                s,
                side="consumer",
                rerun=f"from course_lib.application.processing import random_processing; random_processing({s}, {semantics!r}, messages=12)",
            )
        )
    return parts


LOSSY_FAULTS = (FaultKind.CRASH_LEADER_AFTER_ACK, FaultKind.SHRINK_ISR_THEN_CRASH_LEADER, FaultKind.LOSE_NEXT_ACK)


def lossy_history(seed: int):
    """The run the capstone's second question reads: acks=1, idempotence off, one in-sync replica
    allowed, and faults that lose acknowledged writes or duplicate retried ones."""
    from ...experiments.scenarios import run_scenario

    return run_scenario(
        "random_faults",
        seed=seed,
        producer_config={"acks": 1, "enable_idempotence": False},
        topic_config={"min_insync_replicas": 1},
        kinds=LOSSY_FAULTS,
    )


def audit_truth(history) -> dict:
    """What ex11_q2 asks for, from its definition (the checker reports the same anomalies)."""
    acknowledged = {op.value for op in history if op.f == OpName.SEND and op.type == OK}
    final = [row[2] for op in history if op.f == OpName.FINAL_READ for row in op.value]
    return {"lost": acknowledged - set(final), "duplicated": {v for v in final if final.count(v) > 1}}


@exercise(
    id="ex11_q2",
    notebook=NOTEBOOK,
    kind="implement",
    expect=expect_function(1),
    functions=("audit",),
    public_seeds=(0, 1, 2, 3, 4, 5, 6),
    points=2,
    question="Write audit(history) -> {'lost': set, 'duplicated': set}: 'lost' holds the values the producer "
    "was told were written (a 'send' op of type 'ok') that the final read of the log does not hold; "
    "'duplicated' the values the final read holds more than once.",
    hint="Two passes over the history: the values of successful sends, then the rows [partition, offset, "
    "value] of the final_read op.",
)
def _ex11_q2(fn, seeds):
    parts = []
    for s in seeds:
        history = lossy_history(s).history
        truth, got = audit_truth(history), fn(history)
        if not isinstance(got, dict) or set(got) != {"lost", "duplicated"}:
            return [
                Part(
                    "result", False, f"audit() must return a dict with keys 'lost' and 'duplicated', not {got!r}"[:300]
                )
            ]
        wrong = [k for k in ("lost", "duplicated") if set(got[k]) != truth[k]]
        detail = "; ".join(f"{k}: you found {sorted(got[k])}, the run holds {sorted(truth[k])}" for k in wrong)
        # the reproduce line hands the learner the very history their audit() got wrong
        rerun = f"from course_lib.grading.experiments import lossy_history; audit(lossy_history({s}).history)"
        parts.append(Part(f"faulty run, seed {s}", not wrong, detail, s, rerun=rerun))
    return parts
