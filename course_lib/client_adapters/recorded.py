"""What every client adapter but kafka-python's shares: kafka-python's API on top of another
client, each call recorded in the run's history as :mod:`course_lib.client_adapters.recording` records it.

An adapter module (:mod:`.confluent_kafka`, :mod:`.java`) subclasses :class:`RecordedProducer`
and :class:`RecordedConsumer` and fills in their ``_native_*`` primitives - one call of its own
client each; this module does the recording, the kafka-python futures and the error classes, once.

- :class:`SendFuture`: kafka-python's send future (``is_done``, ``succeeded()``, ``failed()``,
  ``exception``, ``get(timeout)``, callbacks), completed by the adapter when its client reports
  the delivery (a librdkafka delivery callback, a Java future's outcome);
- :func:`kafka_python_error`: the kafka-python error class a client's error corresponds to (the
  scenarios catch kafka-python's classes); the client's own name stays in the history and in
  ``error.native``, so a difference between clients still shows;
- :func:`translate`: kafka-python's config names into a client's (``request_timeout_ms`` ->
  ``request.timeout.ms``), with the names a client has no counterpart for refused, saying so.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from typing import Any, NamedTuple

from kafka import errors as Errors
from kafka.structs import TopicPartition

from ..history import FAIL, INFO, OK, Nemesis, OpName, as_text

#: errors that mean "the broker refused the batch before appending it": a definite ``fail``.
#: Anything else (timeouts, disconnects, NotEnoughReplicasAfterAppend) leaves the write's fate
#: unknown: ``info``.
DEFINITE_FAILURES = (
    Errors.NotEnoughReplicasError,
    Errors.InvalidRecordError,
    Errors.MessageSizeTooLargeError,
    Errors.RecordListTooLargeError,
    Errors.TopicAuthorizationFailedError,
)
#: errors a commit reports when the group moved on: kafka-python raises CommitFailedError for each
GROUP_MOVED_ON = {"ILLEGAL_GENERATION", "UNKNOWN_MEMBER_ID", "REBALANCE_IN_PROGRESS", "FENCED_INSTANCE_ID"}


class Record(NamedTuple):
    """One consumed record, with the fields of kafka-python's ConsumerRecord the course reads."""

    topic: str
    partition: int
    offset: int
    key: bytes | None
    value: bytes | None


def translate(config: dict, refused: dict[str, str], extra: dict[str, str] | None = None) -> dict[str, Any]:
    """kafka-python's keyword arguments as dotted client properties (``bootstrap_servers`` lists
    joined with commas; booleans and numbers as the client takes them). ``refused``: kafka-python
    names this client has no counterpart for -> why (raised as ValueError); ``extra``: names
    whose dotted spelling differs.

    >>> translate({"acks": "all", "request_timeout_ms": 1000, "bootstrap_servers": ["a:1", "b:2"]}, {})
    {'acks': 'all', 'request.timeout.ms': 1000, 'bootstrap.servers': 'a:1,b:2'}
    >>> translate({"proxy_url": "socks5://p:1"}, {"proxy_url": "no SOCKS5 proxy"})
    Traceback (most recent call last):
    ...
    ValueError: proxy_url has no counterpart in this client: no SOCKS5 proxy
    """
    out: dict[str, Any] = {}
    names = extra or {}
    for name, value in config.items():
        if name in refused:
            raise ValueError(f"{name} has no counterpart in this client: {refused[name]}")
        if name == "bootstrap_servers" and not isinstance(value, str):
            value = ",".join(value)
        out[names.get(name, name.replace("_", "."))] = value
    return out


def kafka_python_error(names: Iterable[str], message: str = "") -> Errors.KafkaError:
    """The kafka-python error for a client error known by ``names`` (a protocol error name such as
    ``NOT_ENOUGH_REPLICAS``, or a class name such as ``NotEnoughReplicasException``), tried in
    order; ``KafkaError`` when none matches. ``native`` holds the first name.

    >>> type(kafka_python_error(["NotEnoughReplicasException"])).__name__
    'NotEnoughReplicasError'
    >>> type(kafka_python_error(["PRODUCER_FENCED"])).__name__, kafka_python_error(["X"]).native
    ('ProducerFencedError', 'X')
    >>> type(kafka_python_error(["NetworkException"])).__name__
    'NetworkExceptionError'
    """
    names = list(names)
    by_message = {getattr(c, "message", None): c for c in _error_classes()}
    by_name = {c.__name__: c for c in _error_classes()}
    cls: type[Errors.KafkaError] = Errors.KafkaError
    for name in names:
        found = (
            by_message.get(name)
            or by_name.get(name.replace("Exception", "Error"))
            or by_name.get(f"{name}Error")  # kafka-python's name of Kafka's NetworkException
            or LOCAL_ERRORS.get(name)
        )
        if found is not None:
            cls = found
            break
    err = cls(f"{names[0] if names else '?'}: {message}")
    err.native = names[0] if names else "?"
    return err


