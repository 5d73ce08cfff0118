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

from .members import MemberState
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
    (:mod:`.members`). Each :meth:`poll` moves the cluster's clock by up to its timeout. It lives
    in the simulated cluster's process, so any member can die: :meth:`kill` is the simulated
    client's ``crash()`` (no leave heartbeat; the coordinator removes it after the session
    timeout, in virtual time). ``member_id``: the id it joins with, where a real client draws its
    own (KIP-1082) - so a differential's simulated member takes the id its real twin drew."""

    def __init__(self, config: dict, topics: list[str], member_id: str | None = None) -> None:
        from ..clients import KafkaConsumer

        self._closed = False
        self._c = KafkaConsumer(**{name.replace(".", "_"): value for name, value in config.items()})
        if member_id is not None:
            self._c._member_id = member_id  # before subscribe() joins
        self._c.subscribe(list(topics))

    def _poll(self, timeout_s: float) -> int:
        return sum(len(records) for records in self._c.poll(timeout_ms=int(timeout_s * 1000)).values())

    def commit(self) -> None:
        self._c.commit()

    def owned(self) -> list[int]:
        return sorted(tp.partition for tp in self._c.assignment())

    def epoch(self) -> int | None:
        return self._c.group_metadata().generation_id

    def state(self) -> MemberState:
        owned = self.owned()
        positions = {tp[1]: position for tp, position in self._c.positions.items() if tp[1] in owned}
        return MemberState(self._c._member_id, self.epoch(), owned, positions)

    def kill(self) -> None:
        self._c.crash()
        self._closed = True

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._c.close()
