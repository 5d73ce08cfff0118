"""Every scenario of SCENARIOS with kafka-python's real clients against the simulated cluster
(the WireBackend): the anomalies found are the ones the scenario expects - the same verdicts as
the simulator's own clients give on the same scenario."""

import pytest

from course_lib.backend import MissingFault
from course_lib.scenarios import SCENARIOS, run_scenario
from course_lib.wire.backend import WireBackend, WireLab

#: scenarios the wire backend cannot run, and why
NOT_ON_WIRE = {"random_faults": "replays a fault schedule in virtual time (a simulator-only fault)"}


@pytest.fixture(scope="module")
def lab():
    with WireLab(seed=1) as lab:
        yield lab


@pytest.mark.parametrize("name", sorted(set(SCENARIOS) - set(NOT_ON_WIRE)))
def test_scenario_on_kafka_python_over_the_wire(lab, name):
    result = run_scenario(name, backend=WireBackend(lab), seed=1)
    lab.revive()
    simulated = run_scenario(name, seed=1)
    assert result.anomalies == result.expected, f"{name}: {result.result.summary()}"
    assert result.anomalies == simulated.anomalies


@pytest.mark.parametrize("name", sorted(NOT_ON_WIRE))
def test_simulator_only_scenarios_say_why(lab, name):
    with pytest.raises(MissingFault, match="schedule"):
        run_scenario(name, backend=WireBackend(lab), seed=1)
