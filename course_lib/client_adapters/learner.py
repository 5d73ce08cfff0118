"""kafka-python's producer and consumer as a learner on a shared cluster gets them.

Plain ``KafkaProducer`` / ``KafkaConsumer`` subclasses: same arguments, same behaviour, except
that an authorization error names the resource and the learner's prefix
(:class:`~course_lib.client_adapters.access.AccessDenied`) instead of a bare
``TopicAuthorizationFailedError``. Built by :meth:`RemoteCluster.producer
<course_lib.real.connect.RemoteCluster.producer>` and ``consumer``, with the cluster's
:meth:`~course_lib.real.connect.RemoteCluster.client_config` (address and credentials).
"""

from __future__ import annotations

import functools

from kafka import KafkaConsumer, KafkaProducer

from course_lib.client_adapters.access import explained
from course_lib.client_adapters.joining import before_first_join


def _translated(method, names):
    """``method`` with its authorization errors explained; ``names(self, args, kwargs)`` says
    which topic / group / transactional id the call was about."""

    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        user, prefix = self._course_who
        with explained(user, prefix, **names(self, args, kwargs)):
            return method(self, *args, **kwargs)

    return wrapper


def _first_topic(args, kwargs):
    """The topic of ``send(topic, ...)``, ``subscribe([topics])``, ``assign([TopicPartition])``,
    ``seek(tp, offset)``... (the first one, for the message)."""
    first = args[0] if args else kwargs.get("topic") or kwargs.get("topics") or kwargs.get("partitions")
    if isinstance(first, dict):
        first = next(iter(first), None)
    if isinstance(first, (list, tuple, set, frozenset)) and not hasattr(first, "topic"):
        first = next(iter(first), None)
    return getattr(first, "topic", first) if first is not None else None


# KafkaProducer.send with the topic it was given named in an authorization error
_send = _translated(KafkaProducer.send, lambda self, args, kwargs: {"topic": _first_topic(args, kwargs)})


class _ExplainedFuture:
    """A send's future whose ``get()`` explains an authorization error (callbacks still get
    Kafka's own error objects)."""

    def __init__(self, future, who: tuple[str | None, str], topic: str | None) -> None:
        self._future, self._who, self._topic = future, who, topic

    def __getattr__(self, name: str):
        return getattr(self._future, name)

    def get(self, timeout=None):
        with explained(*self._who, topic=self._topic):
            return self._future.get(timeout)


class LearnerProducer(KafkaProducer):
    """A ``KafkaProducer`` whose authorization errors say whose resource it was."""

    def __init__(self, *, course_who: tuple[str | None, str], **config) -> None:
        self._course_who = course_who
        with explained(*course_who, bootstrap_servers=str(config.get("bootstrap_servers"))):
            super().__init__(**config)

    def _names(self, args, kwargs) -> dict:
        return {"topic": _first_topic(args, kwargs), "transactional_id": self.config.get("transactional_id")}

    def send(self, topic, *args, **kwargs):
        return _ExplainedFuture(_send(self, topic, *args, **kwargs), self._course_who, topic)


for _name in (
    "flush",
    "partitions_for",
    "init_transactions",
    "begin_transaction",
    "send_offsets_to_transaction",
    "commit_transaction",
    "abort_transaction",
):
    setattr(LearnerProducer, _name, _translated(getattr(KafkaProducer, _name), LearnerProducer._names))


class LearnerConsumer(KafkaConsumer):
    """A ``KafkaConsumer`` whose authorization errors say whose resource it was, and whose first
    join cannot wedge (:mod:`course_lib.client_adapters.joining`)."""

    def __init__(self, *topics: str, course_who: tuple[str | None, str], **config) -> None:
        self._course_who = course_who
        self._course_topics = list(topics)
        with explained(
            *course_who,
            bootstrap_servers=str(config.get("bootstrap_servers")),
            topic=topics[0] if topics else None,
            group=config.get("group_id"),
        ):
            super().__init__(*topics, **config)
            before_first_join(self)

    def subscribe(self, topics=(), pattern=None, listener=None):
        KafkaConsumer.subscribe(self, topics, pattern, listener)
        before_first_join(self)

    def _names(self, args, kwargs) -> dict:
        topic = _first_topic(args, kwargs)
        if topic is None:  # poll() / commit(): the topics it reads
            known = sorted(tp.topic for tp in self.assignment()) or sorted(self.subscription() or ())
            topic = known[0] if known else (self._course_topics[0] if self._course_topics else None)
        return {"topic": topic, "group": self.config.get("group_id")}

    def _raise_if_refused(self) -> None:
        """kafka-python answers a poll of a topic the learner may not read with no records (and
        a log line), not an error; the metadata knows the topic was refused, so say so."""
        cluster = getattr(self, "_cluster", None)  # kafka-python's metadata cache
        refused = set(getattr(cluster, "unauthorized_topics", ()) or ())
        mine = {tp.topic for tp in self.assignment()} | set(self.subscription() or ())
        if refused & mine:
            from kafka.errors import TopicAuthorizationFailedError

            raise TopicAuthorizationFailedError(refused & mine)

    def poll(self, *args, **kwargs):
        batches = KafkaConsumer.poll(self, *args, **kwargs)
        if not batches:
            self._raise_if_refused()
        return batches


for _name in (
    "poll",
    "__next__",
    "commit",
    "committed",
    "position",
    "seek_to_beginning",
    "seek_to_end",
    "end_offsets",
    "beginning_offsets",
    "subscribe",
    "partitions_for_topic",
):
    setattr(LearnerConsumer, _name, _translated(getattr(LearnerConsumer, _name), LearnerConsumer._names))
