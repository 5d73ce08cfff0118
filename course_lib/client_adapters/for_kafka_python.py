"""kafka-python's clients as a client adapter (:class:`~course_lib.client_adapters.ClientSide`):
:mod:`course_lib.real.recording`'s recording ``KafkaProducer`` and ``KafkaConsumer``, reads of end
offsets and the final read through a kafka-python consumer. Works with any cluster whose
``client_config()`` gives kafka-python's connection settings."""

from __future__ import annotations

from typing import Any

from ..history import INFO, Nemesis


class KafkaPythonClients:
    name = "kafka-python"

    def producer(self, backend: Any, process: str, config: dict) -> Any:
        from ..real.recording import RecordingProducer

        return RecordingProducer(backend, process, **config)

    def consumer(self, backend: Any, process: str, topics: tuple[str, ...], config: dict) -> Any:
        from ..real.recording import RecordingConsumer

        return RecordingConsumer(backend, process, *topics, **config)

    def freeze(self, backend: Any, consumer: Any) -> None:
        """A frozen consumer leaves its group after max.poll.interval.ms; closing it (without a
        commit) has the same effect without the wait."""
        backend.history.record("nemesis", INFO, Nemesis.FREEZE_CLIENT, {"client": consumer.node_id})
        consumer.close_quietly()

    def end_offset(self, cluster: Any, topic: str, partition: int = 0, read_committed: bool = False) -> int:
        from ..real.recording import end_offset

        return end_offset(cluster, topic, partition, read_committed)

    def final_read(self, backend: Any, topic: str, isolation_level: str = "read_uncommitted") -> list:
        from ..real.recording import final_read

        return final_read(backend, topic, isolation_level)
