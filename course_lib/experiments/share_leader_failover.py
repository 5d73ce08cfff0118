"""A share partition's leader dies while a worker holds records (KIP-932): the experiment the
simulator (virtual time), the wire cluster and Kafka 4.3.1 run alike, with confluent-kafka's
``ShareConsumer`` and the Java client's ``KafkaShareConsumer``.

Worker a takes all :data:`RECORDS` records of one producer batch, ACCEPTs the first
:data:`ACCEPTED` and commits, and holds the rest; the partition's leader is killed; a new worker,
b, joins. The new leader rebuilds the share partition from the share coordinator's persisted
state: what was acknowledged stays acknowledged (never delivered again), while an acquisition is
not persisted - the records a held come to b *with delivery count 1 again*, at once, not after
a's lock (:data:`LOCK_MS`, long on purpose) would have run out. Kafka 4.3.1 measured exactly that
with confluent-kafka: b got offsets 3, 4, 5, each with delivery count 1, 0.3 s after the new
leader was elected.

>>> simulator_run(seed=0)["b_got"]    # (offset, delivery count): what a held, delivered afresh
[[3, 1], [4, 1], [5, 1]]
"""

from __future__ import annotations

import time
import uuid
from typing import Callable

from .share_group_experiments import configure_with_admin, group_configs, worker

RECORDS, ACCEPTED = 6, 3
#: long, so that only the failover (not a's lock running out) can hand a's records to b
LOCK_MS = 30_000
#: b gets the partition at its first heartbeat after joining: every second, not every 5 s
CONFIGS = group_configs(LOCK_MS, 5, heartbeat_ms=1000)
#: the same on every cluster and client: (offset, delivery count) of what a and b got
EXPECTED = {
    "a_got": [[offset, 1] for offset in range(RECORDS)],
    "b_got": [[offset, 1] for offset in range(ACCEPTED, RECORDS)],
}
#: after b got a's records, how long it keeps polling for anything else (an acknowledged record
#: coming back would come with them, in the same fetch)
SETTLE_S = 1.0


def values() -> list[bytes]:
    return [b"job-%d" % i for i in range(RECORDS)]


def new_group() -> str:
    return f"share-failover-{uuid.uuid4().hex[:8]}"


def leader_failover(
    make: Callable, produce: Callable, crash_leader: Callable, clock=time.monotonic, timeout_s: float = 60
) -> dict:
    """``make()`` -> a :class:`~course_lib.client_adapters.share_worker.ShareWorker`;
    ``produce()`` writes :func:`values` as one producer batch; ``crash_leader()`` kills the
    partition's leader."""
    a = make()
    b = None
    try:
        produce()
        got: list = []
        start = clock()
        while not got:
            assert clock() - start < timeout_s, "a got nothing"
            got = a.poll(0.5)
        for *_, record in got[:ACCEPTED]:
            a.acknowledge(record, "accept")
        a.commit()
        crash_leader()
        b = make()
        seen: list = []

        def work(seconds: float) -> None:
            got = b.poll(seconds)
            for *_, record in got:
                b.acknowledge(record, "accept")  # explicit mode: every record of a poll before the next poll
            if got:
                b.commit()
            seen.extend(got)

        start = clock()
        while len(seen) < RECORDS - ACCEPTED:
            assert clock() - start < timeout_s, f"b got {seen} within {timeout_s} s"
            work(0.5)
        settle = clock() + SETTLE_S
        while clock() < settle:
            work(0.2)
        return {"a_got": [[o, n] for o, _, n, _ in got], "b_got": sorted([o, n] for o, _, n, _ in seen)}
    finally:
        for w in (a, b):
            if w is not None:
                w.close()


# ---- the experiment on each cluster -----------------------------------------------------------
def simulator_run(seed: int = 0) -> dict:
    """Seeded, in virtual time, with the simulated producer and ShareConsumer."""
    from ..broker import Cluster
    from ..clients import KafkaProducer

    cluster = Cluster(3, seed=seed)
    topic, group = "work", new_group()
    cluster.create_topic(topic, partitions=1, min_insync_replicas=2)
    cluster.alter_share_group_config(group, CONFIGS)

    def produce() -> None:
        p = KafkaProducer(bootstrap_servers=cluster, linger_ms=5000)
        for v in values():
            p.send(topic, v)
        p.flush()
        p.close()

    def crash_leader() -> None:
        leader = cluster.leader_of(topic, 0)
        assert leader is not None, "the partition has a leader until this crash (3 brokers, all up)"
        cluster.crash(leader)

    return leader_failover(
        lambda: worker("simulator", cluster, topic, group, RECORDS),
        produce,
        crash_leader,
        clock=lambda: cluster.now / 1000,
    )


def rdkafka_produce(servers: str, topic: str) -> None:
    """:func:`values` as one producer batch (a long linger: only flush() sends)."""
    from confluent_kafka import Producer

    p = Producer({"bootstrap.servers": servers, "linger.ms": 5000})
    for v in values():
        p.produce(topic, value=v)
    assert p.flush(30) == 0


def tcp_run(cluster, topic: str, group: str, client: str) -> dict:
    """On a WireCluster or a real cluster (``crash``, ``leader_of``, ``bootstrap_servers``):
    ``client``'s share consumers (``"confluent-kafka"``, ``"java"``); records written by
    confluent-kafka."""
    servers = cluster.bootstrap_servers
    return leader_failover(
        lambda: worker(client, servers, topic, group, RECORDS),
        lambda: rdkafka_produce(servers, topic),
        lambda: cluster.crash(cluster.leader_of(topic, 0)),
    )


def wire_like_the_lab():
    """A WireCluster that fences a killed broker after 3 s, as the lab's Kafka does (its
    broker.session.timeout.ms; the simulator's default is Kafka's 9 s); stopped after the loop
    over this generator."""
    from ..wire.cluster import WireCluster

    wire = WireCluster(brokers=3, seed=1, broker_session_timeout_ms=3000).start()
    try:
        yield wire
    finally:
        wire.stop()


def wire_run(wire, client: str) -> dict:
    """On a WireCluster: the same steps as on Kafka, the group configured by an admin client."""
    return kafka_run(wire, client)


def kafka_run(cluster, client: str) -> dict:
    """On a real cluster (the session's LocalCluster; the caller revives the killed broker)."""
    topic, group = cluster.create_topic(f"share-failover-{uuid.uuid4().hex[:8]}", partitions=1), new_group()
    configure_with_admin(cluster.bootstrap_servers, group, CONFIGS)
    return tcp_run(cluster, topic, group, client)
