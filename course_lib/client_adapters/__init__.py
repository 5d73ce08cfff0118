"""The client side of the seam: how a backend builds and calls the learner's applications.

A backend is a client adapter composed with a cluster (:mod:`course_lib.clusters`):
:class:`~course_lib.backends.composed.ComposedBackend` runs any :class:`ClientSide` against any
wall-clock cluster (:class:`~course_lib.clusters.Topology`); the simulator's own clients live
with the simulated cluster in :class:`~course_lib.backends.sim.SimBackend` (one process, one
virtual clock).

Adding a client (librdkafka through confluent-kafka, a Java client...) is ONE module here, one
class with these members - the contract:

- ``name``: how results and messages name the client ("kafka-python");
- ``producer(backend, process, config)`` / ``consumer(backend, process, topics, config)``: a
  client with kafka-python's API (``send`` returning a future, ``flush``, the transaction calls,
  ``poll``, ``commit``, ``position``, ``close``) that records every call in ``backend.history``
  with the operation names of :mod:`course_lib.history` (see :mod:`course_lib.real.recording`),
  under ``process``; ``config`` uses kafka-python's names (translate them inside the adapter);
  its ``crash()`` records ``crash_client`` and closes it without a word to the cluster,
  ``close_quietly()`` closes it ignoring errors, ``node_id`` is ``process``;
- ``freeze(backend, consumer)``: the consumer stops polling for good (record ``freeze``);
- ``end_offset(cluster, topic, partition, read_committed)``: the partition's end offset (its last
  stable offset with ``read_committed``) as this client reads it;
- ``final_read(backend, topic, isolation_level)``: Jepsen's final read of every partition,
  recorded as ``final_read`` (with the aborted records as evidence when read committed).

Register it in :data:`CLIENTS` and give it a typed conformance line in
``tests/test_seam_types.py``; ``tests/test_layers.py`` then runs scenarios with it on every
cluster it supports.
"""

from __future__ import annotations

from typing import Any, Protocol


class ClientSide(Protocol):
    """How a backend builds and calls clients (see the module docstring)."""

    name: str

    def producer(self, backend: Any, process: str, config: dict) -> Any: ...
    def consumer(self, backend: Any, process: str, topics: tuple[str, ...], config: dict) -> Any: ...
    def freeze(self, backend: Any, consumer: Any) -> None: ...
    def end_offset(self, cluster: Any, topic: str, partition: int = 0, read_committed: bool = False) -> int: ...
    def final_read(self, backend: Any, topic: str, isolation_level: str = "read_uncommitted") -> list: ...


def kafka_python() -> ClientSide:
    """kafka-python 3.0.12's clients (the default client of every wall-clock cluster)."""
    from .kafka_python import KafkaPythonClients

    return KafkaPythonClients()


def confluent_kafka() -> ClientSide:
    """librdkafka's clients through confluent-kafka 2.16.1 (the ``lab`` extra installs it)."""
    from .confluent_kafka import clients

    return clients()


def java() -> ClientSide:
    """The Java client (the lab's Kafka release) through a driver process (:mod:`course_lib.java_client`; needs a
    JDK and Maven, :func:`java_missing` says what is missing)."""
    from .java import clients

    return clients()


def java_missing() -> str | None:
    """Why the Java client cannot run here (None: it can)."""
    from course_lib.real.lab import jvm_missing

    return jvm_missing()


#: every client adapter, by name: what tests/test_layers.py composes with each cluster
CLIENTS = {"kafka-python": kafka_python, "confluent-kafka": confluent_kafka, "java": java}
