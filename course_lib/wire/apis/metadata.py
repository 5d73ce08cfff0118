"""Metadata: the brokers, and each topic's partitions with leader, replicas and ISR."""

from __future__ import annotations

import uuid

from kafka import errors as Errors
from kafka.protocol.metadata import MetadataResponse

from ...broker import protocol as sim
from ...broker.topic_requests import valid_topic_name
from ...broker.acls import CLUSTER, CREATE, DESCRIBE, TOPIC
from ..authorization import allowed_names, authorized, authorized_operations, cluster_authorized
from .common import INTERNAL_TOPICS, NO_TOPIC_ID, _reply, log
from .topic_ids import topic_number, topic_uuid


CLUSTER_ID = "course-sim-wire"


def metadata(gw, req) -> None:
    gw.ask(sim.MetadataRequest(gw.next_corr()), lambda resp: _metadata_answer(gw, req, resp))


def _name_of(topic, resp: sim.MetadataResponse):
    """A requested topic's name; Metadata v12+ may name it by id only (librdkafka does, for the
    topic ids a ConsumerGroupHeartbeat assigned) - an unknown id comes back as the id."""
    if topic.name is not None:
        return topic.name
    number = topic_number(topic.topic_id)
    return next((n for n, i in resp.topic_ids.items() if i == number and number), topic.topic_id)


def _unknown_topic(gw, req, name: str):
    """What Metadata answers for a topic this broker does not know (``KafkaApis.getTopicMetadata``
        and ``AutoTopicCreationManager``): an invalid name INVALID_TOPIC_EXCEPTION; with
        auto.create.topics.enable and a client that allows it (Metadata v4+'s flag; always before)
        the topic is created with num.partitions and default.replication.factor - and, in KRaft mode,
        where the creation goes to the controller asynchronously, still answered
        UNKNOWN_TOPIC_OR_PARTITION (measured on Kafka 4.3.1): the client asks again and finds it. With an
    authorizer, a topic the client may not create (CREATE on the cluster or the topic) is
    TOPIC_AUTHORIZATION_FAILED, whatever its name."""
    allowed = gw.version < 4 or req.allow_auto_topic_creation
    creates = allowed and gw.wire.cluster.options.auto_create_topics_enable
    if creates and not (cluster_authorized(gw, CREATE) or authorized(gw, CREATE, TOPIC, name)):
        return Errors.TopicAuthorizationFailedError  # creating it needs CREATE on the cluster or the topic
    if not valid_topic_name(name):
        return Errors.InvalidTopicError
    if not creates:
        return Errors.UnknownTopicOrPartitionError
    error, message = gw.wire.create_topic_now(name, -1, -1, {})
    if error is not None and error is not Errors.TopicAlreadyExistsError:  # e.g. every broker fenced
        log.info("wire: auto-creating topic %r failed: %s", name, message)
        return error if error is Errors.InvalidReplicationFactorError else Errors.UnknownTopicOrPartitionError
    return Errors.UnknownTopicOrPartitionError


def _metadata_answer(gw, req, resp: sim.MetadataResponse) -> None:
    wire = gw.wire
    live = tuple(resp.brokers)
    view = wire.cluster.brokers[gw.broker_id].metadata  # the answering broker's own view (ISR, replicas)
    all_topics = req.topics is None or (gw.version == 0 and not req.topics)
    if all_topics:
        names = sorted(resp.topics)
    else:
        names = [_name_of(t, resp) for t in req.topics]
    # KafkaApis.handleTopicMetadataRequest: a topic the client may not DESCRIBE is left out of
    # "every topic" and, asked for, refused without saying whether it exists
    described = allowed_names(gw, DESCRIBE, TOPIC, {n for n in names if isinstance(n, str)})
    if all_topics:
        names = [n for n in names if n in described]
    by_id = {} if all_topics else {_name_of(t, resp): t for t in req.topics if t.name is None}
    topics = []

    def topic_operations(name: str) -> set[int] | None:  # Metadata v8+, asked for (None: not)
        asked = gw.version >= 8 and req.include_topic_authorized_operations
        return authorized_operations(gw, TOPIC, name) if asked else None

    for name in names:
        if isinstance(name, uuid.UUID):  # asked by an id no topic has (Metadata v12+)
            topics.append(
                {"error_code": Errors.UnknownTopicIdError.errno, "name": None, "topic_id": name, "partitions": []}
            )
            continue
        if name not in described:
            asked_by_id = by_id.get(name)  # topic ids are not secret: answered with the id
            topics.append(
                {
                    "error_code": Errors.TopicAuthorizationFailedError.errno,
                    "name": None if asked_by_id is not None else name,
                    "topic_id": asked_by_id.topic_id if asked_by_id is not None else NO_TOPIC_ID,
                    "is_internal": False,
                    "partitions": [],
                }
            )
            continue
        if name not in resp.topics:
            error = _unknown_topic(gw, req, name)
            operations = None if error is Errors.TopicAuthorizationFailedError else topic_operations(name)
            topics.append(
                {"error_code": error.errno, "name": name, "partitions": [], "authorized_operations": operations}
            )
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
                "authorized_operations": topic_operations(name),
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
        authorized_operations=_cluster_operations(gw, req),
    )


def _cluster_operations(gw, req) -> set[int] | None:
    """Metadata v8-10, asked for: the cluster operations the client may do if it may DESCRIBE
    the cluster (else none; ``KafkaApis.handleTopicMetadataRequest``)."""
    if not (8 <= gw.version <= 10 and req.include_cluster_authorized_operations):
        return None
    return authorized_operations(gw, CLUSTER) if cluster_authorized(gw, DESCRIBE) else set()
