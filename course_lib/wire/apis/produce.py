"""Produce: records appended by the partition leaders (acks 0, 1 and all)."""

from __future__ import annotations

from kafka import errors as Errors
from kafka.protocol.producer import ProduceResponse

from ...broker import protocol as sim
from ...broker.acls import TOPIC, TRANSACTIONAL_ID, WRITE
from ..authorization import allowed_names, authorized
from ..records import InvalidRecords, decode_produce
from .common import _reply, code, log, log_start_offset
from .topic_ids import names_by_uuid


def produce(gw, req) -> None:
    batches: dict = {}
    refused: dict = {}
    by_id = names_by_uuid(gw.wire.cluster.brokers[gw.broker_id]) if gw.version >= 13 else {}
    wire_ids: dict = {}  # v13+: topic name -> the id the client named it by (answered with it)
    for topic in req.topic_data:
        name = topic.name if gw.version < 13 else by_id.get(topic.topic_id)
        if name is None:  # an id this broker does not know (Kafka: UNKNOWN_TOPIC_ID)
            name = str(topic.topic_id)
            refused.update({(name, part.index): Errors.UnknownTopicIdError for part in topic.partition_data})
            wire_ids[name] = topic.topic_id
            continue
        wire_ids[name] = getattr(topic, "topic_id", None)
        for part in topic.partition_data:
            tp = (name, part.index)
            try:
                batches[tp] = decode_produce(part.records, gw.version)
            except InvalidRecords as exc:
                log.warning("wire: %s sent invalid records for %s: %s", gw.node_id, tp, exc)
                refused[tp] = exc.error
    # KafkaApis.handleProduceRequest: a transactional producer needs WRITE on its transactional id
    # (else the whole request is refused), every topic WRITE (else TOPIC_AUTHORIZATION_FAILED)
    if req.transactional_id is not None and not authorized(gw, WRITE, TRANSACTIONAL_ID, req.transactional_id):
        refused = {tp: Errors.TransactionalIdAuthorizationFailedError for tp in [*batches, *refused]}
        batches = {}
    writable = allowed_names(gw, WRITE, TOPIC, {t for t, _ in batches})
    refused.update({tp: Errors.TopicAuthorizationFailedError for tp in batches if tp[0] not in writable})
    batches = {tp: b for tp, b in batches.items() if tp[0] in writable}
    if req.acks not in (-1, 0, 1):
        refused = {tp: Errors.InvalidRequiredAcksError for tp in [*batches, *refused]}
        batches = {}
    # Produce v12+ is a transactions-v2 producer's (KIP-890): its partitions join the transaction
    # by this request, the leader adding them at the coordinator before it appends
    version_tv = 2 if gw.version >= 12 else 1
    if req.acks == 0:
        if batches:
            gw.tell(sim.ProduceRequest(gw.next_corr(), 0, req.timeout_ms, batches, req.transactional_id, version_tv))
        if refused:
            # KafkaApis.handleProduceRequest: an acks=0 request with an error has no answer to
            # carry it, so the connection is closed (the producer reconnects and refreshes)
            return gw.close()
        return gw.no_reply()

    def answer(results: dict) -> None:
        by_topic: dict = {}
        for (t, p), result in sorted(results.items()):
            error, base = (
                (result, -1) if not isinstance(result, sim.PartitionResult) else (result.error, result.base_offset)
            )
            by_topic.setdefault(t, []).append(
                {
                    "index": p,
                    "error_code": code(error),
                    "base_offset": base if error is None else -1,
                    "log_append_time_ms": -1,
                    "log_start_offset": log_start_offset(gw, (t, p)) if error is None else -1,
                    "record_errors": [],
                    "error_message": None,
                }
            )
        _reply(
            gw,
            ProduceResponse,
            responses=[
                {"name": t, "partition_responses": parts}
                if gw.version < 13
                else {"topic_id": wire_ids[t], "partition_responses": parts}
                for t, parts in by_topic.items()
            ],
            throttle_time_ms=0,
        )

    if not batches:
        return answer(refused)
    gw.ask(
        sim.ProduceRequest(gw.next_corr(), req.acks, req.timeout_ms, batches, req.transactional_id, version_tv),
        lambda resp: answer({**refused, **resp.results}),
    )
