"""Moving and forgetting where a share group stands: AlterShareGroupOffsets and
DeleteShareGroupOffsets at the group coordinator (KIP-932; Kafka 4.4.0's
``GroupMetadataManager.alterShareGroupOffsets`` and ``sharePartitionsEligibleForOffsetDeletion``,
``GroupCoordinatorShard.deleteShareGroupOffsets``).

Both refuse another kind of group's name (``GROUP_ID_NOT_FOUND``, "Group <id> is not a share
group.") and a group with members (``NON_EMPTY_GROUP``: the share-partition leaders hold what its
members fetched in memory). A group without members has none there - a leader drops a group's
share-partitions once its last share session ends (:meth:`~.share_partition.SharePartitionManager.share_fetch`)
- so what is written here is what the next member's fetch reads.

- **Alter** creates the group if it does not exist. Each partition of an existing topic gets its
  new start offset at the share coordinator (InitializeShareGroupState: the state starts again
  there, nothing in flight), then the group records the partition as initialized, so members
  get it assigned at once; a partition that does not exist: ``UNKNOWN_TOPIC_OR_PARTITION``.
- **Delete** needs the group (``GROUP_ID_NOT_FOUND``, "Group <id> not found."). The state of
  each initialized partition of a topic goes (DeleteShareGroupState) and so does the
  initialization record, so the next member starts afresh (``share.auto.offset.reset``); a
  topic that does not exist or that the group has no state of: ``UNKNOWN_TOPIC_OR_PARTITION``.

The coordinator answers ``{"message": ...}`` with a group-level error, else the per-partition
(alter) or per-topic (delete) ``(error, message)``, a message of None meaning Kafka's own.
"""

from __future__ import annotations

from kafka import errors as Errors

from .protocol import (
    AlterShareGroupOffsetsRequest,
    DeleteShareGroupOffsetsRequest,
    DeleteShareGroupStateRequest,
    InitializeShareGroupStateRequest,
)

#: ``Errors.NON_EMPTY_GROUP.message()``: what both answer for a group with members
NOT_EMPTY = "The group is not empty."
#: a topic the group has no share state of (``sharePartitionsEligibleForOffsetDeletion``)
NOTHING_TO_DELETE = "There is no offset information to delete."
#: the share coordinator's answers asked again: it is being created (its topic is, on first
#: use), moves or loads
_RETRIABLE = (Errors.CoordinatorNotAvailableError, Errors.NotCoordinatorError, Errors.CoordinatorLoadInProgressError)
#: how often and how far apart (simulated ms) before the error is the answer
_TRIES, _RETRY_MS = 50, 100


def alter(coordinator, src: str, req: AlterShareGroupOffsetsRequest) -> None:
    """The group (created if new: ``getOrMaybeCreateShareGroup``) gets the start offsets asked for."""
    if _refused(coordinator, coordinator.groups.get(req.group), src, req):
        return
    coordinator.group(req.group)
    broker = coordinator.broker
    results: dict = {}
    wanted = []
    for topic, partition, start in req.offsets:
        if _exists(broker, topic, partition):
            results[(topic, partition)] = (None, None)
            wanted.append(((topic, partition), start))
        else:
            results[(topic, partition)] = (Errors.UnknownTopicOrPartitionError, None)
    left = {"count": len(wanted)}

    def initialized() -> None:
        done = [tp for tp, _ in wanted if results[tp][0] is None]
        records = [(("share_initialized", req.group, t, p), True) for t, p in done]
        _then_record(coordinator, records, src, req, results)

    def answered(tp, error) -> None:
        if error is not None:
            results[tp] = (error, None)
        left["count"] -= 1
        if left["count"] == 0:
            initialized()

    if not wanted:
        return coordinator.broker.groups.respond(src, req, None, results)
    for tp, start in wanted:
        _ask(
            broker, InitializeShareGroupStateRequest(0, req.group, tp, start), lambda error, tp=tp: answered(tp, error)
        )


def delete(coordinator, src: str, req: DeleteShareGroupOffsetsRequest) -> None:
    """The group forgets its share state of ``req.topics``. It exists while it has members in
    memory or initialization records (which outlive a coordinator failover)."""
    broker = coordinator.broker
    group = coordinator.groups.get(req.group)
    initialized = broker.groups.share_initialized.get(req.group)
    if _refused(coordinator, group, src, req):
        return
    if group is None and initialized is None:
        return broker.groups.respond(
            src, req, Errors.GroupIdNotFoundError, {"message": f"Group {req.group} not found."}
        )
    results: dict = {}
    gone: list = []
    for topic in dict.fromkeys(req.topics):
        tps = sorted(tp for tp in initialized or () if tp[0] == topic)
        if broker.topic_configs.get(topic) is None:
            results[topic] = (Errors.UnknownTopicOrPartitionError, None)
        elif not tps:
            results[topic] = (Errors.UnknownTopicOrPartitionError, NOTHING_TO_DELETE)
        else:
            results[topic] = (None, None)
            gone += tps
    if not gone:
        return broker.groups.respond(src, req, None, results)

    def deleted(error) -> None:
        if error is not None:
            return broker.groups.respond(src, req, error, {"message": None})
        records = [(("share_initialized", req.group, t, p), None) for t, p in gone]
        _then_record(coordinator, records, src, req, results)

    _ask(broker, DeleteShareGroupStateRequest(0, req.group, tuple(gone)), deleted)


def _ask(broker, request, on_error, tries: int = _TRIES) -> None:
    """Ask the share coordinator, again while it is being created, moves or loads (as Kafka's
    persister does); ``on_error(error or None)``."""

    def answered(resp) -> None:
        error = resp if isinstance(resp, type) else resp.error
        if error in _RETRIABLE and tries > 1:
            return broker.schedule_timer(_RETRY_MS, _ask, broker, request, on_error, tries - 1)
        on_error(error)

    broker.shares.ask_share_coordinator(request, answered)


def _refused(coordinator, group, src: str, req) -> bool:
    """Answered already: the name is another kind of group's, or the group has members."""
    groups = coordinator.broker.groups
    if req.group in groups.groups or req.group in groups.consumer_groups:
        groups.respond(src, req, Errors.GroupIdNotFoundError, {"message": f"Group {req.group} is not a share group."})
        return True
    if group is not None and group.members:
        groups.respond(src, req, Errors.NonEmptyGroupError, {"message": NOT_EMPTY})
        return True
    return False


def _exists(broker, topic: str, partition: int) -> bool:
    config = broker.topic_configs.get(topic)
    return config is not None and 0 <= partition < config.partitions


def _then_record(coordinator, records: list, src: str, req, results: dict) -> None:
    """Write the group's records of which partitions are initialized, then answer."""
    groups = coordinator.broker.groups
    if not records:
        return groups.respond(src, req, None, results)
    groups.write(records, lambda error: groups.respond(src, req, error, {"message": None} if error else results))
