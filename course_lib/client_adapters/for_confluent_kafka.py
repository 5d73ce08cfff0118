"""librdkafka's clients (through confluent-kafka 2.16.1) as a client adapter
(:class:`~course_lib.client_adapters.ClientSide`): kafka-python's API and config names in,
librdkafka's calls inside, every call recorded by :mod:`.recorded`.

How librdkafka's API is made kafka-python's, and where it cannot be:

- a send has no future in librdkafka: ``produce()`` takes a delivery callback, run inside
  ``poll()``/``flush()``. Each send gets a :class:`~.recorded.SendFuture` that the callback
  completes; waiting on it (``is_done``, ``get``) serves the callbacks with ``poll()``;
- a consumer's ``poll()`` returns one message: the adapter polls one (waiting up to the
  timeout), then takes what is already fetched up to ``max_poll_records`` (librdkafka has no such
  setting) with ``consume(timeout=0)``;
- ``seek()`` right after ``assign()`` is refused by librdkafka until fetching started: a seek of
  a partition assigned by hand assigns it again at the offset;
- ``crash()``: purge what is still queued in the client and destroy it without ``close()``
  (which would abort the open transaction and flush);
- differences kept, not hidden: librdkafka's defaults (``enable.idempotence=false``, the
  ``consistent_random`` partitioner: keyed records land elsewhere than with kafka-python's
  murmur2), its error names (``_MSG_TIMED_OUT`` in the history; the kafka-python class raised),
  bootstrap (librdkafka re-resolves its bootstrap list), a commit of a transaction one of whose
  sends failed (librdkafka refuses it, kafka-python commits it).
"""

from __future__ import annotations

import logging
import time
import zlib
from typing import Any

import confluent_kafka as ck
from kafka import errors as Errors

from .members import GroupMember as GroupMemberBase
from ..history import as_text
from .recorded import (
    GROUP_MOVED_ON,
    Record,
    RecordedClients,
    RecordedConsumer,
    RecordedProducer,
    RecordMetadata,
    SendFuture,
    kafka_python_error,
    settled_end,
    translate,
)

#: kafka-python names librdkafka spells otherwise
NAMES = {
    "sasl_plain_username": "sasl.username",
    "sasl_plain_password": "sasl.password",
    "fetch_max_wait_ms": "fetch.wait.max.ms",
}
#: kafka-python settings with no librdkafka counterpart
REFUSED = {
    "proxy_url": "librdkafka has no SOCKS5 proxy setting (a shared cluster's lost ACKs need kafka-python)",
    "api_version": "librdkafka negotiates versions itself (api.version.request)",
    "max_block_ms": "librdkafka's produce() never blocks on metadata (it queues)",
}


def _error(exc: BaseException, commit: bool = False) -> BaseException:
    """A librdkafka error as a kafka-python error (its own name kept in ``native``)."""
    err = exc.args[0] if isinstance(exc, ck.KafkaException) and exc.args else exc
    if not isinstance(err, ck.KafkaError):
        return exc
    name = err.name()
    if commit and name in GROUP_MOVED_ON:
        out = Errors.CommitFailedError(f"{name}: {err.str()}")
        out.native = name
        return out
    return kafka_python_error([name], err.str())


#: librdkafka's own log lines (a broker going away is logged at error level) go to Python's
#: logging, silent unless the application configures this logger
LOG = logging.getLogger("course_lib.librdkafka")
LOG.addHandler(logging.NullHandler())


def _config(cluster: Any, config: dict) -> dict:
    from ..clusters.parts import client_config

    return {**translate({**client_config(cluster), **config}, REFUSED, NAMES), "logger": LOG}


