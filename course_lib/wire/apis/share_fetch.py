"""ShareFetch (78) and ShareAcknowledge (79): records handed out under acquisition locks and
acknowledged one by one (KIP-932), by the simulator's share-partitions on the partition leaders
(course_lib/broker/share_partition.py) - the wire only translates.

What the wire keeps is Kafka's *share session* (``ShareSessionCache``), per broker, member and
group: the partitions a member fetches from, so a fetch names only what changed. Epoch 0 opens
one (acknowledgements in it are INVALID_REQUEST), every later request carries the next epoch
(another is INVALID_SHARE_SESSION_EPOCH, none open SHARE_SESSION_NOT_FOUND), -1 closes it after
its acknowledgements and releases what the member still holds (``releaseSession``). A session
lives in the broker's memory: it dies with the broker's process (its incarnation), and with the
connection that opened it (a killed client's records come back at once, not when their locks
expire: measured on Kafka 4.3.1). With
``share.version`` 0 (share groups not enabled) every share request is UNSUPPORTED_VERSION.

A fetch answers when any partition acquired records or after ``max_wait_ms``. The simulator
long-polls one partition at a time and a parked share fetch *acquires* when it wakes, so a
session of one partition on this broker waits there; a session of several asks them all without
waiting, again every :data:`POLL_MS` until one hands out records (no lock is taken for records
that no answer carries).
"""

from __future__ import annotations

from kafka import errors as Errors

from ...broker import protocol as sim
from ...broker.acls import GROUP, READ, TOPIC
from ...broker.share_partition import REJECT, RENEW
from ..authorization import allowed_names, authorized
from ..records import encode_batches
from .common import _join, _reply, code
from .schemas import ShareAcknowledgeResponse, ShareFetchResponse
from .topic_ids import names_by_uuid, topic_ids, topic_uuid

#: how often a share fetch over several partitions asks them again while it waits
POLL_MS = 50
#: ShareSessionEpoch: 0 opens a session, -1 closes it
INITIAL_EPOCH, FINAL_EPOCH = 0, -1
#: records per partition when a fetch names no limit (the Java client's ``max.poll.records`` default)
DEFAULT_MAX_RECORDS = 500
#: AcknowledgeType 0: an offset with no record to acknowledge (a gap in the log)
GAP = 0
#: the longest member id Kafka takes (``KafkaApis.isMemberIdValid``: a UUID's 36 characters)
MAX_MEMBER_ID = 36


class ShareSessions:
    """(broker id, broker incarnation, group, member) -> [next epoch, partitions, connection]."""

    def __init__(self):
        self._sessions: dict = {}

    def closed(self, conn: str) -> None:
        """The connection ``conn`` (a gateway's node id) closed: the sessions it opened end (the
        broker releases what their members held: ``SharePartitionManager.disconnected``).

        >>> from types import SimpleNamespace
        >>> sessions, broker = ShareSessions(), SimpleNamespace(broker_id=1, incarnation=0)
        >>> sessions.update(broker, "g", "m", 0, added=[("t", 0)], conn="wire-1-1")
        (None, [('t', 0)])
        >>> sessions.closed("wire-1-2"); sessions.update(broker, "g", "m", 1)
        (None, [('t', 0)])
        >>> sessions.closed("wire-1-1"); sessions.update(broker, "g", "m", 2)[0].__name__
        'ShareSessionNotFoundError'
        """
        for key in [k for k, session in self._sessions.items() if session[2] == conn]:
            del self._sessions[key]

    def update(self, broker, group, member, epoch: int, added=(), forgotten=(), conn: str | None = None):
        """The session after a request of ``epoch``: ``(error, partitions)``.

        >>> from types import SimpleNamespace
        >>> sessions, broker = ShareSessions(), SimpleNamespace(broker_id=1, incarnation=0)
        >>> sessions.update(broker, "g", "m", 1)[0].__name__
        'ShareSessionNotFoundError'
        >>> sessions.update(broker, "g", "m", 0, added=[("t", 0)])
        (None, [('t', 0)])
        >>> sessions.update(broker, "g", "m", 2)[0].__name__  # 1 comes next
        'InvalidShareSessionEpochError'
        >>> sessions.update(broker, "g", "m", 1, added=[("t", 1)], forgotten=[("t", 0)])
        (None, [('t', 1)])
        >>> sessions.update(broker, "g", "m", -1), sessions.update(broker, "g", "m", 2)[1]
        ((None, [('t', 1)]), [])
        """
        key = (broker.broker_id, broker.incarnation, group, member)
        if epoch == INITIAL_EPOCH:
            self._sessions[key] = [1, list(dict.fromkeys(added)), conn]
            return None, list(self._sessions[key][1])
        session = self._sessions.get(key)
        if session is None:
            return Errors.ShareSessionNotFoundError, []
        if epoch == FINAL_EPOCH:
            del self._sessions[key]
            return None, session[1]
        if epoch != session[0]:
            return Errors.InvalidShareSessionEpochError, []
        session[0] = epoch + 1 if epoch < 2**31 - 1 else 1
        session[1] = [tp for tp in dict.fromkeys([*session[1], *added]) if tp not in set(forgotten)]
        return None, list(session[1])


