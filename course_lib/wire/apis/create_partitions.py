"""CreatePartitions: the controller adds partitions to topics (course_lib/broker/partition_creation.py).

The answer waits (up to the request's timeout) until this broker has the new partitions in its
metadata, so the client's next metadata request finds them."""

from __future__ import annotations

from kafka import errors as Errors
from kafka.protocol.admin import CreatePartitionsResponse

from ...broker.acls import ALTER, TOPIC
from ...broker.partition_creation import create_partitions_request
from ..authorization import authorized
from .common import _reply, code


def create_partitions(gw, req) -> None:
    wire = gw.wire
    names = [t.name for t in req.topics]
    rows: list[dict] = []
    grown: dict[str, int] = {}
    for topic in req.topics:
        if names.count(topic.name) > 1:  # ControllerApis: a topic named twice is refused, once
            if all(r["name"] != topic.name for r in rows):
                rows.append(
                    {
                        "name": topic.name,
                        "error_code": Errors.InvalidRequestError.errno,
                        "error_message": "Duplicate topic name.",
                    }
                )
            continue
        if not authorized(gw, ALTER, TOPIC, topic.name):  # KafkaApis: ALTER on the topic
            error = Errors.TopicAuthorizationFailedError
            rows.append(
                {"name": topic.name, "error_code": error.errno, "error_message": "The topic authorization is failed."}
            )
            continue
        assignments = [list(a.broker_ids) for a in topic.assignments] if topic.assignments else None
        error, message = create_partitions_request(
            wire.cluster, topic.name, topic.count, assignments, req.validate_only
        )
        if error is None and not req.validate_only:
            grown[topic.name] = topic.count
        rows.append({"name": topic.name, "error_code": code(error), "error_message": message})
    broker = wire.cluster.brokers[gw.broker_id]

    def answer_when_known(waited_ms: float = 0) -> None:
        if not gw.alive:
            return
        known = all(t in broker.topic_configs and broker.topic_configs[t].partitions >= n for t, n in grown.items())
        if known or waited_ms >= req.timeout_ms:
            return _reply(gw, CreatePartitionsResponse, throttle_time_ms=0, results=rows)
        wire.cluster.sim.schedule(1, answer_when_known, waited_ms + 1)

    answer_when_known()
