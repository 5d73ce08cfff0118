"""kafka-python's clients, recording into a :class:`~course_lib.history.History` as the simulated
clients do: the same operation names, values and outcomes, so one checker reads both.

Built by the kafka-python client adapter (:mod:`course_lib.client_adapters.for_kafka_python`); a
scenario never builds these itself.

- ``send``: invoked with the message text, completed ``ok`` with its offset (``None`` for acks=0,
  where kafka-python reports -1), ``fail`` when the broker refused the batch before appending it
  (:data:`DEFINITE_FAILURES`), ``info`` when nobody knows (timeouts, disconnects);
- ``poll``: one ``[partition, offset, message]`` row per record, per topic;
- ``commit``: ``[[topic, partition, next offset]]``;
- transactions: ``init_transactions``, ``begin_transaction``, ``send_offsets``,
  ``end_transaction`` (value ``{"transaction": n, "commit": bool}``).
"""

from __future__ import annotations

import contextlib
import time
import warnings
from typing import Any

from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka.errors import (
    CommitFailedError,
    KafkaError,
    KafkaTimeoutError,
    ProducerFencedError,
)
from kafka.partitioner.default import murmur2
from kafka.structs import OffsetAndMetadata

from course_lib.history import FAIL, INFO, OK, Nemesis, OpName, as_text
from course_lib.clusters.parts import client_config
from course_lib.client_adapters.joining import before_first_join

from .recorded import DEFINITE_FAILURES, record_poll


def _tp(tp) -> TopicPartition:
    return tp if isinstance(tp, TopicPartition) else TopicPartition(*tp)


