"""OffsetCommit and OffsetFetch: a group's committed offsets."""

from __future__ import annotations

from kafka import errors as Errors
from kafka.protocol.consumer import OffsetCommitResponse, OffsetFetchResponse

from ...broker import protocol as sim
from .common import INTERNAL_TOPICS, _commit_answer, _grouped, _join, _reply, code
from .coordinators import _coordinator


def offset_commit(gw, req) -> None:
    offsets = {(t.name, p.partition_index): p.committed_offset for t in req.topics for p in t.partitions}
    request = sim.OffsetCommitRequest(
        group=req.group_id, member_id=req.member_id, generation=req.generation_id_or_member_epoch, offsets=offsets
    )
    _coordinator(gw, request, _commit_answer(gw, OffsetCommitResponse, offsets))


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
        unstable = _pending_offsets(gw, group_id) if req.require_stable else set()
        out = []
        for t, p in partitions_of(topics):
            offset = committed.get((t, p), -1) if committed else -1
            if topics is None and offset < 0:
                continue
            row = {"partition_index": p, "committed_offset": offset, "committed_leader_epoch": -1, "metadata": ""}
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

    one = _join(len(groups), finish)
    for group_id, topics in groups:

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
