"""AlterPartitionReassignments and ListPartitionReassignments: moving a partition's replicas, by
the simulated controller (:mod:`course_lib.broker.reassignments`: new replicas fetch, join the
ISR, then the old ones go)."""

from __future__ import annotations

from kafka.protocol.admin import AlterPartitionReassignmentsResponse, ListPartitionReassignmentsResponse

from ...broker.reassignments import alter_partition_reassignments_request, list_reassignments
from kafka import errors as Errors

from ...broker.acls import ALTER, DESCRIBE
from ..authorization import cluster_authorized
from .common import _grouped, _reply, code


def alter_partition_reassignments(gw, req) -> None:
    allow = req.allow_replication_factor_change if gw.version >= 1 else True  # KIP-860: v1
    if not cluster_authorized(gw, ALTER):  # KafkaApis: authorizeClusterOperation(ALTER)
        return _reply(
            gw,
            AlterPartitionReassignmentsResponse,
            throttle_time_ms=0,
            allow_replication_factor_change=allow,
            error_code=Errors.ClusterAuthorizationFailedError.errno,
            error_message=None,
            responses=[],
        )
    requests = [((t.name, p.partition_index), p.replicas) for t in req.topics for p in t.partitions]
    results = alter_partition_reassignments_request(gw.wire.cluster, requests, allow)
    rows = [
        (tp[0], {"partition_index": tp[1], "error_code": code(error), "error_message": message})
        for tp, error, message in results
    ]
    _reply(
        gw,
        AlterPartitionReassignmentsResponse,
        throttle_time_ms=0,
        allow_replication_factor_change=allow,
        error_code=0,
        error_message=None,
        responses=_grouped(rows),
    )


def list_partition_reassignments(gw, req) -> None:
    if not cluster_authorized(gw, DESCRIBE):  # KafkaApis: authorizeClusterOperation(DESCRIBE)
        error = Errors.ClusterAuthorizationFailedError.errno
        return _reply(gw, ListPartitionReassignmentsResponse, throttle_time_ms=0, error_code=error, topics=[])
    tps = None if req.topics is None else {(t.name, p) for t in req.topics for p in t.partition_indexes}
    ongoing = list_reassignments(gw.wire.cluster, tps)
    rows = [
        (tp[0], {"partition_index": tp[1], "replicas": r, "adding_replicas": a, "removing_replicas": x})
        for tp, (r, a, x) in ongoing.items()
    ]
    _reply(
        gw,
        ListPartitionReassignmentsResponse,
        throttle_time_ms=0,
        error_code=0,
        error_message=None,
        topics=_grouped(rows),
    )