class ConfluentProducer(RecordedProducer):
    def __init__(self, backend: Any, process: str, config: dict) -> None:
        super().__init__(backend, process, config)
        self._p: Any = ck.Producer(_config(backend.cluster, {"client_id": process, **config}))
        self._partitions: dict[str, set[int]] = {}

    def _native_send(self, topic, value, key, partition, future: SendFuture) -> None:
        def delivered(err, msg) -> None:
            if err is not None:
                future.fail(kafka_python_error([err.name()], err.str()))
            else:
                future.resolve(RecordMetadata(msg.topic(), msg.partition(), msg.offset()))

        extra = {} if partition is None else {"partition": partition}
        while True:
            try:
                self._p.produce(topic, value, key, on_delivery=delivered, **extra)
                return
            except BufferError:  # the client's queue is full: serve deliveries, as kafka-python blocks
                self._p.poll(0.1)

    def _keyed_partition(self, key: bytes, partitions: int) -> int:
        """librdkafka's ``consistent_random`` partitioner: CRC-32 of the key (not kafka-python's
        and Java's murmur2: the same keys land on other partitions)."""
        return zlib.crc32(key) % partitions

    def _serve(self, seconds: float) -> None:
        if self._p is not None:
            self._p.poll(seconds)

    def _native_flush(self, timeout) -> None:
        self._p.flush(timeout) if timeout is not None else self._p.flush()

    def _native_partitions(self, topic: str) -> set[int]:
        if topic not in self._partitions:
            meta = self._p.list_topics(topic, timeout=10).topics.get(topic)
            found = set(meta.partitions) if meta is not None and meta.error is None else set()
            if not found:
                return found
            self._partitions[topic] = found
        return self._partitions[topic]

    def _native_transaction(self, call: str, *args: Any) -> None:
        if call == "send_offsets_to_transaction":
            offsets, metadata = args
            args = ([ck.TopicPartition(t, p, o) for (t, p), o in sorted(offsets.items())], metadata)
        getattr(self._p, call)(*args)

    def _error(self, exc: BaseException) -> BaseException:
        return _error(exc)

    def _native_close(self, timeout) -> None:
        self._p.flush(timeout) if timeout is not None else self._p.flush()
        self._p = None  # destroyed: librdkafka has no other close (Producer.close would abort a transaction)

    def _native_kill(self) -> None:
        if self._p is not None:
            self._p.purge(in_queue=True, in_flight=False)  # what is on its way stays on its way
            self._p = None  # destroyed without a word to the cluster


class ConfluentConsumer(RecordedConsumer):
    def __init__(self, backend: Any, process: str, topics: tuple[str, ...], config: dict) -> None:
        super().__init__(backend, process, config)
        native = {k: v for k, v in {"client_id": process, **config}.items() if k != "max_poll_records"}
        # librdkafka wants a group id even for a consumer that only assign()s (it never joins)
        native.setdefault("group_id", f"{process}-assigns-only")
        self._reset = config.get("auto_offset_reset", "latest")
        self._c: Any = ck.Consumer(_config(backend.cluster, native))
        self._assigned: list[tuple[str, int]] | None = None
        if topics:
            self._c.subscribe(list(topics))

    def _native_poll(self, timeout_s: float, max_records: int | None) -> list[Record]:
        first = self._c.poll(timeout_s)
        msgs = [] if first is None else [first]
        if first is not None and (max_records or 500) > 1:
            msgs += self._c.consume(num_messages=(max_records or 500) - 1, timeout=0)
        out = []
        for m in msgs:
            if m.error() is not None:
                if m.error().fatal():
                    raise _error(ck.KafkaException(m.error()))
                continue  # partition EOF and transient errors: librdkafka retries them itself
            out.append(Record(m.topic(), m.partition(), m.offset(), m.key(), m.value()))
        return out

    def _native_assign(self, partitions: list[tuple[str, int]]) -> None:
        self._assigned = list(partitions)
        self._c.assign([ck.TopicPartition(t, p) for t, p in partitions])

    def _native_seek(self, partition: tuple[str, int], offset: int) -> None:
        if self._assigned is None:
            self._c.seek(ck.TopicPartition(*partition, offset))
            return
        keep = {tp: self._known_position(tp) for tp in self._assigned}
        keep[partition] = offset
        self._c.assign([ck.TopicPartition(t, p, o) for (t, p), o in keep.items()])

    def _known_position(self, tp: tuple[str, int]) -> int:
        return self._c.position([ck.TopicPartition(*tp)])[0].offset

    def _native_position(self, partition: tuple[str, int]) -> int:
        """kafka-python's position(): the next offset to read, looked up when nothing was read
        yet (the committed offset, or the reset policy's end)."""
        pos = self._known_position(partition)
        if pos >= 0:
            return pos
        if self.config.get("group_id"):
            committed = self._c.committed([ck.TopicPartition(*partition)], timeout=10)[0].offset
            if committed >= 0:
                return committed
        low, high = self._c.get_watermark_offsets(ck.TopicPartition(*partition), timeout=10)
        return low if self._reset == "earliest" else high

    def _native_assignment(self) -> set[tuple[str, int]]:
        return {(tp.topic, tp.partition) for tp in self._c.assignment()}

    def _native_commit(self, offsets: dict[tuple[str, int], int]) -> None:
        try:
            self._c.commit(offsets=[ck.TopicPartition(t, p, o) for (t, p), o in offsets.items()], asynchronous=False)
        except ck.KafkaException as exc:
            raise _error(exc, commit=True) from exc

    def _error(self, exc: BaseException) -> BaseException:
        return _error(exc)

    def group_metadata(self) -> Any:
        return self._c.consumer_group_metadata()

    def _native_close(self, autocommit: bool) -> None:
        self._c.close()  # commits only with enable.auto.commit (librdkafka's close, whatever autocommit says)


