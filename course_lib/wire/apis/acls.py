"""DescribeAcls, CreateAcls, DeleteAcls: the cluster's ACLs (:mod:`course_lib.broker.acls`), as
Kafka 4.x's ``AclApis`` answers them.

Each first asks whether the client may (DESCRIBE on the cluster for DescribeAcls, ALTER for the
other two; else CLUSTER_AUTHORIZATION_FAILED for the whole request, every creation or filter
alike), then, on a cluster without an authorizer, answers SECURITY_DISABLED. A creation Kafka
refuses (a CLUSTER resource not named ``kafka-cluster``, an empty name, ANY or MATCH where a
binding needs a value) gets INVALID_REQUEST with Kafka's message and the others are made; a
DeleteAcls filter answers the bindings it removed. A request with an UNKNOWN (or unknown) resource
type, pattern type, operation or permission fails to parse on Kafka (the request classes' ``validate``):
the connection is closed without an answer.
"""

from __future__ import annotations

from kafka import errors as Errors
from kafka.protocol.admin import CreateAclsResponse, DeleteAclsResponse, DescribeAclsResponse

from ...broker.acls import ALTER, DESCRIBE, OPERATIONS, PATTERN_TYPES, PERMISSIONS, RESOURCE_TYPES, Acl, AclFilter
from ..authorization import cluster_authorized
from .common import _reply, code, log

_ANY = 1


def _parses(gw, fields: list[tuple[int, int, int, int]]) -> bool:
    """Whether every (resource type, pattern type, operation, permission) is a value Kafka's
    enums know (ANY included); if not, the connection is closed, as Kafka closes it on a request
    it cannot parse."""
    known = (RESOURCE_TYPES, PATTERN_TYPES, OPERATIONS, PERMISSIONS)
    if all(value == _ANY or value in names for row in fields for value, names in zip(row, known)):
        return True
    log.warning("wire: %s sent an ACL request with UNKNOWN elements %s: closing the connection", gw.node_id, fields)
    gw.close()
    return False


#: AclApis' messages when the broker has no authorizer
NO_AUTHORIZER_DESCRIBE = "No Authorizer is configured on the broker"
NO_AUTHORIZER = "No Authorizer is configured."


def _not_authorized(gw) -> str:
    """``authorizeClusterOperation``'s ClusterAuthorizationException message."""
    return f"Request {gw.node_id} is not authorized."


def _filter(f) -> AclFilter:
    return AclFilter(
        resource_type=f.resource_type_filter,
        resource_name=f.resource_name_filter,
        pattern_type=f.pattern_type_filter,
        principal=f.principal_filter,
        host=f.host_filter,
        operation=f.operation,
        permission=f.permission_type,
    )


def describe_acls(gw, req) -> None:
    auth = gw.wire.authorizer
    if not _parses(gw, [(req.resource_type_filter, req.pattern_type_filter, req.operation, req.permission_type)]):
        return
    error, message, resources = None, None, []
    if not cluster_authorized(gw, DESCRIBE):
        error, message = Errors.ClusterAuthorizationFailedError, _not_authorized(gw)
    elif auth is None:
        error, message = Errors.SecurityDisabledError, NO_AUTHORIZER_DESCRIBE
    else:
        by_pattern: dict = {}
        for acl in auth.describe(_filter(req)):
            key = (acl.resource_type, acl.resource_name, acl.pattern_type)
            by_pattern.setdefault(key, []).append(
                {
                    "principal": acl.principal,
                    "host": acl.host,
                    "operation": acl.operation,
                    "permission_type": acl.permission,
                }
            )
        resources = [
            {"resource_type": t, "resource_name": n, "pattern_type": p, "acls": acls}
            for (t, n, p), acls in by_pattern.items()
        ]
    _reply(
        gw,
        DescribeAclsResponse,
        throttle_time_ms=0,
        error_code=code(error),
        error_message=message,
        resources=resources,
    )


def create_acls(gw, req) -> None:
    auth = gw.wire.authorizer
    rows = [(c.resource_type, c.resource_pattern_type, c.operation, c.permission_type) for c in req.creations]
    if not _parses(gw, rows):
        return
    if not cluster_authorized(gw, ALTER):
        results = [(Errors.ClusterAuthorizationFailedError, _not_authorized(gw))] * len(req.creations)
    elif auth is None:
        results = [(Errors.SecurityDisabledError, NO_AUTHORIZER)] * len(req.creations)
    else:
        results = [
            auth.create(
                Acl(
                    c.resource_type,
                    c.resource_name,
                    c.resource_pattern_type,
                    c.principal,
                    c.host,
                    c.operation,
                    c.permission_type,
                )
            )
            for c in req.creations
        ]
    _reply(
        gw,
        CreateAclsResponse,
        throttle_time_ms=0,
        results=[{"error_code": code(error), "error_message": message} for error, message in results],
    )


def _matching(acl: Acl) -> dict:
    return {
        "error_code": 0,
        "error_message": None,
        "resource_type": acl.resource_type,
        "resource_name": acl.resource_name,
        "pattern_type": acl.pattern_type,
        "principal": acl.principal,
        "host": acl.host,
        "operation": acl.operation,
        "permission_type": acl.permission,
    }


def delete_acls(gw, req) -> None:
    auth = gw.wire.authorizer
    rows = [(f.resource_type_filter, f.pattern_type_filter, f.operation, f.permission_type) for f in req.filters]
    if not _parses(gw, rows):
        return
    results: list[tuple[type | None, str | None, list[Acl]]]
    if not cluster_authorized(gw, ALTER):
        results = [(Errors.ClusterAuthorizationFailedError, _not_authorized(gw), [])] * len(req.filters)
    elif auth is None:
        results = [(Errors.SecurityDisabledError, NO_AUTHORIZER, [])] * len(req.filters)
    else:
        results = [auth.delete(_filter(f)) for f in req.filters]
    _reply(
        gw,
        DeleteAclsResponse,
        throttle_time_ms=0,
        filter_results=[
            {"error_code": code(error), "error_message": message, "matching_acls": [_matching(a) for a in removed]}
            for error, message, removed in results
        ],
    )
