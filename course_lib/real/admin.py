"""One admin view of a real Kafka cluster, local or remote: topics, partitions, leaders, ISR, brokers.

Both :class:`~course_lib.real.cluster.LocalCluster` and
:class:`~course_lib.real.connect.RemoteCluster` hold a :class:`ClusterAdmin` and read the
cluster's metadata through it (:class:`ClusterMetadata` gives them the same methods); they differ
only in how an admin client is made (address, login) and in how patient a read is:

- a local cluster's reads are *patient*: a paused broker stays in the metadata until it is
  fenced, kafka-python may pick it and then waits up to 10 s for the connection, so every
  attempt runs in a helper thread, is abandoned after ``attempt_s`` and retried on a fresh client;
- a shared cluster's reads run once, and Kafka's authorization and login errors become
  :class:`~course_lib.client_adapters.access.AccessDenied` / ``LoginFailed`` saying what to fix.

Partitions are kafka-python's ``describe_topics`` dicts (``partition_index``, ``leader_id`` -1
while there is no leader, ``leader_epoch``, ``replica_nodes``, ``isr_nodes``).
"""

from __future__ import annotations

import contextlib
import threading
import time
from typing import Any, Callable, ContextManager

from course_lib.clusters import TopicSpec
from course_lib.real.errors import ClusterError

TOPIC_AUTHORIZATION_FAILED = 29  # Kafka's error code

#: makes a kafka-python ``KafkaAdminClient`` (keyword arguments override its settings)
AdminFactory = Callable[..., Any]


def _no_explanation(**_used) -> ContextManager[None]:
    return contextlib.nullcontext()


class ClusterAdmin:
    """Metadata reads and topic creation through kafka-python's ``KafkaAdminClient``.

    ``new_client(**overrides)`` makes an admin client; ``explained(**used)`` is a context manager
    that turns Kafka's errors into ones that say what to fix (default: none); ``attempts`` > 1
    makes reads patient (see the module docstring)."""

    def __init__(
        self,
        new_client: AdminFactory,
        *,
        explained: Callable[..., ContextManager[None]] = _no_explanation,
        attempts: int = 1,
        attempt_s: float = 2.0,
    ) -> None:
        if attempts < 1:
            raise ValueError(f"attempts must be >= 1, got {attempts!r}")
        self._new_client = new_client
        self._explained = explained
        self.attempts = attempts
        self.attempt_s = attempt_s

    # ---- running admin calls ----------------------------------------------------------------------
    def call(self, fn: Callable[[Any], Any], **used: str) -> Any:
        """``fn(admin)`` on a fresh client, once (``used``: the topic etc. named in errors)."""
        with self._explained(**used):
            admin = self._new_client()
            try:
                return fn(admin)
            finally:
                admin.close()

    def read(self, fn: Callable[[Any], Any], **used: str) -> Any:
        """A metadata read: :meth:`call`, patiently if this view has ``attempts`` > 1."""
        if self.attempts == 1:
            return self.call(fn, **used)
        last: BaseException | None = None
        for _ in range(self.attempts):
            box: dict = {}

            def work():
                try:
                    admin = self._new_client(request_timeout_ms=1000)
                    try:
                        box["value"] = fn(admin)
                    finally:
                        admin.close()
                except Exception as e:
                    box["error"] = e

            t = threading.Thread(target=work, name="course-admin-read", daemon=True)
            t.start()
            t.join(self.attempt_s)
            if "value" in box:
                return box["value"]
            last = box.get("error") or TimeoutError(f"no answer within {self.attempt_s} s")
            if "error" in box:
                time.sleep(0.2)
        raise ClusterError(f"cluster metadata unavailable after {self.attempts} attempts: {last!r}")

    # ---- reads ------------------------------------------------------------------------------------
    def partitions(self, topic: str) -> list[dict]:
        """The topic's partitions in order; ``[]`` while the topic does not exist."""
        (t,) = self.read(lambda a: _described(a.describe_topics([topic]), topic), topic=topic)
        if t.get("error_code", 0) != 0:
            return []
        return sorted(t.get("partitions", []), key=lambda p: p["partition_index"])

    def partition_info(self, topic: str, partition: int = 0) -> dict:
        for p in self.partitions(topic):
            if p["partition_index"] == partition:
                return p
        raise ClusterError(
            f"no partition {topic}-{partition}: is the topic's name right, and was it created "
            f"(cluster.create_topic({topic!r}))?"
        )

    def brokers(self) -> dict:
        """kafka-python's ``describe_cluster``: ``brokers`` (with ``is_fenced``), ``controller_id``."""
        return self.read(lambda a: a.describe_cluster())

    # ---- writes -----------------------------------------------------------------------------------
    def create_from(self, spec: TopicSpec, timeout_s: float = 30.0) -> str:
        """Create the topic ``spec`` names (its replication factor given), then wait until every
        partition has a leader and a full ISR. An existing topic is kept (rerunning a notebook
        cell is fine); then a leader per partition is enough: one of its replicas may be on a
        broker that is down."""
        from kafka.admin import NewTopic
        from kafka.errors import KafkaError, TopicAlreadyExistsError

        if spec.replication_factor is None:
            raise ValueError(f"{spec}: a cluster handle fills in its default replication factor before creating")
        name, partitions = spec.name, spec.partitions
        new = NewTopic(name, partitions, spec.replication_factor, topic_configs=dict(spec.config))
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                self.call(lambda a: a.create_topics([new]), topic=name)
                expected: int | None = partitions
                break
            except TopicAlreadyExistsError:
                # someone else's (or an earlier run's) partition count - or ours, when an earlier
                # attempt's answer was lost
                expected = None
                break
            except KafkaError as e:
                # a connection closed under the request (a broker a fault just restarted), a
                # timeout: Kafka's retriable errors, as its own admin client retries them
                if not e.retriable or time.monotonic() > deadline:
                    raise
                time.sleep(0.2)
        parts: list[dict] = []
        while time.monotonic() < deadline:
            parts = self.partitions(name)
            if (
                parts
                and (expected is None or len(parts) == expected)
                and all(p["leader_id"] >= 0 and (expected is None or _full_isr(p)) for p in parts)
            ):
                return name
            time.sleep(0.2)
        raise ClusterError(
            f"topic {name!r} has no leader with a full ISR after {timeout_s} s; last seen: "
            f"{_partition_states(parts)}; {self._broker_states()} - is a broker down, paused or "
            "still catching up? (cluster.status() and cluster.broker_log(id) say which)"
        )

    def _broker_states(self) -> str:
        """The brokers the controller knows and which it fences, for an error message."""
        try:
            brokers = self.brokers()["brokers"]
        except Exception as e:  # the message must not hide the error it explains
            return f"brokers unknown ({type(e).__name__})"
        return "brokers " + ", ".join(
            f"{b['broker_id']}{' (fenced)' if b.get('is_fenced') else ''}"
            for b in sorted(brokers, key=lambda b: b["broker_id"])
        )

    def delete_topic(self, name: str, timeout_s: float = 30.0) -> None:
        """Delete ``name`` (kafka-python's ``delete_topics``: ``UnknownTopicOrPartitionError`` if
        there is none), then wait until the metadata no longer lists it."""
        self.call(lambda a: a.delete_topics([name]), topic=name)
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if not self.partitions(name):
                return
            time.sleep(0.2)
        raise ClusterError(f"topic {name!r} is still in the metadata {timeout_s} s after its deletion")


