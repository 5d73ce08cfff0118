"""One handler per Kafka API: a decoded kafka-python request in, the simulator's messages out,
their answers folded into a kafka-python response.

Every handler runs on the simulation thread, for one :class:`~course_lib.wire.gateway.Gateway`
(one client connection to one broker). It asks that broker with the simulator's own messages
(``gw.ask``) and answers once (``gw.reply``), so replication, the high watermark, min ISR,
producer state, transactions and groups are the simulator's mechanisms, not a second model.

:data:`SUPPORTED` is what ApiVersions advertises: only what is implemented, at Kafka 4.3.1's
versions capped where a later version needs what the simulator has not (topic ids: Produce
v13 and Fetch v13; transactions v2, KIP-890: AddPartitionsToTxn v4).
"""

from __future__ import annotations

import logging
import uuid

from kafka import errors as Errors
from kafka.protocol.admin import (
    CreateTopicsRequest,
    CreateTopicsResponse,
    DescribeConfigsRequest,
    DescribeConfigsResponse,
    DescribeGroupsRequest,
    DescribeGroupsResponse,
    ListGroupsRequest,
    ListGroupsResponse,
)
from kafka.protocol.consumer import (
    FetchRequest,
    FetchResponse,
    HeartbeatRequest,
    HeartbeatResponse,
    JoinGroupRequest,
    JoinGroupResponse,
    LeaveGroupRequest,
    LeaveGroupResponse,
    ListOffsetsRequest,
    ListOffsetsResponse,
    OffsetCommitRequest,
    OffsetCommitResponse,
    OffsetFetchRequest,
    OffsetFetchResponse,
    OffsetForLeaderEpochRequest,
    OffsetForLeaderEpochResponse,
    SyncGroupRequest,
    SyncGroupResponse,
)
from kafka.protocol.consumer.metadata import ConsumerProtocolAssignment, ConsumerProtocolSubscription
from kafka.protocol.api_header import RequestHeader, ResponseClassRegistry
from kafka.protocol.metadata import (
    ApiVersionsRequest,
    ApiVersionsResponse,
    FindCoordinatorRequest,
    FindCoordinatorResponse,
    MetadataRequest,
    MetadataResponse,
)
from kafka.protocol.producer import (
    AddOffsetsToTxnRequest,
    AddOffsetsToTxnResponse,
    AddPartitionsToTxnRequest,
    AddPartitionsToTxnResponse,
    EndTxnRequest,
    EndTxnResponse,
    InitProducerIdRequest,
    InitProducerIdResponse,
    ProduceRequest,
    ProduceResponse,
    TxnOffsetCommitRequest,
    TxnOffsetCommitResponse,
)

from ..broker import protocol as sim
from ..broker.group_coordinator import OFFSETS_TOPIC
from ..broker.txn_coordinator import TXN_TOPIC
from .records import InvalidRecords, decode_produce, encode_batches

log = logging.getLogger("course_lib.wire")

CLUSTER_ID = "course-sim-wire"
#: course_lib.real.proxy.SPOILED_ANSWER_DELAY_S: how late the answer to a spoiled request comes
SPOILED_ANSWER_DELAY_MS = 300
NO_TOPIC_ID = uuid.UUID(int=0)
INTERNAL_TOPICS = frozenset({OFFSETS_TOPIC, TXN_TOPIC})


def build(cls, version=None, **values):
    """A kafka-python message or nested struct from plain values (lists of dicts for arrays)."""
    fields = cls._struct.fields
    kwargs = {}
    for name, value in values.items():
        field = fields[name]
        if isinstance(value, list) and field.is_struct_array():
            value = [build(field.data_class, **v) if isinstance(v, dict) else v for v in value]
        elif isinstance(value, dict) and field.is_struct():
            value = build(field.data_class, **value)
        kwargs[name] = value
    return cls(version=version, **kwargs) if version is not None else cls(**kwargs)


def code(error) -> int:
    """Kafka's error code for a simulator error (a ``kafka.errors`` class, or None)."""
    if error is None:
        return 0
    if isinstance(error, type) and issubclass(error, Errors.BrokerResponseError):
        return error.errno  # type: ignore[attr-defined]  # every broker error class has one
    return Errors.UnknownServerError.errno


