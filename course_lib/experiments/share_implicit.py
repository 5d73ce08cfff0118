"""Implicit acknowledgement (``share.acknowledgement.mode=implicit``, confluent-kafka's default and
the Java client's): the application acknowledges nothing; its next ``poll()`` ACCEPTs the whole
batch the last one returned - a record its handler failed on too. Lesson 05c's share-group app
(:mod:`course_lib.viz.shares`, the ``job_queue`` scenario) says so: with implicit acknowledgement
a failing job is never delivered again. The experiment the simulator (its ShareConsumer, virtual
time), the wire cluster and Kafka run alike, with either client.

A worker in implicit mode takes :data:`RECORDS` records, :data:`MAX_RECORDS` per poll, its handler
failing on :data:`FAILS` (it cannot RELEASE them), and polls on until it has seen every record,
then once more; then it closes. Another worker, in explicit mode, polls for two locks: does
anything come back?

>>> simulator_run() == EXPECTED
True
"""

from __future__ import annotations

import time
from typing import Callable

from .share_group_experiments import group_configs, wall_clock_jobs, worker

RECORDS, MAX_RECORDS = 6, 3
#: the offsets whose handler fails: the worker would RELEASE them, and implicit mode cannot
FAILS = (1, 4)
LOCK_MS = 2000
CONFIGS = group_configs(LOCK_MS, 5, heartbeat_ms=1000)
#: [offset, delivery count] the implicit worker saw (each record once), and what came back to
#: the other worker afterwards: nothing, the failed records neither - the next poll accepted them
EXPECTED = {"implicit_saw": [[o, 1] for o in range(RECORDS)], "came_back": []}


def implicit_run(make: Callable, produce: Callable, clock=time.monotonic, timeout_s: float = 60) -> dict:
    """``make(acknowledgement)`` -> a :class:`~course_lib.client_adapters.share_worker.ShareWorker`
    in that mode; ``produce()`` writes :data:`RECORDS` records, one batch each."""
    implicit = make("implicit")
    try:
        produce()
        start = clock()
        saw: list = []
        while len(saw) < RECORDS:
            assert clock() - start < timeout_s, f"the implicit worker saw only {saw}"
            # its handler "fails" on FAILS and succeeds on the others: nothing it can tell the broker
            saw += [[offset, count] for offset, _, count, _ in implicit.poll(0.2)]
        implicit.poll(0.2)  # accepts the last batch
    finally:
        implicit.close()
    other = make("explicit")
    try:
        came_back: list = []
        until = clock() + 2 * LOCK_MS / 1000
        while clock() < until:
            for offset, _, count, m in other.poll(0.2):
                came_back.append([offset, count])
                other.acknowledge(m, "accept")
                other.commit()
    finally:
        other.close()
    return {"implicit_saw": sorted(saw), "came_back": came_back}


def simulator_run(seed: int = 0) -> dict:
    """Seeded, in virtual time, with the simulated ShareConsumer and producer."""
    from ..broker import Cluster
    from ..clients import KafkaProducer

    cluster = Cluster(3, seed=seed)
    topic, group = "work", f"implicit-{seed}"
    cluster.create_topic(topic, partitions=1, min_insync_replicas=2)
    cluster.alter_share_group_config(group, CONFIGS)

    def produce() -> None:
        p = KafkaProducer(bootstrap_servers=cluster)
        for i in range(RECORDS):
            p.send(topic, f"job-{i}".encode())
            p.flush()  # a batch each
        p.close()

    return implicit_run(
        lambda mode: worker("simulator", cluster, topic, group, MAX_RECORDS, acknowledgement=mode),
        produce,
        clock=lambda: cluster.now / 1000,
    )


def client_run(cluster, client: str) -> dict:
    """``client``'s share consumers on ``cluster`` (a started WireCluster or Kafka's), the group
    set up as an operator does, the records written by confluent-kafka, one batch each."""
    jobs = [f"job-{i}".encode() for i in range(RECORDS)]
    topic, group, produce = wall_clock_jobs(cluster, "implicit", CONFIGS, jobs)
    servers = cluster.bootstrap_servers
    return implicit_run(lambda mode: worker(client, servers, topic, group, MAX_RECORDS, acknowledgement=mode), produce)
