"""Every scenario of SCENARIOS with kafka-python's real clients against the simulated cluster
(the WireBackend): the anomalies found are the ones the scenario expects - the same verdicts as
the simulator's own clients give on the same scenario."""

import pytest

from course_lib.scenarios import SCENARIOS, run_scenario
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
