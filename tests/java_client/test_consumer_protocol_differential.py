"""The consumer-protocol differential (course_lib/experiments/consumer_protocol_differential.py): the
simulated consumer with ``group_protocol="consumer"`` and the Java client 4.3.1 with
``group.protocol=consumer`` over the wire, on the same seeded call sequences (join, commit,
close, crash, produce, a crash of the group coordinator between calls), agree after every call on
each member's partition count and member epoch, the group epoch, the partitions that moved, the
committed offsets and the records each member has seen."""

import os

import pytest

from course_lib.wire.cluster import WireCluster
from course_lib.experiments.consumer_protocol_differential import (
    OPTIONS,
    ConsumerProtocolDifference,
    ConsumerProtocolDifferential,
    steps,
)

SEQUENCES = int(os.environ.get("CGP_DIFF_SEQUENCES", "6"))


@pytest.fixture(scope="module")
def protocol_wire():
    wire = WireCluster(brokers=3, seed=1, **OPTIONS).start()
    yield wire
    wire.stop()


@pytest.mark.timeout(600)
def test_simulated_consumer_group_member_matches_the_java_client(driver, protocol_wire):
    runner = ConsumerProtocolDifferential(protocol_wire, driver)
    found = [str(d) for seed in range(SEQUENCES) for d in runner.run(seed)]
    assert not found, "differences (rerun with CGP_DIFF_SEQUENCES):\n" + "\n".join(found)


def test_the_sequences_are_seeded_and_have_faults():
    assert steps(3) == steps(3)
    every = [s for seed in range(SEQUENCES) for s in steps(seed)]
    for kind in ("fault:coordinator", "crash:", "close:", "commit:", "join:B"):
        assert any(s.startswith(kind) for s in every), kind
    d = ConsumerProtocolDifference(3, ("join:A",), "join:A", "ok / members {'A': (4, 1)}", "ok / members {'A': (4, 2)}")
    assert "seed 3" in str(d) and "Java ok / members {'A': (4, 2)}" in str(d)
