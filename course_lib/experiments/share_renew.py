"""RENEW (KIP-1222) with the Java client 4.3.1: a worker holds a record longer than its lock and
renews the lock as it works; another worker of the group polls all the while. The experiment the
simulator (its ShareConsumer, virtual time), the wire cluster and Kafka 4.3.1 run alike -
confluent-kafka 2.16.1 has no RENEW, so on TCP it is the Java client's.

How Java does it (measured on Kafka 4.3.1, and read in the 4.3.1 jar: ``ShareInFlightBatch``,
``ShareConsumerImpl.collect``): ``acknowledge(record, RENEW)`` and ``commitSync()`` take the
record out of the application's hands until the broker has renewed its lock; the next ``poll()``
hands it back - only it, the same delivery count - to be acknowledged again when the work is done.
Without RENEW the lock runs out under the work and the other worker gets the record (delivery
count 2): processed twice.

>>> simulator_run(renew=True) == EXPECTED[True], simulator_run(renew=False) == EXPECTED[False]
(True, True)
"""

from __future__ import annotations

import time
import uuid
from typing import Callable

from .share_group_experiments import configure_with_admin, group_configs, worker

LOCK_MS = 2000
#: the holder works for this many quarter-locks - one and a half locks - and renews at each: a
#: renewal a whole quarter late (a busy machine) still comes before the lock runs out
QUARTERS = 6
CONFIGS = group_configs(LOCK_MS, 5, heartbeat_ms=1000)
#: (offset, delivery count): what the holder's polls after each RENEW gave back, and what the
#: other worker got while the holder worked
EXPECTED = {
    True: {"renewed": [[0, 1]] * QUARTERS, "other_got": []},
    False: {"renewed": [], "other_got": [[0, 2]]},
}


def renew_run(make: Callable, produce: Callable, renew: bool, clock=time.monotonic, timeout_s: float = 60) -> dict:
    """``make()`` -> a :class:`~course_lib.experiments.share_group_experiments.Worker`;
    ``produce()`` writes one record. Both workers poll until one holds it; that one works for
    :data:`QUARTERS` quarter-locks (renewing at each when ``renew``) while the other polls on."""
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
        for _ in range(QUARTERS):
            until = clock() + LOCK_MS / 4000
            while clock() < until:
                for offset, _, n, r in other.poll(0.2):
                    other_got.append([offset, n])
                    other.acknowledge(r, "accept")
                    other.commit()
            if renew:
                holder.acknowledge(record, "renew")
                holder.commit()
                back = holder.poll(5)
                renewed += [[o, n] for o, _, n, _ in back]
                record = back[0][3] if back else record
        if renew:
            holder.acknowledge(record, "accept")
            holder.commit()
        return {"renewed": renewed, "other_got": other_got}
    finally:
        for w in workers:
            w.close()


def simulator_run(renew: bool, seed: int = 0) -> dict:
    """Seeded, in virtual time, with the simulated ShareConsumer and producer."""
    from ..broker import Cluster
    from ..clients import KafkaProducer

    cluster = Cluster(3, seed=seed)
    topic, group = "work", f"renew-{seed}"
    cluster.create_topic(topic, partitions=1, min_insync_replicas=2)
    cluster.alter_share_group_config(group, CONFIGS)

    def produce() -> None:
        p = KafkaProducer(bootstrap_servers=cluster)
        p.send(topic, b"job")
        p.flush()
        p.close()

    return renew_run(
        lambda: worker("simulator", cluster, topic, group, 1), produce, renew, clock=lambda: cluster.now / 1000
    )


def java_run(cluster, renew: bool, wire: bool) -> dict:
    """The Java client on a WireCluster (``wire``) or a real cluster; the record written by
    confluent-kafka."""
    from confluent_kafka import Producer

    servers = cluster.bootstrap_servers
    topic, group = cluster.create_topic(f"renew-{uuid.uuid4().hex[:8]}", partitions=1), f"renew-{uuid.uuid4().hex[:8]}"
    if wire:
        cluster.call(lambda: cluster.cluster.alter_share_group_config(group, CONFIGS))
    else:
        configure_with_admin(servers, group, CONFIGS)

    def produce() -> None:
        p = Producer({"bootstrap.servers": servers})
        p.produce(topic, value=b"job")
        assert p.flush(30) == 0

    return renew_run(lambda: worker("java", servers, topic, group, 1), produce, renew)
