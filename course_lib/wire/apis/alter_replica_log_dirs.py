"""AlterReplicaLogDirs: move a replica to another log directory of its broker. A simulated broker
has one directory (:func:`.describe_log_dirs.log_dir`), so the only move is to where the replica
already is - a no-op answered NONE, as Kafka answers it; another path is LOG_DIR_NOT_FOUND and a
replica the broker does not hold REPLICA_NOT_AVAILABLE (``ReplicaManager.alterReplicaLogDirs``)."""

from __future__ import annotations

from kafka import errors as Errors
from kafka.protocol.admin import AlterReplicaLogDirsResponse

from ...broker.acls import ALTER
from ..authorization import cluster_authorized
from .common import _grouped, _reply, code
from .describe_log_dirs import log_dir


def alter_replica_log_dirs(gw, req) -> None:
    broker = gw.wire.cluster.brokers[gw.broker_id]
    rows = []
    for target in req.dirs:
        for topic in target.topics:
            for p in topic.partitions:
                if not cluster_authorized(gw, ALTER):  # KafkaApis: ALTER on the cluster, for every partition
                    error = Errors.ClusterAuthorizationFailedError
                elif target.path != log_dir(gw.broker_id):
                    error = Errors.LogDirNotFoundError
                elif (topic.name, p) not in broker.partitions:
                    error = Errors.ReplicaNotAvailableError
                else:
                    error = None
                rows.append((topic.name, {"partition_index": p, "error_code": code(error)}))
    _reply(
        gw,
        AlterReplicaLogDirsResponse,
        throttle_time_ms=0,
        results=_grouped(rows, name_key="topic_name"),
    )
