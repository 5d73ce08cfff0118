"""ListOffsets: the ends of a partition's log, or the offset for a timestamp."""

from __future__ import annotations

from kafka.protocol.consumer import ListOffsetsResponse

from kafka import errors as Errors

from ...broker import protocol as sim
from ...broker.acls import DESCRIBE, TOPIC
from ..authorization import allowed_names
from .common import _grouped, _join, _reply, code


LATEST, EARLIEST, MAX_TIMESTAMP, EARLIEST_LOCAL = -1, -2, -3, -4


def list_offsets(gw, req) -> None:
    """The ends of the log come from the simulator's ListOffsets. A timestamp (offsets_for_times)
    or the max-timestamp query is answered once the leader has answered that ListOffsets, from
    its own log up to the end a consumer may read (the simulator's message has no timestamps)."""
    read_committed = bool(req.isolation_level)
    results: dict = {}
    wanted = [(t.name, p.partition_index, p.timestamp) for t in req.topics for p in t.partitions]

    def finish() -> None:
        rows = []
        for topic, partition, _ in wanted:
            error, offset, timestamp = results[(topic, partition)]
            rows.append(
                (
                    topic,
                    {
                        "partition_index": partition,
                        "error_code": code(error),
                        "old_style_offsets": [offset] if error is None else [],
                        "timestamp": timestamp if error is None else -1,
                        "offset": offset if error is None else -1,
                        "leader_epoch": -1,
                    },
                )
            )
        _reply(gw, ListOffsetsResponse, throttle_time_ms=0, topics=_grouped(rows))

    # KafkaApis.handleListOffsetRequest: DESCRIBE on the topic, else TOPIC_AUTHORIZATION_FAILED
    described = allowed_names(gw, DESCRIBE, TOPIC, {t for t, _, _ in wanted})
    for topic, partition, _ in wanted:
        if topic not in described:
            results[(topic, partition)] = (Errors.TopicAuthorizationFailedError, -1, -1)
    one = _join(len(wanted) - len(results), finish)
    for topic, partition, timestamp in wanted:
        tp = (topic, partition)
        if tp in results:
            continue
        by_time = timestamp not in (LATEST, EARLIEST, EARLIEST_LOCAL)

        def got(resp, tp=tp, timestamp=timestamp, by_time=by_time):
            if resp.error is None and by_time:
                results[tp] = (None, *_offset_for_time(gw, tp, timestamp, resp.offset))
            else:
                results[tp] = (resp.error, resp.offset, -1)
            one()

        gw.ask(sim.ListOffsetsRequest(gw.next_corr(), tp, timestamp == LATEST or by_time, read_committed), got)


def _offset_for_time(gw, tp, timestamp: int, end: int) -> tuple[int, int]:
    """Kafka's answer for a timestamp: the first offset whose record's timestamp is at least
    ``timestamp`` (``MAX_TIMESTAMP``: the record with the largest timestamp), or -1 if none."""
    partition = gw.wire.cluster.brokers[gw.broker_id].partitions.get(tp)
    if partition is None:
        return -1, -1
    best = (-1, -1)
    for offset, record, _ in partition.log.records(0, end):  # data records (markers skipped)
        ts = int(record.timestamp_ms)
        if timestamp == MAX_TIMESTAMP:
            if ts > best[1]:
                best = (offset, ts)
        elif ts >= timestamp:
            return offset, ts
    return best