def _reply(gw, cls, **values) -> None:
    gw.reply(build(cls, gw.version, **values))


def _grouped(rows, name_key: str = "name", list_key: str = "partitions") -> list:
    """``[(topic, row), ...]`` as Kafka's per-topic lists: ``[{name_key: topic, list_key: [row, ...]}]``
    (topics in first-seen order)."""
    by_topic: dict = {}
    for topic, row in rows:
        by_topic.setdefault(topic, []).append(row)
    return [{name_key: t, list_key: r} for t, r in by_topic.items()]


def _commit_answer(gw, response_cls, offsets: dict):
    """The answer to an offset commit (plain or transactional): one error for every partition."""

    def answer(error, result) -> None:
        rows = [(t, {"partition_index": p, "error_code": code(error)}) for t, p in offsets]
        _reply(gw, response_cls, throttle_time_ms=0, topics=_grouped(rows))

    return answer


def _join(count: int, done):
    """Call ``done()`` after ``count`` calls of the returned function (at once if ``count`` is 0)."""
    state = {"left": count}

    def one():
        state["left"] -= 1
        if state["left"] == 0:
            done()

    if count == 0:
        done()
    return one


# ---- what is not implemented ----
class Unsupported:
    """A request for an API or version this front end does not implement (answered in order)."""

    def __init__(self, header):
        self.header = header


def loose_header(frame: memoryview, api_key: int, version: int):
    """The header of a request we will not decode: key, version, correlation id (and the client
    id when it reads), enough to answer UNSUPPORTED_VERSION."""
    correlation_id = int.from_bytes(frame[4:8], "big", signed=True)
    return RequestHeader(
        request_api_key=api_key, request_api_version=version, correlation_id=correlation_id, client_id=None
    )


def unsupported_answer(gw, header) -> None:
    """Kafka's answer to an API or version it does not support: ApiVersions gets a v0 answer
    with UNSUPPORTED_VERSION and the versions it does support (so the client can retry); other
    APIs get UNSUPPORTED_VERSION as their top-level error where they have one, else the
    connection is closed (Kafka cannot build an answer for a version it does not know)."""
    key, version = header.request_api_key, header.request_api_version
    name = REQUEST_CLASSES[key].__name__ if key in REQUEST_CLASSES else f"api key {key}"
    log.warning("wire: unsupported %s v%d from %s", name, version, gw.node_id)
    error = Errors.UnsupportedVersionError.errno
    if key == 18:
        response = build(
            ApiVersionsResponse,
            0,
            error_code=error,
            api_keys=[
                {"api_key": k, "min_version": lo, "max_version": hi} for k, (lo, hi, _) in sorted(SUPPORTED.items())
            ],
        )
        return gw.reply_as(response, header, 0)
    response_cls = ResponseClassRegistry._response_class_registry.get(key)
    if response_cls is not None:
        response_cls = response_cls[None]  # the registry may hold a versioned class (FetchResponse_v12)
    if (
        response_cls is not None
        and 0 <= version <= response_cls.max_version
        and "error_code" in response_cls._struct.fields
    ):
        return gw.reply_as(build(response_cls, version, error_code=error), header, version)
    gw.close()


# ---- ApiVersions ------------------------------------------------------------------------------------
def api_versions(gw, req) -> None:
    _reply(
        gw,
        ApiVersionsResponse,
        error_code=0,
        api_keys=[
            {"api_key": key, "min_version": lo, "max_version": hi} for key, (lo, hi, _) in sorted(SUPPORTED.items())
        ],
        throttle_time_ms=0,
    )


# ---- Metadata ---------------------------------------------------------------------------------------
def metadata(gw, req) -> None:
    gw.ask(sim.MetadataRequest(gw.next_corr()), lambda resp: _metadata_answer(gw, req, resp))


