"""ConsumerGroupDescribe (KIP-848): epochs, members, current and target assignments of
consumer groups, from the simulator's group coordinator. A classic group or an unknown id
answers GROUP_ID_NOT_FOUND, as Kafka does."""

from __future__ import annotations

from kafka import errors as Errors

from ...broker import protocol as sim
from ...broker.acls import DESCRIBE, GROUP
from ..authorization import authorized
from .common import _join, _reply, code
from .coordinators import _coordinator
from .schemas import ConsumerGroupDescribeResponse
from .topic_ids import topic_ids, topic_uuid

#: AuthorizedOperations when the client did not ask for them (Kafka's Integer.MIN_VALUE)
_NOT_ASKED = -(2**31)


def consumer_group_describe(gw, req) -> None:
    broker = gw.wire.cluster.brokers[gw.broker_id]

    def assignment(tps: dict) -> dict:
        ids = topic_ids(broker)
        return {
            "topic_partitions": [
                {"topic_id": topic_uuid(ids.get(t, 0)), "topic_name": t, "partitions": ps}
                for t, ps in sorted(tps.items())
            ]
        }

    def described(found: dict) -> dict:
        return {
            "group_state": found["state"],
            "group_epoch": found["group_epoch"],
            "assignment_epoch": found["assignment_epoch"],
            "assignor_name": found["assignor"],
            "members": [
                {
                    "member_id": m["member_id"],
                    "member_epoch": m["member_epoch"],
                    "instance_id": m["instance_id"],
                    "client_id": m["client_id"],
                    "client_host": "/127.0.0.1",
                    "subscribed_topic_names": m["topics"],
                    "assignment": assignment(m["assignment"]),
                    "target_assignment": assignment(m["target"]),
                    "member_type": 1,  # the consumer protocol (0: classic)
                }
                for m in found["members"]
            ],
        }

    describe_at_coordinator(
        gw, req.group_ids, lambda g: sim.ConsumerGroupDescribeRequest(group=g), ConsumerGroupDescribeResponse, described
    )


def describe_at_coordinator(gw, group_ids, ask, response_cls, described) -> None:
    """Ask the coordinator about each group (``ask(group)``: the simulator's request) and answer
    one row each: Kafka's row of an error (state Dead, epochs -1), or ``described(found)`` over it."""
    names = list(dict.fromkeys(group_ids))
    results: dict = {}

    def row(group_id: str) -> dict:
        error, found = results[group_id]
        out: dict = {
            "error_code": code(error),
            "error_message": None if error is None else error.__name__,
            "group_id": group_id,
            "group_state": "Dead",
            "group_epoch": -1,
            "assignment_epoch": -1,
            "assignor_name": "",
            "members": [],
            "authorized_operations": _NOT_ASKED,
        }
        if error is None and found is not None:
            out.update(described(found))
        return out

    def finish() -> None:
        _reply(gw, response_cls, throttle_time_ms=0, groups=[row(g) for g in names])

    for group in names:  # KafkaApis: DESCRIBE on the group
        if not authorized(gw, DESCRIBE, GROUP, group):
            results[group] = (Errors.GroupAuthorizationFailedError, None)
    one = _join(len(names) - len(results), finish)
    for group in names:
        if group in results:
            continue

        def done(error, result, group=group) -> None:
            results[group] = (error, result)
            one()

        _coordinator(gw, ask(group), done)
