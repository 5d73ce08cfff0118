"""kafka-python's clients as a client adapter (:class:`~course_lib.client_adapters.ClientSide`):
:mod:`course_lib.client_adapters.recording`'s recording ``KafkaProducer`` and ``KafkaConsumer``, reads of end
offsets and the final read through a kafka-python consumer. Works with any cluster whose
``client_config()`` gives kafka-python's connection settings. Its consumer-group member
(:class:`GroupMember`) speaks the classic protocol, the only one kafka-python 3.0.12 has."""

from __future__ import annotations

import time
from typing import Any

from ..in_thread import InThread
from ..history import INFO, Nemesis
from .members import GroupMember as GroupMemberBase


class KafkaPythonClients:
    name = "kafka-python"

    def producer(self, backend: Any, process: str, config: dict) -> Any:
        from .recording import RecordingProducer

        return RecordingProducer(backend, process, **config)

    def consumer(self, backend: Any, process: str, topics: tuple[str, ...], config: dict) -> Any:
        from .recording import RecordingConsumer

        return RecordingConsumer(backend, process, *topics, **config)

    def freeze(self, backend: Any, consumer: Any) -> None:
        """A frozen consumer leaves its group after max.poll.interval.ms; closing it (without a
        commit) has the same effect without the wait."""
        backend.history.record("nemesis", INFO, Nemesis.FREEZE_CLIENT, {"client": consumer.node_id})
        consumer.close_quietly()

    def end_offset(self, cluster: Any, topic: str, partition: int = 0, read_committed: bool = False) -> int:
        from .recording import end_offset

        return end_offset(cluster, topic, partition, read_committed)

    def final_read(self, backend: Any, topic: str, isolation_level: str = "read_uncommitted") -> list:
        from .recorded import final_read
        from .recording import read_partition

        return final_read(backend, topic, isolation_level, read_partition)


class GroupMember(GroupMemberBase):
    """kafka-python's ``KafkaConsumer`` (``config``: Java's names; the classic protocol, the only
    one kafka-python 3.0.12 speaks) subscribed to ``topics``, polling in a thread of its own
    (:class:`~course_lib.in_thread.InThread`), as a separate application would: kafka-python
    collects a join only if it finishes inside ``poll()`` (the next poll throws a join finished
    meanwhile away and sends a new JoinGroup: :mod:`course_lib.client_adapters.joining`), so one thread taking
    turns between two consumers keeps each outside ``poll()`` half the time and the group
    rebalances over and over. Only its thread touches the consumer. ``owned()`` and ``epoch()``
    (the generation) are what it holds while stable: ``[]`` and -1 while it (re)joins; ``poll()``
    returns what the thread read since the last call."""

    #: how long a :meth:`poll` paces its caller's loop: the thread polls by itself
    PACE_S = 0.02

    def __init__(self, config: dict, topics: list[str]) -> None:
        settings = {name.replace(".", "_"): value for name, value in config.items()}
        protocol = str(settings.pop("group_protocol", "classic")).lower()
        if protocol != "classic":
            raise ValueError(f"kafka-python 3.0.12 speaks only the classic group protocol, not {protocol!r}")
        self._settings, self._topics = settings, list(topics)
        self._state: tuple[list[int], int] = ([], -1)
        self._read = self._counted = 0
        self._thread = InThread(f"member-{settings.get('client_id', 'kafka-python')}", self._run)

    def _run(self, stopping: Any) -> None:
        from kafka import KafkaConsumer

        from .joining import before_first_join

        consumer = KafkaConsumer(**self._settings)
        consumer.subscribe(self._topics)
        before_first_join(consumer)
        try:
            while not stopping.is_set():
                self._read += sum(len(records) for records in consumer.poll(timeout_ms=200).values())
                meta = consumer.group_metadata()
                stable = meta.state == "<stable>"
                self._state = (
                    sorted(tp.partition for tp in consumer.assignment()) if stable else [],
                    meta.generation_id if stable else -1,
                )
        finally:
            consumer.close()

    def _poll(self, timeout_s: float) -> int:  # its thread polls by itself: this paces the caller
        self._thread.check()  # the thread's exception, if it died
        time.sleep(self.PACE_S)
        total = self._read  # once: the thread may add to it meanwhile
        read, self._counted = total - self._counted, total
        return read

    def owned(self) -> list[int]:
        return list(self._state[0])

    def epoch(self) -> int:  # -1 until the group is stable, never None
        return self._state[1]

    def close(self) -> None:
        self._thread.stop()


class ShareGroupAssignments:
    """Which members of a share group the group coordinator has given a partition, asked with
    ShareGroupDescribe through kafka-python's admin connection (kafka-python 3.0.12's admin has no
    call for it, confluent-kafka 2.16.1's none either; no consumer shows it). ``describe(group)``
    builds the request: its schema is the wire package's, which the adapters do not import.

    A coordinator that moved (a crash) or is still loading answers an error: the answer is then
    "none yet", and the next ask finds the coordinator again."""

    #: COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR: the group's coordinator is elsewhere now
    MOVED = (15, 16)

    def __init__(self, bootstrap: str, describe: Any):
        from kafka.admin import KafkaAdminClient

        self._admin = KafkaAdminClient(bootstrap_servers=bootstrap)
        self._describe = describe

    def client_ids(self, group: str) -> set[str]:
        """The ``client.id`` of each member that has a partition (none while the coordinator moves)."""
        from kafka.errors import KafkaError

        admin = self._admin

        async def describe() -> Any:
            node = await admin._find_coordinator_id(group)
            return await admin._manager.send(self._describe(group), node_id=node)

        try:
            described = admin._manager.run(describe).groups[0]
        except KafkaError as e:
            if not e.retriable:  # a coordinator still loading or moving answers again soon
                raise
            self._forget_coordinator(group)
            return set()
        if described.error_code in self.MOVED:
            self._forget_coordinator(group)
        return {m.client_id for m in described.members if any(tp.partitions for tp in m.assignment.topic_partitions)}

    def _forget_coordinator(self, group: str) -> None:
        """kafka-python's admin caches a group's coordinator for good (``ClusterMetadata
        ._coordinators``): after a crash moved it, the next describe asks FindCoordinator again."""
        from kafka.protocol.metadata import CoordinatorType

        self._admin._manager.cluster._coordinators.pop((CoordinatorType.GROUP, group), None)

    def close(self) -> None:
        self._admin.close()
