"""DescribeCluster: the cluster id, a controller id and the live brokers, as Metadata tells them
(Kafka 4 brokers answer with the brokers' endpoints; a request for the controllers' endpoints
is for a controller, which this front end does not expose: MISMATCHED_ENDPOINT_TYPE)."""

from __future__ import annotations

from kafka import errors as Errors
from kafka.protocol.admin import DescribeClusterResponse

from ...broker.acls import CLUSTER, DESCRIBE
from ..authorization import authorized_operations, cluster_authorized
from .common import _reply
from .metadata import CLUSTER_ID

BROKERS_ENDPOINT = 1


def describe_cluster(gw, req) -> None:
    wire = gw.wire
    broker = wire.cluster.brokers[gw.broker_id]
    live = tuple(broker.live_brokers) if broker.live_brokers is not None else tuple(sorted(wire.cluster.brokers))
    endpoint = getattr(req, "endpoint_type", BROKERS_ENDPOINT) if gw.version >= 1 else BROKERS_ENDPOINT
    wrong_endpoint = endpoint != BROKERS_ENDPOINT
    _reply(
        gw,
        DescribeClusterResponse,
        throttle_time_ms=0,
        error_code=Errors.MismatchedEndpointTypeError.errno if wrong_endpoint else 0,
        error_message="The request was sent to an endpoint of type BROKER, but we wanted an endpoint of type CONTROLLER"
        if wrong_endpoint
        else None,
        endpoint_type=BROKERS_ENDPOINT,
        cluster_id=CLUSTER_ID,
        controller_id=min(live) if live else -1,  # as Metadata answers (course_lib.wire.apis.metadata)
        brokers=[]
        if wrong_endpoint
        else [
            {"broker_id": b, "host": wire.host, "port": wire.ports[b], "rack": None, "is_fenced": False} for b in live
        ],
        authorized_operations=_cluster_operations(gw, req),
    )


def _cluster_operations(gw, req) -> set[int] | None:
    """``AuthHelper.computeDescribeClusterResponse``: asked for, the cluster operations the client
    may do if it may DESCRIBE the cluster (else none); not asked for, the schema's default."""
    if not req.include_cluster_authorized_operations:
        return None  # the schema's default (bit 31 alone)
    return authorized_operations(gw, CLUSTER) if cluster_authorized(gw, DESCRIBE) else set()
