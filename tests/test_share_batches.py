"""Share-partitions hand out whole record batches, as Kafka 4.3.1 does (``SharePartition.acquire``,
``acquireNewBatchRecords``, ``acquireSubsetBatchRecords``, ``shouldThrottleRecordsDelivery``;
course_lib/broker/share_batches.py), and the experiment the wire cluster and Kafka 4.3.1 run
(tests/share_protocol_support.py) gives Kafka's counts on the simulator too. A failing test
prints its seed."""

from __future__ import annotations

import warnings

import pytest

from course_lib.broker import Cluster
from course_lib.broker.share_batches import BATCH_OPTIMIZED, RECORD_LIMIT
from course_lib.clients import KafkaProducer
from course_lib.clients.share_consumer import AcknowledgeType, ShareConsumer
from tests import share_protocol_support as share

GROUP, TOPIC = "workers", "jobs"


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def setup(batches: list[int], seed: int = 1, **group_configs) -> Cluster:
    """A topic whose records were written in producer batches of the given sizes."""
    cluster = Cluster(3, seed=seed)
    cluster.create_topic(TOPIC, partitions=1, min_insync_replicas=2)
    cluster.alter_share_group_config(GROUP, {"share.auto.offset.reset": "earliest", **group_configs})
    producer = KafkaProducer(bootstrap_servers=cluster)
    n = 0
    for size in batches:
        for _ in range(size):
            producer.send(TOPIC, f"m-{n}".encode())
            n += 1
        producer.flush()
    producer.close()
    return cluster


def worker(cluster, max_records: int) -> ShareConsumer:
    c = ShareConsumer(
        {
            "bootstrap.servers": cluster,
            "group.id": GROUP,
            "share.acknowledgement.mode": "explicit",
            "max.poll.records": max_records,
        }
    )
    c.subscribe([TOPIC])
    return c


@pytest.mark.parametrize("seed", [0, 1])
def test_the_experiment_gives_kafka_4_3_1_s_counts_on_the_simulator(seed):
    got = share.simulator_run(seed).numbers
    got.pop("seconds")
    assert got == share.EXPECTED, seed


def test_a_fetch_is_rounded_up_to_the_end_of_a_record_batch():
    """MaxRecords "can be exceeded for alignment of batch boundaries": asking for 2 of a batch
    of 5 acquires all 5; the next fetch takes the next batch whole."""
    cluster = setup([5, 3])
    c = worker(cluster, max_records=2)
    first = c.poll(5)
    assert [m.offset() for m in first] == [0, 1, 2, 3, 4], cluster.seed
    for m in first:
        c.acknowledge(m, AcknowledgeType.ACCEPT)
    assert [m.offset() for m in c.poll(5)] == [5, 6, 7], cluster.seed


def test_record_limit_mode_acquires_exactly_max_records_and_splits_the_batch():
    """share.acquire.mode=record_limit (ShareFetch v2, the Java client's option): 2 of a batch
    of 6, the rest stays available; a batch_optimized fetch then takes what is left of the
    split batch record by record - all of it, past its max_records."""
    cluster = setup([6])
    c = worker(cluster, max_records=1)  # makes the leader read the share-partition's state
    c.poll(5)
    sp = cluster.brokers[cluster.leader_of(TOPIC)].shares.share_partition(GROUP, (TOPIC, 0))
    for offset in range(6):
        sp.records[offset].state = "AVAILABLE"  # as if c had released them all (delivery count 1)
    got = [(o, n) for o, _, n in sp.acquire("m1", 2, 2, RECORD_LIMIT)]
    assert got == [(0, 2), (1, 2)] and sp.batches[0].split, cluster.seed
    assert [o for o, _, _ in sp.acquire("m2", 1, 1, BATCH_OPTIMIZED)] == [2, 3, 4, 5], cluster.seed


def test_near_the_delivery_limit_a_batch_is_handed_out_in_halves_then_record_by_record():
    """A worker that RELEASEs everything it gets, delivery count limit 5 (throttle limit 3): the
    batch of 8 goes whole three times, then in halves (delivery 4), then each record alone for
    its last delivery - a poison record cannot drag its batch to the limit with it. The second
    half comes before the first half's 5th delivery: the RELEASE travels with the next fetch,
    which skips records whose new state is still being written."""
    cluster = setup([share.THROTTLE_BATCH], **{"share.delivery.count.limit": 5})
    c = worker(cluster, max_records=share.THROTTLE_BATCH)
    sizes, deliveries = [], 0
    while deliveries < share.THROTTLE_BATCH * 5:
        got = c.poll(5)
        assert got, f"nothing after {sizes} (seed {cluster.seed})"
        sizes.append(len(got))
        deliveries += len(got)
        for m in got:
            c.acknowledge(m, AcknowledgeType.RELEASE)
    c.commit_sync()
    assert sizes == share.THROTTLE_SIZES, cluster.seed  # Kafka 4.3.1's (tests/real/test_share_groups_real.py)
    assert c.poll(2) == [], cluster.seed  # all archived at the limit
