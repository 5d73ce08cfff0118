"""What every handler shares: building kafka-python messages, error codes, replying, joining answers."""

from __future__ import annotations

import logging
import uuid

from kafka import errors as Errors

from ...broker.group_coordinator import OFFSETS_TOPIC
from ...broker.topic_requests import UNKNOWN_TOPIC_MESSAGE
from ...broker.txn_coordinator import TXN_TOPIC
from ..version_errors import downgrade_codes

log = logging.getLogger("course_lib.wire")

NO_TOPIC_ID = uuid.UUID(int=0)
INTERNAL_TOPICS = frozenset({OFFSETS_TOPIC, TXN_TOPIC})


def build(cls, version=None, **values):
    """A kafka-python message or nested struct from plain values (lists of dicts for arrays)."""
    fields = cls._struct.fields
    kwargs = {}
    for name, value in values.items():
        field = fields[name]
        if isinstance(value, list) and field.is_struct_array():
            value = [build(field.data_class, **v) if isinstance(v, dict) else v for v in value]
        elif isinstance(value, dict) and field.is_struct():
            value = build(field.data_class, **value)
        kwargs[name] = value
    return cls(version=version, **kwargs) if version is not None else cls(**kwargs)


def code(error) -> int:
    """Kafka's error code for a simulator error (a ``kafka.errors`` class, or None)."""
    if error is None:
        return 0
    if isinstance(error, type) and issubclass(error, Errors.BrokerResponseError):
        return error.errno  # type: ignore[attr-defined]  # every broker error class has one
    return Errors.UnknownError.errno


#: Kafka's ``Errors.message()`` of the errors the wire answers with a message: its exception's
#: default message, and for no error its name
KAFKA_MESSAGES = {
    None: "NONE",
    Errors.TopicAuthorizationFailedError: "Topic authorization failed.",
    Errors.GroupAuthorizationFailedError: "Group authorization failed.",
    Errors.ClusterAuthorizationFailedError: "Cluster authorization failed.",
    Errors.TransactionalIdAuthorizationFailedError: "Transactional Id authorization failed.",
    Errors.CoordinatorNotAvailableError: "The coordinator is not available.",
    Errors.NotCoordinatorError: "This is not the correct coordinator.",
    Errors.CoordinatorLoadInProgressError: "The coordinator is loading and hence can't process requests.",
    Errors.UnknownTopicOrPartitionError: UNKNOWN_TOPIC_MESSAGE,
    Errors.NonEmptyGroupError: "The group is not empty.",
}


def kafka_message(error) -> str:
    """``Errors.message()`` of ``error`` (a ``kafka.errors`` class or None); one not in
    :data:`KAFKA_MESSAGES` by its class name."""
    return KAFKA_MESSAGES.get(error, getattr(error, "__name__", str(error)))


def _reply(gw, cls, **values) -> None:
    """Answer with ``cls`` at the request's version, its error codes as that version knows them."""
    gw.reply(build(cls, gw.version, **downgrade_codes(cls.API_KEY, gw.version, values)))


def log_start_offset(gw, tp) -> int:
    """The log start offset of ``tp`` on the answering broker (DeleteRecords moves it)."""
    partition = gw.wire.cluster.brokers[gw.broker_id].partitions.get(tp)
    return partition.log.start_offset if partition is not None else 0


def _grouped(rows, name_key: str = "name", list_key: str = "partitions") -> list:
    """``[(topic, row), ...]`` as Kafka's per-topic lists: ``[{name_key: topic, list_key: [row, ...]}]``
    (topics in first-seen order)."""
    by_topic: dict = {}
    for topic, row in rows:
        by_topic.setdefault(topic, []).append(row)
    return [{name_key: t, list_key: r} for t, r in by_topic.items()]


def _join(count: int, done):
    """Call ``done()`` after ``count`` calls of the returned function (at once if ``count`` is 0)."""
    state = {"left": count}

    def one():
        state["left"] -= 1
        if state["left"] == 0:
            done()

    if count == 0:
        done()
    return one