def _acknowledgements(batches, highest_type: int) -> tuple | None:
    """Kafka's AcknowledgementBatches as ``(offset, type)`` pairs: one type for the whole range,
    or one per offset; gaps (type 0) name no record. None for batches Kafka refuses
    (``KafkaApis.validateAcknowledgementBatches``: a range backwards or overlapping the one before,
    no types, as many types as neither 1 nor the range, a type it does not know): that partition's
    acknowledgements are INVALID_REQUEST, the rest of the request goes on."""
    out = []
    end = -1
    for b in batches or ():
        types = list(b.acknowledge_types)
        if b.first_offset > b.last_offset or b.first_offset < end or not types:
            return None
        if len(types) > 1 and len(types) != b.last_offset - b.first_offset + 1:
            return None
        if any(not 0 <= t <= highest_type for t in types):
            return None
        for i, offset in enumerate(range(b.first_offset, b.last_offset + 1)):
            kind = types[0] if len(types) == 1 else types[i]
            if kind != GAP:
                out.append((offset, kind))
        end = b.last_offset
    return tuple(out)


def _requested(gw, broker, topics) -> tuple[dict, list]:
    """``(known tp -> acknowledgements or None, unknown (topic id, partition))`` of a request."""
    by_id = names_by_uuid(broker)
    highest = RENEW if gw.version >= 2 else REJECT  # RENEW (KIP-1222) from version 2
    known: dict = {}
    unknown = []
    for t in topics:
        for p in t.partitions:
            if t.topic_id in by_id:
                known[(by_id[t.topic_id], p.partition_index)] = _acknowledgements(p.acknowledgement_batches, highest)
            else:
                unknown.append((t.topic_id, p.partition_index))
    return known, unknown


def _leads(broker, tp) -> bool:
    partition = broker.partitions.get(tp)
    return partition is not None and partition.is_leader


def _leader(broker, tp) -> dict:
    state = broker.metadata.get(tp)
    if state is None or state.leader is None:
        return {"leader_id": -1, "leader_epoch": -1}
    return {"leader_id": state.leader, "leader_epoch": state.leader_epoch}


def _endpoints(gw, broker, tps) -> list:
    """NodeEndpoints: where the leaders named in NOT_LEADER_OR_FOLLOWER answers listen."""
    leaders = sorted({_leader(broker, tp)["leader_id"] for tp in tps} - {-1})
    return [
        {"node_id": b, "host": gw.wire.host, "port": gw.wire.ports[b], "rack": None}
        for b in leaders
        if b in gw.wire.ports
    ]


