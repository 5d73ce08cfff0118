"""DescribeShareGroupOffsets (90): where a share group stands on each partition (KIP-932) - what
``Admin.listShareGroupOffsets`` and ``kafka-share-groups --describe --offsets`` show.

Asked at the group's coordinator, which reads the share coordinator's summary of the group
(:class:`~course_lib.broker.protocol.ReadShareGroupStateSummaryRequest`): per share-partition
the start offset and leader epoch *as persisted* - the start offset moves on the write after
the one that finished the records below it, so it may trail the leader's by a record or so, as
on Kafka 4.3.1 - and, from v1, the lag: the records from that start offset up to the partition's
high watermark not yet acknowledged or archived. A group that does not exist has no partitions
and no error (measured on Kafka 4.3.1).

AlterShareGroupOffsets (91) and DeleteShareGroupOffsets (92) - ``Admin.alterShareGroupOffsets``
and ``deleteShareGroupOffsets`` - as Kafka 4.4.0's ``KafkaApis`` answers them: READ (alter) or
DELETE (delete) on the group, else GROUP_AUTHORIZATION_FAILED alone; READ on each topic, else
TOPIC_AUTHORIZATION_FAILED for it; alter refuses a topic this broker does not know
(UNKNOWN_TOPIC_OR_PARTITION) before asking; the rest goes to the group's coordinator
(:mod:`course_lib.broker.share_group_offsets`), whose group-level error is the whole answer."""

from __future__ import annotations

from kafka import errors as Errors

from ...broker import protocol as sim
from ...broker.acls import DELETE, DESCRIBE, GROUP, READ, TOPIC
from ..authorization import allowed_names, authorized
from .common import _join, _reply, code, kafka_message
from .coordinators import _coordinator
from .schemas import (
    AlterShareGroupOffsetsResponse,
    DeleteShareGroupOffsetsResponse,
    DescribeShareGroupOffsetsResponse,
)
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


def alter_share_group_offsets(gw, req) -> None:
    group = req.group_id
    if not authorized(gw, READ, GROUP, group):
        return _refuse(gw, AlterShareGroupOffsetsResponse, Errors.GroupAuthorizationFailedError)
    broker = gw.wire.cluster.brokers[gw.broker_id]
    known = {tp[0] for tp in broker.metadata}
    readable = allowed_names(gw, READ, TOPIC, {t.topic_name for t in req.topics})
    asked = [(t.topic_name, p.partition_index, p.start_offset) for t in req.topics for p in t.partitions]
    here = {
        (t, p): Errors.TopicAuthorizationFailedError if t not in readable else Errors.UnknownTopicOrPartitionError
        for t, p, _ in asked
        if t not in readable or t not in known
    }
    offsets = tuple((t, p, o) for t, p, o in asked if (t, p) not in here)

    def answered(error, result) -> None:
        if error is not None:
            return _refuse(gw, AlterShareGroupOffsetsResponse, error, result)
        rows = {tp: (e, None) for tp, e in here.items()} | result
        by_topic: dict = {}
        for (topic, partition), (e, message) in sorted(rows.items()):
            by_topic.setdefault(topic, []).append(
                {
                    "partition_index": partition,
                    "error_code": code(e),
                    "error_message": None if e is None else message or kafka_message(e),
                }
            )
        _reply(
            gw,
            AlterShareGroupOffsetsResponse,
            throttle_time_ms=0,
            error_code=0,
            error_message=None,
            responses=[{"topic_name": t, "topic_id": _id(broker, t), "partitions": ps} for t, ps in by_topic.items()],
        )

    _coordinator(gw, sim.AlterShareGroupOffsetsRequest(group=group, offsets=offsets), answered)


def delete_share_group_offsets(gw, req) -> None:
    group = req.group_id
    if not authorized(gw, DELETE, GROUP, group):
        return _refuse(gw, DeleteShareGroupOffsetsResponse, Errors.GroupAuthorizationFailedError)
    broker = gw.wire.cluster.brokers[gw.broker_id]
    names = list(dict.fromkeys(t.topic_name for t in req.topics))
    readable = allowed_names(gw, READ, TOPIC, names)

    def answered(error, result) -> None:
        if error is not None:
            return _refuse(gw, DeleteShareGroupOffsetsResponse, error, result)
        refused = [(t, (Errors.TopicAuthorizationFailedError, None)) for t in names if t not in readable]
        _reply(
            gw,
            DeleteShareGroupOffsetsResponse,
            throttle_time_ms=0,
            error_code=0,
            error_message=None,
            responses=[
                {
                    "topic_name": t,
                    # Kafka names the id of a topic whose state went only
                    "topic_id": _id(broker, t) if e is None else topic_uuid(0),
                    "error_code": code(e),
                    "error_message": None if e is None else message or kafka_message(e),
                }
                for t, (e, message) in refused + sorted(result.items())
            ],
        )

    topics = tuple(t for t in names if t in readable)
    _coordinator(gw, sim.DeleteShareGroupOffsetsRequest(group=group, topics=topics), answered)


def _refuse(gw, cls, error, result=None) -> None:
    """The whole request refused: the group-level error and its message (Kafka's own unless the
    coordinator gave one), nothing per topic."""
    message = (result or {}).get("message") or kafka_message(error)
    _reply(gw, cls, throttle_time_ms=0, error_code=code(error), error_message=message, responses=[])


def _id(broker, topic: str):
    return topic_uuid(topic_ids(broker).get(topic, 0))
