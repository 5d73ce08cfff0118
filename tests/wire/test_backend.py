"""Every scenario of SCENARIOS with kafka-python's real clients against the simulated cluster
(composed at the seam: kafka-python x WireCluster): the anomalies found are the ones the scenario expects - the same verdicts as
the simulator's own clients give on the same scenario."""

import pytest

from course_lib.experiments.scenarios import SCENARIOS, run_scenario
from course_lib.backend import ComposedBackend
from course_lib.wire.cluster import WireCluster


@pytest.fixture(scope="module")
def lab():
    with WireCluster.lab(seed=1) as lab:
        yield lab


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_scenario_on_kafka_python_over_the_wire(lab, name):
    result = run_scenario(name, backend=ComposedBackend(lab), seed=1)
    lab.revive()
    simulated = run_scenario(name, seed=1)
    assert result.anomalies == result.expected, f"{name}: {result.result.summary()}"
    assert result.anomalies == simulated.anomalies


def test_a_wire_runs_explanation_names_the_election_and_the_truncation(lab):
    # one history per run: the simulated cluster's elections and truncations reach the run's
    # history over the wire too, so the checker explains a loss as it does on the simulator
    over_wire = run_scenario("unclean_election", backend=lab, seed=1, unclean=True)
    lab.revive()
    simulated = run_scenario("unclean_election", seed=1, unclean=True)
    for run in (simulated, over_wire):
        lost = [a for a in run.result.anomalies if a.kind == "lost"]
        assert lost, run.result.summary()
        for a in lost:
            assert "became leader in epoch 1 (an UNCLEAN election)" in a.explanation, a.explanation
            assert "truncated it away" in a.explanation, a.explanation
    assert {op.f for op in over_wire.history if op.process == "controller"} >= {"elect"}