def _acquired(broker, tp, records) -> tuple[bytes, list]:
    """The records a member now holds as v2 batches (one per run of consecutive offsets) and
    AcquiredRecords ranges (one per run of the same delivery count)."""
    batches: list = []
    ranges: list[dict] = []
    epoch = _leader(broker, tp)["leader_epoch"]
    for offset, record, count in sorted(records, key=lambda r: r[0]):
        if batches and batches[-1].next_offset == offset:
            batches[-1].batch.records.append(record)
        else:
            batches.append(sim.LogBatch(offset, epoch, sim.RecordBatch(records=[record])))
        if ranges and ranges[-1]["last_offset"] == offset - 1 and ranges[-1]["delivery_count"] == count:
            ranges[-1]["last_offset"] = offset
        else:
            ranges.append({"first_offset": offset, "last_offset": offset, "delivery_count": count})
    return encode_batches(batches), ranges


def _grouped_by_id(broker, rows: dict) -> list:
    """``{(topic, partition): row}`` as Kafka's per-topic-id lists."""
    ids = topic_ids(broker)
    by_topic: dict = {}
    for (topic, partition), row in sorted(rows.items()):
        by_topic.setdefault(topic, []).append({"partition_index": partition, **row})
    return [{"topic_id": topic_uuid(ids.get(t, 0)), "partitions": ps} for t, ps in by_topic.items()]


def _unknown_rows(unknown, **extra) -> list:
    by_id: dict = {}
    for topic_id, partition in unknown:
        by_id.setdefault(topic_id, []).append(
            {
                "partition_index": partition,
                "error_code": Errors.UnknownTopicIdError.errno,
                "error_message": None,
                "current_leader": {"leader_id": -1, "leader_epoch": -1},
                **extra,
            }
        )
    return [{"topic_id": t, "partitions": ps} for t, ps in by_id.items()]


def _begin(gw, req, response_cls):
    """What both requests start with: the broker, the group's lock duration, a top-level refusal
    and the request's acknowledgements; None once refused for a missing group or member id."""
    broker = gw.wire.cluster.brokers[gw.broker_id]
    lock_ms = int(broker.shares.settings(req.group_id).record_lock_duration_ms) if req.group_id else 0

    def top_error(error) -> None:
        _top_error(gw, response_cls, error)

    if broker.options.share_version < 1:  # share groups not enabled: Kafka refuses the request
        return top_error(Errors.UnsupportedVersionError)
    if req.group_id is None:
        return top_error(Errors.InvalidRequestError)
    # KafkaApis: READ on the group before anything else is looked at, the member id included
    if not authorized(gw, READ, GROUP, req.group_id):
        return top_error(Errors.GroupAuthorizationFailedError)
    if not req.group_id or not req.member_id or len(req.member_id) > MAX_MEMBER_ID:
        return top_error(Errors.InvalidRequestError)
    acks, unknown = _requested(gw, broker, req.topics)
    return broker, lock_ms, top_error, acks, unknown


def _unreadable(gw, tps) -> set:
    """Those of ``tps`` whose topic this connection may not READ: KafkaApis answers each
    TOPIC_AUTHORIZATION_FAILED, its fetch and its acknowledgements alike, and asks the share
    partition nothing (the session keeps it all the same: it was updated first)."""
    names = {topic for topic, _ in tps}
    allowed = allowed_names(gw, READ, TOPIC, names)
    return {tp for tp in tps if tp[0] not in allowed}


def _refused_row(fetched: bool, acknowledge_error: int) -> dict:
    """A partition refused for its topic's ACLs: only the errors (``ShareFetchResponse.partitionResponse``:
    no leader named, no records; a partition only acknowledged has no fetch error)."""
    return {
        "error_code": Errors.TopicAuthorizationFailedError.errno if fetched else 0,
        "error_message": None,
        "acknowledge_error_code": acknowledge_error,
        "acknowledge_error_message": None,
        "current_leader": {"leader_id": -1, "leader_epoch": -1},
        "records": b"",
        "acquired_records": [],
    }


