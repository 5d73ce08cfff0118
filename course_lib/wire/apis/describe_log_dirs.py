"""DescribeLogDirs: each broker's one log directory and the replicas it holds - their size (the
bytes of their batches, as fetched) and how far each lags its high watermark. Kafka 4.3
advertises v5 of it, which is how kafka-python tells a 4.3 broker from a 4.2 one."""

from __future__ import annotations

from kafka import errors as Errors
from kafka.protocol.admin import DescribeLogDirsResponse

from ...broker.acls import DESCRIBE
from ..authorization import cluster_authorized

from ..records import encode_batch
from .common import _grouped, _reply

#: DescribeLogDirsResponse.UNKNOWN_VOLUME_BYTES: the simulated disk has no size
UNKNOWN_VOLUME_BYTES = -1


def _size(stored) -> int:
    """A batch's bytes as a fetch carries them. The coordinators' own records (group offsets,
    transaction states) are the simulator's Python values, not Kafka's binary schemas: their size
    is an estimate of the same order (the v2 header plus each record's key and value as text)."""
    if stored.batch.produced is not None:
        return len(stored.batch.produced)
    try:
        return len(encode_batch(stored))
    except (TypeError, ValueError, AttributeError):
        return BATCH_HEADER_BYTES + sum(len(repr(r.key)) + len(repr(r.value)) for r in stored.batch.records)


#: a v2 record batch's header (DefaultRecordBatch.HEADER_STRUCT)
BATCH_HEADER_BYTES = 61


def log_dir(broker_id: int) -> str:
    """The simulated broker's log directory (Kafka's ``log.dirs``; no such path exists here)."""
    return f"/var/lib/course-sim/broker-{broker_id}"


def describe_log_dirs(gw, req) -> None:
    broker = gw.wire.cluster.brokers[gw.broker_id]
    if not cluster_authorized(gw, DESCRIBE):  # KafkaApis: no directories, and the error (v3+)
        error = Errors.ClusterAuthorizationFailedError.errno
        return _reply(gw, DescribeLogDirsResponse, throttle_time_ms=0, error_code=error, results=[])
    wanted = None if req.topics is None else {(t.topic, p) for t in req.topics for p in t.partitions}
    rows = []
    for tp, partition in sorted(broker.partitions.items()):
        if wanted is not None and tp not in wanted:
            continue
        log = partition.log
        rows.append(
            (
                tp[0],
                {
                    "partition_index": tp[1],
                    "partition_size": sum(_size(b) for b in log.batches),
                    "offset_lag": max(log.hw - log.leo, 0),  # ReplicaManager.getLogEndOffsetLag
                    "is_future_key": False,
                },
            )
        )
    _reply(
        gw,
        DescribeLogDirsResponse,
        throttle_time_ms=0,
        error_code=0,
        results=[
            {
                "error_code": 0,
                "log_dir": log_dir(gw.broker_id),
                "topics": _grouped(rows),
                "total_bytes": UNKNOWN_VOLUME_BYTES,
                "usable_bytes": UNKNOWN_VOLUME_BYTES,
                "is_cordoned": False,
            }
        ],
    )