#: client-side errors (librdkafka's local ones, Java's) by their own names
LOCAL_ERRORS: dict[str, type[Errors.KafkaError]] = {
    "_MSG_TIMED_OUT": Errors.KafkaTimeoutError,
    "_TIMED_OUT": Errors.KafkaTimeoutError,
    "_TRANSPORT": Errors.KafkaConnectionError,
    "_FENCED": Errors.ProducerFencedError,
    "TimeoutException": Errors.KafkaTimeoutError,
    "ProducerFencedException": Errors.ProducerFencedError,
    "CommitFailedException": Errors.CommitFailedError,
    # Kafka renamed error 6 NOT_LEADER_OR_FOLLOWER; kafka-python keeps its old name
    "NotLeaderOrFollowerException": Errors.NotLeaderForPartitionError,
}


def _error_classes() -> list[type[Errors.KafkaError]]:
    return [c for c in vars(Errors).values() if isinstance(c, type) and issubclass(c, Errors.KafkaError)]


def _native(exc: BaseException) -> str:
    return getattr(exc, "native", type(exc).__name__)


class SendFuture:
    """kafka-python's send future over another client: ``serve(seconds)`` lets the client run
    what completes sends (at most that long); the adapter calls :meth:`resolve` or :meth:`fail`."""

    def __init__(self, serve: Callable[[float], None]) -> None:
        self._serve = serve
        self._done = False
        self.value: Any = None
        self.exception: BaseException | None = None
        self._callbacks: list[Callable] = []
        self._errbacks: list[Callable] = []

    @property
    def is_done(self) -> bool:
        if not self._done:
            self._serve(0)
        return self._done

    def succeeded(self) -> bool:
        return self.is_done and self.exception is None

    def failed(self) -> bool:
        return self.is_done and self.exception is not None

    def add_callback(self, f: Callable) -> SendFuture:
        self._callbacks.append(f)
        if self._done and self.exception is None:
            f(self.value)
        return self

    def add_errback(self, f: Callable) -> SendFuture:
        self._errbacks.append(f)
        if self._done and self.exception is not None:
            f(self.exception)
        return self

    def resolve(self, value: Any) -> None:
        self._done, self.value = True, value
        for f in self._callbacks:
            f(value)

    def fail(self, exc: BaseException) -> None:
        self._done, self.exception = True, exc
        for f in self._errbacks:
            f(exc)

    def get(self, timeout: float | None = None) -> Any:
        """The send's metadata, or its error raised; ``KafkaTimeoutError`` if not done in time."""
        deadline = time.monotonic() + (3600 if timeout is None else timeout)
        while not self._done and time.monotonic() < deadline:
            self._serve(min(0.05, max(0.0, deadline - time.monotonic())))
        if not self._done:
            raise Errors.KafkaTimeoutError(f"the send was not done after {timeout} s")
        if self.exception is not None:
            raise self.exception
        return self.value


class RecordMetadata(NamedTuple):
    topic: str
    partition: int
    offset: int


