"""Every client adapter with the simulated cluster and with the wire cluster, in every workload
(producer, consumer classic, consumer protocol, share): one experiment each
(:mod:`course_lib.experiments.workloads`). The simulator's clients run only on the simulated
cluster, the client libraries only over TCP; a client that lacks a workload says why
(:data:`course_lib.client_adapters.LACKS`). tests/real/test_composition_real.py composes them with
Kafka."""

from __future__ import annotations

import pytest

from course_lib.broker.simulated_cluster import SimulatedCluster
from course_lib.client_adapters import LACKS, WORKLOADS, cluster_missing
from course_lib.experiments import workloads
from tests.composition_support import COMPOSITIONS, compose_and_run, share_cell


@pytest.fixture(scope="module")
def wire():
    from course_lib.client_adapters.for_java import stop_driver
    from course_lib.wire.cluster import WireCluster

    with WireCluster(brokers=3, seed=1, group_initial_rebalance_delay_ms=0) as cluster:
        yield cluster
    stop_driver()  # the Java client's driver process, if a test started it


@pytest.mark.parametrize("client,workload", COMPOSITIONS)
def test_each_client_on_the_simulated_cluster(client, workload):
    compose_and_run(client, workload, SimulatedCluster(seed=1, group_initial_rebalance_delay_ms=0))


@pytest.mark.timeout(180)
@pytest.mark.parametrize("client,workload", COMPOSITIONS)
def test_each_client_on_the_wire_cluster(wire, client, workload):
    try:
        compose_and_run(client, workload, wire, reuse=share_cell("wire"))
    finally:
        wire.revive()


def test_the_compositions_that_cannot_run_say_why():
    simulated = SimulatedCluster(seed=1)
    assert cluster_missing("simulator", simulated) is None
    assert "over TCP" in cluster_missing("kafka-python", simulated)
    lacking = {(c, w) for c, lacks in LACKS.items() for w in lacks}
    assert lacking == {("kafka-python", "consumer protocol"), ("kafka-python", "share")}
    with pytest.raises(ValueError, match="no workload 'admin'"):
        workloads.why_not("admin", "java", simulated)
    assert set(WORKLOADS) == {"producer", "consumer classic", "consumer protocol", "share"}


def test_every_registered_experiment_runs_a_workload_of_the_contracts():
    from course_lib.experiments import (  # noqa: F401
        behaviour_probes,
        protocol_matrix,
        scenarios,
        share_scenarios,
        transaction_versions,
    )
    from course_lib.experiments.registry import EXPERIMENTS, FAMILIES
    from course_lib.experiments.registry import WORKLOADS as REGISTRY_WORKLOADS

    assert REGISTRY_WORKLOADS == WORKLOADS
    assert {e.family for e in EXPERIMENTS.values()} == set(FAMILIES)
    assert {e.workload for e in EXPERIMENTS.values()} == set(WORKLOADS), "an experiment for every workload"


def test_a_broken_workload_run_is_caught():
    """The check can fail: a run that shows another outcome than the workload's experiment must."""
    from course_lib.experiments import consumer_protocol_experiments as kip848

    wrong = {**kip848.EXPECTED, "split": [3, 1]}
    assert workloads.problems("consumer classic", wrong) == ["split: [3, 1], expected [2, 2]"]
    assert workloads.problems("producer", {"anomalies": [], "expected": ["lost"]})
