"""Fetch: records read from the partition leaders, fenced by leader epoch (KIP-320), with the
diverging epoch of Fetch v12+ (KIP-595): a fetch whose last fetched epoch ended earlier in the
leader's log gets no records but where that epoch ended, so the client truncates there. Fetch
v13+ names topics by id (the Java client 4.x uses it once Metadata gives topic ids)."""

from __future__ import annotations

from kafka import errors as Errors
from kafka.protocol.consumer import FetchResponse

from ...broker import protocol as sim
from ...broker.acls import READ, TOPIC
from ..authorization import allowed_names
from ..records import encode_batches
from .common import _reply, code, log_start_offset
from .topic_ids import names_by_uuid


def fetch(gw, req) -> None:
    """Kafka answers a fetch when any partition has data (or max_wait_ms passes); the simulator
    long-polls per partition. So every partition is asked with the full wait, and once one answers
    with data or an error the others are asked again without waiting."""
    read_committed = bool(req.isolation_level)
    # v13+ names topics by id (topic_ids): resolved in the answering broker's metadata; an id it
    # does not know is answered UNKNOWN_TOPIC_ID
    by_id = names_by_uuid(gw.wire.cluster.brokers[gw.broker_id]) if gw.version >= 13 else {}
    names = {id(t): t.topic if gw.version < 13 else by_id.get(t.topic_id, str(t.topic_id)) for t in req.topics}
    wire_ids = {names[id(t)]: t.topic_id for t in req.topics} if gw.version >= 13 else {}
    # refused before any read: an unknown id; a topic the client may not READ (KafkaApis.handleFetchRequest)
    known = [t for t in req.topics if gw.version < 13 or t.topic_id in by_id]
    readable = allowed_names(gw, READ, TOPIC, {names[id(t)] for t in known})
    unknown = [
        (
            names[id(t)],
            p.partition,
            Errors.UnknownTopicIdError if t not in known else Errors.TopicAuthorizationFailedError,
        )
        for t in req.topics
        for p in t.partitions
        if t not in known or names[id(t)] not in readable
    ]
    topics = [t for t in known if names[id(t)] in readable]
    wanted = [(names[id(t)], p.partition, p.fetch_offset) for t in topics for p in t.partitions]
    epochs = {(names[id(t)], p.partition): p.current_leader_epoch for t in topics for p in t.partitions}
    # v12+: the epoch of the record before fetch_offset, as the client saw it (-1: unknown)
    last_epochs = {
        (names[id(t)], p.partition): getattr(p, "last_fetched_epoch", -1) if gw.version >= 12 else -1
        for t in topics
        for p in t.partitions
    }
    answers: dict = {}
    state = {"hurry": False}

    def ask(topic, partition, offset, wait):
        tp = (topic, partition)
        gw.ask(
            sim.ConsumerFetchRequest(gw.next_corr(), tp, offset, read_committed, wait),
            lambda resp: got(tp, resp),
        )

    def got(tp, resp) -> None:
        if tp in answers:
            return  # a long poll that answered after its partition was asked again
        answers[tp] = resp = _fence(gw, tp, epochs[tp], resp)
        if len(answers) == len(wanted):
            return finish()
        if (resp.error is not None or resp.batches) and not state["hurry"]:
            state["hurry"] = True
            for topic, partition, offset in wanted:
                if (topic, partition) not in answers:
                    ask(topic, partition, offset, 0)

    def finish() -> None:
        by_topic: dict = {}
        for topic, partition, offset in wanted:
            resp = answers[(topic, partition)]
            diverging = _diverging_epoch(gw, (topic, partition), offset, last_epochs[(topic, partition)], resp)
            if diverging is not None:
                by_topic.setdefault(topic, []).append(diverging)
                continue
            by_topic.setdefault(topic, []).append(
                {
                    "partition_index": partition,
                    "error_code": code(resp.error),
                    "high_watermark": resp.high_watermark if resp.error is None else -1,
                    "last_stable_offset": resp.last_stable_offset if resp.error is None else -1,
                    "log_start_offset": log_start_offset(gw, (topic, partition)) if resp.error is None else -1,
                    "aborted_transactions": (
                        [{"producer_id": pid, "first_offset": first} for pid, first in resp.aborted]
                        if read_committed and resp.error is None
                        else None
                    ),
                    "preferred_read_replica": -1,
                    "records": encode_batches(resp.batches) if resp.batches else b"",
                }
            )
        for topic, partition, error in unknown:
            by_topic.setdefault(topic, []).append(
                {
                    "partition_index": partition,
                    "error_code": error.errno,
                    "high_watermark": -1,
                    "last_stable_offset": -1,
                    "log_start_offset": -1,
                    "records": b"",
                }
            )
        _reply(
            gw,
            FetchResponse,
            throttle_time_ms=0,
            error_code=0,
            session_id=0,  # no incremental fetch sessions: clients send full fetches
            responses=[
                {"topic": t, "partitions": parts} if gw.version < 13 else {"topic_id": wire_ids[t], "partitions": parts}
                for t, parts in by_topic.items()
            ],
        )

    if not wanted:
        return finish()
    for topic, partition, offset in wanted:
        ask(topic, partition, offset, req.max_wait_ms)