class RecordedProducer:
    """A producer with kafka-python's API whose sends and transactions go to the history.
    Subclasses implement the ``_native_*`` primitives."""

    #: errors meaning "refused before appending": a definite ``fail`` (as kafka-python's)
    definite: tuple = ()

    def __init__(self, backend: Any, process: str, config: dict) -> None:
        self.definite = DEFINITE_FAILURES
        self.backend, self.history, self.node_id = backend, backend.history, process
        self.config = dict(config)
        self.futures: list[SendFuture] = []
        self.unfinished = 0
        self._txn_count = 0
        self._closed = False

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.node_id}>"

    # ---- primitives
    def _native_send(
        self, topic: str, value: bytes | None, key: bytes | None, partition: int | None, future: SendFuture
    ) -> None:
        raise NotImplementedError

    def _serve(self, seconds: float) -> None:
        raise NotImplementedError

    def _native_flush(self, timeout: float | None) -> None:
        raise NotImplementedError

    def _native_partitions(self, topic: str) -> set[int]:
        raise NotImplementedError

    def _native_transaction(self, call: str, *args: Any) -> None:
        raise NotImplementedError

    def _native_close(self, timeout: float | None) -> None:
        raise NotImplementedError

    def _native_kill(self) -> None:
        raise NotImplementedError

    def _error(self, exc: BaseException) -> BaseException:
        """``exc`` as a kafka-python error (its native name kept)."""
        return exc

    def _keyed_partition(self, key: bytes, partitions: int) -> int:
        """The partition this client's default partitioner gives a keyed record."""
        raise NotImplementedError

    #: the producer id is the client's own (neither librdkafka nor the Java client shows it)
    producer_id = -1

    # ---- kafka-python's API
    def partitions_for(self, topic: str) -> set[int]:
        return self._native_partitions(topic)

    def send(self, topic: str, value: bytes | None = None, key: bytes | None = None, partition: int | None = None):
        """Recorded at invocation with the partition the record goes to when it is known before
        the send (given, the topic has one, or keyed: the client's default partitioner, computed
        here as the simulator records it at invocation, so order is judged per partition);
        None for an unkeyed record of a multi-partition topic (the client picks it later)."""
        if partition is None:
            n = len(self._native_partitions(topic))
            if n == 1:
                partition = 0
            elif key is not None and n > 1:
                partition = self._keyed_partition(key, n)
        op = self.history.invoke(self.node_id, OpName.SEND, as_text(value), topic=topic, partition=partition)
        no_offsets = self.config.get("acks") in (0, "0")
        future = SendFuture(self._serve)

        def ok(md: RecordMetadata) -> None:
            offset = None if no_offsets or md.offset is None or md.offset < 0 else md.offset
            self.history.complete(op, OK, offset=offset, partition=md.partition)

        def err(exc: BaseException) -> None:
            self.history.complete(op, FAIL if isinstance(exc, self.definite) else INFO, error=_native(exc))

        future.add_callback(ok)
        future.add_errback(err)
        self.futures.append(future)
        self._native_send(topic, value, key, partition, future)
        return future

    def flush(self, timeout: float | None = 60) -> None:
        """Wait for every send; sends still open after ``timeout`` s stay without an outcome (the
        checker treats them as unknown)."""
        self._native_flush(timeout)
        self._serve(0)
        self.unfinished = sum(1 for f in self.futures if not f._done)

    def init_transactions(self) -> None:
        self._call_transaction("init_transactions")
        self.history.record(self.node_id, OK, OpName.INIT_TRANSACTIONS, self.config.get("transactional_id"))

    def begin_transaction(self) -> None:
        self._call_transaction("begin_transaction")
        self._txn_count += 1
        self.history.record(self.node_id, OK, OpName.BEGIN_TRANSACTION, self._txn_count)

    def send_offsets_to_transaction(self, offsets: dict, group_metadata: Any) -> None:
        plain = {tuple(tp): getattr(m, "offset", m) for tp, m in offsets.items()}
        self._call_transaction("send_offsets_to_transaction", plain, group_metadata)
        self.history.record(
            self.node_id,
            OK,
            OpName.SEND_OFFSETS,
            [[t, p, o] for (t, p), o in sorted(plain.items())],
            evidence={"transaction": self._txn_count},
        )

    def commit_transaction(self) -> None:
        self._end_transaction(True)

    def abort_transaction(self) -> None:
        self._end_transaction(False)

    def _call_transaction(self, call: str, *args: Any) -> None:
        try:
            self._native_transaction(call, *args)
        except Errors.KafkaError:
            raise
        except Exception as exc:
            raise self._error(exc) from exc

    def _end_transaction(self, commit: bool) -> None:
        op = self.history.invoke(self.node_id, OpName.END_TRANSACTION, self._txn_count)
        try:
            self._call_transaction("commit_transaction" if commit else "abort_transaction")
        except Errors.ProducerFencedError as exc:
            self.history.complete(op, FAIL, error=_native(exc))
            raise
        except Exception as exc:
            self.history.complete(op, INFO, error=_native(exc))
            raise
        self.history.complete(op, OK, value={"transaction": self._txn_count, "commit": commit})

    def close(self, timeout: float | None = 10) -> None:
        if not self._closed:
            self._native_close(timeout)
            self._serve(0)
            self._closed = True

    def close_quietly(self) -> None:
        if self._closed:
            return
        try:
            self.close(timeout=5)
        except Exception:
            self._closed = True
            self._native_kill()

    def crash(self) -> None:
        """The application dies: no flush, no retries, an open transaction left open; what is
        already on its way reaches the log, what is still queued in the client dies with it."""
        self.history.record("nemesis", INFO, Nemesis.CRASH_CLIENT, {"client": self.node_id})
        if not self._closed:
            self._closed = True
            self._native_kill()


