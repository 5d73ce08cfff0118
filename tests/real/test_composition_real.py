"""Every client library's adapter with Kafka (the session's LocalCluster), in every workload: the
same experiments as tests/test_composition.py on the simulated and the wire cluster; the
simulator's clients say why they cannot reach it."""

from __future__ import annotations

import pytest

from course_lib.experiments import workloads
from course_lib.experiments.fidelity import LOCAL_TABLE, MATRIX, fidelity_table
from course_lib.experiments.shared_results import once_per_test_run
from tests.composition_support import COMPOSITIONS, compose_and_run, share_cell
from tests.java_client import support

pytestmark = pytest.mark.real_kafka


@pytest.fixture(scope="module")
def driver():
    yield from support.module_driver()


def _from_this_run(cluster):
    """The cells this test run's matrices already hold for Kafka: the producer workload's scenario
    in the fidelity table (tests/real/test_real_scenarios.py computes it), the share workload's
    experiment in the protocol matrix."""
    share = share_cell("Kafka")

    def reuse(workload: str, client: str):
        if workload == "share":
            return share(workload, client, cluster)
        if workload != "producer":
            return None
        rows = once_per_test_run(LOCAL_TABLE, lambda: fidelity_table(cluster, side_by_side=True))
        (row,) = [r for r in rows if r["scenario"] == workloads.PRODUCER_SCENARIO and r["parameters"] == {"acks": 1}]
        (key,) = [c.key for c in MATRIX if c.client == client and c.place.name == "kafka"]
        run = row["runs"][key]
        return None if run is None else {"anomalies": sorted(run.result.found), "expected": sorted(run.expected)}

    return reuse


@pytest.mark.timeout(900)
@pytest.mark.parametrize("client,workload", COMPOSITIONS)
def test_each_client_on_kafka(driver, cluster, client, workload):
    try:
        compose_and_run(client, workload, cluster, reuse=_from_this_run(cluster))
    finally:
        cluster.revive()