class RecordingProducer:
    """A kafka-python ``KafkaProducer`` whose sends and transactions are written to the history."""

    def __init__(self, backend, process: str, **config) -> None:
        self.backend, self.history, self.node_id = backend, backend.history, process
        config.setdefault("client_id", process)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # acks=1 + default idempotence warns; scenarios set it
            self._producer = KafkaProducer(**{**client_config(backend.cluster), **config})
        self.config = config
        self.futures: list = []
        self.unfinished = 0
        self._txn_count = 0
        self._closed = False
        self._close_refused = False

    def __repr__(self) -> str:
        return f"<RecordingProducer {self.node_id}>"

    @property
    def producer_id(self) -> int:
        manager = getattr(self._producer, "_transaction_manager", None)
        pid = getattr(manager, "producer_id_and_epoch", None)
        return getattr(pid, "producer_id", -1)

    def partitions_for(self, topic: str) -> set[int]:
        return set(self._producer.partitions_for(topic) or ())

    def _partition(self, topic: str, key: bytes | None) -> int | None:
        """The partition kafka-python's default partitioner will choose, known before the send (the
        history records it at invocation, as the simulator does, so order is judged per partition);
        None for an unkeyed record of a multi-partition topic (kafka-python picks it later)."""
        n = len(self._producer.partitions_for(topic) or ())
        if n == 1:
            return 0
        if key is not None and n > 1:
            return (murmur2(key) & 0x7FFFFFFF) % n
        return None

    def send(self, topic: str, value: bytes | None = None, key: bytes | None = None, partition: int | None = None):
        if partition is None:
            partition = self._partition(topic, key)
        op = self.history.invoke(self.node_id, OpName.SEND, as_text(value), topic=topic, partition=partition)
        no_offsets = self.config.get("acks") in (0, "0")
        fut = self._producer.send(topic, value, key=key, partition=partition)

        def ok(md):  # acks=0: no offset comes back (kafka-python makes one up from -1)
            self.history.complete(
                op, OK, offset=None if no_offsets or md.offset < 0 else md.offset, partition=md.partition
            )

        def err(exc):
            self.history.complete(op, FAIL if isinstance(exc, DEFINITE_FAILURES) else INFO, error=type(exc).__name__)

        fut.add_callback(ok)
        fut.add_errback(err)
        self.futures.append(fut)
        return fut

    def flush(self, timeout: float | None = 60) -> None:
        """Wait for every send; sends still open after ``timeout`` s stay without an outcome in the
        history (the checker treats them as unknown)."""
        try:
            self._producer.flush(timeout=timeout)
        except KafkaTimeoutError:
            self.unfinished = sum(1 for f in self.futures if not f.is_done)
        deadline = time.monotonic() + 10  # callbacks run right after the futures resolve
        while time.monotonic() < deadline and not all(f.is_done for f in self.futures):
            time.sleep(0.05)

    # ---- transactions, recorded as the simulated producer records them
    def init_transactions(self) -> None:
        self._producer.init_transactions()
        self.history.record(
            self.node_id,
            OK,
            OpName.INIT_TRANSACTIONS,
            self.config.get("transactional_id"),
            evidence={"producer_id": self.producer_id},
        )

    def begin_transaction(self) -> None:
        self._producer.begin_transaction()
        self._txn_count += 1
        self.history.record(self.node_id, OK, OpName.BEGIN_TRANSACTION, self._txn_count)

    def send_offsets_to_transaction(self, offsets: dict, group_metadata) -> None:
        offsets = {
            _tp(tp): m if isinstance(m, OffsetAndMetadata) else OffsetAndMetadata(m, "", -1)
            for tp, m in offsets.items()
        }
        self._producer.send_offsets_to_transaction(offsets, group_metadata)
        self.history.record(
            self.node_id,
            OK,
            OpName.SEND_OFFSETS,
            [[tp.topic, tp.partition, m.offset] for tp, m in sorted(offsets.items())],
            evidence={"transaction": self._txn_count},
        )

    def commit_transaction(self) -> None:
        self._end_transaction(True)

    def abort_transaction(self) -> None:
        self._end_transaction(False)

    def _end_transaction(self, commit: bool) -> None:
        op = self.history.invoke(self.node_id, OpName.END_TRANSACTION, self._txn_count)
        try:
            self._producer.commit_transaction() if commit else self._producer.abort_transaction()
        except ProducerFencedError as exc:
            self.history.complete(op, FAIL, error=type(exc).__name__)
            raise
        except Exception as exc:
            self.history.complete(op, INFO, error=type(exc).__name__)
            raise
        self.history.complete(op, OK, value={"transaction": self._txn_count, "commit": commit})

    # ---- ending
    def close(self, timeout: float | None = 10) -> None:
        """kafka-python's close(): a record still unfinished after ``timeout`` seconds raises
        ``KafkaTimeoutError`` and leaves the producer open, its sender still running."""
        if self._closed:
            return
        try:
            self._producer.close(timeout=timeout)
        except KafkaError:
            self._close_refused = True
            raise
        self._closed = True

    def close_quietly(self) -> None:
        """The backend's clean-up after a run: close, and stop what a refused close() leaves running
        (a wedged sender would otherwise retry against the cluster for the rest of the process).
        A producer whose close() the run saw refused is stopped at once: waiting again for what
        did not finish then would only make the clean-up slower."""
        if self._closed:
            return
        if not self._close_refused:
            with contextlib.suppress(KafkaError):
                self.close(timeout=5)
                return
        self._closed = True
        kill_producer(self._producer)

    def crash(self) -> None:
        """The application process dies: no flush, no retries, an open transaction left open.

        Sends already on their way reach the log (a real crash cannot call them back); what is
        still queued in the client dies with it."""
        self.history.record("nemesis", INFO, Nemesis.CRASH_CLIENT, {"client": self.node_id})
        self._closed = True
        kill_producer(self._producer)


def kill_producer(producer: KafkaProducer) -> None:
    """Stop a kafka-python producer the way a crash would: no flush, no retries of what is still
    in flight (its futures fail), no ending of an open transaction."""
    sender = getattr(producer, "_sender", None)
    if sender is not None and sender.is_alive():
        sender.force_close()
        sender.join(10)
    try:
        producer.close(timeout=0)
    except KafkaError:  # close() flushes first; after force_close nothing is left to send
        pass


