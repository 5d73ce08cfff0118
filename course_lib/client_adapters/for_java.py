"""The Java client (kafka-clients of the lab's Kafka release) as a client adapter
(:class:`~course_lib.client_adapters.ClientSide`), through one driver process
(:mod:`course_lib.java_client`, started at first use and shared by every run of this Python
process, as Jepsen keeps one client process per node): kafka-python's API and config names in,
Java's calls inside, every call recorded by :mod:`.recorded`.

How Java's API is made kafka-python's, and where it cannot be:

- a send's Java future lives in the driver: its :class:`~.recorded.SendFuture` asks the driver
  for the outcomes of every unfinished send of the producer (one call) when it is waited on, at
  ``flush()`` and at ``close()``;
- ``send_offsets_to_transaction(offsets, group_metadata)``: the group metadata is the consumer's
  (``groupMetadata()`` taken by the driver when the offsets are sent, not when the application
  asked for it - the driver has no ConsumerGroupMetadata value to hold);
- ``poll(max_records=...)``: Java has only ``max.poll.records`` (set from ``max_poll_records``);
- ``crash()``: ``close(Duration.ZERO)`` - no flush, no EndTxn; what is in flight fails in the
  client and stays unknown in the history;
- differences kept, not hidden: Java refuses to commit a transaction one of whose sends failed
  (kafka-python commits it); an idempotent producer whose sequence broke bumps its epoch (where
  kafka-python's stays wedged); Java re-bootstraps when every known broker is gone (each
  measured with every client by :mod:`course_lib.experiments.by_design`); its exception names are in the
  history (the kafka-python class is raised).
"""

from __future__ import annotations

import atexit
import threading
import time
from typing import Any

