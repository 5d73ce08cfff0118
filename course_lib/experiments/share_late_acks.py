"""What a worker's ACCEPT gets once its lock ran out: lesson 05c's slow handler says it is refused
(INVALID_RECORD_STATE) while another worker holds the record, and skipped without an error once
the broker archived it at the delivery count limit (``SharePartition.acknowledge``: offsets below
the start offset are "already archived"). The experiment the simulator (its ShareConsumer, virtual
time), the wire cluster and Kafka run alike, with either client.

One record, a group with a delivery count limit of 2 and a lock of :data:`LOCK_MS`: worker A takes
the record and works on past its lock; B gets it (delivery 2) and holds it; A ACCEPTs. B then
works on past its own lock - delivery 2 was the last: the broker archives the record - and
ACCEPTs. A third worker polls for a lock: does the record come back?

>>> simulator_run() == EXPECTED
True
"""

from __future__ import annotations

import time
from typing import Callable

from .share_group_experiments import group_configs, simulated_job, wall_clock_jobs, worker

LOCK_MS = 2000
CONFIGS = group_configs(LOCK_MS, 2, heartbeat_ms=1000)
#: A's ACCEPT while B holds the record, B's once the record is archived, what came back after
EXPECTED = {"deliveries": [1, 2], "first_accept": "INVALID_RECORD_STATE", "second_accept": "ok", "came_back": []}


def late_acks_run(make: Callable, produce: Callable, clock=time.monotonic, wait=time.sleep, timeout_s: float = 60):
    """``make()`` -> a :class:`~course_lib.client_adapters.share_worker.ShareWorker`;
    ``produce()`` writes one record. ``clock`` and ``wait(seconds)``: the time the workers run in."""
    workers = [make(), make()]
    try:
        produce()

        def poll_until_held(ws: list, what: str) -> tuple:
            start = clock()
            while True:
                assert clock() - start < timeout_s, f"{what} never got the record"
                for w in ws:
                    got = w.poll(0.2)
                    if got:
                        return w, got[0]

        # both poll from the start (members fetching when A's lock runs out: a Java member joins
        # at its first poll, and a holder alone would fetch the record back itself)
        a, (*_, count_a, record_a) = poll_until_held(workers, "a worker")
        b = workers[1 - workers.index(a)]
        _, (*_, count_b, record_b) = poll_until_held([b], "the other worker")  # once A's lock ran out
        a.acknowledge(record_a, "accept")
        first = a.commit_outcome()
        wait(1.5 * LOCK_MS / 1000)  # B works on past its lock: at delivery 2 the broker archives it
        b.acknowledge(record_b, "accept")
        second = b.commit_outcome()
        c = make()
        workers.append(c)
        came_back: list = []
        until = clock() + LOCK_MS / 1000
        while clock() < until:
            for offset, _, count, m in c.poll(0.2):
                came_back.append([offset, count])
                c.acknowledge(m, "accept")
                c.commit()
        return {
            "deliveries": [count_a, count_b],
            "first_accept": first,
            "second_accept": second,
            "came_back": came_back,
        }
    finally:
        for w in workers:
            w.close()


def simulator_run(seed: int = 0) -> dict:
    """Seeded, in virtual time, with the simulated ShareConsumer and producer."""
    make, produce, timing = simulated_job(seed, f"late-{seed}", CONFIGS)
    return late_acks_run(make, produce, **timing)


def client_run(cluster, client: str) -> dict:
    """``client``'s share consumers on ``cluster`` (a started WireCluster or Kafka's), the group
    set up as an operator does, the record written by confluent-kafka."""
    topic, group, produce = wall_clock_jobs(cluster, "late", CONFIGS, [b"job"])
    return late_acks_run(lambda: worker(client, cluster.bootstrap_servers, topic, group, 1), produce)
