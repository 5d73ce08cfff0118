"""``KafkaProducer`` for the simulator, with kafka-python's names and behaviour.

Write learner code against this class with ``bootstrap_servers=cluster``; the same code runs
against real Kafka with ``from kafka import KafkaProducer`` and a ``host:port`` string.

What it does, as kafka-python 3 does:

- ``send()`` appends the record to a per-partition batch (``batch_size`` bytes, ``linger_ms``)
  and returns a future; a sender drains ready batches into one produce request per broker,
  at most ``max_in_flight_requests_per_connection`` requests in flight per broker;
- errors the broker calls retriable (``NotLeaderForPartition``, ``NotEnoughReplicas``, a request
  timeout, a closed connection) put the batch back at the *front* of its queue, after
  ``retry_backoff_ms``, at most ``retries`` times and never past ``delivery_timeout_ms`` - with
  several batches of one partition in flight, that is how a retried batch lands *behind* a later
  one (reordering);
- the idempotent producer gets a producer id and epoch from a broker and numbers each
  partition's batches; like kafka-python (unlike Java, which allows 5) it keeps at most one batch
  per partition in flight, so retries cannot reorder, and the broker drops a retried duplicate;
- ``acks=0`` completes the future as soon as the request is handed to the network, with offset
  -1: nobody will ever say whether it arrived.

Every send is recorded in the cluster's history: ``invoke`` at ``send()``, then ``ok`` (with the
offset and the leader's epoch/HW as evidence), ``fail`` (the broker definitely did not append
it) or ``info`` (it may or may not be in the log, e.g. a timed-out request).

Taught in notebooks/02_acks_and_durability, notebooks/03_retries_ordering_duplicates and
notebooks/04_idempotent_producer.
"""

from __future__ import annotations

import math
import threading
from collections import deque

from kafka import errors as Errors
from kafka.partitioner.default import murmur2

from ..broker.broker import node_name
from ..history import FAIL, INFO, INVOKE, OK, Nemesis, OpName
from ..broker.protocol import InitProducerIdRequest, MetadataRequest, ProduceRequest, Record, RecordBatch
from .config import resolve_producer_config
from .future import FutureRecordMetadata, ProduceResult
from .rpc import InFlight, Requests
from .transactions import Transactions

_new_tuple = tuple.__new__  # builds a NamedTuple without its Python-level __new__ (hot path)
RECORD_OVERHEAD_BYTES = 70  # Kafka's per-record/batch framing, roughly: batches fill as in real life
MAYBE_APPENDED = (Errors.RequestTimedOutError, Errors.NotEnoughReplicasAfterAppendError, Errors.KafkaConnectionError)


class _Batch:
    __slots__ = (
        "tp",
        "records",
        "handles",
        "result",
        "size",
        "created_ms",
        "deadline_ms",
        "retries_done",
        "retry_at",
        "maybe_appended",
        "record_batch",
        "sent",
        "errors",
    )

    def __init__(self, tp, now, delivery_timeout_ms):
        self.tp = tp
        self.records: list[Record] = []
        self.handles: list[tuple] = []  # history invocations, one per record
        self.result = ProduceResult(tp[0], tp[1], self.records)
        self.size = 0
        self.created_ms = now
        self.deadline_ms = now + delivery_timeout_ms
        self.retries_done = 0
        self.retry_at = 0.0
        self.maybe_appended = False
        self.record_batch: RecordBatch | None = None
        self.sent = False
        self.errors: list[str] = []  # why earlier attempts failed (evidence for the checker)


def _as_bytes(kind: str, data, serializer):
    if serializer is not None and data is not None:
        data = serializer(data)
    if data is not None and not isinstance(data, (bytes, bytearray, memoryview)):
        raise TypeError(
            f"the {kind} must be bytes after serialisation, got {type(data).__name__}: pass "
            f"bytes (e.g. b'hello' or 'hello'.encode()) or set {kind}_serializer=str.encode"
        )
    return data


