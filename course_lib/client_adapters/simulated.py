"""The simulator's clients as a client adapter (:class:`~course_lib.client_adapters.ClientSide`):
:mod:`course_lib.clients`' ``KafkaProducer`` and ``KafkaConsumer`` (kafka-python's API, run
in-process on the virtual clock). They join a
:class:`~course_lib.broker.simulated_cluster.SimulatedCluster` only (its ``client_config()``
hands them the cluster object), so they are not in :data:`~course_lib.client_adapters.CLIENTS`,
which every wall-clock cluster composes with.

A simulated client records its own calls in the cluster's history (the run's) under its node
id, which it takes from the cluster (its ``client_id``, else ``producer-N``/``consumer-N``): the
``process`` a backend passes is that same rule's name, so it is not used here."""

from __future__ import annotations

import warnings
from typing import Any

from .members import POLL_S
from .members import GroupMember as GroupMemberBase


class SimulatedClients:
    name = "the simulator's clients"

    def producer(self, backend: Any, process: str, config: dict) -> Any:
        from ..clients import KafkaProducer

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # scenarios set enable_idempotence explicitly when it matters
            return KafkaProducer(**backend.cluster.client_config(), **config)

    def consumer(self, backend: Any, process: str, topics: tuple[str, ...], config: dict) -> Any:
        from ..clients import KafkaConsumer

        return KafkaConsumer(*topics, **backend.cluster.client_config(), **config)

    def freeze(self, backend: Any, consumer: Any) -> None:
        consumer.freeze()  # the simulated client records freeze_client itself

    def end_offset(self, cluster: Any, topic: str, partition: int = 0, read_committed: bool = False) -> int:
        """The leader's high watermark (last stable offset with ``read_committed``), as a
        simulated consumer's ListOffsets reads it."""
        view = cluster.inspect(topic, partition)
        end = view.lso if read_committed else view.hw
        if end is None:
            raise RuntimeError(
                f"{topic}-{partition} is offline (no live leader): restart a broker or call heal() first"
            )
        return end

    def final_read(self, backend: Any, topic: str, isolation_level: str = "read_uncommitted") -> list:
        """Heal, settle and read every partition in full, recorded as ``final_read``."""
        return backend.cluster.cluster.final_read(topic, isolation_level=isolation_level)


class GroupMember(GroupMemberBase):
    """The simulator's ``KafkaConsumer`` (``config``: Java's names, ``bootstrap.servers`` the
    simulated ``Cluster``), subscribed to ``topics``: the consumer-group workload's contract
    (:mod:`.members`). Each :meth:`poll` moves the cluster's clock by up to 100 ms. It lives
    in the simulated cluster's process, so any member can die: :meth:`kill` is the simulated
    client's ``crash()`` (no leave heartbeat; the coordinator removes it after the session
    timeout, in virtual time)."""

    def __init__(self, config: dict, topics: list[str]) -> None:
        from ..clients import KafkaConsumer

        self._closed = False
        self._c = KafkaConsumer(*topics, **{name.replace(".", "_"): value for name, value in config.items()})

    def _poll(self) -> int:
        return sum(len(records) for records in self._c.poll(timeout_ms=int(POLL_S * 1000)).values())

    def owned(self) -> list[int]:
        return sorted(tp.partition for tp in self._c.assignment())

    def epoch(self) -> int | None:
        return self._c.group_metadata().generation_id

    def kill(self) -> None:
        self._c.crash()
        self._closed = True

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._c.close()
