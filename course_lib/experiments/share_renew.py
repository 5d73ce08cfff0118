"""RENEW (KIP-1222) with the Java client 4.3.1: a worker holds a record longer than its lock and
renews the lock as it works; another worker of the group polls all the while. The experiment the
simulator (its ShareConsumer, virtual time), the wire cluster and Kafka 4.3.1 run alike -
confluent-kafka 2.16.1 has no RENEW, so on TCP it is the Java client's.

How Java does it (measured on Kafka 4.3.1, and read in the 4.3.1 jar: ``ShareInFlightBatch``,
``ShareConsumerImpl.collect``): ``acknowledge(record, RENEW)`` and ``commitSync()`` take the
record out of the application's hands until the broker has renewed its lock; the next ``poll()``
hands it back - only it, the same delivery count - to be acknowledged again when the work is done.
Without RENEW the lock runs out under the work and the other worker gets the record (delivery
count 2): processed twice; the holder's ACCEPT when its work is done, while the other still
holds the record, is refused (INVALID_RECORD_STATE: lesson 05c's slow handler). That half needs
no RENEW, so it runs with confluent-kafka too (:func:`client_run`).

>>> simulator_run(renew=True) == EXPECTED[True], simulator_run(renew=False) == EXPECTED[False]
(True, True)
"""

from __future__ import annotations

import time
from typing import Callable

from .share_group_experiments import group_configs, simulated_job, wall_clock_jobs, worker

LOCK_MS = 2000
#: the holder works for this many quarter-locks - one and a half locks - and renews at each: a
#: renewal a whole quarter late (a busy machine) still comes before the lock runs out
QUARTERS = 6
CONFIGS = group_configs(LOCK_MS, 5, heartbeat_ms=1000)
#: (offset, delivery count): what the holder's polls after each RENEW gave back, and what the
#: other worker got while the holder worked; the answer to the holder's ACCEPT once done
EXPECTED = {
    True: {"renewed": [[0, 1]] * QUARTERS, "other_got": [], "holder_accept": "ok"},
    False: {"renewed": [], "other_got": [[0, 2]], "holder_accept": "INVALID_RECORD_STATE"},
}


def renew_run(
    make: Callable, produce: Callable, renew: bool, clock=time.monotonic, wait=time.sleep, timeout_s: float = 60
) -> dict:
    """``make()`` -> a :class:`~course_lib.client_adapters.share_worker.ShareWorker`;
    ``produce()`` writes one record. Both workers poll until one holds it; that one works for
    :data:`QUARTERS` quarter-locks (renewing at each when ``renew``) while the other polls on -
    until it gets the record, which it then holds until the holder has ACCEPTed it. ``clock`` and
    ``wait(seconds)``: the time the workers run in."""
    workers = [make(), make()]
    try:
        produce()
        start = clock()
        held: list = []
        while not held:
            assert clock() - start < timeout_s, "nobody got the record"
            for i, w in enumerate(workers):
                got = w.poll(0.2)
                if got:
                    held, holder = got, w
                    other = workers[1 - i]
                    break
        (_, _, count, record) = held[0]
        renewed: list = []
        other_got: list = []
        other_holds: list = []
        for _ in range(QUARTERS):
            until = clock() + LOCK_MS / 4000
            while clock() < until:
                if other_holds:  # (an explicit-mode poll() must not come before its acknowledgements)
                    wait(0.05)
                    continue
                for offset, _, n, r in other.poll(0.2):
                    other_got.append([offset, n])
                    other_holds.append(r)
            if renew:
                holder.acknowledge(record, "renew")
                holder.commit()
                back = holder.poll(5)
                renewed += [[o, n] for o, _, n, _ in back]
                record = back[0][3] if back else record
        # the work is done: the holder ACCEPTs - while the other holds the record, if it got it
        holder.acknowledge(record, "accept")
        holder_accept = holder.commit_outcome()
        for r in other_holds:
            other.acknowledge(r, "accept")
            other.commit()
        return {"renewed": renewed, "other_got": other_got, "holder_accept": holder_accept}
    finally:
        for w in workers:
            w.close()


def simulator_run(renew: bool, seed: int = 0) -> dict:
    """Seeded, in virtual time, with the simulated ShareConsumer and producer."""
    make, produce, timing = simulated_job(seed, f"renew-{seed}", CONFIGS)
    return renew_run(make, produce, renew, **timing)


def client_run(cluster, renew: bool, client: str = "java") -> dict:
    """``client``'s share consumers (RENEW: Java's only) on a WireCluster or a real cluster, the
    group configured as an operator does (an admin's IncrementalAlterConfigs); the record
    written by confluent-kafka."""
    topic, group, produce = wall_clock_jobs(cluster, "renew", CONFIGS, [b"job"])
    return renew_run(lambda: worker(client, cluster.bootstrap_servers, topic, group, 1), produce, renew)
