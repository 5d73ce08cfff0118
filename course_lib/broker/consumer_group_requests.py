"""The group coordinator's side of ConsumerGroupHeartbeat and ConsumerGroupDescribe (KIP-848):
the state machine is :mod:`.consumer_group`; this module finds or creates the group, keeps
classic and consumer groups apart as Kafka's ``GroupMetadataManager`` does, fences members on
time, and puts what the group did into the cluster's trace.

- A group id is either a classic group or a consumer group. A consumer member joining (epoch 0)
  an *empty* classic group replaces it (``maybeDeleteEmptyClassicGroup``; committed offsets
  stay); a classic group with members answers ``GROUP_ID_NOT_FOUND`` ("is not a consumer
  group" - Kafka 4 upgrades it online instead when ``group.consumer.migration.policy`` allows,
  which the simulator does not model). The other way round, a JoinGroup to a consumer group
  with members answers ``INCONSISTENT_GROUP_PROTOCOL``; an empty one is replaced.
- A heartbeat with epoch > 0 for a group the coordinator does not know answers
  ``UNKNOWN_MEMBER_ID``, where Kafka's ``getOrMaybeCreateConsumerGroup`` answers
  ``GROUP_ID_NOT_FOUND`` - deliberately: Kafka replays its groups from ``__consumer_offsets``
  after a coordinator failover, the simulator keeps them in memory, so here an unknown group is
  almost always one a failover lost, and the Java client treats GROUP_ID_NOT_FOUND as fatal
  (``AbstractHeartbeatRequestManager``) but UNKNOWN_MEMBER_ID as "rejoin".
- ``group.version`` 0 (``ClusterOptions(features={"group.version": 0})``): the API is not
  enabled - ``UNSUPPORTED_VERSION``.
"""

from __future__ import annotations

from kafka import errors as Errors

from .consumer_group import ConsumerGroup, Heartbeat, HeartbeatAnswer
from .protocol import ConsumerGroupDescribeRequest, ConsumerGroupHeartbeatRequest


def consumer_group_heartbeat(coord, src: str, req: ConsumerGroupHeartbeatRequest) -> None:
    broker = coord.broker
    if broker.options.group_version < 1:
        return coord.respond(src, req, Errors.UnsupportedVersionError)
    group = coord.consumer_groups.get(req.group)
    if group is None:
        classic = coord.groups.get(req.group)
        if classic is not None and classic.members:
            error: type | None = Errors.GroupIdNotFoundError
        elif req.member_epoch != 0:
            error = Errors.UnknownMemberIdError  # a group a failover lost (see above)
        else:
            error = None
        if error is not None:
            answer = HeartbeatAnswer(error, req.member_id, req.member_epoch, 0)
            return coord.respond(src, req, answer.error, answer)
        coord.groups.pop(req.group, None)  # an empty classic group gives way
        group = coord.consumer_groups[req.group] = ConsumerGroup(
            req.group,
            lambda topic: getattr(broker.topic_configs.get(topic), "partitions", None),
            broker.options.group_consumer_session_timeout_ms,
            broker.options.group_consumer_heartbeat_interval_ms,
            broker.options.group_consumer_assignment_interval_ms,
        )
    answer = group.heartbeat(
        broker.sim.now,
        Heartbeat(
            req.member_id,
            req.member_epoch,
            topics=req.topics,
            owned=req.owned,
            assignor=req.assignor,
            rebalance_timeout_ms=req.rebalance_timeout_ms,
            client_id=req.client_id,
            instance_id=req.instance_id,
        ),
    )
    _trace(coord, group)
    _schedule_expiry(coord, group)
    coord.respond(src, req, answer.error, answer)


def consumer_group_describe(coord, src: str, req: ConsumerGroupDescribeRequest) -> None:
    group = coord.consumer_groups.get(req.group)
    if group is None:
        return coord.respond(src, req, Errors.GroupIdNotFoundError)
    coord.respond(src, req, None, group.describe())


def refuse_classic_join(coord, group_id: str):
    """A classic JoinGroup's verdict on ``group_id`` (None: go ahead)."""
    group = coord.consumer_groups.get(group_id)
    if group is None:
        return None
    if group.members:
        return Errors.InconsistentGroupProtocolError
    del coord.consumer_groups[group_id]  # an empty consumer group gives way
    return None


def validate_commit(coord, group_id: str, member_id: str, member_epoch: int):
    """An offset commit to a consumer group carries the member epoch (OffsetCommit v9's
    ``GenerationIdOrMemberEpoch``). Returns ``(handled, error)``."""
    group = coord.consumer_groups.get(group_id)
    if group is None:
        return False, None
    return True, group.validate_commit(member_id, member_epoch)


def _schedule_expiry(coord, group: ConsumerGroup) -> None:
    deadline = group.next_deadline()
    if deadline is not None:
        coord.broker.schedule_timer(max(0.0, deadline - coord.broker.sim.now), _expire, coord, group.group_id)


def _expire(coord, group_id: str) -> None:
    group = coord.consumer_groups.get(group_id)
    if group is None or coord.partition() is None:
        return
    if group.expire(coord.broker.sim.now):
        _trace(coord, group)


def _trace(coord, group: ConsumerGroup) -> None:
    for _, event, detail in group.log:
        coord.broker.cluster.record(
            f"coordinator-{coord.broker.broker_id}", f"consumer_group_{event}", {"group": group.group_id, **detail}
        )
    group.log.clear()
