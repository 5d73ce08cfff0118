"""Use an existing Kafka cluster instead of the local one - e.g. one cluster for a whole workshop.

Reading ``KAFKA_BOOTSTRAP_SERVERS`` (a running cluster is needed, so this example is skipped
when the doctests run):

    >>> kafka = connect()                       # doctest: +SKIP
    >>> kafka.topic("orders")                   # doctest: +SKIP
    'alice.orders'

Many learners share the cluster, so every name a learner's code uses goes through a per-learner
prefix (``COURSE_LEARNER_PREFIX``, or the argument, or the login name): :meth:`topic`,
:meth:`group_id`, :meth:`transactional_id`. Two learners running the same notebook then never
read each other's records, join each other's groups or fence each other's transactions.

Faults that need processes on this machine (killing, pausing brokers; losing an ACK in the
proxy) are only possible with :class:`~course_lib.real.cluster.LocalCluster`; here they raise
:class:`NeedsLocalCluster` saying so.

Taught in notebooks/09_real_kafka_lab.
"""

from __future__ import annotations

import getpass
import os
import re
import time

ENV_BOOTSTRAP = "KAFKA_BOOTSTRAP_SERVERS"
ENV_PREFIX = "COURSE_LEARNER_PREFIX"


class NeedsLocalCluster(RuntimeError):
    """A fault was asked of a cluster this notebook does not run itself."""


def learner_prefix(prefix: str | None = None) -> str:
    """The namespace of this learner: the argument, ``$COURSE_LEARNER_PREFIX`` or the login name.

    Only letters, digits, ``.``, ``_`` and ``-`` are legal in Kafka topic names, so anything else
    becomes ``-``.

    >>> learner_prefix("Ada Lovelace")
    'Ada-Lovelace'
    """
    raw = prefix if prefix is not None else os.environ.get(ENV_PREFIX)
    if raw is None:
        try:
            raw = getpass.getuser()
        except Exception:  # no login name in some containers
            raw = "learner"
    clean = re.sub(r"[^A-Za-z0-9._-]+", "-", raw).strip("-.")
    if not clean:
        raise ValueError(f"learner prefix {raw!r} has no usable characters; use letters/digits")
    return clean


class Namespaced:
    """Names a learner's code uses, prefixed so that learners sharing a cluster stay apart."""

    prefix: str = ""

    def _name(self, name: str) -> str:
        return f"{self.prefix}.{name}" if self.prefix else name

    def topic(self, name: str) -> str:
        return self._name(name)

    def group_id(self, name: str) -> str:
        return self._name(name)

    def transactional_id(self, name: str) -> str:
        return self._name(name)


