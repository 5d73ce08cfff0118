"""One experiment per workload, for any client x cluster: what every composition of a client
adapter with a cluster must pass (tests/test_composition.py on the simulated cluster and the wire
cluster, tests/real/test_composition_real.py on Kafka).

Each workload reaches its clients through its contract (:mod:`course_lib.client_adapters`):

- ``producer``: :data:`PRODUCER_SCENARIO` through a backend composed of the client's
  :class:`~course_lib.client_adapters.ClientSide` and the cluster (:func:`compose`);
- ``consumer classic`` and ``consumer protocol``: two members join, split the partitions and
  leave (:func:`~course_lib.experiments.consumer_protocol_experiments.join_split_leave`), with
  ``group.protocol`` ``classic`` or ``consumer``, through :func:`~course_lib.client_adapters.group_member`;
- ``share``: four workers share a partition with a stalled worker, a poison record, a REJECT and
  a RELEASE (:mod:`course_lib.experiments.share_group_experiments`), through
  :func:`~course_lib.client_adapters.share_consumer`.

A composition that cannot run says why: the client lacks the workload
(:func:`~course_lib.client_adapters.missing_workloads`) or cannot reach the cluster
(:func:`~course_lib.client_adapters.cluster_missing`). :func:`problems` gives what a run showed
that the workload's experiment must not show: [] when it passed.
"""

from __future__ import annotations

import uuid
from typing import Any

from ..backend import ComposedBackend, SimBackend, TopicSpec
from ..client_adapters import CLIENTS, IN_PROCESS, WORKLOADS, cluster_missing, missing_workloads
from ..client_adapters.simulated import SimulatedClients
from . import consumer_protocol_experiments as kip848
from . import share_group_experiments as share
from .scenarios import run_scenario

#: the producer workload's experiment: a leader crashes right after acknowledging (acks=1, its default
#: there: what it acknowledged alone is lost, on every client and cluster)
PRODUCER_SCENARIO = "leader_crash_after_ack"
#: each consumer-group workload's protocol
GROUP_PROTOCOL = {"consumer classic": "classic", "consumer protocol": "consumer"}


def why_not(workload: str, client: str, cluster: Any) -> str | None:
    """Why ``client`` cannot run ``workload`` on ``cluster`` here (None: it can)."""
    if workload not in WORKLOADS:
        raise ValueError(f"no workload {workload!r}: choose one of {', '.join(WORKLOADS)}")
    return missing_workloads(client).get(workload) or cluster_missing(client, cluster)


def compose(cluster: Any, client: str) -> SimBackend | ComposedBackend:
    """A backend of ``client``'s producer and consumer on ``cluster``: the simulator's clients
    share the simulated cluster's clock, a client library runs on the wall clock."""
    if client in IN_PROCESS:
        return SimBackend(cluster, SimulatedClients())
    return ComposedBackend(cluster, CLIENTS[client]())


def run(workload: str, client: str, cluster: Any) -> dict:
    """``workload``'s experiment with ``client`` on ``cluster`` (a started
    :class:`~course_lib.clusters.Topology`; the simulator's: a ``SimulatedCluster``)."""
    why = why_not(workload, client, cluster)
    if why:
        raise ValueError(f"{client} cannot run the {workload} workload on {cluster!r}: {why}")
    if workload == "producer":
        result = run_scenario(PRODUCER_SCENARIO, backend=compose(cluster, client), seed=1)
        return {"anomalies": sorted(result.anomalies), "expected": sorted(result.expected)}
    servers = cluster.client_config()["bootstrap_servers"]
    if workload in GROUP_PROTOCOL:
        topic = cluster.create_from(TopicSpec.of(f"members-{uuid.uuid4().hex[:6]}", partitions=4))
        protocol: kip848.MemberSettings = {"group.protocol": GROUP_PROTOCOL[workload]}
        got = kip848.join_split_leave(client, servers, topic, **protocol)
        got.pop("seconds")
        return got
    topic = cluster.create_from(TopicSpec.of(f"share-{uuid.uuid4().hex[:6]}", partitions=1, min_insync_replicas=2))
    group = share.new_group()
    if client in IN_PROCESS:  # one clock, the simulated cluster's: the workers take turns on it
        sim = servers
        sim.alter_share_group_config(group, share.GROUP_CONFIGS)
        got = share.run(
            lambda n: share.worker(client, sim, topic, group, n),
            lambda: _write_batches(cluster, client, topic),
            clock=lambda: sim.now / 1000,
            threads=False,
        ).numbers
    else:  # as an operator sets them (IncrementalAlterConfigs of a GROUP resource)
        share.configure_with_admin(servers, group)
        got = share.with_client(client, servers, topic, group, lambda: _write_batches(cluster, client, topic)).numbers
    got.pop("seconds", None)
    return got


def _write_batches(cluster: Any, client: str, topic: str) -> None:
    """The share experiment's batches, one flush each, by ``client``'s producer."""
    backend = compose(cluster, client)
    try:
        producer = backend.producer(linger_ms=share.LINGER_MS)
        for batch in share.batches():
            for value in batch:
                producer.send(topic, value)
            producer.flush()
    finally:
        backend.close_clients()


def problems(workload: str, got: dict) -> list[str]:
    """What ``got`` (a :func:`run`) shows that ``workload``'s experiment must not: [] when it
    passed.

    >>> problems("consumer classic", dict(kip848.EXPECTED))
    []
    >>> problems("producer", {"anomalies": ["lost"], "expected": []})
    ["anomalies ['lost'], expected []"]
    """
    if workload == "producer":
        return (
            [] if got["anomalies"] == got["expected"] else [f"anomalies {got['anomalies']}, expected {got['expected']}"]
        )
    expected = kip848.EXPECTED if workload in GROUP_PROTOCOL else share.EXPECTED
    return [f"{key}: {got.get(key)!r}, expected {want!r}" for key, want in expected.items() if got.get(key) != want]


__all__ = ["PRODUCER_SCENARIO", "compose", "problems", "run", "why_not"]
