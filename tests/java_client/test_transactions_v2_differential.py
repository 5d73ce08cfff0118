"""The transactions-v2 differential (course_lib/experiments/java_differential.py): the simulated producer
with ``transaction_version=2`` and the Java client 4.3.1 over the wire, on the same seeded
transactional call sequences with broker crashes between calls, agree call by call on success
and on the coordinator's epoch and state, and at the end on what read_committed reads."""

import os

import pytest

from course_lib.wire.cluster import WireCluster
from course_lib.experiments.java_differential import TransactionsV2Differential, V2Difference, steps

SEQUENCES = int(os.environ.get("V2_DIFF_SEQUENCES", "12"))


@pytest.fixture(scope="module")
def shared_wire():
    wire = WireCluster(brokers=3, seed=1, group_initial_rebalance_delay_ms=0).start()
    yield wire
    wire.stop()


def test_simulated_v2_producer_matches_the_java_client(driver, shared_wire):
    runner = TransactionsV2Differential(shared_wire, driver)
    found = [str(d) for seed in range(SEQUENCES) for d in runner.run(seed)]
    assert not found, "differences (rerun with V2_DIFF_SEQUENCES):\n" + "\n".join(found)


def test_the_sequences_are_seeded_and_have_faults():
    assert steps(3) == steps(3)
    assert any(s.startswith("fault:") for seed in range(SEQUENCES) for s in steps(seed))
    d = V2Difference(3, ("init_transactions",), "init_transactions", "ok / epoch 0 Empty", "ok / epoch 1 Empty")
    assert "seed 3" in str(d) and "Java ok / epoch 1 Empty" in str(d)
