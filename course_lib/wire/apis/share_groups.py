"""ShareGroupHeartbeat (76) and ShareGroupDescribe (77): share group membership (KIP-932),
answered by the simulator's share group coordinator (course_lib/broker/share_group.py).
Topics travel by id (:mod:`.topic_ids`), as on Kafka.

Since Kafka 4.1 (version 1, the only one 4.3.1 speaks) the client names itself: an empty member
id is INVALID_REQUEST, and so is a join (epoch 0) without a subscription, as Kafka's
``ShareGroupHeartbeatRequest`` validation (``GroupMetadataManager.throwIfShareGroupHeartbeatRequestIsInvalid``)
answers.

Error messages as Kafka 4.4.0 sends them: none for what ``KafkaApis`` refuses before the
coordinator (authorization, an empty member id), the coordinator's exception message otherwise.
"""

from __future__ import annotations

from kafka import errors as Errors

from ...broker import protocol as sim
from ...broker.acls import DESCRIBE, GROUP, READ, TOPIC
from ..authorization import allowed_names, authorized
from .consumer_group_describe import describe_at_coordinator
from .common import kafka_message
from .consumer_group_heartbeat import heartbeat_answer
from .coordinators import _coordinator
from .schemas import ShareGroupDescribeResponse, ShareGroupHeartbeatResponse
from .share_fetch import MAX_MEMBER_ID
from .topic_ids import topic_ids, topic_uuid


def share_group_heartbeat(gw, req) -> None:
    broker = gw.wire.cluster.brokers[gw.broker_id]
    if not authorized(gw, READ, GROUP, req.group_id):  # KafkaApis: READ on the group, first
        error = Errors.GroupAuthorizationFailedError
        return _heartbeat_answer(gw, broker, error, req.member_id, req.member_epoch, 0, None)
    if not req.member_id or len(req.member_id) > MAX_MEMBER_ID:
        return _heartbeat_answer(gw, broker, Errors.InvalidRequestError, req.member_id, req.member_epoch, 0, None)
    topics = set(req.subscribed_topic_names or ())
    if len(allowed_names(gw, DESCRIBE, TOPIC, topics)) < len(topics):  # then DESCRIBE on every topic named
        return _heartbeat_answer(gw, broker, Errors.TopicAuthorizationFailedError, None, 0, 0, None)
    joining = req.member_epoch == 0
    if joining and not req.subscribed_topic_names:
        error = Errors.InvalidRequestError
        message = "SubscribedTopicNames must be set in first request."
        return _heartbeat_answer(gw, broker, error, req.member_id, req.member_epoch, 0, None, message)
    request = sim.ShareGroupHeartbeatRequest(
        group=req.group_id,
        member_id=req.member_id,
        member_epoch=req.member_epoch,
        client_id=gw.client_id or "wire",
        topics=tuple(req.subscribed_topic_names) if req.subscribed_topic_names is not None else None,
    )

    def answered(error, result) -> None:
        message = _coordinator_message(error, req)
        if result is None:  # not the coordinator, an unknown member: the error alone
            return _heartbeat_answer(gw, broker, error, req.member_id, req.member_epoch, 0, None, message)
        _heartbeat_answer(
            gw,
            broker,
            error,
            result["member_id"],
            result["member_epoch"],
            result.get("heartbeat_interval_ms", 0),
            result.get("assignment"),
            message,
        )

    _coordinator(gw, request, answered)


def _by_topic(tps) -> dict:
    out: dict = {}
    for topic, partition in tps:
        out.setdefault(topic, []).append(partition)
    return {t: sorted(ps) for t, ps in sorted(out.items())}


def _coordinator_message(error, req) -> str | None:
    """The message of the coordinator's exception (``GroupMetadataManager``), else Kafka's
    message of the error."""
    if error is None:
        return None
    if error is Errors.UnknownMemberIdError:
        return f"Member {req.member_id} is not a member of group {req.group_id}."
    return kafka_message(error)


def _heartbeat_answer(
    gw, broker, error, member_id, member_epoch, interval_ms, assignment, message: str | None = None
) -> None:
    assigned = None if assignment is None else _by_topic(assignment)
    heartbeat_answer(
        gw,
        broker,
        error,
        member_id,
        member_epoch,
        interval_ms,
        assigned,
        ShareGroupHeartbeatResponse,
        lambda _error: message,
    )


def share_group_describe(gw, req) -> None:
    """What ``Admin.describeShareGroups`` and ``kafka-share-groups --describe`` show: the epoch,
    the state and every member with its assignment. An unknown group is GROUP_ID_NOT_FOUND."""
    broker = gw.wire.cluster.brokers[gw.broker_id]

    def described(found: dict) -> dict:
        ids = topic_ids(broker)
        return {
            "group_state": found["state"],
            "group_epoch": found["group_epoch"],
            "assignment_epoch": found["group_epoch"],  # assigned at once, server-side
            "assignor_name": "simple",  # Kafka's share group assignor (SimpleAssignor)
            "members": [
                {
                    "member_id": member_id,
                    "member_epoch": found["group_epoch"],
                    "client_id": m["client_id"],
                    "client_host": "/127.0.0.1",
                    "subscribed_topic_names": list(m.get("topics", ())),
                    "assignment": {
                        "topic_partitions": [
                            {"topic_id": topic_uuid(ids.get(t, 0)), "topic_name": t, "partitions": ps}
                            for t, ps in _by_topic(m["assignment"]).items()
                        ]
                    },
                }
                for member_id, m in found["members"].items()
            ],
        }

    describe_at_coordinator(
        gw, req.group_ids, lambda g: sim.ShareGroupDescribeRequest(group=g), ShareGroupDescribeResponse, described
    )