class KafkaProducer(Requests, Transactions):
    def __init__(self, **configs):
        self.config = resolve_producer_config(**configs)
        self._attach("producer")
        self._acks = self.config["acks"]
        self._idempotent = self.config["enable_idempotence"]
        # kafka-python mutes a partition while a batch of it is in flight if idempotent or in-flight=1
        self._one_batch_per_partition = self._idempotent or self.config["max_in_flight_requests_per_connection"] == 1
        self._retries = self.config["retries"]
        self._transactional = self.config["transactional_id"] is not None
        self._history_pending = self._history._pending
        self._batch_size = self.config["batch_size"]
        self._key_serializer = self.config["key_serializer"]
        self._value_serializer = self.config["value_serializer"]
        self._linger_ms = self.config["linger_ms"]
        self._delivery_timeout_ms = self.config["delivery_timeout_ms"]
        self._leaders: dict[tuple, tuple] = {}  # tp -> (leader id or None, leader epoch)
        self._partitions: dict[str, int] = {}
        self._topic_ids: dict[str, int] = {}
        self._metadata_wanted = True
        self._metadata_corr: int | None = None
        self._metadata_sent_ms = -math.inf
        self._accumulator: dict[tuple, deque[_Batch]] = {}
        self._in_flight_per_node: dict[str, int] = {}  # produce requests awaiting an answer, per broker
        self._muted: set = set()
        self._init_transactions_state()
        self._wakeup_at = math.inf
        self._incomplete = 0
        self._flushing = False
        self.producer_id = -1
        self.producer_epoch = -1
        self._pid_corr: int | None = None
        # kafka-python 3.0.x asks for a producer id only while its transaction manager is
        # UNINITIALIZED; after an expired batch resets the id the manager stays READY, so the
        # id is never asked for again and the producer is wedged (see _reset_after_expiry)
        self._producer_id_lost = False
        self._node_backoff: dict[str, tuple[float, float]] = {}  # node -> (not before, back-off ms)
        self._next_sequence: dict[tuple, int] = {}
        self._broker_cursor = self._sim.rng.randrange(len(self._cluster.brokers))
        self._wakeup()
        if not self._wait(lambda: not self._metadata_wanted, self.config["max_block_ms"]):
            raise Errors.KafkaTimeoutError(
                f"no broker answered a metadata request within max_block_ms={self.config['max_block_ms']}: "
                f"are all brokers down or isolated? (cluster.state() shows them)"
            )

    def __repr__(self) -> str:
        return f"<KafkaProducer {self.node_id} acks={self.config['acks']} idempotent={self._idempotent}>"

    # ---- public API (kafka-python's) ---------------------------------------------------------
    def send(self, topic, value=None, key=None, headers=None, partition=None, timestamp_ms=None):
        """Queue a record; returns a future of ``RecordMetadata``."""
        if self._closed:
            raise Errors.IllegalStateError("cannot send: this producer was closed (or crashed); create a new one")
        if type(topic) is not str:
            raise TypeError(f"topic must be a str, got {type(topic).__name__}")
        if value is None and key is None:
            raise ValueError("send() needs a value or a key (or both)")
        if self._transactional:
            self._check_send_allowed()
        ks, vs = self._key_serializer, self._value_serializer
        if key is not None and (ks is not None or type(key) is not bytes):
            key = _as_bytes("key", key, ks)
        if value is not None and (vs is not None or type(value) is not bytes):
            value = _as_bytes("value", value, vs)
        if partition is None and self._partitions.get(topic) == 1:
            partition = 0  # the common case, without the partitioner
        else:
            partition = self._choose_partition(topic, key, partition)
        tp = (topic, partition)
        now = self._sim.now
        # the message id in the history is the value (bytes are decoded when the history is read)
        handle = (now, self.node_id, INVOKE, OpName.SEND, key if value is None else value, topic, partition)
        self._history_pending.append(handle)  # History.note_invoke, inlined: this is the hot path
        record = _new_tuple(
            Record, (key, value, now if timestamp_ms is None else timestamp_ms, tuple(headers) if headers else ())
        )
        size = RECORD_OVERHEAD_BYTES + (len(key) if key else 0) + (len(value) if value else 0)
        dq = self._accumulator.get(tp)
        if dq is None:
            dq = self._accumulator[tp] = deque()
        batch = dq[-1] if dq else None
        batch_size = self._batch_size
        if batch is None or batch.sent or (batch.size + size > batch_size and batch.records):
            batch = _Batch(tp, now, self._delivery_timeout_ms)
            dq.append(batch)
        records = batch.records
        future = FutureRecordMetadata(batch.result, len(records), self._wait)
        records.append(record)
        batch.handles.append(handle)
        batch.size += size
        self._incomplete += 1
        delay = 0 if batch.size >= batch_size else self._linger_ms
        if not now <= self._wakeup_at <= now + delay:
            self._wakeup(delay)
        return future

    def flush(self, timeout=None):
        """Send everything queued now (ignoring linger) and wait until each send has an outcome."""
        self._flushing = True
        self._wakeup()
        try:
            done = self._wait(lambda: self._incomplete == 0, None if timeout is None else timeout * 1000)
        finally:
            self._flushing = False
        if not done:
            wedged = (
                " - this producer lost its producer id when an idempotent batch expired and sends nothing "
                "more (kafka-python 3.0.x does the same): create a new one (this one cannot finish close(): "
                "it flushes first)"
                if self._producer_id_lost
                else ""
            )
            raise Errors.KafkaTimeoutError(
                f"flush() timed out after {timeout} s with {self._incomplete} record(s) still waiting{wedged}"
            )

    def close(self, timeout=None, null_logger=False):
        """Flush, then stop. As in kafka-python 3.0.12, a record still unfinished after ``timeout``
        seconds (``0``: anything not done yet) makes close() raise ``KafkaTimeoutError`` before it
        stops anything: the producer stays open and may still deliver. (Java's close(timeout)
        instead gives up on what is left and fails it.) ``null_logger`` is kafka-python's, for
        closing at interpreter exit: nothing to silence here."""
        if self._closed:
            return
        if timeout is not None and not 0 <= timeout <= threading.TIMEOUT_MAX:
            raise ValueError(f"Invalid timeout: {timeout} (seconds, >= 0)")
        self.flush(timeout)
        self._closed = True
        self.alive = False

    def bootstrap_connected(self):
        """kafka-python: whether the connection to a bootstrap server is open - measured False once
        the producer has its metadata (the connection is then to the leaders)."""
        return False

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        self.close()

    def partitions_for(self, topic):
        if topic not in self._partitions:
            self._refresh_metadata_blocking(topic)
        return set(range(self._partitions[topic]))

    def metrics(self, raw=False):
        return {
            "producer-metrics": {
                "in-flight-requests": self._produce_requests_in_flight(),
                "incomplete-records": self._incomplete,
            }
        }

    # ---- simulator-only ----------------------------------------------------------------------
    def crash(self):
        """The application process dies: queued and in-flight sends never get an outcome."""
        self._closed = True
        self.alive = False
        self._cluster.record("nemesis", Nemesis.CRASH_CLIENT, {"client": self.node_id})

    @property
    def state(self) -> dict:
        """Producer id, epoch and next sequence per partition (the idempotence bookkeeping)."""
        return {
            "producer_id": self.producer_id,
            "producer_epoch": self.producer_epoch,
            "next_sequence": {f"{t}-{p}": s for (t, p), s in sorted(self._next_sequence.items())},
            "in_flight_requests": self._produce_requests_in_flight(),
            "incomplete": self._incomplete,
        }

    # ---- partitioning -------------------------------------------------------------------------
    def _choose_partition(self, topic, key_bytes, partition):
        n = self._partitions.get(topic)
        if n is None:
            self._refresh_metadata_blocking(topic)
            n = self._partitions[topic]
        if partition is not None:
            if not isinstance(partition, int) or not 0 <= partition < n:
                raise ValueError(f"partition {partition!r} is not a partition of {topic!r} (0..{n - 1})")
            return partition
        if n == 1:
            return 0
        if key_bytes is not None:
            return (murmur2(key_bytes) & 0x7FFFFFFF) % n  # kafka-python's DefaultPartitioner
        live = [p for p in range(n) if self._leaders.get((topic, p), (None,))[0] is not None]
        return self._sim.rng.choice(live or list(range(n)))

    def _refresh_metadata_blocking(self, topic):
        self._metadata_wanted = True
        self._wakeup()
        self._wait(lambda: not self._metadata_wanted and topic in self._partitions, self.config["max_block_ms"])
        if topic not in self._partitions:
            raise Errors.UnknownTopicOrPartitionError(
                f"topic {topic!r} does not exist: create it first with cluster.create_topic({topic!r})"
            )

    # ---- the event loop side -------------------------------------------------------------------
    def _wait(self, predicate, timeout_ms):
        if timeout_ms is None:
            timeout_ms = 2 * max(self.config["delivery_timeout_ms"], self.config["max_block_ms"])
        return self._sim.run_until(predicate, timeout_ms)

    def _wakeup(self, delay_ms: float = 0) -> None:
        at = self._sim.now + delay_ms
        if at < self._wakeup_at or self._wakeup_at < self._sim.now:
            self._wakeup_at = at
            self._sim.schedule(delay_ms, self._run_sender, at)

    def _bootstrap_node(self) -> str:
        """The next broker in turn that is not in reconnect back-off (else the soonest one)."""
        brokers = [node_name(b) for b in self._known_brokers]
        now = self._sim.now
        for _ in range(len(brokers)):
            self._broker_cursor = (self._broker_cursor + 1) % len(brokers)
            node = brokers[self._broker_cursor]
            if self._node_backoff.get(node, (0.0,))[0] <= now:
                return node
        return min(brokers, key=lambda n: self._node_backoff[n][0])

    def _request(self, msg, node=None) -> int:
        """A metadata or producer-id request, to ``node`` or the next broker in turn."""
        node = node or self._bootstrap_node()
        self._pending[msg.corr] = InFlight(node, msg)
        self._network.send(self.node_id, node, msg)
        self._sim.schedule(self.config["request_timeout_ms"], self._control_timeout, msg.corr)
        return msg.corr

    def _control_timeout(self, corr):
        # unlike rpc._request_expired, also on a closed producer: it only forgets the request and
        # wakes the sender, which stops at once
        in_flight = self._pending.pop(corr, None)
        if in_flight is not None:
            self._take_answer(in_flight, Errors.RequestTimedOutError)
            self._wakeup()  # the sender asks again

    def _run_sender(self, scheduled_for=None):
        if not self.alive:
            return
        if scheduled_for == self._wakeup_at:
            self._wakeup_at = math.inf
        now = self._sim.now
        metadata_wake = self._maybe_request_metadata(now)
        if self._idempotent and self.producer_id < 0:
            # kafka-python's Sender.run_once returns before _send_producer_data while it has no
            # producer id: nothing is drained and nothing expires (delivery_timeout_ms is not
            # checked) until an id comes. The id comes from init_transactions() for a
            # transactional producer, and never again once it was lost to an expired batch.
            if (
                self.config["transactional_id"] is None
                and not self._producer_id_lost
                and self._pid_corr is None
                and self._accumulator_has_data()
            ):
                self._pid_corr = self._request(
                    InitProducerIdRequest(
                        self._next_corr(), self.config["transactional_id"], self.config["transaction_timeout_ms"]
                    )
                )
            if metadata_wake < math.inf:
                self._wakeup(metadata_wake - now)
            return
        self._expire_queued(now)
        next_wake = math.inf
        in_transaction = self._partitions_ready_for_transaction()
        while True:
            requests: dict[str, dict] = {}
            for tp, dq in self._accumulator.items():
                if not dq or tp in self._muted or (in_transaction is not None and tp not in in_transaction):
                    continue
                batch = dq[0]
                if batch.retry_at > now:
                    next_wake = min(next_wake, batch.retry_at)
                    continue
                ready_at = batch.created_ms + self.config["linger_ms"]
                if ready_at > now and not self._flushing and len(dq) == 1 and batch.size < self.config["batch_size"]:
                    next_wake = min(next_wake, ready_at)
                    continue
                leader = self._leaders.get(tp, (None,))[0]
                if leader is None:
                    self._metadata_wanted = True
                    next_wake = min(next_wake, now + self.config["retry_backoff_ms"])
                    continue
                node = node_name(leader)
                if tp in requests.get(node, ()):
                    continue
                not_before = self._node_backoff.get(node, (0.0,))[0]
                if not_before > now:  # kafka-python waits to reconnect; no attempt is spent
                    self._metadata_wanted = True  # ...and looks for a new leader meanwhile
                    next_wake = min(next_wake, not_before)
                    continue
                if (
                    node not in requests
                    and self._in_flight_per_node.get(node, 0) >= self.config["max_in_flight_requests_per_connection"]
                ):
                    continue
                dq.popleft()
                self._seal(batch)
                requests.setdefault(node, {})[tp] = batch
            if not requests:
                break
            for node, batches in requests.items():
                self._send_produce(node, batches)
        next_wake = min(next_wake, self._maybe_request_metadata(now))
        if next_wake < math.inf:
            self._wakeup(next_wake - now)

    def _maybe_request_metadata(self, now) -> float:
        """Ask a broker for leaders, at most once per ``retry_backoff_ms``; returns when to
        look again."""
        if not self._metadata_wanted or self._metadata_corr is not None:
            return math.inf
        not_before = self._metadata_sent_ms + self.config["retry_backoff_ms"]
        if now < not_before:
            return not_before
        self._metadata_sent_ms = now
        self._metadata_corr = self._request(MetadataRequest(self._next_corr()))
        return math.inf

    def _accumulator_has_data(self) -> bool:
        return any(self._accumulator.values())

    def _seal(self, batch: _Batch) -> None:
        """First drain: the batch gets its producer id, epoch and sequence numbers for good."""
        if batch.record_batch is None:
            seq = -1
            if self._idempotent:
                seq = self._next_sequence.get(batch.tp, 0)
                self._next_sequence[batch.tp] = seq + len(batch.records)
            batch.record_batch = RecordBatch(
                batch.records, self.producer_id, self.producer_epoch, seq, self.config["transactional_id"] is not None
            )
        batch.sent = True

    def _send_produce(self, node: str, batches: dict) -> None:
        corr = self._next_corr()
        req = ProduceRequest(
            corr,
            self._acks,
            self.config["request_timeout_ms"],
            {tp: b.record_batch for tp, b in batches.items()},
            self.config["transactional_id"],
            2 if self._transactional and self._transactions_v2 else 1,
        )
        self._network.send(self.node_id, node, req)
        if self._acks == 0:
            for b in batches.values():
                self._succeed(b, -1, None)
            return
        self._pending[corr] = _new_tuple(InFlight, (node, req, None, list(batches.values())))
        self._in_flight_per_node[node] = self._in_flight_per_node.get(node, 0) + 1
        if self._one_batch_per_partition:
            self._muted.update(batches)
        self._sim.schedule(self.config["request_timeout_ms"], self._request_timed_out, corr)

    def _produce_requests_in_flight(self) -> int:
        return sum(self._in_flight_per_node.values())

    # ---- responses ----------------------------------------------------------------------------------
    # An answer finds its request in the one correlation table (rpc.Requests.receive); the table at
    # the end of the class says which method takes it. A request that timed out or whose
    # connection closed is no longer there: its late answer is ignored, as in kafka-python.
    def receive(self, src: str, msg) -> None:
        self._node_backoff.pop(src, None)  # the broker answered: its connection is up
        super().receive(src, msg)

    def _on_produce_answer(self, in_flight: InFlight, answer) -> None:
        """Each batch of the request succeeded or failed (and is retried if it may be); with no
        answer (timeout, closed connection) every batch failed with that error."""
        batches: list[_Batch] = in_flight.context
        self._in_flight_per_node[in_flight.node] -= 1
        for batch in batches:
            self._muted.discard(batch.tp)
        if isinstance(answer, type):
            for batch in batches:
                self._failed(batch, answer, None)
            return  # whoever noticed (a timeout, the disconnect) wakes the sender once for all
        for batch in batches:
            result = answer.results[batch.tp]
            if result.error is None:
                self._succeed(batch, result.base_offset, result.evidence)
            else:
                self._failed(batch, result.error, result.evidence)
        self._wakeup()

    def _on_metadata_answer(self, in_flight: InFlight, msg) -> None:
        self._metadata_corr = None
        if isinstance(msg, type):
            return  # none came: the sender asks again when woken
        self._learn_brokers(msg.brokers)
        self._forget_deleted_topics(msg)
        self._partitions.update(msg.topics)
        for tp, (leader, epoch) in msg.leaders.items():
            known = self._leaders.get(tp)
            if known is None or epoch >= known[1]:
                self._leaders[tp] = (leader, epoch)
        wanted = [tp for tp, dq in self._accumulator.items() if dq and self._leaders.get(tp, (None,))[0] is None]
        self._metadata_wanted = bool(wanted)
        if wanted:  # leaderless partitions: ask again after a back-off
            self._wakeup(self.config["retry_backoff_ms"])
        else:
            self._wakeup()

    def _on_producer_id_answer(self, in_flight: InFlight, msg) -> None:
        self._pid_corr = None
        if isinstance(msg, type):
            return  # none came: the sender asks again when woken
        self.producer_id, self.producer_epoch = msg.producer_id, msg.producer_epoch
        self._next_sequence.clear()
        self._wakeup()

    def _forget_deleted_topics(self, msg) -> None:
        """kafka-python replaces its metadata with each answer: a topic the answer lacks (deleted)
        is forgotten - a send to it waits for metadata, a batch for it has no leader and
        expires - and a topic under a new id (created again) loses its cached leader epochs."""
        gone = {t for t in self._partitions if t not in msg.topics}
        gone |= {t for t, tid in msg.topic_ids.items() if self._topic_ids.get(t, tid) != tid}
        for topic in gone:
            self._partitions.pop(topic, None)
            self._topic_ids.pop(topic, None)
        for tp in [tp for tp in self._leaders if tp[0] in gone]:
            del self._leaders[tp]
        self._topic_ids.update(msg.topic_ids)

    def on_disconnect(self, peer: str) -> None:
        """The connection to ``peer`` closed: every request in flight on it failed, and
        kafka-python waits ``reconnect_backoff_ms`` (doubling up to ``reconnect_backoff_max_ms``)
        before connecting to it again."""
        previous = self._node_backoff.get(peer, (0.0, 0.0))[1]
        backoff = min(max(previous * 2, self.config["reconnect_backoff_ms"]), self.config["reconnect_backoff_max_ms"])
        self._node_backoff[peer] = (self._sim.now + backoff, backoff)
        super().on_disconnect(peer)
        self._metadata_wanted = True
        self._wakeup()

    def _request_timed_out(self, corr):
        """kafka-python closes a connection whose request timed out: all its produce requests fail
        (the simulator leaves the others on it to their own timeouts)."""
        in_flight = self._pending.get(corr)
        if in_flight is None or not self.alive:
            return
        node = in_flight.node
        for c in [c for c, f in self._pending.items() if f.node == node and type(f.request) is ProduceRequest]:
            error = Errors.RequestTimedOutError if c == corr else Errors.KafkaConnectionError
            self._take_answer(self._pending.pop(c), error)
        self._metadata_wanted = True
        self._wakeup()

    def _failed(self, batch: _Batch, error, evidence) -> None:
        now = self._sim.now
        batch.errors.append(error.__name__)
        if error in MAYBE_APPENDED:
            batch.maybe_appended = True
        if issubclass(error, Errors.InvalidMetadataError):
            self._metadata_wanted = True
        retriable = issubclass(error, Errors.RetriableError)
        if retriable and batch.retries_done < self._retries and now < batch.deadline_ms:
            batch.retries_done += 1
            batch.retry_at = now + self.config["retry_backoff_ms"]
            self._accumulator[batch.tp].appendleft(batch)
            return
        if retriable and now >= batch.deadline_ms:
            exc = self._expired(batch)
        else:
            exc = error(
                f"{error.__name__} after {batch.retries_done} retr"
                f"{'y' if batch.retries_done == 1 else 'ies'} (retries={self.config['retries']})"
            )
        if (
            error
            in (Errors.OutOfOrderSequenceNumberError, Errors.UnknownProducerIdError, Errors.InvalidProducerEpochError)
            and self.config["transactional_id"] is None
        ):
            # kafka-python >= 3 bumps the epoch (KIP-360, InitProducerId with the current id):
            # the next batches go out under a fresh sequence; here: ask for a new id
            self.producer_id = -1
        elif exc is not None and isinstance(exc, Errors.KafkaTimeoutError):
            self._reset_after_expiry(batch)
        self._fail(batch, exc, evidence)

    def _expire_queued(self, now) -> None:
        for dq in self._accumulator.values():
            while dq and dq[0].deadline_ms <= now:
                batch = dq.popleft()
                self._reset_after_expiry(batch)
                self._fail(batch, self._expired(batch), None)

    def _reset_after_expiry(self, batch: _Batch) -> None:
        """kafka-python 3.0.12 (``Sender._send_producer_data``): a batch that expires after it was
        sent (it is being retried) may or may not have been appended, so the broker's sequence for
        the partition is unknown; the idempotent producer calls
        ``TransactionManager.reset_producer_id()`` - producer id -1, state left READY. Its sender
        asks for a new id only in state UNINITIALIZED (``init_producer_id`` is a no-op otherwise,
        since kafka-python 3.0.0, dpkp/kafka-python#2928), and sends nothing without one: every
        later batch stays queued, never sent and never expired, until the producer is closed.
        Java bumps the epoch instead and goes on. A kafka-python bug, reproduced here because the
        simulator's clients do what kafka-python does (README "How faithful is it?")."""
        if self._idempotent and batch.retries_done > 0 and self.config["transactional_id"] is None:
            self.producer_id = -1
            self._producer_id_lost = True

    def _expired(self, batch: _Batch) -> Errors.KafkaTimeoutError:
        last = f" (last error: {batch.errors[-1]})" if batch.errors else ""
        n = batch.retries_done
        return Errors.KafkaTimeoutError(
            f"delivery_timeout_ms={self.config['delivery_timeout_ms']} expired before an acknowledgement, "
            f"after {n} retr{'y' if n == 1 else 'ies'}{last}"
        )

    def _succeed(self, batch: _Batch, base_offset: int, evidence) -> None:
        if batch.errors:
            evidence = {**(evidence or {}), "retried_after": batch.errors}
        self._history.note_completions(batch.handles, OK, None if base_offset < 0 else base_offset, evidence=evidence)
        self._incomplete -= len(batch.records)
        batch.result.succeed(base_offset)

    def _abort_undrained(self, exc: Exception) -> None:
        """kafka-python 3.0.12's ``RecordAccumulator.abort_undrained_batches`` (Java's
        ``abortUndrainedBatches``), when a transaction aborts: every batch never drained fails with
        ``exc`` at once and is never sent; a batch in flight keeps its broker's answer. So
        ``abort_transaction()`` right after ``send()`` writes nothing, and the sends' futures raise
        ``TransactionAbortedError`` (measured with kafka-python on the wire cluster)."""
        for dq in self._accumulator.values():
            for batch in [b for b in dq if not b.sent]:
                dq.remove(batch)
                self._fail(batch, exc, None, transaction=False)

    def _fail(self, batch: _Batch, exc: Exception, evidence, transaction: bool = True) -> None:
        if transaction:  # an abort's own failures do not make the transaction abortable again
            self._transaction_send_failed(exc)
        self._history.note_completions(
            batch.handles, INFO if batch.maybe_appended else FAIL, error=type(exc).__name__, evidence=evidence
        )
        self._incomplete -= len(batch.records)
        batch.result.fail(exc)

    #: request type -> the method that takes its answer (rpc.Requests); the transaction
    #: coordinator's requests are not here: each carries its own callback
    _RESPONSE_HANDLERS = {
        ProduceRequest: _on_produce_answer,
        MetadataRequest: _on_metadata_answer,
        InitProducerIdRequest: _on_producer_id_answer,
    }