def _metadata_answer(gw, req, resp: sim.MetadataResponse) -> None:
    wire = gw.wire
    live = tuple(resp.brokers)
    view = wire.cluster.brokers[gw.broker_id].metadata  # the answering broker's own view (ISR, replicas)
    if req.topics is None or (gw.version == 0 and not req.topics):
        names = sorted(resp.topics)
    else:
        names = [t.name for t in req.topics]
    topics = []
    for name in names:
        if name not in resp.topics:
            topics.append({"error_code": Errors.UnknownTopicOrPartitionError.errno, "name": name, "partitions": []})
            continue
        partitions = []
        for p in range(resp.topics[name]):
            leader, epoch = resp.leaders.get((name, p), (None, -1))
            state = view.get((name, p))
            replicas = list(state.replicas) if state else ([leader] if leader is not None else [])
            isr = list(state.isr) if state else replicas
            partitions.append(
                {
                    "error_code": 0 if leader is not None else Errors.LeaderNotAvailableError.errno,
                    "partition_index": p,
                    "leader_id": -1 if leader is None else leader,
                    "leader_epoch": epoch,
                    "replica_nodes": replicas,
                    "isr_nodes": isr,
                    "offline_replicas": [r for r in replicas if r not in live],
                }
            )
        topics.append(
            {
                "error_code": 0,
                "name": name,
                "topic_id": NO_TOPIC_ID,
                "is_internal": name in INTERNAL_TOPICS,
                "partitions": partitions,
            }
        )
    _reply(
        gw,
        MetadataResponse,
        throttle_time_ms=0,
        brokers=[{"node_id": b, "host": wire.host, "port": wire.ports[b], "rack": None} for b in live],
        cluster_id=CLUSTER_ID,
        controller_id=min(live) if live else -1,
        topics=topics,
    )


# ---- Produce ----------------------------------------------------------------------------------------
def produce(gw, req) -> None:
    batches: dict = {}
    refused: dict = {}
    for topic in req.topic_data:
        for part in topic.partition_data:
            tp = (topic.name, part.index)
            try:
                batches[tp] = decode_produce(part.records)
            except InvalidRecords as exc:
                log.warning("wire: %s sent invalid records for %s: %s", gw.node_id, tp, exc)
                refused[tp] = Errors.CorruptRecordError
    if batches and gw.wire.nemesis.take_spoiled(gw.broker_id):
        # the lab proxy's spoiled request: refused with a retriable error whose answer comes late
        refused.update({tp: Errors.NotEnoughReplicasError for tp in batches})
        batches = {}
        gw.hold_answers(SPOILED_ANSWER_DELAY_MS)
    if req.acks not in (-1, 0, 1):
        refused = {tp: Errors.InvalidRequiredAcksError for tp in [*batches, *refused]}
        batches = {}
    if req.acks == 0:
        if batches:
            gw.tell(sim.ProduceRequest(gw.next_corr(), 0, req.timeout_ms, batches, req.transactional_id))
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
                    "log_start_offset": 0,
                    "record_errors": [],
                    "error_message": None,
                }
            )
        _reply(
            gw,
            ProduceResponse,
            responses=[{"name": t, "partition_responses": parts} for t, parts in by_topic.items()],
            throttle_time_ms=0,
        )

    if not batches:
        return answer(refused)
    gw.ask(
        sim.ProduceRequest(gw.next_corr(), req.acks, req.timeout_ms, batches, req.transactional_id),
        lambda resp: answer({**refused, **resp.results}),
    )