from ..java_client import DriverProcess, JavaConsumer, JavaException, JavaProducer, outcomes
from ..java_client import TopicPartition as JavaTopicPartition
from .members import GroupMember as GroupMemberBase
from .members import MemberState
from ..history import as_text
from .recorded import (
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

REFUSED = {
    "proxy_url": "the Java client has no SOCKS5 proxy setting (a shared cluster's lost ACKs need kafka-python)",
    "api_version": "the Java client negotiates versions itself",
}

_driver: DriverProcess | None = None
_driver_lock = threading.Lock()


def driver() -> DriverProcess:
    """The one driver process of this Python process (started, and compiled if need be, at first
    use; stopped at exit)."""
    global _driver
    with _driver_lock:
        if _driver is None or not _driver.alive():
            _driver = DriverProcess()
            atexit.register(_driver.close)
        return _driver


def stop_driver() -> None:
    """Stop the shared driver now (tests that must leave no process behind)."""
    global _driver
    with _driver_lock:
        if _driver is not None:
            _driver.close()
            _driver = None


def _properties(cluster: Any, config: dict) -> dict[str, str]:
    """kafka-python's settings as Java properties (strings, as a Properties file has them)."""
    from ..clusters.parts import client_config

    config = {**client_config(cluster), **config}
    user, password = config.pop("sasl_plain_username", None), config.pop("sasl_plain_password", None)
    props = {k: _string(v) for k, v in translate(config, REFUSED).items()}
    if user is not None:
        module = "scram.ScramLoginModule" if "SCRAM" in str(config.get("sasl_mechanism")) else "plain.PlainLoginModule"
        props["sasl.jaas.config"] = (
            f'org.apache.kafka.common.security.{module} required username="{user}" password="{password}";'
        )
    return props


def _string(value: Any) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


def _error(exc: BaseException, commit: bool = False) -> BaseException:
    if not isinstance(exc, JavaException):
        return exc
    if commit and any(name in exc.chain for name in ("RebalanceInProgressException", "FencedInstanceIdException")):
        return kafka_python_error(["CommitFailedException", *exc.chain], exc.message or "")
    return kafka_python_error(exc.chain, exc.message or "")


class JavaRecordedProducer(RecordedProducer):
    def __init__(self, backend: Any, process: str, config: dict) -> None:
        super().__init__(backend, process, config)
        self._driver = driver()
        self._p = JavaProducer(self._driver, _properties(backend.cluster, {"client_id": process, **config}))
        self._pending: list[tuple[Any, SendFuture]] = []
        self._partitions: dict[str, set[int]] = {}
        self._lock = threading.Lock()

    def _native_send(self, topic, value, key, partition, future: SendFuture) -> None:
        try:
            java_future = self._p.send(topic, value, key=key, partition=partition)
        except JavaException as exc:  # refused before it was queued (a closed or fenced producer)
            future.fail(_error(exc))
            return
        with self._lock:
            self._pending.append((java_future, future))

    def _keyed_partition(self, key: bytes, partitions: int) -> int:
        """Java's default partitioner: murmur2 of the key, as kafka-python's."""
        from kafka.partitioner.default import murmur2

        return (murmur2(key) & 0x7FFFFFFF) % partitions

    def _serve(self, seconds: float) -> None:
        with self._lock:
            pending, self._pending = self._pending, []
        if pending:
            still = []
            for (java_future, future), (state, value) in zip(
                pending, outcomes(self._driver, [j for j, _ in pending]), strict=True
            ):
                if state == "done":
                    future.resolve(RecordMetadata(value.topic, value.partition, value.offset))
                elif state == "failed":
                    future.fail(_error(value))
                else:
                    still.append((java_future, future))
            with self._lock:
                self._pending = still + self._pending
        if seconds > 0 and self._pending:
            time.sleep(seconds)

    def _native_flush(self, timeout) -> None:
        try:
            self._p.flush(timeout=timeout)
        except JavaException as exc:
            raise _error(exc) from exc

    def _native_partitions(self, topic: str) -> set[int]:
        if topic not in self._partitions:
            found = set(self._p.partitions_for(topic))
            if not found:
                return found
            self._partitions[topic] = found
        return self._partitions[topic]

    def _native_transaction(self, call: str, *args: Any) -> None:
        if call == "send_offsets_to_transaction":
            offsets, consumer = args
            group = consumer if isinstance(consumer, (JavaConsumer, str)) else str(consumer)
            self._p.send_offsets_to_transaction(offsets, group)
        else:
            getattr(self._p, call)()

    def _error(self, exc: BaseException) -> BaseException:
        return _error(exc)

    def _native_close(self, timeout) -> None:
        try:
            self._p.close(timeout=timeout)
        except JavaException as exc:
            raise _error(exc) from exc

    def _native_kill(self) -> None:
        try:
            self._p.close(timeout=0)  # close(Duration.ZERO): in-flight sends fail, no EndTxn
        except JavaException:
            pass


class JavaRecordedConsumer(RecordedConsumer):
    def __init__(self, backend: Any, process: str, topics: tuple[str, ...], config: dict) -> None:
        super().__init__(backend, process, config)
        self._c = JavaConsumer(driver(), _properties(backend.cluster, {"client_id": process, **config}))
        if topics:
            self._c.subscribe(topics)

    def _native_poll(self, timeout_s: float, max_records: int | None) -> list[Record]:
        try:
            got = self._c.poll(timeout_s)
        except JavaException as exc:
            raise _error(exc) from exc
        return [Record(r.topic, r.partition, r.offset, r.key, r.value) for r in got]

    def _native_assign(self, partitions: list[tuple[str, int]]) -> None:
        self._c.assign(partitions)

    def _native_seek(self, partition: tuple[str, int], offset: int) -> None:
        self._c.seek(partition, offset)

    def _native_position(self, partition: tuple[str, int]) -> int:
        return self._c.position(partition)

    def _native_assignment(self) -> set[tuple[str, int]]:
        return {(tp.topic, tp.partition) for tp in self._c.assignment()}

    def _native_commit(self, offsets: dict[tuple[str, int], int]) -> None:
        try:
            self._c.commit_sync({JavaTopicPartition(t, p): o for (t, p), o in offsets.items()})
        except JavaException as exc:
            raise _error(exc, commit=True) from exc

    def _error(self, exc: BaseException) -> BaseException:
        return _error(exc)

    def group_metadata(self) -> Any:
        return self._c

    def _native_close(self, autocommit: bool) -> None:
        self._c.close(timeout=5)  # commits only with enable.auto.commit (Java's close)


# ---- reading partitions with the Java consumer ------------------------------------------------
def _reader(cluster: Any, isolation_level: str) -> JavaConsumer:
    return JavaConsumer(
        driver(), _properties(cluster, {"enable_auto_commit": False, "isolation_level": isolation_level})
    )


def _settled_end(c: JavaConsumer, tp: JavaTopicPartition) -> int:
    return settled_end(lambda: c.end_offsets([tp])[tp])


def end_offset(cluster: Any, topic: str, partition: int = 0, read_committed: bool = False) -> int:
    c = _reader(cluster, "read_committed" if read_committed else "read_uncommitted")
    try:
        return _settled_end(c, JavaTopicPartition(topic, partition))
    finally:
        c.close(timeout=5)


def read_partition(
    cluster: Any, topic: str, partition: int = 0, isolation_level: str = "read_uncommitted", timeout_s: float = 30
) -> list:
    """Every record of one partition, as ``[partition, offset, value]``, until Java's position
    reaches the end offset (it passes transaction markers)."""
    c = _reader(cluster, isolation_level)
    rows: list = []
    try:
        tp = JavaTopicPartition(topic, partition)
        c.assign([tp])
        end = _settled_end(c, tp)
        c.seek_to_beginning([tp])
        deadline = time.monotonic() + timeout_s
        while c.position(tp) < end and time.monotonic() < deadline:
            rows += [[partition, r.offset, as_text(r.value)] for r in c.poll(0.2)]
    finally:
        c.close(timeout=5)
    return rows


def clients() -> RecordedClients:
    """The Java client's producer and consumer (the lab's kafka-clients), kafka-python's API."""
    return RecordedClients("java", JavaRecordedProducer, JavaRecordedConsumer, end_offset, read_partition)


def _share_exception(error: dict | None) -> Any:
    """A Java error (its class and message) as confluent-kafka's ``KafkaException``, whose
    ``KafkaError.name()`` is Kafka's name of it; None for None."""
    from ..clients.share_consumer import KafkaError, KafkaException

    if error is None:
        return None
    java = error["class"].rsplit(".", 1)[-1]
    return KafkaException(KafkaError(type(kafka_python_error([java], error.get("message") or ""))))


class ShareConsumer:
    """confluent-kafka's ``ShareConsumer`` - the share-group workload's contract
    (:func:`course_lib.client_adapters.share_consumer`) - over the Java client's
    ``KafkaShareConsumer`` in the driver process, so a share-group experiment written once runs
    with every client.

    ``config``: Java's (and librdkafka's) names. ``poll(timeout)`` returns
    :class:`~course_lib.clients.share_consumer.Message` s without timestamp or headers (the driver
    does not send them); ``acknowledge(message, ack_type)`` takes any ``AcknowledgeType`` (the
    simulator's, confluent-kafka's: the same ids); ``commit_sync()`` answers per partition None
    or a ``KafkaException`` whose ``KafkaError.name()`` is Kafka's name of the error Java raised
    (``InvalidRecordStateException``: INVALID_RECORD_STATE); ``commit_async()`` and
    ``set_acknowledgement_commit_callback`` as confluent-kafka's. ``own_process``: in a JVM of its
    own rather than the shared driver, so that :meth:`kill` (SIGKILL: its connections close, a
    crash) and :meth:`freeze` (SIGSTOP: they stay open, a machine gone) end only this consumer;
    :meth:`close` then also ends the JVM."""

    def __init__(self, config: dict, own_process: bool = False) -> None:
        from ..java_client import JavaShareConsumer

        self._own = DriverProcess() if own_process else None
        self._ended = False
        self._callback: Any = None
        try:
            self._c = JavaShareConsumer(self._own or driver(), {k: _string(v) for k, v in config.items()})
        except BaseException:
            self._end()  # nobody else will: the caller never got this consumer
            raise

    def subscribe(self, topics: list[str]) -> None:
        self._c.subscribe(topics)

    def poll(self, timeout: float = -1) -> list:
        from ..clients.share_consumer import Message, RecordFields

        polled = self._c.poll(max(timeout, 0))
        self._report_commits()
        return [Message(r.topic, r.partition, r.offset, RecordFields(r.key, r.value), r.delivery_count) for r in polled]

    def acknowledge(self, message: Any, ack_type: Any = 1) -> None:
        from ..clients.share_consumer import AcknowledgeType
        from ..java_client import ShareRecord

        record = ShareRecord(message.topic(), message.partition(), message.offset(), None, None, None)
        self._c.acknowledge(record, AcknowledgeType(int(ack_type)).name)

    def commit_sync(self, timeout: float = 60) -> dict:
        from kafka.structs import TopicPartition

        try:
            return {
                TopicPartition(tp.topic, tp.partition): _share_exception(error)
                for tp, error in self._c.commit_sync(timeout).items()
            }
        finally:
            self._report_commits()

    def commit_async(self) -> None:
        self._c.commit_async()
        self._report_commits()

    def set_acknowledgement_commit_callback(self, callback: Any) -> None:
        """``callback(offsets, exception)`` as confluent-kafka's: ``offsets``
        ``{TopicPartition: set of offsets}``, ``exception`` None or a ``KafkaException``; called
        for what Java gave its callback inside this consumer's poll or commit."""
        if callback is not None and not callable(callback):
            raise TypeError("the acknowledgement commit callback must be callable(offsets, exception) or None")
        self._callback = callback

    def _report_commits(self) -> None:
        from kafka.structs import TopicPartition

        for offsets, error in self._c.acknowledgement_commits():
            if self._callback is not None:
                parts = {TopicPartition(tp.topic, tp.partition): o for tp, o in offsets.items()}
                self._callback(parts, _share_exception(error))

    def close(self) -> None:
        """Close the consumer (unless its JVM was killed or frozen); its own JVM ends too."""
        try:
            if not self._ended:
                self._c.close(10)
        finally:
            self._end()

    def kill(self) -> None:
        """SIGKILL of its own JVM: a crash - its connections close with the process."""
        self._process("kill").kill()
        self._ended = True

    def freeze(self) -> None:
        """SIGSTOP of its own JVM: a machine that is gone - nothing runs, nothing closes."""
        self._process("freeze").stop_process()
        self._ended = True

    def _process(self, what: str) -> DriverProcess:
        if self._own is None:
            raise ValueError(f"{what}: this share consumer runs in the shared driver; ask for own_process=True")
        return self._own

    def _end(self) -> None:
        if self._own is not None:
            self._ended = True
            self._own.kill()
            self._own.close()


class GroupMember(GroupMemberBase):
    """The Java client's ``KafkaConsumer`` with ``config`` (Java's names), subscribed to
    ``topics``: the consumer-group workload's contract (:mod:`.members`), in the shared
    driver or, ``own_process``, in a JVM of its own, which :meth:`kill` ends (SIGKILL: no leave
    heartbeat; ``close(REMAIN_IN_GROUP)`` is no crash - a dynamic member still leaves, measured on
    Kafka 4.3.1: its partitions moved in 4 s, not the session's 45)."""

    def __init__(self, config: dict, topics: list[str], own_process: bool = False) -> None:
        self._own = DriverProcess() if own_process else None
        self._closed = False
        try:
            self._c = JavaConsumer(self._own or driver(), {k: _string(v) for k, v in config.items()})
            self._c.subscribe(list(topics))
        except BaseException:
            self._end()  # nobody else will: the caller never got this member
            raise

    def _poll(self, timeout_s: float) -> int:
        return len(self._c.poll(timeout_s))

    def commit(self) -> None:
        self._c.commit_sync(timeout=10)

    def owned(self) -> list[int]:
        return sorted(tp.partition for tp in self._c.assignment())

    def epoch(self) -> int | None:
        return self._c.group_metadata()["generationId"]

    def state(self) -> MemberState:
        """One ``groupMetadata()`` for the id and the epoch; a position the client has not looked
        up yet within half a second is None."""
        meta = self._c.group_metadata()
        assigned = sorted(self._c.assignment(), key=lambda tp: (tp.partition, tp.topic))
        positions: dict[int, int | None] = {}
        for tp in assigned:
            try:
                positions[tp.partition] = self._c.position((tp.topic, tp.partition), timeout=0.5)
            except Exception:  # noqa: BLE001 - not known yet: not caught up
                positions[tp.partition] = None
        return MemberState(meta["memberId"], meta["generationId"], [tp.partition for tp in assigned], positions)

    def kill(self) -> None:
        if self._own is None:
            super().kill()
        self._closed = True
        self._end()

    def close(self) -> None:
        try:
            if not self._closed:
                self._closed = True
                self._c.close(timeout=10)
        finally:
            self._end()

    def _end(self) -> None:
        if self._own is not None:
            self._own.kill()
            self._own.close()


def describe_share_group(servers: str, group: str) -> dict:
    """The Java admin's ``describeShareGroups`` of ``group`` (in the shared driver): ``state``,
    ``members`` each with its ``assignment``."""
    from ..java_client import JavaAdmin

    admin = JavaAdmin(driver(), {"bootstrap.servers": servers})
    try:
        description = admin.describe_share_groups([group])[group]
    finally:
        admin.close(10)
    assert isinstance(description, dict), description
    return description
