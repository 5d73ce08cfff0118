"""DescribeTopicPartitions (KIP-966): Metadata's partitions plus the ELR and last known ELR,
paged by ``response_partition_limit`` with a cursor (``DescribeTopicPartitionsRequestHandler``:
topics in name order, at most the limit of partitions per answer)."""

from __future__ import annotations

from kafka import errors as Errors
from kafka.protocol.admin import DescribeTopicPartitionsResponse

from ...broker.acls import DESCRIBE, TOPIC
from ..authorization import NOT_ASKED, allowed_names, authorized_operations, bit_field
from .common import INTERNAL_TOPICS, _reply
from .topic_ids import topic_ids, topic_uuid

#: ``topic_authorized_operations``: every operation on a topic (READ, WRITE, CREATE, DELETE, ALTER,
#: DESCRIBE, DESCRIBE_CONFIGS, ALTER_CONFIGS: bits 3-10), as Kafka 4.3.1 answers without an
#: authorizer; with one, those the client may do (:func:`~course_lib.wire.authorization.authorized_operations`)
ALL_TOPIC_OPERATIONS = 3576


def describe_topic_partitions(gw, req) -> None:
    broker = gw.wire.cluster.brokers[gw.broker_id]
    configs, view = broker.topic_configs, broker.metadata
    live = set(broker.live_brokers or ())
    ids = topic_ids(broker)
    names = sorted({t.name for t in req.topics}) if req.topics else sorted(configs)
    if req.cursor is not None:
        names = [n for n in names if n >= req.cursor.topic_name]
    # DescribeTopicPartitionsRequestHandler: a topic the client may not DESCRIBE is left out of
    # "every topic", and refused after the others if named (whether it exists or not)
    described = allowed_names(gw, DESCRIBE, TOPIC, names)
    refused = [] if not req.topics else [n for n in names if n not in described]
    names = [n for n in names if n in described]
    budget = req.response_partition_limit
    topics, cursor = [], None
    for name in names:
        if name not in configs:
            topics.append(
                {
                    "error_code": Errors.UnknownTopicOrPartitionError.errno,
                    "name": name,
                    "topic_id": topic_uuid(0),
                    "is_internal": False,
                    "partitions": [],
                    "topic_authorized_operations": bit_field(authorized_operations(gw, TOPIC, name)),
                }
            )
            continue
        first = req.cursor.partition_index if req.cursor is not None and name == req.cursor.topic_name else 0
        partitions = []
        for p in range(first, configs[name].partitions):
            if budget == 0:
                cursor = {"topic_name": name, "partition_index": p}
                break
            budget -= 1
            state = view.get((name, p))
            if state is None:
                continue
            partitions.append(
                {
                    "error_code": 0,
                    "partition_index": p,
                    "leader_id": -1 if state.leader is None else state.leader,
                    "leader_epoch": state.leader_epoch,
                    "replica_nodes": list(state.replicas),
                    "isr_nodes": list(state.isr),
                    # lists, never null: the Java admin client (4.3.1) calls .stream() on both
                    # and fails with a NullPointerException on a null
                    "eligible_leader_replicas": list(state.elr),
                    "last_known_elr": list(state.last_known_elr),
                    "offline_replicas": [r for r in state.replicas if r not in live],
                }
            )
        topics.append(
            {
                "error_code": 0,
                "name": name,
                "topic_id": topic_uuid(ids.get(name, 0)),
                "is_internal": name in INTERNAL_TOPICS,
                "partitions": partitions,
                "topic_authorized_operations": bit_field(authorized_operations(gw, TOPIC, name)),
            }
        )
        if cursor is not None:
            break
    for name in refused:
        topics.append(
            {
                "error_code": Errors.TopicAuthorizationFailedError.errno,
                "name": name,
                "topic_id": topic_uuid(0),
                "is_internal": False,
                "partitions": [],
                "topic_authorized_operations": NOT_ASKED,
            }
        )
    _reply(gw, DescribeTopicPartitionsResponse, throttle_time_ms=0, topics=topics, next_cursor=cursor)
