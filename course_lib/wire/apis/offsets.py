"""OffsetCommit and OffsetFetch: a group's committed offsets."""

from __future__ import annotations

from kafka import errors as Errors
from kafka.protocol.consumer import OffsetCommitResponse, OffsetFetchResponse

from ...broker import protocol as sim
from ...broker.protocol import CommittedOffset
from ...broker.acls import DESCRIBE, GROUP, READ, TOPIC
from ..authorization import allowed_names, authorized
from .common import INTERNAL_TOPICS, _grouped, _join, _reply, code
from .coordinators import _coordinator


def offset_commit(gw, req) -> None:
    def request_for(offsets: dict):
        return sim.OffsetCommitRequest(
            group=req.group_id, member_id=req.member_id, generation=req.generation_id_or_member_epoch, offsets=offsets
        )

    commit_offsets(gw, request_for, OffsetCommitResponse, committed_offsets(req), req.group_id)


def committed_offsets(req) -> dict:
    """An OffsetCommit's or TxnOffsetCommit's partitions: ``{(topic, partition): CommittedOffset}``,
    the committer's leader epoch and metadata kept with each offset (OffsetFetch returns them)."""
    return {
        (t.name, p.partition_index): CommittedOffset(p.committed_offset, p.committed_leader_epoch, p.committed_metadata)
        for t in req.topics
        for p in t.partitions
    }


def commit_offsets(gw, request_for, response_cls, offsets: dict, group_id: str, refused=None) -> None:
    """Send ``request_for(known offsets)`` to the group's coordinator and answer per partition.
    A partition this broker does not know is UNKNOWN_TOPIC_OR_PARTITION and the rest are committed
    (``KafkaApis.handleOffsetCommitRequest`` and ``handleTxnOffsetCommitRequest`` check the
    metadata cache before the coordinator sees the request). Before that, with an authorizer: no
    READ on the group refuses every partition (GROUP_AUTHORIZATION_FAILED; ``refused``, an error
    the caller found first, likewise), no READ on a topic its partitions (TOPIC_AUTHORIZATION_FAILED)."""
    if refused is None and not authorized(gw, READ, GROUP, group_id):
        refused = Errors.GroupAuthorizationFailedError
    readable = allowed_names(gw, READ, TOPIC, {t for t, _ in offsets})
    topics = gw.wire.cluster.brokers[gw.broker_id].topic_configs
    known = {
        tp: o
        for tp, o in offsets.items()
        if tp[0] in readable and tp[0] in topics and 0 <= tp[1] < topics[tp[0]].partitions
    }

    def error_of(tp, error):
        if refused is not None:
            return refused
        if tp[0] not in readable:
            return Errors.TopicAuthorizationFailedError
        return error if tp in known else Errors.UnknownTopicOrPartitionError

    def answer(error, result) -> None:
        rows = [(t, {"partition_index": p, "error_code": code(error_of((t, p), error))}) for t, p in offsets]
        _reply(gw, response_cls, throttle_time_ms=0, topics=_grouped(rows))

    if not known or refused is not None:
        return answer(None, None)
    _coordinator(gw, request_for(known), answer)


def offset_fetch(gw, req) -> None:
    if gw.version >= 8:
        groups = [(g.group_id, g.topics) for g in req.groups]
    else:
        groups = [(req.group_id, req.topics)]
    known_topics = gw.wire.cluster.brokers[gw.broker_id].topic_configs
    results: dict = {}

    def partitions_of(topics) -> list:
        if topics is None:  # every partition the group committed: ask for every partition there is
            return [
                (t, p) for t, c in sorted(known_topics.items()) if t not in INTERNAL_TOPICS for p in range(c.partitions)
            ]
        return [(t.name, p) for t in topics for p in t.partition_indexes]

    def rows(group_id, topics) -> tuple:
        error, committed = results[group_id]
        if error is Errors.GroupAuthorizationFailedError:
            return code(error), []
        unstable = _pending_offsets(gw, group_id) if req.require_stable else set()
        out = []
        described = allowed_names(gw, DESCRIBE, TOPIC, {t for t, _ in partitions_of(topics)})
        for t, p in partitions_of(topics):
            if t not in described:  # KafkaApis: left out of "every partition", refused if named
                if topics is not None:
                    error_code = Errors.TopicAuthorizationFailedError.errno
                    out.append((t, {"partition_index": p, "committed_offset": -1, "committed_leader_epoch": -1,
                                    "metadata": "", "error_code": error_code}))  # fmt: skip
                continue
            offset = committed.get((t, p), -1) if committed else -1
            if topics is None and offset < 0:
                continue
            row = {
                "partition_index": p,
                "committed_offset": offset,
                "committed_leader_epoch": getattr(offset, "leader_epoch", -1),
                "metadata": getattr(offset, "metadata", ""),
            }
            out.append(
                (t, {**row, "error_code": code(Errors.UnstableOffsetCommitError if (t, p) in unstable else None)})
            )
        return code(error), _grouped(out)

    def finish() -> None:
        if gw.version >= 8:
            out = []
            for group_id, topics in groups:
                error, topic_rows = rows(group_id, topics)
                out.append({"group_id": group_id, "topics": topic_rows, "error_code": error})
            return _reply(gw, OffsetFetchResponse, throttle_time_ms=0, groups=out)
        error, topic_rows = rows(*groups[0])
        _reply(gw, OffsetFetchResponse, throttle_time_ms=0, topics=topic_rows, error_code=error)

    for group_id, _topics in groups:  # KafkaApis: DESCRIBE on the group
        if not authorized(gw, DESCRIBE, GROUP, group_id):
            results[group_id] = (Errors.GroupAuthorizationFailedError, None)
    one = _join(len(groups) - len(results), finish)
    for group_id, topics in groups:
        if group_id in results:
            continue

        def fetched(error, result, group_id=group_id):
            results[group_id] = (error, result)
            one()

        _coordinator(gw, sim.OffsetFetchRequest(group=group_id, partitions=partitions_of(topics)), fetched)


def _pending_offsets(gw, group_id: str) -> set:
    """Partitions of ``group_id`` with a transactional offset commit whose transaction has not
    ended: KIP-447's require_stable fetch answers UNSTABLE_OFFSET_COMMIT for them (a retriable
    error: read_committed consumers wait until the transaction's marker lands)."""
    pending = gw.wire.cluster.brokers[gw.broker_id].groups.pending
    return {tp for by_group in pending.values() for tp in by_group.get(group_id, {})}