def _fence(gw, tp, current_leader_epoch: int, resp):
    """KIP-320: a fetch that names the leader epoch it expects is refused by a leader of another
    epoch - FENCED_LEADER_EPOCH if the client's is older, UNKNOWN_LEADER_EPOCH if newer (the
    simulator's consumer fetch carries no epoch: checked against the leader when it answers)."""
    if resp.error is not None or current_leader_epoch < 0:
        return resp
    partition = gw.wire.cluster.brokers[gw.broker_id].partitions.get(tp)
    epoch = partition.leader_epoch if partition is not None else -1
    if current_leader_epoch == epoch:
        return resp
    error = Errors.FencedLeaderEpochError if current_leader_epoch < epoch else Errors.UnknownLeaderEpochError
    return sim.ConsumerFetchResponse(resp.corr, tp, error)


def _diverging_epoch(gw, tp, fetch_offset: int, last_fetched_epoch: int, resp) -> dict | None:
    """KIP-595, as Kafka's ``Partition.readRecords``: when the leader's log ends the client's
    last fetched epoch before ``fetch_offset`` (or knows only older epochs), the answer carries
    no records but that epoch's end (``diverging_epoch``); an epoch older than the whole log is
    OFFSET_OUT_OF_RANGE. kafka-python 3.0.12 checks its position with OffsetForLeaderEpoch only at
    the start of a poll, so a fetch sent after a leader change later in the same poll relies on
    this answer to notice the truncation. None: read on."""
    # Kafka looks for divergence before it reads: a fetch offset past the log end diverges too
    if (resp.error is not None and resp.error is not Errors.OffsetOutOfRangeError) or last_fetched_epoch < 0:
        return None
    partition = gw.wire.cluster.brokers[gw.broker_id].partitions.get(tp)
    if partition is None or not partition.is_leader:
        return None
    epoch, end = partition.log.end_offset_for_epoch(last_fetched_epoch)
    hw, lso = partition.log.hw, partition.readable_end(True)
    base = {
        "partition_index": tp[1],
        "high_watermark": hw,
        "last_stable_offset": lso,
        "log_start_offset": partition.log.start_offset,
    }
    base["records"] = b""
    if epoch < 0 or end < 0:
        return {**base, "error_code": Errors.OffsetOutOfRangeError.errno, "high_watermark": -1}
    if epoch < last_fetched_epoch or end < fetch_offset:
        return {**base, "error_code": 0, "diverging_epoch": {"epoch": epoch, "end_offset": end}}
    return None
