"""DeleteGroups as Kafka's group coordinator answers it (``GroupMetadataManager.deleteGroups``,
``ClassicGroup.validateDeleteGroup``): only a group without members can be deleted - one with
members is NON_EMPTY_GROUP, one the coordinator does not know GROUP_ID_NOT_FOUND; a deleted
group's committed offsets are gone (tombstones in ``__consumer_offsets``), so a consumer that
comes back under the name starts from ``auto.offset.reset``.

>>> from course_lib.broker import Cluster
>>> cluster = Cluster(brokers=3, seed=1)
>>> cluster.controller.ensure_internal_topic("__consumer_offsets")
>>> cluster.run_for(1000)
>>> coordinator = next(b.groups for b in cluster.brokers.values() if b.groups.partition() is not None)
>>> coordinator.write([(("offset", "g", "orders", 0), 5)], print)  # a standalone consumer's commit
>>> cluster.run_for(1000)
None
>>> coordinator.offsets["g"]
{('orders', 0): 5}
>>> outcome = []
>>> delete_group(coordinator, "g", outcome.append)
>>> cluster.run_for(1000)
>>> outcome, coordinator.offsets.get("g")
([None], None)
>>> delete_group(coordinator, "g", outcome.append)
>>> outcome[-1].__name__
'GroupIdNotFoundError'
"""

from __future__ import annotations

from kafka import errors as Errors

from . import consumer_group_requests as kip848


def delete_group(coordinator, group_id: str, done) -> None:
    """Delete ``group_id`` on ``coordinator`` (a broker's GroupCoordinator); ``done(error or None)``
    once its tombstones are replicated (or at once when refused)."""
    if coordinator.partition() is None:
        return done(Errors.NotCoordinatorError)
    coordinator.refresh()
    group = coordinator.groups.get(group_id)
    consumer_group = coordinator.consumer_groups.get(group_id)
    committed = coordinator.offsets.get(group_id)
    if group is None and consumer_group is None and not committed:
        return done(Errors.GroupIdNotFoundError)
    if (group is not None and (group.members or group.joining)) or (consumer_group and consumer_group.members):
        return done(Errors.NonEmptyGroupError)
    coordinator.groups.pop(group_id, None)
    kip848.delete(coordinator, group_id)
    tombstones = [(("offset", group_id, t, p), None) for t, p in sorted(committed or {})]
    coordinator.broker.cluster.record(
        f"coordinator-{coordinator.broker.broker_id}", "group_deleted", {"group": group_id, "offsets": len(tombstones)}
    )
    if not tombstones:
        return done(None)
    coordinator.offsets.pop(group_id, None)
    coordinator.write(tombstones, lambda err: done(err and Errors.CoordinatorNotAvailableError))
