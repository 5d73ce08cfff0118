"""The share-group differential on the wire cluster with each wall-clock client's share consumer
(confluent-kafka's, the Java client's: the ``share_client`` fixture): the same sequences as
Kafka's recorded ones with that client (tests/share_differential_support.py), through the client
on the simulated brokers - so a difference is the brokers' or the wire's, not the client's, unless
a loaded machine moved a race of the client's threads against a record's lock. So a sequence
that differs runs again on a new cluster and fails the test only if it differs again
(:func:`~tests.share_differential_support.seen_twice`); its report ends with what the brokers did
(:func:`_share_trail`).

A sequence mostly waits (for locks, sessions, a crashed broker's successor), so the sequences run
:data:`AT_ONCE` at a time, each on a wire cluster of its own - as each ran alone on Kafka: a crash
in one never reaches another (the Java client's driver serves several threads at once)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest

from course_lib.experiments.share_differential import SEQUENCES, ClientShare
from course_lib.wire.cluster import WireCluster
from tests.share_differential_support import report, seen_twice, unexplained

#: sequences run at once, each on its own cluster (five, in a fresh run at load 12-29, once saw a
#: closed member's record come back after 1.5 s: "after its lock ran out", where Kafka said before)
AT_ONCE = 3


@pytest.fixture
def stops_java_driver():
    """The Java client's shared driver process is stopped after the test (before no_leaks looks)."""
    yield
    from course_lib.client_adapters.for_java import stop_driver

    stop_driver()


def _on_a_cluster_of_its_own(client: str, seed: int) -> list[str]:
    """``seed``'s difference from Kafka's recording (none: []), on a new 3-broker wire cluster;
    a difference is run again on another (:func:`seen_twice`)."""
    return seen_twice(lambda s: _once(client, s), seed)


def _once(client: str, seed: int) -> list[str]:
    with WireCluster(brokers=3, seed=1, group_initial_rebalance_delay_ms=0) as cluster:
        side = ClientShare(cluster, client, f"{client} on the wire cluster")
        try:
            found = unexplained(side, [seed])
        finally:
            side.close()
        return found + _share_trail(cluster) if found else []


def _share_trail(cluster: WireCluster) -> list[str]:
    """What the brokers did with the sequence's group, from the simulated cluster's history: each
    assignment, each release of records and why (a lock ran out, a member closed, a connection
    closed), each archiving - so a difference says what the brokers did that Kafka did not."""
    ops = cluster.call(lambda: list(cluster.cluster.history.ops))
    return [f"  {op.time_ms:.0f} ms {op.process} {op.f} {op.value}" for op in ops if op.f.startswith("share_")]


@pytest.mark.timeout(600)
def test_each_client_on_the_wire_sees_what_kafka_showed(no_leaks, share_client, stops_java_driver):
    if share_client == "confluent-kafka":
        pytest.importorskip("confluent_kafka")
    with ThreadPoolExecutor(AT_ONCE, thread_name_prefix="share-diff") as pool:
        found = [
            line
            for lines in pool.map(_on_a_cluster_of_its_own, [share_client] * SEQUENCES, range(SEQUENCES))
            for line in lines
        ]
    assert not found, report(f"{share_client} on the wire cluster", found)