def share_fetch(gw, req) -> None:
    begun = _begin(gw, req, ShareFetchResponse)
    if begun is None:
        return
    broker, lock_ms, top_error, acks, unknown = begun
    group, member, epoch = req.group_id, req.member_id, req.share_session_epoch
    acking = {tp: a for tp, a in acks.items() if a}
    refused = {tp for tp, a in acks.items() if a is None}
    if (epoch == INITIAL_EPOCH and (acking or refused)) or (epoch == FINAL_EPOCH and len(acking) < len(acks)):
        return top_error(Errors.InvalidRequestError)  # acks in an opening fetch; a fetch in a closing one
    by_id = names_by_uuid(broker)
    forgotten = [(by_id[t.topic_id], p) for t in req.forgotten_topics_data if t.topic_id in by_id for p in t.partitions]
    error, session = gw.wire.share_sessions.update(broker, group, member, epoch, list(acks), forgotten, gw.node_id)
    if error is not None:
        return top_error(error)
    renewing = gw.version >= 2 and req.is_renew_ack
    unreadable = _unreadable(gw, [*session, *acks])
    fetching = [tp for tp in ([] if epoch == FINAL_EPOCH or renewing else session) if tp not in unreadable]
    denied = {tp: a for tp, a in acking.items() if tp in unreadable}
    acking = {tp: a for tp, a in acking.items() if tp not in unreadable}
    refused_fetches = [] if epoch == FINAL_EPOCH or renewing else [tp for tp in session if tp in unreadable]
    asked = list(dict.fromkeys([*fetching, *acking]))
    wait = req.max_wait_ms if len(fetching) == 1 and not acking.keys() - set(fetching) else 0
    answers: dict = {}

    def finish() -> None:
        rows = {}
        for tp in asked:
            resp = answers[tp]
            records, ranges = _acquired(broker, tp, resp.records) if resp.records else (b"", [])
            if not (resp.records or resp.error or resp.ack_error or tp in acks):
                continue
            rows[tp] = {
                "error_code": code(resp.error),
                "error_message": None,
                "acknowledge_error_code": code(resp.ack_error) if tp in acking else _refused(tp in refused),
                "acknowledge_error_message": None,
                "current_leader": _leader(broker, tp),
                "records": records,
                "acquired_records": ranges,
            }
        for tp in dict.fromkeys([*refused_fetches, *denied]):
            ack_error = Errors.TopicAuthorizationFailedError.errno if tp in denied else _refused(tp in refused)
            rows[tp] = _refused_row(tp in refused_fetches, ack_error)
        if epoch == FINAL_EPOCH:
            _release(gw, group, member, session)
        _reply(
            gw,
            ShareFetchResponse,
            throttle_time_ms=0,
            error_code=0,
            error_message=None,
            acquisition_lock_timeout_ms=lock_ms,
            responses=_grouped_by_id(broker, rows)
            + _unknown_rows(
                unknown, acknowledge_error_code=0, acknowledge_error_message=None, records=b"", acquired_records=[]
            ),
            node_endpoints=_endpoints(gw, broker, [tp for tp, r in rows.items() if r["error_code"]]),
        )

    def ask_all(first: bool, waited: float) -> None:
        one = _join(len(asked), lambda: done_round(waited))
        for tp in asked:
            request = sim.ShareFetchRequest(
                gw.next_corr(),
                group,
                member,
                tp,
                (req.max_records if req.max_records > 0 else DEFAULT_MAX_RECORDS) if tp in fetching else 0,
                wait if first else 0,
                acking.get(tp, ()) if first else (),
                batch_size=req.batch_size if req.batch_size > 0 else 0,
                acquire_mode=req.share_acquire_mode if gw.version >= 2 else 0,  # v1: batch_optimized
            )

            def got(resp, tp=tp) -> None:
                answers[tp] = resp if first else _merged(answers[tp], resp)
                one()

            gw.ask(request, got)

    def done_round(waited: float) -> None:
        if wait or waited >= req.max_wait_ms or any(a.records or a.error is not None for a in answers.values()):
            return finish()
        step = min(POLL_MS, req.max_wait_ms - waited)
        gw.wire.cluster.sim.schedule(step, ask_all, False, waited + step)

    if not asked:
        return finish()
    ask_all(True, 0)


