"""JoinGroup, SyncGroup, Heartbeat, LeaveGroup, DescribeGroups, ListGroups: classic consumer groups."""

from __future__ import annotations

from kafka import errors as Errors
from kafka.protocol.admin import DescribeGroupsResponse, ListGroupsResponse
from kafka.protocol.consumer import HeartbeatResponse, JoinGroupResponse, LeaveGroupResponse, SyncGroupResponse
from kafka.protocol.consumer.metadata import ConsumerProtocolAssignment, ConsumerProtocolSubscription

from ...broker import protocol as sim
from ...broker.acls import DESCRIBE, GROUP, READ
from ..authorization import authorized, cluster_authorized
from .common import _join, _reply, code
from .coordinators import _coordinator


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
    request = sim.JoinGroupRequest(
        group=req.group_id,
        member_id=req.member_id,
        client_id=gw.client_id or "wire",
        topics=topics,
        session_timeout_ms=req.session_timeout_ms,
        rebalance_timeout_ms=req.rebalance_timeout_ms if req.rebalance_timeout_ms > 0 else None,
        group_instance_id=req.group_instance_id,
    )
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

    if not authorized(gw, READ, GROUP, req.group_id):  # KafkaApis: READ on the group, before the coordinator
        return joined(Errors.GroupAuthorizationFailedError, None)
    options = gw.wire.cluster.options
    if not options.group_min_session_timeout_ms <= req.session_timeout_ms <= options.group_max_session_timeout_ms:
        # GroupCoordinatorService.joinGroup checks the bounds before the group is looked at; the
        # simulator's own clients are not held to them (lessons use 2 s sessions on purpose)
        return joined(Errors.InvalidSessionTimeoutError, None)
    _coordinator(gw, request, joined)


def sync_group(gw, req) -> None:
    groups = gw.wire.groups

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

    if not authorized(gw, READ, GROUP, req.group_id):
        return synced(Errors.GroupAuthorizationFailedError, None)
    # the coordinator checks member and generation as it does for a heartbeat
    _coordinator(gw, _heartbeat_request(req), synced)


def heartbeat(gw, req) -> None:
    if not authorized(gw, READ, GROUP, req.group_id):
        return _reply(gw, HeartbeatResponse, throttle_time_ms=0, error_code=Errors.GroupAuthorizationFailedError.errno)
    _coordinator(
        gw, _heartbeat_request(req), lambda e, r: _reply(gw, HeartbeatResponse, throttle_time_ms=0, error_code=code(e))
    )


def _heartbeat_request(req) -> sim.HeartbeatRequest:
    return sim.HeartbeatRequest(group=req.group_id, member_id=req.member_id, generation=req.generation_id)


def leave_group(gw, req) -> None:
    member_ids = [m.member_id for m in req.members] if gw.version >= 3 else [req.member_id]
    errors: dict = {}
    if not authorized(gw, READ, GROUP, req.group_id):
        error = Errors.GroupAuthorizationFailedError.errno
        return _reply(gw, LeaveGroupResponse, throttle_time_ms=0, error_code=error, members=[])

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

        _coordinator(gw, sim.LeaveGroupRequest(group=req.group_id, member_id=member_id), left)


def describe_groups(gw, req) -> None:
    """Read from the coordinator's state (the simulator has no message for it)."""
    broker = gw.wire.cluster.brokers[gw.broker_id]
    coordinator = broker.groups
    is_coordinator = coordinator.refresh()
    out = []
    for group_id in req.groups:
        if not authorized(gw, DESCRIBE, GROUP, group_id):
            error = Errors.GroupAuthorizationFailedError.errno
            out.append({"error_code": error, "group_id": group_id, "group_state": "", "members": []})
            continue
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
        if not cluster_authorized(gw, DESCRIBE):  # KafkaApis: else only the groups it may DESCRIBE
            groups = {g for g in groups if authorized(gw, DESCRIBE, GROUP, g)}
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
