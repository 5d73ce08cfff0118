"""DeleteGroups: the group coordinator deletes groups without members (course_lib/broker/group_deletion.py)."""

from __future__ import annotations

from kafka import errors as Errors
from kafka.protocol.admin import DeleteGroupsResponse

from ...broker.acls import DELETE, GROUP
from ...broker.group_deletion import delete_group
from ..authorization import authorized
from .common import _join, _reply, code


def delete_groups(gw, req) -> None:
    """Each group is deleted on this broker's coordinator (NOT_COORDINATOR if it is not the
    group's: the client looks the coordinator up and asks again); one answer for them all."""
    names = list(dict.fromkeys(req.groups_names))
    results: dict = {}
    coordinator = gw.wire.cluster.brokers[gw.broker_id].groups

    def finish() -> None:
        rows = [{"group_id": g, "error_code": code(results[g])} for g in names]
        _reply(gw, DeleteGroupsResponse, throttle_time_ms=0, results=rows)

    for group in names:  # KafkaApis: DELETE on the group
        if not authorized(gw, DELETE, GROUP, group):
            results[group] = Errors.GroupAuthorizationFailedError
    one = _join(len(names) - len(results), finish)
    for group in names:
        if group in results:
            continue

        def done(error, group=group) -> None:
            results[group] = error
            one()

        delete_group(coordinator, group, done)
