"""Simulator vs real Kafka: every named scenario on both backends, side by side (the fidelity
table of notebooks/09; single behaviours are probed by :mod:`course_lib.behaviour_probes`).

Each scenario is written once (:mod:`course_lib.scenarios`); :func:`fidelity_table` runs every
case of :data:`FIDELITY_CASES` - every name in ``SCENARIOS``, some with two settings - on the
simulator and on a real cluster and compares which anomaly classes appeared. Where they agree,
the simulator's explanation (offsets, high watermark, epochs) is trustworthy for the real thing.
A backend that cannot run a scenario says why in the row (``why not``), never silently.

    >>> with LocalCluster(controllers=1) as kafka:              # doctest: +SKIP
    ...     rows = fidelity_table(kafka)
    >>> all(r["agree"] for r in rows if r["why not"] is None)  # doctest: +SKIP
    True

Taught in notebooks/09_real_kafka_lab.
"""

from __future__ import annotations

from course_lib.backend import MissingFault
from course_lib.scenarios import SCENARIOS, run_scenario

#: (scenario name, keyword arguments): every scenario, the telling settings of each.
FIDELITY_CASES: list[tuple[str, dict]] = [
    ("leader_crash_after_ack", {"acks": 1}),
    ("leader_crash_after_ack", {"acks": "all"}),
    ("not_enough_replicas", {"acks": "all"}),
    ("not_enough_replicas", {"acks": 1}),
    ("lost_ack_retry", {"idempotent": False}),
    ("lost_ack_retry", {"idempotent": True}),
    ("retries_reorder", {"idempotent": False}),
    ("retries_reorder", {"idempotent": True}),
    ("unclean_election", {"unclean": True}),
    ("unclean_election", {"unclean": False}),
    ("fire_and_forget_crash", {}),
    ("producer_restart_gap", {}),
    ("random_faults", {}),
    ("consumer_crash", {"semantics": "at-most-once", "crash_point": "after_commit"}),
    ("consumer_crash", {"semantics": "at-least-once", "crash_point": "after_process"}),
    ("consume_transform_produce", {"crash_point": "mid_batch"}),
    ("external_store_exactly_once", {"crash_point": "mid_batch"}),
    ("aborted_transaction", {"isolation_level": "read_committed"}),
    ("aborted_transaction", {"isolation_level": "read_uncommitted"}),
    ("zombie_fencing", {}),
    ("transaction_timeout", {}),
]
assert {name for name, _ in FIDELITY_CASES} == set(SCENARIOS), "every scenario needs a fidelity case"


def _key(name: str, params: dict) -> tuple:
    return name, repr(sorted(params.items()))


def fidelity_table(cluster, cases=FIDELITY_CASES, seed: int = 0, reuse=()) -> list[dict]:
    """Run each case in the simulator and on ``cluster``; one row per case.

    A row ``agrees`` when both backends found the same anomaly classes; ``why not`` says why the
    real backend could not run it (e.g. broker faults on a shared cluster). ``reuse``: real
    results already run (``run_scenario(..., backend=cluster)``) for some cases.
    """
    from tqdm.auto import tqdm

    done = {_key(getattr(r, "name", ""), r.parameters): r for r in reuse}
    rows = []
    for name, params in tqdm(list(cases), desc="sim vs real Kafka", leave=False):
        sim = run_scenario(name, seed=seed, **params)
        real, why = done.get(_key(name, params)), None
        if real is None:
            try:
                real = run_scenario(name, backend=cluster, **params)
            except MissingFault as e:
                why = str(e)
        rows.append(
            {
                "scenario": name,
                "parameters": params,
                "expected": sorted(sim.expected),
                "simulator": sorted(sim.result.found),
                "real Kafka": None if real is None else sorted(real.result.found),
                "agree": None if real is None else sim.result.found == real.result.found,
                "real outcome": None if real is None else real.result.outcome_table(),
                "why not": why,
                "real": real,
                "sim": sim,
            }
        )
    return rows
