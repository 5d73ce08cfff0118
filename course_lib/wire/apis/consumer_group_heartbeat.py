"""ConsumerGroupHeartbeat (KIP-848): the consumer group protocol's one request, answered by the
simulator's group coordinator (course_lib/broker/consumer_group.py). Topics travel by id here
(:mod:`.topic_ids`), as on Kafka.

v0 lets the coordinator name a joining member (an empty member id: a UUID from the simulation's
seeded random source); from v1 the client names itself and an empty id is INVALID_REQUEST, as
Kafka's ``ConsumerGroupHeartbeatRequest`` validation answers.
"""

from __future__ import annotations

import uuid

from kafka import errors as Errors

from ...broker import protocol as sim
from ...broker.acls import GROUP, READ
from ..authorization import authorized
from .common import _reply, code
from .coordinators import _coordinator
from .schemas import ConsumerGroupHeartbeatResponse
from .topic_ids import topic_ids, topic_number, topic_uuid


def consumer_group_heartbeat(gw, req) -> None:
    broker = gw.wire.cluster.brokers[gw.broker_id]
    if not authorized(gw, READ, GROUP, req.group_id):  # KafkaApis: READ on the group
        error = Errors.GroupAuthorizationFailedError
        return heartbeat_answer(gw, broker, error, req.member_id, req.member_epoch, 0, None)
    member_id = req.member_id
    if not member_id and req.member_epoch == 0 and gw.version == 0:
        member_id = str(uuid.UUID(int=gw.wire.cluster.sim.rng.getrandbits(128), version=4))
    if not member_id:
        return heartbeat_answer(gw, broker, Errors.InvalidRequestError, req.member_id, req.member_epoch, 0, None)
    names = {number: name for name, number in topic_ids(broker).items()}
    owned = None
    if req.topic_partitions is not None:
        owned = tuple(
            (names[n], p)
            for t in req.topic_partitions
            if (n := topic_number(t.topic_id)) in names
            for p in t.partitions
        )
    request = sim.ConsumerGroupHeartbeatRequest(
        group=req.group_id,
        member_id=member_id,
        member_epoch=req.member_epoch,
        client_id=gw.client_id or "wire",
        topics=tuple(req.subscribed_topic_names) if req.subscribed_topic_names is not None else None,
        owned=owned,
        assignor=req.server_assignor,
        rebalance_timeout_ms=req.rebalance_timeout_ms,
        instance_id=req.instance_id,
    )

    def answered(error, result) -> None:
        if result is None:  # not the coordinator, or the API is off: the error alone
            return heartbeat_answer(gw, broker, error, member_id, req.member_epoch, 0, None)
        heartbeat_answer(
            gw, broker, error, result.member_id, result.member_epoch, result.heartbeat_interval_ms, result.assignment
        )

    _coordinator(gw, request, answered)


def class_name(error) -> str | None:
    return None if error is None else error.__name__


def heartbeat_answer(
    gw,
    broker,
    error,
    member_id,
    member_epoch,
    interval_ms,
    assignment,
    response_cls=ConsumerGroupHeartbeatResponse,
    message=class_name,
) -> None:
    """A heartbeat's answer (``assignment``: topic -> partitions, or None); the share group
    heartbeat's has the same fields. ``message(error)``: its error message."""
    ids = topic_ids(broker)
    _reply(
        gw,
        response_cls,
        throttle_time_ms=0,
        error_code=code(error),
        error_message=message(error),
        member_id=member_id,
        member_epoch=member_epoch,
        heartbeat_interval_ms=int(interval_ms),
        assignment=None
        if error is not None or assignment is None
        else {
            "topic_partitions": [
                {"topic_id": topic_uuid(ids.get(t, 0)), "partitions": sorted(ps)}
                for t, ps in sorted(assignment.items())
            ]
        },
    )
