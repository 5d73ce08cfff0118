"""The simulator's admin client, with kafka-python's names: list, create and delete topics.

>>> from course_lib.broker import Cluster
>>> cluster = Cluster(brokers=3, seed=1)
>>> admin = KafkaAdminClient(bootstrap_servers=cluster)
>>> [t["error_code"] for t in admin.create_topics({"orders": {"num_partitions": 1, "replication_factor": 3}})["topics"]]
[0]
>>> admin.delete_topics(["orders"])
{'topics': [{'name': 'orders', 'error_code': 0, 'error_message': None}]}
>>> try:
...     admin.delete_topics(["orders"])
... except UnknownTopicOrPartitionError as e:
...     print(type(e).__name__)
UnknownTopicOrPartitionError

Requests go to the controller as the wire front end's CreateTopics and DeleteTopics do (the
same answers, :mod:`course_lib.broker.topic_requests`), and a call returns once every live
broker has applied the change - so what a producer or consumer asks next sees it. The answers
have the shape kafka-python gives against the wire front end (DeleteTopics v5: no topic ids; Kafka
4.3.1 answers v6, whose rows also carry ``topic_id``). Results come in request order (Kafka
shuffles DeleteTopics answers).

Taught in notebooks/01_replicated_log.
"""

from __future__ import annotations

import uuid

from kafka import errors as Errors
from kafka.admin import KafkaAdminClient as _RealAdmin
from kafka.admin._topics import TopicAdminMixin  # kafka-python's parsing of create_topics' argument
from kafka.errors import UnknownTopicOrPartitionError

from ..broker.topic_requests import create_topic_request, delete_topics_request
from .config import ConfigurationError

__all__ = ["KafkaAdminClient", "UnknownTopicOrPartitionError"]

#: the topic id in a CreateTopics row: the simulator gives none out, as the wire front end,
#: whose zero id kafka-python decodes as None
NO_TOPIC_ID = None


class KafkaAdminClient:
    """``KafkaAdminClient(bootstrap_servers=cluster)``: kafka-python's configuration names are
    accepted (and an unknown one refused, as kafka-python does); only ``request_timeout_ms`` and
    ``client_id`` matter here."""

    def __init__(self, **configs):
        from ..broker.cluster import Cluster

        extra = set(configs) - set(_RealAdmin.DEFAULT_CONFIG)
        if extra:
            raise ConfigurationError(f"Unrecognized configs: {sorted(extra)}")
        self.config = {**_RealAdmin.DEFAULT_CONFIG, **configs}
        cluster = self.config["bootstrap_servers"]
        if not isinstance(cluster, Cluster):
            raise ConfigurationError(
                f"the simulator's KafkaAdminClient needs bootstrap_servers=<a course_lib Cluster>, got {cluster!r}. "
                "For a real cluster use kafka-python: from kafka import KafkaAdminClient."
            )
        self._cluster = cluster

    def __repr__(self) -> str:
        return f"<KafkaAdminClient {self._cluster!r}>"

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self) -> None:
        """Nothing to release: the client holds no connection of its own."""

    # ---- topics -------------------------------------------------------------------------------
    def list_topics(self) -> list[str]:
        """Every topic's name, internal ones included (as kafka-python's metadata answer)."""
        return sorted(self._cluster.controller.configs)

    def create_topics(
        self, new_topics, timeout_ms=None, validate_only=False, raise_errors=True, wait_for_metadata=False
    ) -> dict:
        """kafka-python's ``create_topics`` (its own parsing of the argument): topic names,
        ``{name: {num_partitions, replication_factor, assignments, configs}}`` or a list of kafka-python's
        ``NewTopic``; ``{'topics': [...]}`` with one row per topic."""
        if validate_only and wait_for_metadata:
            raise ValueError("validate_only and wait_for_metadata are mutually exclusive")
        topics = TopicAdminMixin._process_create_topics_input(new_topics)  # kafka-python's own parsing
        rows: list[dict] = []
        done: list[str] = []
        for t in topics:
            configs = {c.name: c.value for c in t.configs}
            assignments = [(a.partition_index, list(a.broker_ids)) for a in t.assignments]
            error, message = create_topic_request(
                self._cluster, t.name, t.num_partitions, t.replication_factor, configs, validate_only, assignments
            )
            config = self._cluster.controller.configs.get(t.name)
            ok = error is None and config is not None
            if ok and not validate_only:
                done.append(t.name)
            rows.append(
                {
                    "name": t.name,
                    "topic_id": NO_TOPIC_ID,
                    "error_code": _code(error),
                    "error_message": message,
                    "topic_config_error_code": 0,
                    "num_partitions": config.partitions if ok else -1,
                    "replication_factor": config.replication_factor if ok else -1,
                }
            )
        self._until_applied(lambda b: all(t in b.topic_configs for t in done), timeout_ms)
        return self._answer("CreateTopics", rows, raise_errors)

    def delete_topics(self, topics, timeout_ms=None, raise_errors=True) -> dict:
        """kafka-python's ``delete_topics``: ``{'topics': [{'name', 'error_code', 'error_message'}]}``;
        with ``raise_errors`` the first error is raised (``UnknownTopicOrPartitionError`` for a
        topic that does not exist)."""
        if isinstance(topics, str):
            raise TypeError(f"topics must be a list of names, got the string {topics!r}: write [{topics!r}]")
        names = list(topics)
        if any(isinstance(t, uuid.UUID) for t in names):
            raise ValueError("the simulator gives out no topic ids: delete topics by name")
        results = delete_topics_request(self._cluster, names)
        rows = [
            {"name": name, "error_code": _code(error), "error_message": message} for name, error, message in results
        ]
        done = [name for name, error, _ in results if error is None]
        self._until_applied(lambda b: not any(t in b.topic_configs for t in done), timeout_ms)
        return self._answer("DeleteTopics", rows, raise_errors)

    # ---- helpers ------------------------------------------------------------------------------
    def _until_applied(self, applied, timeout_ms) -> None:
        """Run the cluster until every live broker has applied the change (or the timeout)."""
        timeout = timeout_ms or self.config["request_timeout_ms"]
        brokers = self._cluster.brokers.values()
        self._cluster.run_until(lambda: all(applied(b) for b in brokers if b.alive and not b.paused), timeout)

    @staticmethod
    def _answer(api: str, rows: list, raise_errors: bool) -> dict:
        """kafka-python's ``_send_request_to_controller``: the first error in the answer is raised."""
        if raise_errors:
            for row in rows:
                if row["error_code"]:
                    error = Errors.for_code(row["error_code"])
                    raise error(f"{api} of {row['name']!r} failed: {row['error_message']}")
        return {"topics": rows}


def _code(error) -> int:
    return 0 if error is None else error.errno