# ---- reading partitions with librdkafka -------------------------------------------------------
def _reader(cluster: Any, isolation_level: str) -> Any:
    # the group is never joined: assign() only, no commits
    settings = {"group_id": "course-reader", "enable_auto_commit": False, "isolation_level": isolation_level}
    return ck.Consumer(_config(cluster, settings))


def _high_watermark(c: Any, tp: Any) -> int:
    try:
        return c.get_watermark_offsets(tp, timeout=10, cached=False)[1]
    except ck.KafkaException:  # after a broker crash librdkafka replaces its handle: ask again
        return -1


def _settled_end(c: Any, tp: Any) -> int:
    return settled_end(lambda: _high_watermark(c, tp))


def end_offset(cluster: Any, topic: str, partition: int = 0, read_committed: bool = False) -> int:
    """The end offset (last stable offset read committed) as librdkafka's ListOffsets reads it."""
    c = _reader(cluster, "read_committed" if read_committed else "read_uncommitted")
    try:
        return _settled_end(c, ck.TopicPartition(topic, partition))
    finally:
        c.close()


def read_partition(
    cluster: Any, topic: str, partition: int = 0, isolation_level: str = "read_uncommitted", timeout_s: float = 30
) -> list:
    """Every record of one partition, as ``[partition, offset, value]``: until the position
    reaches the end offset, or (read committed, where the last offsets are markers librdkafka's
    position may not pass) nothing new came for 3 s after the last record."""
    c = _reader(cluster, isolation_level)
    rows: list = []
    try:
        tp = ck.TopicPartition(topic, partition)
        end = _settled_end(c, tp)
        if end <= 0:
            return rows
        c.assign([ck.TopicPartition(topic, partition, ck.OFFSET_BEGINNING)])
        deadline, quiet_until = time.monotonic() + timeout_s, None
        while time.monotonic() < deadline:
            m = c.poll(0.2)
            if m is not None and m.error() is None:
                rows.append([partition, m.offset(), as_text(m.value())])
                quiet_until = time.monotonic() + 3
            if c.position([tp])[0].offset >= end or (rows and rows[-1][1] >= end - 1):
                break
            if quiet_until is not None and time.monotonic() > quiet_until:
                break
    finally:
        c.close()
    return rows


def clients() -> RecordedClients:
    """librdkafka's producer and consumer (confluent-kafka 2.16.1), kafka-python's API."""
    return RecordedClients("confluent-kafka", ConfluentProducer, ConfluentConsumer, end_offset, read_partition)


def share_consumer(config: dict) -> ck.ShareConsumer:
    """confluent-kafka's ``ShareConsumer`` with ``config`` (the share workload's contract as it is:
    :func:`course_lib.client_adapters.share_consumer`)."""
    # librdkafka's share consumer takes its settings as strings ("500", "true")
    return ck.ShareConsumer({k: str(v).lower() if isinstance(v, bool) else str(v) for k, v in config.items()})


class GroupMember(GroupMemberBase):
    """confluent-kafka's ``Consumer`` with ``config`` (librdkafka's names), subscribed to
    ``topics``: the consumer-group workload's contract (:mod:`.members`); librdkafka shows
    no member epoch, and dies only in a process of its own (:class:`.own_process.GroupMemberProcess`)."""

    def __init__(self, config: dict, topics: list[str]) -> None:
        self._c = ck.Consumer(config)
        self._c.subscribe(list(topics))
        self._closed = False

    def _poll(self, timeout_s: float) -> int:
        m = self._c.poll(timeout_s)
        return int(m is not None and m.error() is None)

    def owned(self) -> list[int]:
        return sorted(p.partition for p in self._c.assignment())

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._c.close()
