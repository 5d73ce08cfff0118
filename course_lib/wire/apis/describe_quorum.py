"""DescribeQuorum: the KRaft metadata quorum (``__cluster_metadata``). The simulator's controller
is one process; it is shown as the lab's combined-mode quorum (every broker a voter, the leader the
controller id Metadata reports), its high watermark the offset of the metadata the controller has
written, each voter's log end offset the metadata the broker has applied."""

from __future__ import annotations

import time

from kafka import errors as Errors
from kafka.protocol.admin import DescribeQuorumResponse

from ...broker.acls import DESCRIBE
from ..authorization import cluster_authorized
from .common import _reply

METADATA_TOPIC = "__cluster_metadata"


def describe_quorum(gw, req) -> None:
    wire = gw.wire
    if not cluster_authorized(gw, DESCRIBE):  # ControllerApis: authorizeClusterOperation(DESCRIBE)
        error = Errors.ClusterAuthorizationFailedError
        return _reply(gw, DescribeQuorumResponse, error_code=error.errno, error_message=None, topics=[], nodes=[])
    cluster = wire.cluster
    live = [b for b in sorted(cluster.brokers) if b not in cluster.controller.fenced]
    now_ms = int(time.time() * 1000)
    high_watermark = max((max(b.metadata_version, 0) for b in cluster.brokers.values()), default=0)
    voters = [
        {
            "replica_id": b,
            "replica_directory_id": None,
            "log_end_offset": max(cluster.brokers[b].metadata_version, 0),
            "last_fetch_timestamp": now_ms,
            "last_caught_up_timestamp": now_ms,
        }
        for b in live
    ]
    _reply(
        gw,
        DescribeQuorumResponse,
        error_code=0,
        error_message=None,
        topics=[
            {
                "topic_name": METADATA_TOPIC,
                "partitions": [
                    {
                        "partition_index": 0,
                        "error_code": 0,
                        "error_message": None,
                        "leader_id": min(live) if live else -1,
                        "leader_epoch": 1,
                        "high_watermark": high_watermark,
                        "current_voters": voters,
                        "observers": [],
                    }
                ],
            }
        ],
        nodes=[
            {"node_id": b, "listeners": [{"name": "CONTROLLER", "host": wire.host, "port": wire.ports[b]}]}
            for b in live
        ],
    )
