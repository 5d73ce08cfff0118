"""Same seed and inputs => byte-identical history. The golden files pin it down: if a change
alters the simulator's behaviour on purpose, regenerate them with
``COURSE_REGENERATE_GOLDEN=1 make test`` and review the diff."""

import os
from pathlib import Path

import pytest

from course_lib.experiments.scenarios import run_scenario

GOLDEN = Path(__file__).parent / "golden"
RUNS = {
    "lost_ack_retry_seed3": ("lost_ack_retry", {"seed": 3, "idempotent": False}),
    "random_faults_seed5": ("random_faults", {"seed": 5, "producer_config": {"acks": 1, "enable_idempotence": False}}),
}


@pytest.mark.parametrize("name", sorted(RUNS))
def test_history_matches_the_golden_trace(name):
    scenario, kwargs = RUNS[name]
    text = run_scenario(scenario, **kwargs).history.to_jsonl()
    path = GOLDEN / f"{name}.jsonl"
    if os.environ.get("COURSE_REGENERATE_GOLDEN"):
        path.write_text(text)
    assert path.exists(), f"missing {path}: run with COURSE_REGENERATE_GOLDEN=1 once"
    assert text == path.read_text(), f"{name} drifted from {path} (seed {kwargs['seed']})"


def test_two_runs_with_one_seed_are_identical_and_seeds_differ():
    a = run_scenario("random_faults", seed=11).history.to_jsonl()
    b = run_scenario("random_faults", seed=11).history.to_jsonl()
    c = run_scenario("random_faults", seed=12).history.to_jsonl()
    assert a == b
    assert a != c
