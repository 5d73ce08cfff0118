"""The group coordinator's side of ConsumerGroupHeartbeat and ConsumerGroupDescribe (KIP-848):
the state machine is :mod:`.consumer_group`; this module finds or creates the group, keeps
classic and consumer groups apart as Kafka's ``GroupMetadataManager`` does, fences members on
time, writes the group to ``__consumer_offsets``, and puts what the group did into the cluster's
trace.

- **The group lives in ``__consumer_offsets``.** When a heartbeat (or a timer) changes the group,
  the coordinator appends its :meth:`~.consumer_group.ConsumerGroup.snapshot` (key
  ``("consumer_group", group id)``) and answers only once the append is replicated - Kafka's
  coordinator runtime does the same with its records. Should the append fail, the group goes
  back to what it was and the member is told ``NOT_COORDINATOR`` (and retries where the
  coordinator now is). A new coordinator replays the partition and restores every group, so a
  coordinator failover rebalances nothing; Kafka 4.3.1 measured the same (Java members' epochs and
  partitions unchanged across a SIGKILL of the coordinator, tests/coordinator_failover_support.py).
  Kafka writes one record per member and aspect; one snapshot per change keeps the simulation
  small without changing what survives.

- A group id is either a classic group or a consumer group. A consumer member joining (epoch 0)
  an *empty* classic group replaces it (``maybeDeleteEmptyClassicGroup``; committed offsets
  stay); a classic group with members answers ``GROUP_ID_NOT_FOUND`` ("is not a consumer
  group" - Kafka 4 upgrades it online instead when ``group.consumer.migration.policy`` allows,
  which the simulator does not model). The other way round, a JoinGroup to a consumer group
  with members answers ``INCONSISTENT_GROUP_PROTOCOL``; an empty one is replaced.
- A heartbeat with epoch > 0 for a group the coordinator does not know answers
  ``GROUP_ID_NOT_FOUND`` (``getOrMaybeCreateConsumerGroup``; fatal in the Java client).
- ``group.version`` 0 (``ClusterOptions(features={"group.version": 0})``): the API is not
  enabled - ``UNSUPPORTED_VERSION``.
"""

from __future__ import annotations

from kafka import errors as Errors

from .consumer_group import ConsumerGroup, Heartbeat, HeartbeatAnswer
from .protocol import ConsumerGroupDescribeRequest, ConsumerGroupHeartbeatRequest
from .share_config import consumer_group_setting

#: the key of a consumer group's snapshot in ``__consumer_offsets``
RECORD = "consumer_group"


def new_group(coord, group_id: str) -> ConsumerGroup:
    broker = coord.broker
    return ConsumerGroup(
        group_id,
        lambda topic: getattr(broker.topic_configs.get(topic), "partitions", None),
        broker.options.group_consumer_session_timeout_ms,
        broker.options.group_consumer_heartbeat_interval_ms,
        broker.options.group_consumer_assignment_interval_ms,
    )


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
            error = Errors.GroupIdNotFoundError
        else:
            error = None
        if error is not None:
            answer = HeartbeatAnswer(error, req.member_id, req.member_epoch, 0)
            return coord.respond(src, req, answer.error, answer)
        coord.groups.pop(req.group, None)  # an empty classic group gives way
        group = coord.consumer_groups[req.group] = new_group(coord, req.group)
    # the group's own configs (IncrementalAlterConfigs of a GROUP) over the brokers', at each heartbeat
    configs = broker.cluster.share_group_configs.get(req.group)
    group.session_timeout_ms = consumer_group_setting(broker.options, configs, "consumer.session.timeout.ms")
    group.heartbeat_interval_ms = consumer_group_setting(broker.options, configs, "consumer.heartbeat.interval.ms")
    before, version = group.persisted(), group.version
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
    _persist(coord, group, before, version, lambda error: coord.respond(src, req, error or answer.error, answer))


def _persist(coord, group: ConsumerGroup, before: dict, version: int, done=None) -> None:
    """Write ``group`` if it changed since ``before`` (its snapshot at ``version``: a version that
    did not move is a group that did not change); ``done(error)`` once replicated (at once if
    unchanged). A failed write puts the group back, unless something changed it meanwhile."""
    if group.version == version:
        if done:
            done(None)
        return
    after = group.persisted()

    def written(error) -> None:
        if error is not None and group.persisted() == after:
            group.restore(before, coord.broker.sim.now)
        if done:
            done(error and Errors.NotCoordinatorError)

    coord.write([((RECORD, group.group_id), after)], written)


def apply_record(coord, key: tuple, value) -> None:
    """A snapshot read back from ``__consumer_offsets``: restored while a new coordinator loads
    (the current one's memory is already at or ahead of it); ``None`` deletes the group."""
    if not coord.loading:
        return
    _, group_id = key
    if value is None:
        coord.consumer_groups.pop(group_id, None)
        return
    group = coord.consumer_groups.get(group_id) or new_group(coord, group_id)
    group.restore(value, coord.broker.sim.now)
    coord.consumer_groups[group_id] = group


def loaded(coord) -> None:
    """A new coordinator restored its groups: their (fresh) session timeouts start now."""
    for group in coord.consumer_groups.values():
        _schedule_expiry(coord, group)


def delete(coord, group_id: str) -> None:
    """An empty consumer group goes, with a tombstone so a later coordinator does not restore it."""
    if coord.consumer_groups.pop(group_id, None) is not None:
        coord.write([((RECORD, group_id), None)], lambda error: None)


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
    delete(coord, group_id)  # an empty consumer group gives way
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
    before, version = group.persisted(), group.version
    if group.expire(coord.broker.sim.now):
        _trace(coord, group)
        _persist(coord, group, before, version)


def _trace(coord, group: ConsumerGroup) -> None:
    for _, event, detail in group.log:
        coord.broker.cluster.record(
            f"coordinator-{coord.broker.broker_id}", f"consumer_group_{event}", {"group": group.group_id, **detail}
        )
    group.log.clear()