class RecordedConsumer:
    """A consumer with kafka-python's API whose polls and commits go to the history.
    Subclasses implement the ``_native_*`` primitives."""

    def __init__(self, backend: Any, process: str, config: dict) -> None:
        self.backend, self.history, self.node_id = backend, backend.history, process
        self.config = dict(config)
        self._closed = False

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.node_id}>"

    # ---- primitives
    def _native_poll(self, timeout_s: float, max_records: int | None) -> list[Record]:
        raise NotImplementedError

    def _native_assign(self, partitions: list[tuple[str, int]]) -> None:
        raise NotImplementedError

    def _native_seek(self, partition: tuple[str, int], offset: int) -> None:
        raise NotImplementedError

    def _native_position(self, partition: tuple[str, int]) -> int:
        raise NotImplementedError

    def _native_assignment(self) -> set[tuple[str, int]]:
        raise NotImplementedError

    def _native_commit(self, offsets: dict[tuple[str, int], int]) -> None:
        raise NotImplementedError

    def _native_close(self, autocommit: bool) -> None:
        raise NotImplementedError

    def group_metadata(self) -> Any:
        raise NotImplementedError

    def _error(self, exc: BaseException) -> BaseException:
        return exc

    # ---- kafka-python's API
    def assign(self, partitions) -> None:
        self._native_assign([tuple(tp) for tp in partitions])

    def assignment(self) -> set[TopicPartition]:
        return {TopicPartition(t, p) for t, p in self._native_assignment()}

    def seek(self, partition, offset: int) -> None:
        self._native_seek(tuple(partition), offset)

    def position(self, partition) -> int:
        return self._native_position(tuple(partition))

    @property
    def positions(self) -> dict:
        return {tp: self.position(tp) for tp in sorted(self.assignment())}

    def poll(self, timeout_ms: int = 0, max_records: int | None = None) -> dict:
        records = self._native_poll(timeout_ms / 1000, max_records or self.config.get("max_poll_records"))
        batches: dict[TopicPartition, list[Record]] = {}
        for r in records:
            batches.setdefault(TopicPartition(r.topic, r.partition), []).append(r)
        record_poll(self.history, self.node_id, batches)
        return batches

    def commit(self, offsets: dict | None = None) -> None:
        offsets = offsets if offsets is not None else self.positions
        plain = {tuple(tp): getattr(m, "offset", m) for tp, m in offsets.items()}
        op = self.history.invoke(self.node_id, OpName.COMMIT, [[t, p, o] for (t, p), o in sorted(plain.items())])
        try:
            try:
                self._native_commit(plain)
            except Errors.KafkaError:
                raise
            except Exception as exc:
                raise self._error(exc) from exc
        except Exception as exc:
            self.history.complete(op, FAIL if isinstance(exc, Errors.CommitFailedError) else INFO, error=_native(exc))
            raise
        self.history.complete(op, OK)

    def close(self, autocommit: bool = True) -> None:
        if not self._closed:
            self._closed = True
            self._native_close(autocommit)

    def close_quietly(self) -> None:
        try:
            self.close(autocommit=False)
        except Exception:
            pass

    def crash(self) -> None:
        """The application dies: closed without a commit (closing leaves the group at once, where
        a dead process would be noticed after the session timeout - the same rebalance, sooner)."""
        self.history.record("nemesis", INFO, Nemesis.CRASH_CLIENT, {"client": self.node_id})
        self.close_quietly()


def partitions_of(cluster: Any, topic: str) -> int:
    return len(cluster.partitions_of(topic)) if hasattr(cluster, "partitions_of") else 1