class RemoteCluster(Namespaced):
    """A cluster someone else runs: produce, consume, create topics - no process-level faults."""

    def __init__(self, bootstrap_servers: str, prefix: str) -> None:
        self.bootstrap_servers = bootstrap_servers
        self.prefix = prefix

    def __repr__(self) -> str:
        return f"RemoteCluster({self.bootstrap_servers!r}, prefix={self.prefix!r})"

    def admin(self, **kwargs):
        from kafka.admin import KafkaAdminClient

        kwargs.setdefault("request_timeout_ms", 15000)
        return KafkaAdminClient(
            bootstrap_servers=self.bootstrap_servers, client_id=f"course-admin-{self.prefix}", **kwargs
        )

    def live_broker_ids(self) -> list[int]:
        admin = self.admin()
        try:
            return sorted(b["broker_id"] for b in admin.describe_cluster()["brokers"] if not b.get("is_fenced"))
        finally:
            admin.close()

    def create_topic(
        self,
        name: str,
        partitions: int = 1,
        replication_factor: int | None = None,
        min_insync_replicas: int | None = None,
        config: dict | None = None,
        timeout_s: float = 30.0,
    ) -> str:
        """Create ``prefix.name`` (RF=min(3, brokers), min.insync.replicas=RF-1) and return its name.

        An existing topic of that name is kept (rerunning a notebook cell is fine).
        """
        from kafka.admin import NewTopic
        from kafka.errors import TopicAlreadyExistsError

        full = self.topic(name)
        rf = replication_factor or min(3, len(self.live_broker_ids()))
        cfg = {"min.insync.replicas": str(min_insync_replicas or max(1, rf - 1))}
        cfg.update({k: str(v) for k, v in (config or {}).items()})
        admin = self.admin()
        try:
            admin.create_topics([NewTopic(full, partitions, rf, topic_configs=cfg)])
        except TopicAlreadyExistsError:
            pass
        finally:
            admin.close()
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self._partition(full, 0) is not None:
                return full
            time.sleep(0.2)
        raise RuntimeError(f"topic {full!r} has no leader after {timeout_s} s")

    def _partition(self, topic: str, partition: int) -> dict | None:
        """The partition's metadata while it has a leader, else None."""
        admin = self.admin()
        try:
            (t,) = admin.describe_topics([topic])
        finally:
            admin.close()
        for p in t.get("partitions", []):
            if p["partition_index"] == partition and p["leader_id"] >= 0:
                return p
        return None

    def partitions_of(self, topic: str) -> list[int]:
        admin = self.admin()
        try:
            (t,) = admin.describe_topics([topic])
        finally:
            admin.close()
        return sorted(p["partition_index"] for p in t.get("partitions", []))

    def partition_info(self, topic: str, partition: int = 0) -> dict:
        """Leader, leader epoch and ISR as the cluster's metadata says (``leader_id`` -1: none)."""
        p = self._partition(topic, partition)
        return p if p is not None else {"partition_index": partition, "leader_id": -1, "isr_nodes": []}

    def leader_of(self, topic: str, partition: int = 0) -> int:
        return self.partition_info(topic, partition)["leader_id"]

    def isr_of(self, topic: str, partition: int = 0) -> list[int]:
        return sorted(self.partition_info(topic, partition)["isr_nodes"])

    # ---- faults: only on a cluster this process runs ---------------------------------------
    def _local_only(self, what: str):
        raise NeedsLocalCluster(
            f"{what} needs a Kafka cluster started by this notebook: it sends signals to broker "
            f"processes (or routes traffic through the lost-ACK proxy). You are connected to "
            f"{self.bootstrap_servers}, which runs elsewhere. Use "
            f"`from course_lib.real.cluster import LocalCluster` (Java 17+ and Maven needed), "
            f"or skip this experiment - its results are described in the notebook."
        )

    def kill(self, broker_id: int):
        self._local_only("Killing a broker")

    def stop(self, broker_id: int | None = None):
        if broker_id is None:
            return  # nothing to stop: we never started it
        self._local_only("Stopping a broker")

    def pause(self, broker_id: int):
        self._local_only("Pausing a broker")

    def resume(self, broker_id: int):
        self._local_only("Resuming a broker")

    def restart(self, broker_id: int):
        self._local_only("Restarting a broker")

    def proxy(self, broker_id: int):
        self._local_only("Dropping messages in flight")

    def drop_next_produce_response(self, topic: str, partition: int = 0, count: int = 1):
        self._local_only("Losing a produce acknowledgement")

    def spoil_next_produce_request(self, topic: str, partition: int = 0):
        self._local_only("Failing a produce request")


def connect(bootstrap_servers: str | None = None, prefix: str | None = None) -> RemoteCluster:
    """A handle on an existing cluster (``bootstrap_servers`` or ``$KAFKA_BOOTSTRAP_SERVERS``)."""
    servers = bootstrap_servers or os.environ.get(ENV_BOOTSTRAP)
    if not servers:
        raise ValueError(
            f"No cluster given: pass connect('host:9092') or set {ENV_BOOTSTRAP}=host:9092 "
            f"(ask your instructor for the address). To run a cluster on this machine instead, "
            f"use LocalCluster()."
        )
    return RemoteCluster(servers, learner_prefix(prefix))
