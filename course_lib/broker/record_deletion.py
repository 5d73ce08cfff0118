"""DeleteRecords as Kafka's partition leader does it (``Partition.deleteRecordsOnLeader``,
``DelayedDeleteRecords``): the leader moves its log start offset to the requested offset (-1: the
high watermark); an offset past the high watermark is OFFSET_OUT_OF_RANGE. Followers move theirs
when a fetch answer carries the leader's start (``FetchResponse.log_start_offset``), and the
request is answered once every replica in the ISR has moved - the partition's *low watermark*.
Consumers fetching below the start get OFFSET_OUT_OF_RANGE; ListOffsets' earliest is the start.

>>> from course_lib.broker import Cluster
>>> from course_lib.broker.protocol import Record, RecordBatch
>>> from course_lib.broker.topic_requests import create_topic_request
>>> cluster = Cluster(brokers=3, seed=1)
>>> create_topic_request(cluster, "orders", 1, 3, {})
(None, None)
>>> cluster.run_for(2000)
>>> leader = next(p for b in cluster.brokers.values() if (p := b.partitions.get(("orders", 0))) and p.is_leader)
>>> for i in range(5):
...     _ = leader.log.append(RecordBatch([Record(None, b"v", 0)]), leader.leader_epoch)
>>> cluster.run_for(2000)
>>> leader.log.hw
5
>>> delete_records(leader, 3), low_watermark(cluster, leader)
((None, 3), 0)
>>> cluster.run_for(1000)  # the followers' next fetch answers carry the leader's start
>>> sorted(b.partitions[("orders", 0)].log.start_offset for b in cluster.brokers.values()), low_watermark(cluster, leader)
([3, 3, 3], 3)
>>> delete_records(leader, 9)[0].__name__
'OffsetOutOfRangeError'
"""

from __future__ import annotations

from kafka import errors as Errors

#: DeleteRecords' offset meaning "up to the high watermark"
HIGH_WATERMARK = -1


def delete_records(partition, offset: int):
    """On the leader ``partition``: move the log start offset to ``offset``;
    ``(error class or None, new log start offset)``."""
    if not partition.is_leader:
        return Errors.NotLeaderForPartitionError, -1
    log = partition.log
    if offset == HIGH_WATERMARK:
        offset = log.hw
    if offset < 0 or offset > log.hw:
        return Errors.OffsetOutOfRangeError, -1
    log.advance_start(offset)
    partition.broker.cluster.record(
        f"broker-{partition.broker.broker_id}", "delete_records", {"tp": list(partition.tp), "start": log.start_offset}
    )
    return None, log.start_offset


def low_watermark(cluster, partition) -> int:
    """The smallest log start offset among the leader and its in-sync replicas (what Kafka's
    ``Partition.lowWatermarkIfLeader`` reads from its followers' fetches)."""
    starts = [partition.log.start_offset]
    for broker_id in partition.isr:
        replica = cluster.brokers[broker_id].partitions.get(partition.tp)
        if replica is not None and cluster.brokers[broker_id].alive:
            starts.append(replica.log.start_offset)
    return min(starts)
