"""DescribeShareGroupOffsets (90): where a share group stands on each partition (KIP-932) - what
``Admin.listShareGroupOffsets`` and ``kafka-share-groups --describe --offsets`` show.

Asked at the group's coordinator, which reads the share coordinator's summary of the group
(:class:`~course_lib.broker.protocol.ReadShareGroupStateSummaryRequest`): per share-partition
the start offset and leader epoch *as persisted* - the start offset moves on the write after
the one that finished the records below it, so it may trail the leader's by a record or so, as
on Kafka 4.3.1 - and, from v1, the lag: the records from that start offset up to the partition's
high watermark not yet acknowledged or archived. A group that does not exist has no partitions
and no error (measured on Kafka 4.3.1)."""

from __future__ import annotations

from kafka import errors as Errors

from ...broker import protocol as sim
from ...broker.acls import DESCRIBE, GROUP, TOPIC
from ..authorization import allowed_names, authorized
from .common import _join, _reply, code, kafka_message
from .coordinators import _coordinator
from .schemas import DescribeShareGroupOffsetsResponse
from .topic_ids import topic_ids, topic_uuid

#: what the group's coordinator answers for a group it does not have: no partitions, no error
_NO_GROUP = Errors.GroupIdNotFoundError


def describe_share_group_offsets(gw, req) -> None:
    broker = gw.wire.cluster.brokers[gw.broker_id]
    names = list(dict.fromkeys(g.group_id for g in req.groups))
    asked = {
        g.group_id: None if g.topics is None else {(t.topic_name, p) for t in g.topics for p in t.partitions}
        for g in req.groups
    }
    results: dict = {}

    def finish() -> None:
        _reply(
            gw,
            DescribeShareGroupOffsetsResponse,
            throttle_time_ms=0,
            groups=[_row(gw, g, asked[g], *results[g]) for g in names],
        )

    # KafkaApis: DESCRIBE on the group (GROUP_AUTHORIZATION_FAILED, no message), then on each topic
    refused = [g for g in names if not authorized(gw, DESCRIBE, GROUP, g)]
    for group in refused:
        results[group] = (Errors.GroupAuthorizationFailedError, ())
    one = _join(len(names) - len(refused), finish)
    for group in (g for g in names if g not in refused):

        def summarized(resp, group=group) -> None:
            error = resp if isinstance(resp, type) else resp.error
            results[group] = (error, () if error is not None else resp.partitions)
            one()

        def at_coordinator(error, _, group=group) -> None:
            if error is not None:
                results[group] = (None if error is _NO_GROUP else error, ())
                return one()
            broker.shares.ask_share_coordinator(sim.ReadShareGroupStateSummaryRequest(0, group), summarized)

        _coordinator(gw, sim.ShareGroupDescribeRequest(group=group), at_coordinator)


def _row(gw, group: str, asked: set | None, error, partitions: tuple) -> dict:
    """The group's answer: each share-partition asked for (None: all) with its start offset,
    leader epoch and lag (-1 when the high watermark is not known here). Of a topic the client
    may not DESCRIBE: nothing when it asked for all, each partition it named refused when it
    named it, after the others, without a topic id (``KafkaApis.describeShareGroupOffsetsForGroup``)."""
    broker = gw.wire.cluster.brokers[gw.broker_id]
    ids = topic_ids(broker)
    named = {p[0] for p in partitions} | {t for t, _ in asked or ()}
    visible = allowed_names(gw, DESCRIBE, TOPIC, named)
    topics: dict = {}
    for topic, partition, epoch, start, done in partitions:
        if (asked is not None and (topic, partition) not in asked) or topic not in visible:
            continue
        hw = _high_watermark(gw, (topic, partition))
        topics.setdefault(topic, []).append(
            {
                "partition_index": partition,
                "start_offset": start,
                "leader_epoch": epoch,
                "lag": hw - start - done if hw is not None and start >= 0 else -1,
                "error_code": 0,
                "error_message": None,
            }
        )
    if error is not None:
        # a refused group: the error alone, without a message (an unknown group: its name)
        message = None if error is Errors.GroupAuthorizationFailedError else error.__name__
        return {"group_id": group, "topics": [], "error_code": code(error), "error_message": message}
    hidden = _by_topic(p for p in asked or () if p[0] not in visible)
    return {
        "group_id": group,
        "topics": [
            {"topic_name": t, "topic_id": topic_uuid(ids.get(t, 0)), "partitions": ps}
            for t, ps in sorted(topics.items())
        ]
        + [
            {"topic_name": t, "topic_id": topic_uuid(0), "partitions": [_refused(p) for p in ps]}
            for t, ps in hidden.items()
        ],
        "error_code": 0,
        "error_message": None,
    }


def _by_topic(tps) -> dict:
    out: dict = {}
    for topic, partition in sorted(tps):
        out.setdefault(topic, []).append(partition)
    return out


def _refused(partition: int) -> dict:
    """A partition of a topic the client may not DESCRIBE, as Kafka answers it."""
    error = Errors.TopicAuthorizationFailedError
    return {
        "partition_index": partition,
        "start_offset": -1,
        "leader_epoch": 0,
        "lag": -1,
        "error_code": error.errno,
        "error_message": kafka_message(error),
    }


def _high_watermark(gw, tp) -> int | None:
    """The partition's high watermark at its leader (Kafka asks the leader for the latest offset)."""
    cluster = gw.wire.cluster
    state = cluster.brokers[gw.broker_id].metadata.get(tp)
    leader = None if state is None or state.leader is None else cluster.brokers.get(state.leader)
    partition = None if leader is None or not leader.alive else leader.partitions.get(tp)
    return None if partition is None else partition.log.hw
