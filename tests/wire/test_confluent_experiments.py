"""Small experiments of issue 30 in which confluent-kafka on the wire cluster already agrees with
Kafka 4.3.1 (tests/real/test_confluent_experiments.py runs the same probes there): kept so a
regression on either side shows."""

import pytest

from .client_probes import group_read_with_commits, transactions_with_markers

pytest.importorskip("confluent_kafka")

GROUP_READ = {
    "read": [f"v{i}" for i in range(20)],
    "read again by the group": [],
}
TRANSACTIONS = {
    "read_committed": [(0, "a0"), (1, "a1"), (2, "a2"), (7, "c0")],
    # the aborted values are in the log; each marker (offsets 3, 6, 8) takes an offset
    "read_uncommitted": [(0, "a0"), (1, "a1"), (2, "a2"), (4, "b0"), (5, "b1"), (7, "c0")],
    "end offset": 9,
}


def check_group_read(outcome: dict) -> None:
    assert outcome["read"] == GROUP_READ["read"]
    assert sum(outcome["partition split"]) == 20 and len(outcome["partition split"]) == 3
    # every partition's committed offset is where its records end
    assert outcome["committed"] == sorted(outcome["partition split"])
    assert outcome["read again by the group"] == []


def test_group_read_with_commits(wire):
    wire.create_topic("read", partitions=3, replication_factor=3)
    check_group_read(group_read_with_commits(wire.bootstrap_servers, "read"))


def test_transactions_with_markers(wire):
    wire.create_topic("txns", replication_factor=3)
    assert transactions_with_markers(wire.bootstrap_servers, "txns") == TRANSACTIONS
