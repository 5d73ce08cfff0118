"""ElectLeaders: preferred and unclean leader elections, by the simulated controller
(:mod:`course_lib.broker.leader_elections`) - the replication simulator's own tool: after a
failover the preferred replica can take its leadership back; a partition left without a leader
can be handed to any live replica, losing what that replica lacks."""

from __future__ import annotations

from kafka import errors as Errors
from kafka.protocol.admin import ElectLeadersResponse

from ...broker.acls import ALTER
from ..authorization import cluster_authorized

from ...broker.leader_elections import elect_leaders_request
from .common import INTERNAL_TOPICS, _grouped, _reply, code


def _described(error):
    return None if error is None else error.description


def elect_leaders(gw, req) -> None:
    cluster = gw.wire.cluster
    election_type = req.election_type if gw.version >= 1 else 0  # v0: preferred only
    if req.topic_partitions is None:
        # every partition; those that need no election are left out of the answer, as Kafka does
        partitions = [tp for tp in sorted(cluster.controller.partitions) if tp[0] not in INTERNAL_TOPICS]
    else:
        partitions = [(t.topic, p) for t in req.topic_partitions for p in t.partitions]
    if not cluster_authorized(gw, ALTER):  # KafkaApis: every partition, and the whole request, refused
        error = Errors.ClusterAuthorizationFailedError
        rows = [(tp[0], {"partition_id": tp[1], "error_code": error.errno, "error_message": None}) for tp in partitions]
        grouped = _grouped(rows, name_key="topic", list_key="partition_result")
        return _reply(
            gw, ElectLeadersResponse, throttle_time_ms=0, error_code=error.errno, replica_election_results=grouped
        )
    results = elect_leaders_request(cluster, election_type, partitions)
    rows = [
        # Kafka's message, else the error's own (Errors.message(): "Leader election not needed ...")
        (tp[0], {"partition_id": tp[1], "error_code": code(error), "error_message": message or _described(error)})
        for tp, error, message in results
        if req.topic_partitions is not None or error is None or error.errno != 84  # ELECTION_NOT_NEEDED
    ]
    _reply(
        gw,
        ElectLeadersResponse,
        throttle_time_ms=0,
        error_code=0,
        replica_election_results=_grouped(rows, name_key="topic", list_key="partition_result"),
    )
