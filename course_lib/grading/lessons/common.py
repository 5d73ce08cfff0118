"""Helpers several lessons' checks share: quiet runs of a named scenario or of seeded fault
schedules, and the fraction of messages a run acknowledged."""

from __future__ import annotations

import warnings


def _quiet():
    ctx = warnings.catch_warnings()
    ctx.__enter__()
    warnings.simplefilter("ignore")
    return ctx


def _fault_trials(producer: dict, topic: dict, seeds, kinds=None) -> list:
    from ...experiments.scenarios import random_faults

    kw = {"kinds": kinds} if kinds else {}
    return [(s, random_faults(seed=s, producer_config=producer, topic_config=topic, **kw)) for s in seeds]


def _fault_rerun(seed: int, producer: dict, topic: dict, kinds=None) -> str:
    """The line that reruns one of :func:`_fault_trials`'s runs and prints what its checker found
    (a failed configuration's evidence, not the check again)."""
    kw = f", kinds={tuple(str(k) for k in kinds)!r}" if kinds else ""
    return (
        f'from course_lib.experiments.scenarios import run_scenario; print(run_scenario("random_faults", seed={seed}, '
        f"producer_config={producer!r}, topic_config={topic!r}{kw}).result.summary())"
    )


def _acked_fraction(results) -> float:
    sent = acked = 0
    for _, r in results:
        table = r.result.outcome_table()
        sent += table["sent"]
        acked += table["sent"] - table["not delivered (producer told)"]
    return acked / max(sent, 1)


def _lost_and_twice(result) -> tuple[list, list]:
    """A crash run's messages never processed, and those processed twice (checker anomalies)."""
    return result.by_kind("lost_in_processing"), result.by_kind("duplicate_processing")


def _scenario(name: str, seed: int, **params):
    from ...experiments.scenarios import run_scenario

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return run_scenario(name, seed=seed, **params)