def _top_error(gw, response_cls, error) -> None:
    """The whole request refused: ``error`` and nothing else, no message, no lock duration
    (``ShareFetchRequest.getErrorResponse``, ``ShareAcknowledgeRequest.getErrorResponse``)."""
    _reply(
        gw,
        response_cls,
        throttle_time_ms=0,
        error_code=code(error),
        error_message=None,
        acquisition_lock_timeout_ms=0,
        responses=[],
        node_endpoints=[],
    )


def _refused(refused: bool) -> int:
    return Errors.InvalidRequestError.errno if refused else 0


def _merged(before, after):
    """A later poll of a partition: its records and error, the first poll's acknowledgement outcome."""
    return sim.ShareFetchResponse(after.corr, after.tp, after.error, after.records, before.ack_error)


def _release(gw, group, member, tps) -> None:
    """The session closed: what ``member`` holds on its partitions goes back at once."""
    for tp in tps:
        gw.ask(sim.ShareAcknowledgeRequest(gw.next_corr(), group, member, tp, (), close=True), lambda resp: None)


def share_acknowledge(gw, req) -> None:
    begun = _begin(gw, req, ShareAcknowledgeResponse)
    if begun is None:
        return
    broker, lock_ms, top_error, acks, unknown = begun
    group, member, epoch = req.group_id, req.member_id, req.share_session_epoch
    if epoch == INITIAL_EPOCH:
        return top_error(Errors.InvalidShareSessionEpochError)  # acknowledging needs an open session
    error, session = gw.wire.share_sessions.update(broker, group, member, epoch)

    def answer(errors: dict, denied=()) -> None:
        rows = {
            tp: {"error_code": e, "error_message": None, "current_leader": _leader(broker, tp)}
            for tp, e in errors.items()
        }
        for tp in denied:
            rows[tp] = {
                "error_code": Errors.TopicAuthorizationFailedError.errno,
                "error_message": None,
                "current_leader": {"leader_id": -1, "leader_epoch": -1},
            }
        _reply(
            gw,
            ShareAcknowledgeResponse,
            throttle_time_ms=0,
            error_code=0,
            error_message=None,
            acquisition_lock_timeout_ms=lock_ms,
            responses=_grouped_by_id(broker, rows) + _unknown_rows(unknown),
            node_endpoints=_endpoints(gw, broker, [tp for tp, r in rows.items() if r["error_code"]]),
        )

    if error is Errors.ShareSessionNotFoundError and acks and not any(_leads(broker, tp) for tp in acks):
        # a broker restarted after a crash (its sessions gone) that leads none of the partitions
        # answers that, not the session: Kafka 4.4.0 with confluent-kafka, whose acknowledgement of
        # a record held across the leader's crash went to the restarted broker (a follower now)
        # with its session's epoch, got NOT_LEADER_OR_FOLLOWER (the share differential, hold:M:crash)
        return answer({tp: code(Errors.NotLeaderForPartitionError) for tp in acks})
    if error is not None:
        return top_error(error)
    # KafkaApis: the batches are checked first (INVALID_REQUEST), then READ on each topic
    unreadable = _unreadable(gw, acks)
    denied = [tp for tp, a in acks.items() if a is not None and tp in unreadable]
    valid = {tp: a for tp, a in acks.items() if a is not None and tp not in unreadable}
    answers: dict = {}

    def finish() -> None:
        if epoch == FINAL_EPOCH:
            _release(gw, group, member, session)
        errors = {tp: code(resp.error) for tp, resp in answers.items()}
        errors.update({tp: _refused(True) for tp, a in acks.items() if a is None})
        answer(errors, denied)

    one = _join(len(valid), finish)
    for tp, pairs in valid.items():

        def got(resp, tp=tp) -> None:
            answers[tp] = resp
            one()

        gw.ask(sim.ShareAcknowledgeRequest(gw.next_corr(), group, member, tp, pairs), got)


__all__ = ["POLL_MS", "ShareSessions", "share_acknowledge", "share_fetch"]