# ---- Fetch ------------------------------------------------------------------------------------------
def fetch(gw, req) -> None:
    """Kafka answers a fetch when any partition has data (or max_wait_ms passes); the simulator
    long-polls per partition. So every partition is asked with the full wait, and once one answers
    with data or an error the others are asked again without waiting."""
    read_committed = bool(req.isolation_level)
    wanted = [(t.topic, p.partition, p.fetch_offset) for t in req.topics for p in t.partitions]
    epochs = {(t.topic, p.partition): p.current_leader_epoch for t in req.topics for p in t.partitions}
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
        for topic, partition, _ in wanted:
            resp = answers[(topic, partition)]
            by_topic.setdefault(topic, []).append(
                {
                    "partition_index": partition,
                    "error_code": code(resp.error),
                    "high_watermark": resp.high_watermark if resp.error is None else -1,
                    "last_stable_offset": resp.last_stable_offset if resp.error is None else -1,
                    "log_start_offset": 0 if resp.error is None else -1,
                    "aborted_transactions": (
                        [{"producer_id": pid, "first_offset": first} for pid, first in resp.aborted]
                        if read_committed and resp.error is None
                        else None
                    ),
                    "preferred_read_replica": -1,
                    "records": encode_batches(resp.batches) if resp.batches else b"",
                }
            )
        _reply(
            gw,
            FetchResponse,
            throttle_time_ms=0,
            error_code=0,
            session_id=0,  # no incremental fetch sessions: clients send full fetches
            responses=[{"topic": t, "partitions": parts} for t, parts in by_topic.items()],
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


# ---- ListOffsets ------------------------------------------------------------------------------------
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

    one = _join(len(wanted), finish)
    for topic, partition, timestamp in wanted:
        tp = (topic, partition)
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


# ---- OffsetForLeaderEpoch ---------------------------------------------------------------------------
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

    one = _join(len(wanted), finish)
    for topic, partition, epoch in wanted:
        tp = (topic, partition)

        def got(resp, tp=tp):
            results[tp] = resp
            one()

        gw.ask(sim.OffsetsForLeaderEpochRequest(gw.next_corr(), tp, epoch), got)


# ---- coordinators -----------------------------------------------------------------------------------
def find_coordinator(gw, req) -> None:
    key_type = "transaction" if req.key_type == 1 else "group"
    keys = list(req.coordinator_keys) if gw.version >= 4 else [req.key]
    found: dict = {}

    def finish() -> None:
        rows = []
        for key in keys:
            error, broker = found[key]
            rows.append(
                {
                    "key": key,
                    "node_id": -1 if broker is None else broker,
                    "host": "" if broker is None else gw.wire.host,
                    "port": -1 if broker is None else gw.wire.ports[broker],
                    "error_code": code(error),
                    "error_message": None,
                }
            )
        if gw.version >= 4:
            return _reply(gw, FindCoordinatorResponse, throttle_time_ms=0, coordinators=rows)
        row = rows[0]
        _reply(
            gw,
            FindCoordinatorResponse,
            throttle_time_ms=0,
            error_code=row["error_code"],
            error_message=None,
            node_id=row["node_id"],
            host=row["host"],
            port=row["port"],
        )

    one = _join(len(keys), finish)
    for key in keys:

        def got(resp, key=key):
            found[key] = (resp.error, resp.broker_id)
            one()

        gw.ask(sim.FindCoordinatorRequest(gw.next_corr(), key, key_type), got)


def _coordinator(gw, api: str, args: dict, then) -> None:
    """Ask this broker's group/transaction coordinator; ``then(error, result)``."""
    gw.ask(sim.CoordinatorRequest(gw.next_corr(), api, args), lambda resp: then(resp.error, resp.result))


# ---- groups -----------------------------------------------------------------------------------------
def join_group(gw, req) -> None:
    """The simulator's coordinator assigns partitions itself (range assignor) when the rebalance
    completes; the wire answer names the first member leader, and SyncGroup hands every member
    what the coordinator decided (whatever the leader's client computed)."""
    topics: list = []
    protocol = req.protocols[0].name if req.protocols else None
    for p in req.protocols:
        try:
            topics = list(ConsumerProtocolSubscription.decode(p.metadata).topics)
            protocol = p.name
            break
        except Exception:  # noqa: BLE001 - a protocol we cannot read: try the next one
            continue
    args = {
        "group": req.group_id,
        "member_id": req.member_id,
        "client_id": gw.client_id or "wire",
        "topics": topics,
        "session_timeout_ms": req.session_timeout_ms,
        "rebalance_timeout_ms": req.rebalance_timeout_ms if req.rebalance_timeout_ms > 0 else None,
        "group_instance_id": req.group_instance_id,
    }
    groups = gw.wire.groups

    def joined(error, result) -> None:
        if error is not None:
            return _reply(
                gw,
                JoinGroupResponse,
                throttle_time_ms=0,
                error_code=code(error),
                generation_id=-1,
                protocol_name=None,
                leader="",
                member_id=req.member_id,
                members=[],
            )
        member_id, generation = result["member_id"], result["generation"]
        groups.joined(req.group_id, member_id, generation, result["assignment"], topics, protocol)
        members = result["members"]
        leader = members[0] if members else member_id
        _reply(
            gw,
            JoinGroupResponse,
            throttle_time_ms=0,
            error_code=0,
            generation_id=generation,
            protocol_type="consumer",
            protocol_name=protocol,
            leader=leader,
            member_id=member_id,
            members=(
                [
                    {"member_id": m, "group_instance_id": None, "metadata": groups.subscription(req.group_id, m)}
                    for m in members
                ]
                if leader == member_id
                else []
            ),
        )

    _coordinator(gw, "join_group", args, joined)


def sync_group(gw, req) -> None:
    groups = gw.wire.groups
    args = {"group": req.group_id, "member_id": req.member_id, "generation": req.generation_id}

    def synced(error, result) -> None:
        assignment = b""
        if error is None:
            known = groups.assignment(req.group_id, req.member_id, req.generation_id)
            if known is None:
                error = Errors.IllegalGenerationError
            else:
                assignment = known
        _reply(
            gw,
            SyncGroupResponse,
            throttle_time_ms=0,
            error_code=code(error),
            protocol_type="consumer",
            protocol_name=groups.protocol(req.group_id, req.member_id),
            assignment=assignment,
        )

    # the coordinator checks member and generation as it does for a heartbeat
    _coordinator(gw, "heartbeat", args, synced)


def heartbeat(gw, req) -> None:
    args = {"group": req.group_id, "member_id": req.member_id, "generation": req.generation_id}
    _coordinator(
        gw, "heartbeat", args, lambda e, r: _reply(gw, HeartbeatResponse, throttle_time_ms=0, error_code=code(e))
    )


def leave_group(gw, req) -> None:
    member_ids = [m.member_id for m in req.members] if gw.version >= 3 else [req.member_id]
    errors: dict = {}

    def finish() -> None:
        _reply(
            gw,
            LeaveGroupResponse,
            throttle_time_ms=0,
            error_code=max((code(e) for e in errors.values()), default=0),
            members=[
                {"member_id": m, "group_instance_id": None, "error_code": code(errors.get(m))} for m in member_ids
            ],
        )

    one = _join(len(member_ids), finish)
    for member_id in member_ids:

        def left(error, result, member_id=member_id):
            errors[member_id] = error
            one()

        _coordinator(gw, "leave_group", {"group": req.group_id, "member_id": member_id}, left)


def offset_commit(gw, req) -> None:
    offsets = {(t.name, p.partition_index): p.committed_offset for t in req.topics for p in t.partitions}
    args = {
        "group": req.group_id,
        "member_id": req.member_id,
        "generation": req.generation_id_or_member_epoch,
        "offsets": offsets,
    }

    _coordinator(gw, "offset_commit", args, _commit_answer(gw, OffsetCommitResponse, offsets))


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

        _coordinator(gw, "offset_fetch", {"group": group_id, "partitions": partitions_of(topics)}, fetched)


def _pending_offsets(gw, group_id: str) -> set:
    """Partitions of ``group_id`` with a transactional offset commit whose transaction has not
    ended: KIP-447's require_stable fetch answers UNSTABLE_OFFSET_COMMIT for them (a retriable
    error: read_committed consumers wait until the transaction's marker lands)."""
    pending = gw.wire.cluster.brokers[gw.broker_id].groups.pending
    return {tp for by_group in pending.values() for tp in by_group.get(group_id, {})}


def describe_groups(gw, req) -> None:
    """Read from the coordinator's state (the simulator has no message for it)."""
    broker = gw.wire.cluster.brokers[gw.broker_id]
    coordinator = broker.groups
    is_coordinator = coordinator.refresh()
    out = []
    for group_id in req.groups:
        if not is_coordinator:
            out.append({"error_code": Errors.NotCoordinatorError.errno, "group_id": group_id, "members": []})
            continue
        g = coordinator.groups.get(group_id)
        state = "Dead" if g is None else g.state
        members = []
        for m in [] if g is None else sorted(g.members.values(), key=lambda m: m.member_id):
            members.append(
                {
                    "member_id": m.member_id,
                    "group_instance_id": m.instance_id,
                    "client_id": m.client,
                    "client_host": "/127.0.0.1",
                    "member_metadata": gw.wire.groups.subscription(group_id, m.member_id),
                    "member_assignment": _assignment_bytes(m.assignment),
                }
            )
        out.append(
            {
                "error_code": 0,
                "group_id": group_id,
                "group_state": state,
                "protocol_type": "consumer" if g is not None else "",
                "protocol_data": (gw.wire.groups.protocol(group_id, None) or "range") if members else "",
                "members": members,
            }
        )
    _reply(gw, DescribeGroupsResponse, throttle_time_ms=0, groups=out)


def list_groups(gw, req) -> None:
    broker = gw.wire.cluster.brokers[gw.broker_id]
    coordinator = broker.groups
    rows = []
    if coordinator.refresh():
        groups = set(coordinator.groups) | set(coordinator.offsets)
        for group_id in sorted(groups):
            g = coordinator.groups.get(group_id)
            rows.append(
                {
                    "group_id": group_id,
                    "protocol_type": "consumer",
                    "group_state": g.state if g is not None else "Empty",
                    "group_type": "classic",
                }
            )
    _reply(gw, ListGroupsResponse, throttle_time_ms=0, error_code=0, groups=rows)


def _assignment_bytes(assignment) -> bytes:
    by_topic: dict = {}
    for t, p in assignment:
        by_topic.setdefault(t, []).append(p)
    return bytes(
        ConsumerProtocolAssignment(
            version=0,
            assigned_partitions=[
                ConsumerProtocolAssignment.TopicPartition(topic=t, partitions=sorted(ps))
                for t, ps in sorted(by_topic.items())
            ],
            user_data=None,
        ).encode(version=0)
    )


class GroupDirectory:
    """What the wire front end remembers of each member between JoinGroup and SyncGroup: its
    subscription (for the leader's member list) and the assignment the coordinator decided."""

    def __init__(self):
        self._members: dict = {}  # (group, member) -> (generation, assignment bytes, topics, protocol)

    def joined(self, group, member_id, generation, assignment, topics, protocol) -> None:
        self._members[(group, member_id)] = (generation, _assignment_bytes(assignment), list(topics), protocol)

    def assignment(self, group, member_id, generation):
        entry = self._members.get((group, member_id))
        return entry[1] if entry is not None and entry[0] == generation else None

    def protocol(self, group, member_id):
        if member_id is None:
            return next((e[3] for (g, _), e in self._members.items() if g == group), None)
        entry = self._members.get((group, member_id))
        return entry[3] if entry else None

    def subscription(self, group, member_id) -> bytes:
        entry = self._members.get((group, member_id))
        topics = entry[2] if entry else []
        return bytes(ConsumerProtocolSubscription(version=0, topics=topics, user_data=None).encode(version=0))


# ---- producer ids and transactions ------------------------------------------------------------------
def init_producer_id(gw, req) -> None:
    def answer(error, pid, epoch) -> None:
        _reply(
            gw,
            InitProducerIdResponse,
            throttle_time_ms=0,
            error_code=code(error),
            producer_id=pid if error is None else -1,
            producer_epoch=epoch if error is None else -1,
        )

    if req.transactional_id is None:
        gw.ask(
            sim.InitProducerIdRequest(gw.next_corr()),
            lambda resp: answer(resp.error, resp.producer_id, resp.producer_epoch),
        )
        return
    args = {"transactional_id": req.transactional_id, "transaction_timeout_ms": req.transaction_timeout_ms}
    _coordinator(
        gw,
        "init_producer_id",
        args,
        lambda e, r: answer(e, r["producer_id"] if r else -1, r["producer_epoch"] if r else -1),
    )


def add_partitions_to_txn(gw, req) -> None:
    partitions = [(t.name, p) for t in req.v3_and_below_topics for p in t.partitions]
    args = {
        "transactional_id": req.v3_and_below_transactional_id,
        "producer_id": req.v3_and_below_producer_id,
        "producer_epoch": req.v3_and_below_producer_epoch,
        "partitions": [list(tp) for tp in partitions],
    }

    def added(error, result) -> None:
        rows = [(t, {"partition_index": p, "partition_error_code": code(error)}) for t, p in partitions]
        _reply(
            gw,
            AddPartitionsToTxnResponse,
            throttle_time_ms=0,
            results_by_topic_v3_and_below=_grouped(rows, list_key="results_by_partition"),
        )

    _coordinator(gw, "add_partitions", args, added)


def add_offsets_to_txn(gw, req) -> None:
    """The group's offsets partition joins the transaction (one ``__consumer_offsets`` partition
    in the simulator)."""
    args = {
        "transactional_id": req.transactional_id,
        "producer_id": req.producer_id,
        "producer_epoch": req.producer_epoch,
        "partitions": [[OFFSETS_TOPIC, 0]],
    }
    _coordinator(
        gw,
        "add_partitions",
        args,
        lambda e, r: _reply(gw, AddOffsetsToTxnResponse, throttle_time_ms=0, error_code=code(e)),
    )


def end_txn(gw, req) -> None:
    args = {
        "transactional_id": req.transactional_id,
        "producer_id": req.producer_id,
        "producer_epoch": req.producer_epoch,
        "commit": bool(req.committed),
    }
    _coordinator(gw, "end_txn", args, lambda e, r: _reply(gw, EndTxnResponse, throttle_time_ms=0, error_code=code(e)))


def txn_offset_commit(gw, req) -> None:
    offsets = {(t.name, p.partition_index): p.committed_offset for t in req.topics for p in t.partitions}
    args = {
        "group": req.group_id,
        "member_id": req.member_id if gw.version >= 3 else "",
        "generation": req.generation_id if gw.version >= 3 else -1,
        "offsets": offsets,
        "producer_id": req.producer_id,
        "producer_epoch": req.producer_epoch,
        "transactional_id": req.transactional_id,
    }

    _coordinator(gw, "txn_offset_commit", args, _commit_answer(gw, TxnOffsetCommitResponse, offsets))


# ---- admin ------------------------------------------------------------------------------------------
def create_topics(gw, req) -> None:
    """Topics are created by the controller (in the simulator a direct call: it has no
    CreateTopics message); the answer waits until this broker has the new topic's metadata, so
    the client's next metadata request finds it."""
    wire = gw.wire
    rows = []
    created = []
    for topic in req.topics:
        configs = {c.name: c.value for c in topic.configs}
        error, message = wire.create_topic_now(
            topic.name,
            topic.num_partitions,
            topic.replication_factor,
            configs,
            validate_only=req.validate_only,
        )
        if error is None and not req.validate_only:
            created.append(topic.name)
        config = wire.cluster.controller.configs.get(topic.name)
        rows.append(
            {
                "name": topic.name,
                "topic_id": NO_TOPIC_ID,
                "error_code": code(error),
                "error_message": message,
                "topic_config_error_code": 0,
                "num_partitions": config.partitions if config and error is None else -1,
                "replication_factor": config.replication_factor if config and error is None else -1,
                "configs": [],
            }
        )
    broker = wire.cluster.brokers[gw.broker_id]

    def answer_when_known(waited_ms: float = 0) -> None:
        if not gw.alive:
            return
        if all(t in broker.topic_configs for t in created) or waited_ms >= req.timeout_ms:
            return _reply(gw, CreateTopicsResponse, throttle_time_ms=0, topics=rows)
        wire.cluster.sim.schedule(1, answer_when_known, waited_ms + 1)

    answer_when_known()


def describe_configs(gw, req) -> None:
    controller = gw.wire.cluster.controller
    options = gw.wire.cluster.options
    out = []
    for res in req.resources:
        if res.resource_type == 2:  # topic
            config = controller.configs.get(res.resource_name)
            if config is None:
                out.append(_config_result(res, Errors.UnknownTopicOrPartitionError, {}))
                continue
            values = {
                "min.insync.replicas": str(config.min_insync_replicas),
                "unclean.leader.election.enable": str(config.unclean_leader_election_enable).lower(),
                "cleanup.policy": "delete",
            }
        elif res.resource_type == 4:  # broker
            values = {
                "min.insync.replicas": str(options.min_insync_replicas),
                "default.replication.factor": str(options.default_replication_factor),
                "unclean.leader.election.enable": str(options.unclean_leader_election_enable).lower(),
                "replica.lag.time.max.ms": str(int(options.replica_lag_time_max_ms)),
                "group.initial.rebalance.delay.ms": str(int(options.group_initial_rebalance_delay_ms)),
            }
        else:
            out.append(_config_result(res, Errors.InvalidRequestError, {}))
            continue
        if res.configuration_keys is not None:
            values = {k: v for k, v in values.items() if k in res.configuration_keys}
        out.append(_config_result(res, None, values))
    _reply(gw, DescribeConfigsResponse, throttle_time_ms=0, results=out)


def _config_result(res, error, values: dict) -> dict:
    return {
        "error_code": code(error),
        "error_message": None,
        "resource_type": res.resource_type,
        "resource_name": res.resource_name,
        "configs": [
            {
                "name": k,
                "value": v,
                "read_only": False,
                "config_source": 1 if res.resource_type == 2 else 5,
                "is_default": False,
                "is_sensitive": False,
                "synonyms": [],
                "config_type": 0,
                "documentation": None,
            }
            for k, v in sorted(values.items())
        ],
    }


#: api key -> (min version, max version, handler): what ApiVersions advertises
SUPPORTED = {
    ProduceRequest.API_KEY: (3, 11, produce),  # v12+: transactions v2 (KIP-890), v13: topic ids
    FetchRequest.API_KEY: (4, 12, fetch),  # v13+: topic ids
    ListOffsetsRequest.API_KEY: (1, 11, list_offsets),
    MetadataRequest.API_KEY: (0, 12, metadata),  # v13 adds a top-level error code only
    OffsetCommitRequest.API_KEY: (2, 9, offset_commit),  # v10: topic ids
    OffsetFetchRequest.API_KEY: (1, 9, offset_fetch),  # v10: topic ids
    FindCoordinatorRequest.API_KEY: (0, 6, find_coordinator),
    JoinGroupRequest.API_KEY: (0, 9, join_group),
    HeartbeatRequest.API_KEY: (0, 4, heartbeat),
    LeaveGroupRequest.API_KEY: (0, 5, leave_group),
    SyncGroupRequest.API_KEY: (0, 5, sync_group),
    DescribeGroupsRequest.API_KEY: (0, 5, describe_groups),
    ListGroupsRequest.API_KEY: (0, 4, list_groups),
    ApiVersionsRequest.API_KEY: (0, 4, api_versions),
    CreateTopicsRequest.API_KEY: (2, 7, create_topics),
    InitProducerIdRequest.API_KEY: (0, 5, init_producer_id),
    OffsetForLeaderEpochRequest.API_KEY: (2, 4, offset_for_leader_epoch),
    AddPartitionsToTxnRequest.API_KEY: (0, 3, add_partitions_to_txn),  # v4+: transactions v2
    AddOffsetsToTxnRequest.API_KEY: (0, 4, add_offsets_to_txn),
    EndTxnRequest.API_KEY: (0, 4, end_txn),  # v5: transactions v2
    TxnOffsetCommitRequest.API_KEY: (0, 4, txn_offset_commit),  # v5: transactions v2
    DescribeConfigsRequest.API_KEY: (1, 4, describe_configs),
}

#: api key -> request class, for every API kafka-python knows (to name what we refuse)
REQUEST_CLASSES = {
    cls.API_KEY: cls
    for cls in (
        ProduceRequest,
        FetchRequest,
        ListOffsetsRequest,
        MetadataRequest,
        OffsetCommitRequest,
        OffsetFetchRequest,
        FindCoordinatorRequest,
        JoinGroupRequest,
        HeartbeatRequest,
        LeaveGroupRequest,
        SyncGroupRequest,
        DescribeGroupsRequest,
        ListGroupsRequest,
        ApiVersionsRequest,
        CreateTopicsRequest,
        InitProducerIdRequest,
        OffsetForLeaderEpochRequest,
        AddPartitionsToTxnRequest,
        AddOffsetsToTxnRequest,
        EndTxnRequest,
        TxnOffsetCommitRequest,
        DescribeConfigsRequest,
    )
}


#: handlers that read the broker's (or controller's) state instead of sending a simulator message
ANSWERED_BY_THE_BROKER_ITSELF = frozenset({api_versions, create_topics, describe_configs, describe_groups, list_groups})


def dispatch(gw, header, request) -> None:
    gw.version = header.request_api_version
    if isinstance(request, Unsupported):
        return unsupported_answer(gw, header)
    handler = SUPPORTED[header.request_api_key][2]
    if handler in ANSWERED_BY_THE_BROKER_ITSELF:
        # still the broker's work: one network latency away, held while it is paused (SIGSTOP),
        # gone with a crash - the broker's own timers do exactly that
        broker = gw.wire.cluster.brokers[gw.broker_id]
        broker.schedule_timer(gw.wire.cluster.network.latency_ms, handler, gw, request)
        return
    handler(gw, request)
