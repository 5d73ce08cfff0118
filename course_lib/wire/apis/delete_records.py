"""DeleteRecords: the partition leaders move their log start offsets (course_lib/broker/record_deletion.py).

As Kafka's ``DelayedDeleteRecords``, a partition is answered once its low watermark (the
smallest log start offset in the ISR) has reached the new start - the followers learn it from
their next fetch - or REQUEST_TIMED_OUT when the request's timeout passes first."""

from __future__ import annotations

from kafka import errors as Errors
from kafka.protocol.admin import DeleteRecordsResponse

from ...broker.acls import DELETE, TOPIC
from ...broker.record_deletion import delete_records as delete_on_leader
from ..authorization import authorized
from ...broker.record_deletion import low_watermark
from .common import _grouped, _reply, code


def delete_records(gw, req) -> None:
    wire = gw.wire
    broker = wire.cluster.brokers[gw.broker_id]
    started: dict = {}  # tp -> (error, new start)
    for topic in req.topics:
        for part in topic.partitions:
            tp = (topic.name, part.partition_index)
            partition = broker.partitions.get(tp)
            if not authorized(gw, DELETE, TOPIC, topic.name):  # KafkaApis: DELETE on the topic
                started[tp] = (Errors.TopicAuthorizationFailedError, -1)
            elif partition is None:
                error = (
                    Errors.UnknownTopicOrPartitionError
                    if tp not in broker.metadata
                    else Errors.NotLeaderForPartitionError
                )
                started[tp] = (error, -1)
            else:
                started[tp] = delete_on_leader(partition, part.offset)

    def answer_when_replicated(waited_ms: float = 0) -> None:
        if not gw.alive:
            return
        rows, pending = [], False
        for tp, (error, start) in started.items():
            if error is None:
                low = low_watermark(wire.cluster, broker.partitions[tp]) if tp in broker.partitions else -1
                if low < start:
                    pending = True
                    error = Errors.RequestTimedOutError
                rows.append((tp[0], {"partition_index": tp[1], "low_watermark": low, "error_code": code(error)}))
            else:
                rows.append((tp[0], {"partition_index": tp[1], "low_watermark": -1, "error_code": code(error)}))
        if not pending or waited_ms >= req.timeout_ms:
            return _reply(gw, DeleteRecordsResponse, throttle_time_ms=0, topics=_grouped(rows))
        wire.cluster.sim.schedule(5, answer_when_replicated, waited_ms + 5)

    answer_when_replicated()
