"""DeleteTopics: the controller deletes the topics (the simulator's own deletion, through its
metadata updates); brokers delete their replicas as the update reaches them.

Versions 1-5: topics by name. Version 6 names topics by id, which the front end does not give
out (Metadata answers carry no topic ids), so it is not advertised and clients send v5.
"""

from __future__ import annotations

from kafka import errors as Errors
from kafka.protocol.admin import DeleteTopicsResponse

from ...broker.acls import DELETE, DESCRIBE, TOPIC
from ...broker.topic_requests import delete_topics_request
from ..authorization import allowed_names
from .common import _reply, code


def delete_topics(gw, req) -> None:
    """As Kafka's ``ControllerApis.deleteTopics``: a name given twice is ``INVALID_REQUEST``, an
    unknown one ``UNKNOWN_TOPIC_OR_PARTITION``. The answer waits (up to the request's timeout)
    until this broker has applied the deletion, so the client's next metadata request no longer
    finds the topics. Answers are in request order (Kafka shuffles them)."""
    wire = gw.wire
    names = list(req.topic_names)
    # ControllerApis.deleteTopics: DESCRIBE and DELETE on each topic, else TOPIC_AUTHORIZATION_FAILED
    # (a name given twice is INVALID_REQUEST first, whoever asks)
    may = allowed_names(gw, DESCRIBE, TOPIC, names) & allowed_names(gw, DELETE, TOPIC, names)
    refused = {
        n: (n, Errors.TopicAuthorizationFailedError, None) for n in names if n not in may and names.count(n) == 1
    }
    answered = {row[0]: row for row in delete_topics_request(wire.cluster, [n for n in names if n not in refused])}
    results = [refused.get(n) or answered.pop(n) for n in names if n in refused or n in answered]
    rows = [{"name": name, "error_code": code(error), "error_message": message} for name, error, message in results]
    deleted = [name for name, error, _ in results if error is None]
    broker = wire.cluster.brokers[gw.broker_id]

    def answer_when_applied(waited_ms: float = 0) -> None:
        if not gw.alive:
            return
        if not any(t in broker.topic_configs for t in deleted) or waited_ms >= req.timeout_ms:
            return _reply(gw, DeleteTopicsResponse, throttle_time_ms=0, responses=rows)
        wire.cluster.sim.schedule(1, answer_when_applied, waited_ms + 1)

    answer_when_applied()