class RecordingConsumer:
    """A kafka-python ``KafkaConsumer`` whose polls and commits are written to the history."""

    def __init__(self, backend, process: str, *topics: str, **config) -> None:
        self.backend, self.history, self.node_id = backend, backend.history, process
        config.setdefault("client_id", process)
        self._consumer = KafkaConsumer(*topics, **{**client_config(backend.cluster), **config})
        before_first_join(self._consumer)
        self._closed = False

    def __repr__(self) -> str:
        return f"<RecordingConsumer {self.node_id}>"

    def __getattr__(self, name: str) -> Any:  # seek, position, assignment, end_offsets, ...
        return getattr(self._consumer, name)

    def assign(self, partitions) -> None:
        self._consumer.assign([_tp(tp) for tp in partitions])

    def seek(self, partition, offset: int) -> None:
        self._consumer.seek(_tp(partition), offset)

    def position(self, partition) -> int:
        return self._consumer.position(_tp(partition))

    def poll(self, timeout_ms: int = 0, max_records: int | None = None) -> dict:
        batches = self._consumer.poll(timeout_ms=timeout_ms, max_records=max_records)
        record_poll(self.history, self.node_id, batches)
        return batches

    @property
    def positions(self) -> dict:
        """``{TopicPartition: next offset}`` of every assigned partition (as the simulated consumer)."""
        return {tp: self._consumer.position(tp) for tp in sorted(self._consumer.assignment())}

    def commit(self, offsets: dict | None = None) -> None:
        offsets = offsets if offsets is not None else self.positions
        plain = {_tp(tp): (m.offset if isinstance(m, OffsetAndMetadata) else m) for tp, m in offsets.items()}
        op = self.history.invoke(
            self.node_id, OpName.COMMIT, [[tp.topic, tp.partition, o] for tp, o in sorted(plain.items())]
        )
        try:
            self._consumer.commit({tp: OffsetAndMetadata(o, "", -1) for tp, o in plain.items()})
        except Exception as exc:
            self.history.complete(op, FAIL if isinstance(exc, CommitFailedError) else INFO, error=type(exc).__name__)
            raise
        self.history.complete(op, OK)

    def close(self, autocommit: bool = True) -> None:
        if self._closed:
            return
        self._closed = True
        self._consumer.close(autocommit=autocommit)

    def close_quietly(self) -> None:
        try:
            self.close(autocommit=False)
        except KafkaError:
            pass

    def crash(self) -> None:
        """The application dies. The consumer is closed without committing; closing also leaves the
        group at once, where a dead process would be noticed after ``session_timeout_ms`` - the
        same rebalance, sooner."""
        self.history.record("nemesis", INFO, Nemesis.CRASH_CLIENT, {"client": self.node_id})
        self.close_quietly()


# ---- reading partitions -------------------------------------------------------------------------
def end_offset(cluster, topic: str, partition: int = 0, read_committed: bool = False) -> int:
    """The partition's end offset (``read_committed``: its last stable offset), once it reads the
    same twice in a row (a leader that just took over can briefly report less)."""
    c = KafkaConsumer(
        **client_config(cluster),
        enable_auto_commit=False,
        isolation_level="read_committed" if read_committed else "read_uncommitted",
    )
    try:
        tp = TopicPartition(topic, partition)
        c.assign([tp])
        return _settled_end(c, tp)
    finally:
        c.close()


def _settled_end(consumer: KafkaConsumer, tp: TopicPartition, pause_s: float = 0.1) -> int:
    end = -1
    for _ in range(50):
        now = consumer.end_offsets([tp])[tp]
        if now == end:
            break
        end = now
        time.sleep(pause_s)
    return end


def read_partition(
    cluster, topic: str, partition: int = 0, isolation_level: str = "read_uncommitted", timeout_s: float = 30
) -> list:
    """Every record of one partition from offset 0 to its end, as ``[partition, offset, value]``.

    Reads until the consumer's position reaches the end offset (with ``read_committed`` the last
    offsets are transaction markers, never returned as records: waiting for "the last record"
    would wait forever)."""
    c = KafkaConsumer(**client_config(cluster), enable_auto_commit=False, isolation_level=isolation_level)
    rows: list = []
    try:
        tp = TopicPartition(topic, partition)
        c.assign([tp])
        end = _settled_end(c, tp)
        c.seek_to_beginning(tp)
        deadline = time.monotonic() + timeout_s
        while c.position(tp) < end and time.monotonic() < deadline:
            for records in c.poll(timeout_ms=200).values():
                rows += [[partition, r.offset, as_text(r.value)] for r in records]
    finally:
        c.close()
    return rows