def _partition_states(parts: list[dict]) -> str:
    """``p0 leader 1 isr [1, 2] of [1, 2, 3]`` per partition, or that there were none."""
    return (
        "; ".join(
            f"p{p['partition_index']} leader {p['leader_id']} isr {sorted(p['isr_nodes'])} of {sorted(p['replica_nodes'])}"
            for p in parts
        )
        or "no partitions"
    )


def _full_isr(p: dict) -> bool:
    return len(p["isr_nodes"]) == len(p["replica_nodes"])


def _described(topics: list[dict], topic: str) -> list[dict]:
    """``describe_topics``' answer; a refused topic is reported in it, not raised: raise it (inside
    the read, so that the caller's ``explained`` says which permission is missing)."""
    if topics and topics[0].get("error_code") == TOPIC_AUTHORIZATION_FAILED:
        from kafka.errors import TopicAuthorizationFailedError

        raise TopicAuthorizationFailedError(topic)
    return topics


class ClusterMetadata:
    """What a cluster handle answers about its metadata, read through its :class:`ClusterAdmin`
    (``self.metadata``)."""

    metadata: ClusterAdmin

    def topic(self, name: str) -> str:
        """The name a topic has on this cluster (a namespacing handle overrides it)."""
        return name

    def delete_topic(self, name: str, timeout_s: float = 30.0) -> None:
        """Delete the topic ``name`` (namespaced as ``create_topic`` does) and wait until the
        metadata no longer lists it; ``UnknownTopicOrPartitionError`` if there is none."""
        self.metadata.delete_topic(self.topic(name), timeout_s)

    def partitions_of(self, topic: str) -> list[int]:
        return [p["partition_index"] for p in self.metadata.partitions(topic)]

    def partition_info(self, topic: str, partition: int = 0) -> dict:
        """Leader (``leader_id`` -1: none), leader epoch, replicas and ISR as the metadata says now."""
        return self.metadata.partition_info(topic, partition)

    def leader_of(self, topic: str, partition: int = 0) -> int:
        """The id of the partition's leader as the controller sees it now (-1 if none)."""
        return self.partition_info(topic, partition)["leader_id"]

    def isr_of(self, topic: str, partition: int = 0) -> list[int]:
        """The in-sync replicas of the partition, as the controller sees them now."""
        return sorted(self.partition_info(topic, partition)["isr_nodes"])

    def record_events_into(self, history) -> None:
        """Nothing to write: a real broker's elections and truncations are in its own log, which
        no client sees (a real run's losses are explained by the nemesis's operations alone)."""

    def live_broker_ids(self) -> list[int]:
        """Brokers currently registered (unfenced) in the cluster metadata."""
        return sorted(b["broker_id"] for b in self.metadata.brokers()["brokers"] if not b.get("is_fenced"))

    def controller_id(self) -> int:
        """The active KRaft controller (pausing it also stalls metadata changes)."""
        return self.metadata.brokers()["controller_id"]
