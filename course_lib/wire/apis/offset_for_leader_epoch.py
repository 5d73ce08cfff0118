"""OffsetForLeaderEpoch: where a leader epoch's log ends (truncation detection, KIP-320)."""

from __future__ import annotations

from kafka import errors as Errors
from kafka.protocol.consumer import OffsetForLeaderEpochResponse

from ...broker import protocol as sim
from ...broker.acls import DESCRIBE, TOPIC
from ..authorization import allowed_names
from .common import _join, _reply, code


def offset_for_leader_epoch(gw, req) -> None:
    wanted = [(t.topic, p.partition, p.leader_epoch) for t in req.topics for p in t.partitions]
    results: dict = {}

    def finish() -> None:
        by_topic: dict = {}
        for topic, partition, _ in wanted:
            resp = results[(topic, partition)]
            by_topic.setdefault(topic, []).append(
                {
                    "error_code": code(resp.error),
                    "partition": partition,
                    "leader_epoch": resp.epoch,
                    "end_offset": resp.end_offset,
                }
            )
        _reply(
            gw,
            OffsetForLeaderEpochResponse,
            throttle_time_ms=0,
            topics=[{"topic": t, "partitions": parts} for t, parts in by_topic.items()],
        )

    # KafkaApis: DESCRIBE on the topic, else TOPIC_AUTHORIZATION_FAILED
    described = allowed_names(gw, DESCRIBE, TOPIC, {t for t, _, _ in wanted})
    for topic, partition, _ in wanted:
        if topic not in described:
            refused = sim.OffsetsForLeaderEpochResponse(0, (topic, partition), Errors.TopicAuthorizationFailedError)
            results[(topic, partition)] = refused
    one = _join(len(wanted) - len(results), finish)
    for topic, partition, epoch in wanted:
        tp = (topic, partition)
        if tp in results:
            continue

        def got(resp, tp=tp):
            results[tp] = resp
            one()

        gw.ask(sim.OffsetsForLeaderEpochRequest(gw.next_corr(), tp, epoch), got)
