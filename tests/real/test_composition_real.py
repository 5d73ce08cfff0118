"""Every client library's adapter with Kafka (the session's LocalCluster), in every workload: the
same experiments as tests/test_composition.py on the simulated and the wire cluster; the
simulator's clients say why they cannot reach it."""

from __future__ import annotations

import pytest

from tests.composition_support import COMPOSITIONS, compose_and_run
from tests.java_client import support

pytestmark = pytest.mark.real_kafka


@pytest.fixture(scope="module")
def driver():
    yield from support.module_driver()


@pytest.mark.timeout(300)
@pytest.mark.parametrize("client,workload", COMPOSITIONS)
def test_each_client_on_kafka(driver, cluster, client, workload):
    try:
        compose_and_run(client, workload, cluster)
    finally:
        cluster.revive()