def final_read(backend: Any, topic: str, isolation_level: str, read: Callable) -> list:
    """Jepsen's final read: every partition in full, recorded as ``final_read``. Read
    ``read_committed``, the aborted records (present read_uncommitted, absent read_committed) are
    listed as evidence, as the simulator's final read lists them. ``read(cluster, topic,
    partition, isolation_level="read_uncommitted")``: how one partition is read (each client
    adapter reads with its own client)."""
    if isolation_level not in ("read_uncommitted", "read_committed"):
        raise ValueError(f"isolation_level must be 'read_uncommitted' or 'read_committed', got {isolation_level!r}")
    cluster = backend.cluster
    rows: list = []
    aborted: list = []
    for p in range(partitions_of(cluster, topic)):
        got = read(cluster, topic, p, isolation_level)
        rows += got
        if isolation_level == "read_committed":
            offsets, values = {o for _, o, _ in got}, {v for _, _, v in got}
            aborted += [v for _, o, v in read(cluster, topic, p) if o not in offsets and v not in values]
    evidence = {"isolation_level": isolation_level, **({"aborted": aborted} if aborted else {})}
    backend.history.record("final-reader", OK, OpName.FINAL_READ, rows, topic=topic, evidence=evidence)
    return rows


def record_poll(history: Any, node_id: str, batches: dict) -> None:
    """A poll's records (``{TopicPartition: [record]}``) in the history: one ``poll`` per topic,
    one ``[partition, offset, message]`` row per record."""
    rows: dict[str, list] = {}
    for tp, records in sorted(batches.items()):
        rows.setdefault(tp.topic, []).extend([tp.partition, r.offset, as_text(r.value)] for r in records)
    for topic, values in rows.items():
        op = history.invoke(node_id, OpName.POLL, None, topic)
        history.complete(op, OK, value=values)


def freeze(backend: Any, consumer: RecordedConsumer) -> None:
    """A frozen consumer leaves its group after max.poll.interval.ms; closing it without a
    commit has the same effect without the wait."""
    backend.history.record("nemesis", INFO, Nemesis.FREEZE_CLIENT, {"client": consumer.node_id})
    consumer.close_quietly()


def settled_end(ask: Callable[[], int]) -> int:
    """The end offset ``ask()`` reads, once two reads 0.1 s apart agree (at most 50 reads): right
    after a write or a crash a client's answer may still move. -1: no read succeeded.

    >>> answers = iter([-1, 3, 4, 4])
    >>> settled_end(lambda: next(answers))
    4
    """
    end = -1
    for _ in range(50):
        now = ask()
        if now >= 0 and now == end:
            break
        end = now
        time.sleep(0.1)
    return end


class RecordedClients:
    """A client adapter (:class:`~course_lib.client_adapters.ClientSide`) made of one adapter
    module's parts: its producer and consumer classes (subclasses of :class:`RecordedProducer`
    and :class:`RecordedConsumer`), its ``end_offset(cluster, topic, partition, read_committed)``
    and its ``read_partition(cluster, topic, partition, isolation_level)`` (the final read's
    reader). Every adapter but kafka-python's is one (:mod:`.confluent_kafka`, :mod:`.java`)."""

    def __init__(
        self,
        name: str,
        producer: Callable[[Any, str, dict], Any],
        consumer: Callable[[Any, str, tuple[str, ...], dict], Any],
        end_offset: Callable[[Any, str, int, bool], int],
        read_partition: Callable[..., list],
    ) -> None:
        self.name = name
        self._producer, self._consumer = producer, consumer
        self._end_offset, self._read_partition = end_offset, read_partition

    def producer(self, backend: Any, process: str, config: dict) -> Any:
        return self._producer(backend, process, config)

    def consumer(self, backend: Any, process: str, topics: tuple[str, ...], config: dict) -> Any:
        return self._consumer(backend, process, topics, config)

    def freeze(self, backend: Any, consumer: Any) -> None:
        freeze(backend, consumer)

    def end_offset(self, cluster: Any, topic: str, partition: int = 0, read_committed: bool = False) -> int:
        return self._end_offset(cluster, topic, partition, read_committed)

    def final_read(self, backend: Any, topic: str, isolation_level: str = "read_uncommitted") -> list:
        return final_read(backend, topic, isolation_level, self._read_partition)
