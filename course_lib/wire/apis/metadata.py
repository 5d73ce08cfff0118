"""Metadata: the brokers, and each topic's partitions with leader, replicas and ISR."""

from __future__ import annotations

from kafka import errors as Errors
from kafka.protocol.metadata import MetadataResponse

from ...broker import protocol as sim
from .common import INTERNAL_TOPICS, _reply
from .topic_ids import topic_uuid


CLUSTER_ID = "course-sim-wire"


def metadata(gw, req) -> None:
    gw.ask(sim.MetadataRequest(gw.next_corr()), lambda resp: _metadata_answer(gw, req, resp))


def _metadata_answer(gw, req, resp: sim.MetadataResponse) -> None:
    wire = gw.wire
    live = tuple(resp.brokers)
    view = wire.cluster.brokers[gw.broker_id].metadata  # the answering broker's own view (ISR, replicas)
    if req.topics is None or (gw.version == 0 and not req.topics):
        names = sorted(resp.topics)
    else:
        names = [t.name for t in req.topics]
    topics = []
    for name in names:
        if name not in resp.topics:
            topics.append({"error_code": Errors.UnknownTopicOrPartitionError.errno, "name": name, "partitions": []})
            continue
        partitions = []
        for p in range(resp.topics[name]):
            leader, epoch = resp.leaders.get((name, p), (None, -1))
            state = view.get((name, p))
            replicas = list(state.replicas) if state else ([leader] if leader is not None else [])
            isr = list(state.isr) if state else replicas
            partitions.append(
                {
                    "error_code": 0 if leader is not None else Errors.LeaderNotAvailableError.errno,
                    "partition_index": p,
                    "leader_id": -1 if leader is None else leader,
                    "leader_epoch": epoch,
                    "replica_nodes": replicas,
                    "isr_nodes": isr,
                    "offline_replicas": [r for r in replicas if r not in live],
                }
            )
        topics.append(
            {
                "error_code": 0,
                "name": name,
                "topic_id": topic_uuid(resp.topic_ids.get(name, 0)),
                "is_internal": name in INTERNAL_TOPICS,
                "partitions": partitions,
            }
        )
    _reply(
        gw,
        MetadataResponse,
        throttle_time_ms=0,
        brokers=[{"node_id": b, "host": wire.host, "port": wire.ports[b], "rack": None} for b in live],
        cluster_id=CLUSTER_ID,
        controller_id=min(live) if live else -1,
        topics=topics,
    )
