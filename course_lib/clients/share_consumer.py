"""``ShareConsumer`` for the simulator, with confluent-kafka 2.16.1's names and behaviour
(``confluent_kafka.ShareConsumer``, KIP-932 "queues for Kafka").

>>> from course_lib.broker import Cluster
>>> from course_lib.clients import KafkaProducer
>>> cluster = Cluster(brokers=3, seed=1)
>>> cluster.create_topic("jobs", partitions=1)
>>> cluster.alter_share_group_config("workers", {"share.auto.offset.reset": "earliest"})
>>> producer = KafkaProducer(bootstrap_servers=cluster)
>>> for i in range(3):
...     _ = producer.send("jobs", f"job-{i}".encode())
>>> producer.flush()
>>> worker = ShareConsumer({"bootstrap.servers": cluster, "group.id": "workers"})
>>> worker.subscribe(["jobs"])
>>> messages = worker.poll(10)
>>> [(m.value(), m.delivery_count()) for m in messages]
[(b'job-0', 1), (b'job-1', 1), (b'job-2', 1)]
>>> worker.close()              # implicit mode: the records of the last poll are accepted

What it does, as confluent-kafka and the Java ``KafkaShareConsumer`` do:

- ``subscribe()`` joins the *share group* ``group.id`` (ShareGroupHeartbeat). The coordinator
  assigns partitions; several members may get the same one.
- ``poll(timeout)`` (seconds) returns a list of :class:`Message`. Each record was *acquired* for
  this member at its partition's leader, under a lock of ``group.share.record.lock.duration.ms``
  (a broker/group setting, 30 s): acknowledge it before the lock runs out or the broker hands it
  to someone else. ``msg.delivery_count()`` says which delivery this is (1 the first time).
- ``max.poll.records`` is what each ShareFetch asks for; Kafka 4.3 hands out whole record
  batches, so a fetch may bring more (24 records written in one batch all come to the first
  fetch), and ``poll()`` returns everything the fetch brought, as librdkafka 2.16's
  ``rd_kafka_share_poll`` does (its docs: "a poll may occasionally return more records than
  this value") and the Java client 4.3.1 does in its default ``share.acquire.mode``,
  *batch_optimized* (measured on Kafka 4.3.1: tests/real/test_share_groups_real.py).
- ``share.acknowledgement.mode``: ``implicit`` (default) - the next ``poll()``,
  ``commit_sync()``/``commit_async()`` or ``close()`` ACCEPTs every record of the previous poll;
  ``explicit`` - the application calls ``acknowledge(msg, AcknowledgeType.X)`` for each record
  (``poll()`` refuses to go on until it has) and ``commit_sync()``/``commit_async()`` sends them,
  or the next ``poll()`` does.
- ACCEPT: done. RELEASE: deliver it again (to anyone). REJECT: give up on it (archived).
  RENEW (KIP-1222, Java 4.3's ``AcknowledgeType.RENEW``): keep holding it, with a fresh lock.
  As in the Java client 4.3.1 (``ShareInFlightBatch``, ``ShareConsumerImpl.collect``), a RENEWed
  record leaves the application's hands until the broker has renewed its lock: the next
  ``poll()`` hands back just the renewed records (no new ones), to be acknowledged again;
  acknowledging it before that is refused. (Measured on Kafka 4.3.1 with Java:
  course_lib/experiments/share_renew.py.)
  confluent-kafka 2.16.1 has no RENEW (its ``AcknowledgeType`` stops at REJECT); the simulator
  offers it so the lesson can show what the Java client can do.
- Nothing is committed by offset: there is no ``commit(offsets)``, ``seek`` or ``position``.
- ``close()`` sends what is pending, releases the records it still holds (its share session
  ends) and leaves the group. A crashed consumer (:meth:`crash`) does none of it: its records
  come back when their locks expire, and it leaves the group after
  ``group.share.session.timeout.ms`` (45 s).

Every poll and every acknowledgement sent is recorded in the cluster's history
(``share_poll``: ``[partition, offset, message, delivery count]`` per record; ``share_ack``:
``[partition, offset, type]``), for :func:`course_lib.judge.checker.check_share`.

Taught in notebooks/05c_share_groups.
"""

from __future__ import annotations

from enum import IntEnum
from typing import NamedTuple

from kafka import errors as Errors
from kafka.structs import TopicPartition

from ..broker.broker import node_name
from ..broker.protocol import (
    MetadataRequest,
    ShareAcknowledgeRequest,
    ShareFetchRequest,
    ShareGroupHeartbeatRequest,
)
from ..broker.share_config import HEARTBEAT_INTERVAL_MS
from ..history import FAIL, INFO, OK, Nemesis, OpName, as_text
from .config import ConfigurationError
from .rpc import Requests


class AcknowledgeType(IntEnum):
    """``confluent_kafka.AcknowledgeType`` (ids as on the wire); RENEW is Java 4.3's (KIP-1222)."""

    ACCEPT = 1
    RELEASE = 2
    REJECT = 3
    RENEW = 4


class KafkaError:
    """confluent-kafka's ``KafkaError``, as a :class:`KafkaException` carries it: ``name()`` is
    Kafka's name for the error, ``code()`` its number (found by the share-group differential:
    course_lib/experiments/share_differential.py).

    >>> error = KafkaError(Errors.InvalidRecordStateError)
    >>> error.name(), error.code()
    ('INVALID_RECORD_STATE', 121)
    >>> error
    KafkaError{code=INVALID_RECORD_STATE,val=121,str="Broker: The record state is invalid"}
    """

    def __init__(self, error):
        kind = error if isinstance(error, type) else type(error)
        self._name = getattr(kind, "message", None) or kind.__name__
        self._code = getattr(kind, "errno", -1)
        self._retriable = bool(getattr(kind, "retriable", False))
        description = getattr(kind, "description", None) or self._name
        self._str = "Broker: " + description.split(". ")[0].rstrip(".")

    def name(self) -> str:
        return self._name

    def code(self) -> int:
        return self._code

    def retriable(self) -> bool:
        return self._retriable

    def __repr__(self) -> str:
        return f'KafkaError{{code={self._name},val={self._code},str="{self._str}"}}'

    def str(self):  # (last: the name would shadow the builtin in the annotations below it)
        """The error's text, as librdkafka words a broker's error."""
        return self._str


class KafkaException(Exception):
    """confluent-kafka's ``KafkaException``: ``args[0]`` is the :class:`KafkaError`."""


class IllegalStateException(Exception):
    """confluent-kafka's ``IllegalStateException``: a call the consumer's state does not allow."""


#: confluent-kafka names -> (default, what it is); anything else is refused with the list
SHARE_CONSUMER_DEFAULTS: dict = {
    "bootstrap.servers": None,
    "group.id": None,
    "client.id": None,
    "share.acknowledgement.mode": "implicit",
    "fetch.wait.max.ms": 500,  # how long a ShareFetch waits at the leader for records
    # records asked for per ShareFetch (its MaxRecords and BatchSize, as librdkafka sends them);
    # the broker rounds up to whole record batches, and poll() returns all it got
    "max.poll.records": 500,
    "socket.timeout.ms": 60_000,
    "retry.backoff.ms": 100,
}


class RecordFields(NamedTuple):
    """What :class:`Message` reads of a record: what an adapter that gets records from elsewhere
    (the Java client's driver, a process of its own) gives it."""

    key: bytes | None
    value: bytes | None
    timestamp_ms: int = -1
    headers: tuple = ()


class Message:
    """One record as ``poll()`` returns it (``confluent_kafka.Message``'s accessors)."""

    __slots__ = ("_topic", "_partition", "_offset", "_key", "_value", "_timestamp", "_delivery_count", "_headers")

    def __init__(self, topic, partition, offset, record, delivery_count):
        self._topic, self._partition, self._offset = topic, partition, offset
        self._key, self._value, self._timestamp = record.key, record.value, record.timestamp_ms
        self._headers = list(record.headers) or None
        self._delivery_count = delivery_count

    def topic(self):
        return self._topic

    def partition(self):
        return self._partition

    def offset(self):
        return self._offset

    def key(self):
        return self._key

    def value(self):
        return self._value

    def headers(self):
        return self._headers

    def timestamp(self):
        return (1, int(self._timestamp))  # TIMESTAMP_CREATE_TIME

    def error(self):
        return None

    def delivery_count(self):
        return self._delivery_count

    def leader_epoch(self):
        return None

    def __repr__(self) -> str:
        return f"<Message {self._topic}-{self._partition}@{self._offset} delivery {self._delivery_count}>"


class ShareConsumer(Requests):
    def __init__(self, config: dict):
        if not isinstance(config, dict):
            raise TypeError("ShareConsumer(config) takes one dict of confluent-kafka settings")
        unknown = sorted(set(config) - set(SHARE_CONSUMER_DEFAULTS))
        if unknown:
            raise ConfigurationError(
                f"unknown ShareConsumer setting(s) {unknown}; the simulator knows {sorted(SHARE_CONSUMER_DEFAULTS)}"
            )
        settings = {**SHARE_CONSUMER_DEFAULTS, **config}
        if not settings["group.id"]:
            raise ConfigurationError("ShareConsumer needs 'group.id': the share group to join")
        mode = settings["share.acknowledgement.mode"]
        if mode not in ("implicit", "explicit"):
            raise ConfigurationError(f"share.acknowledgement.mode must be 'implicit' or 'explicit', got {mode!r}")
        self.settings = settings
        # what Requests reads, under its names
        self.config = {
            "bootstrap_servers": settings["bootstrap.servers"],
            "client_id": settings["client.id"],
            "request_timeout_ms": settings["socket.timeout.ms"],
            "retry_backoff_ms": settings["retry.backoff.ms"],
        }
        self._attach("share-consumer")
        self._group: str = settings["group.id"]
        self._explicit = mode == "explicit"
        self._member_id = f"{self.node_id}-member"  # the client generates it (KIP-848/932)
        self._epoch = 0
        self._subscription: tuple = ()
        self._assignment: list = []
        self._leaders: dict = {}
        self._metadata_corr: int | None = None
        self._heartbeat_gen = 0
        self._heartbeating = False
        self._fetching: set = set()
        self._buffer: list[Message] = []
        self._delivered: dict[tuple, Message] = {}  # (topic, partition, offset) -> not yet acknowledged
        #: RENEWed records: waiting for the broker's answer, then handed back by the next poll()
        self._renewing: dict[tuple, Message] = {}
        self._renewed: list[Message] = []
        self._acks: dict[tuple, list] = {}  # tp -> [(offset, type)] to send
        self._acks_in_flight = 0
        self._results: list = []  # commit results for the callback: (offsets, exception)
        self._callback = None
        self._polling = False
        #: a poll found nothing buffered and asked for records: the fetches go on, after the poll
        #: returned too, until records come - they wait, acquired, for the next poll (librdkafka's
        #: ``rkshare_fetch_more_records_requested``, cleared when a poll hands records out)
        self._wants_records = False
        self._wanted_when_frozen = False  # _wants_records when freeze() stopped the process

    def __repr__(self) -> str:
        return f"<ShareConsumer {self.node_id} group={self._group!r} assignment={self._assignment}>"

    # ---- confluent-kafka API -----------------------------------------------------------------------
    def subscribe(self, topics):
        self._check_open()
        if isinstance(topics, str) or not all(isinstance(t, str) and t for t in topics):
            raise TypeError(f"subscribe() takes a list of topic names, got {topics!r}: write subscribe([{topics!r}])")
        if len(set(topics)) != len(topics):
            raise ValueError(f"duplicate topic names in {topics!r}")
        if not topics:
            return self.unsubscribe()
        self._subscription = tuple(sorted(topics))
        self._start_heartbeats()

    def subscription(self):
        self._check_open()
        return list(self._subscription)

    def unsubscribe(self):
        self._check_open()
        self._subscription = ()
        self._leave()

    def poll(self, timeout=-1):
        """Acknowledge the previous poll's records (implicit mode), then return a list of
        :class:`Message` acquired for this member: at most ``timeout`` seconds of waiting (-1:
        until records come; the simulator gives up after a virtual minute)."""
        self._check_open()
        if not self._subscription:
            raise IllegalStateException("poll() before subscribe(): subscribe to the topics first")
        if self._explicit and self._delivered:
            first = next(iter(self._delivered.values()))
            raise IllegalStateException(
                f"explicit acknowledgement mode: {len(self._delivered)} record(s) of the previous poll are not "
                f"acknowledged (e.g. {first!r}); call acknowledge(msg, AcknowledgeType.X) for each first"
            )
        timeout_ms = 60_000 if timeout is None or timeout < 0 else timeout * 1000
        if self._renewing or self._renewed:
            return self._poll_renewed(timeout_ms)
        self._accept_delivered()
        self._polling = True
        self._wants_records = self._wants_records or not self._buffer
        try:
            self._advance()
            self._send_pending_acks()
            self._sim.run_until(lambda: bool(self._buffer), timeout_ms)
        finally:
            self._polling = False
        self._run_callbacks()
        messages, self._buffer = self._buffer, []
        if messages:
            self._wants_records = False
        for m in messages:
            self._delivered[(m.topic(), m.partition(), m.offset())] = m
        if messages:
            self._history.record(
                self.node_id,
                OK,
                OpName.SHARE_POLL,
                [[m.partition(), m.offset(), as_text(m.value()), m.delivery_count()] for m in messages],
                topic=messages[0].topic(),
            )
        return messages

    def _poll_renewed(self, timeout_ms: float) -> list:
        """poll() while RENEWs are pending: send them, wait for the answers, return the renewed
        records. Only while an answer is still awaited does a fetch go out (what it brings waits
        for a later poll, its locks running): ``ShareConsumerImpl.collect``."""
        self._polling = True
        try:
            self._send_pending_acks()
            if self._renewing:
                self._advance()
            self._sim.run_until(lambda: not self._renewing, timeout_ms)
        finally:
            self._polling = False
        self._run_callbacks()
        messages, self._renewed = self._renewed, []
        for m in messages:
            self._delivered[(m.topic(), m.partition(), m.offset())] = m
        return messages

    def consume(self, num_messages=1, timeout=-1):
        """confluent-kafka's ``Consumer.consume`` shape: at most ``num_messages`` of a poll.
        (ShareConsumer 2.16.1 has only ``poll``; this is for code written for both.)"""
        messages = self.poll(timeout)
        return messages[:num_messages] if num_messages else messages

    def acknowledge(self, message, ack_type=AcknowledgeType.ACCEPT):
        if not isinstance(message, Message):
            raise TypeError(f"acknowledge() takes a Message returned by poll(), got {message!r}")
        self.acknowledge_offset(message.topic(), message.partition(), message.offset(), ack_type)

    def acknowledge_offset(self, topic, partition, offset, ack_type=AcknowledgeType.ACCEPT):
        self._check_open()
        if not self._explicit:
            raise IllegalStateException(
                "acknowledge() needs share.acknowledgement.mode=explicit; in implicit mode the next poll() "
                "accepts every record of the previous one"
            )
        if not isinstance(ack_type, int) or ack_type not in tuple(AcknowledgeType):
            raise ValueError(f"ack_type must be an AcknowledgeType (ACCEPT, RELEASE, REJECT, RENEW), got {ack_type!r}")
        key = (topic, partition, offset)
        if key not in self._delivered:
            raise IllegalStateException(
                f"{topic}-{partition}@{offset} is not in flight: it was never polled or is acknowledged"
            )
        message = self._delivered.pop(key)
        if ack_type == AcknowledgeType.RENEW:
            self._renewing[key] = message
        self._acks.setdefault((topic, partition), []).append((offset, int(ack_type)))

    def commit_sync(self, timeout=60):
        """Send every pending acknowledgement and wait for the answers: ``{TopicPartition: None or
        KafkaException}`` (empty when nothing was pending)."""
        self._check_open()
        self._accept_delivered()
        results: dict = {}
        self._send_pending_acks(results)
        wait_ms = 3_600_000 if timeout is None or timeout < 0 else timeout * 1000
        self._sim.run_until(lambda: all(v is not _WAITING for v in results.values()), wait_ms)
        self._run_callbacks()
        return {
            TopicPartition(*tp): None if error is None else KafkaException(KafkaError(error))
            for tp, error in sorted(results.items())
            if error is not _WAITING
        }

    def commit_async(self):
        self._check_open()
        self._accept_delivered()
        self._send_pending_acks()

    def set_acknowledgement_commit_callback(self, callback):
        if callback is not None and not callable(callback):
            raise TypeError("the acknowledgement commit callback must be callable(offsets, exception) or None")
        self._callback = callback

    def close(self):
        """Send what is pending, release what this member still holds, leave the group."""
        if self._closed:
            return
        self._wants_records = False  # closing: no fetch starts any more
        self._accept_delivered()
        results: dict = {}
        self._send_pending_acks(results, close=True)
        self._sim.run_until(
            lambda: all(v is not _WAITING for v in results.values()), self.settings["socket.timeout.ms"]
        )
        self._run_callbacks()
        self._leave()
        self._sim.run_for(2 * self._network.latency_ms + self._network.jitter_ms)
        self._closed = True
        self.alive = False

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # ---- simulator-only ----------------------------------------------------------------------------
    def crash(self, host: bool = False):
        """The application dies holding its records: no acknowledgement, no leave. Its operating
        system closes its connections, and each broker it fetched from ends its share session:
        what it held is available again at once, each record's delivery counted (Kafka 4.3.1 on a
        SIGKILL). ``host=True``: the whole machine is gone (power cut, cable pulled): no
        connection closes, so what it held comes back only when the locks expire. Either way the
        member is removed after the session timeout."""
        self._closed = True
        self.alive = False
        self._heartbeat_gen += 1
        self._cluster.record("nemesis", Nemesis.CRASH_CLIENT, {"client": self.node_id, "host": host})
        if host:
            # nothing answers for a machine that is gone: what the brokers still send it is lost
            # on the way, not refused (a refusal would tell them the connection closed)
            self._network.isolate(self.node_id)
        else:
            self._network.connections_closed(self.node_id)

    def freeze(self):
        """The process stops (a long GC pause): no heartbeats; the locks of what it holds run out."""
        self._heartbeat_gen += 1
        self._heartbeating = False
        # A stopped process asks for nothing; its wish for records is kept for when it goes on
        # (librdkafka's rkshare_fetch_more_records_requested survives a SIGSTOP).
        self._wanted_when_frozen, self._wants_records = self._wants_records, False
        self._cluster.record("nemesis", Nemesis.FREEZE_CLIENT, {"client": self.node_id})

    def wake(self):
        self._cluster.record("nemesis", Nemesis.WAKE_CLIENT, {"client": self.node_id})
        self._wants_records = self._wants_records or self._wanted_when_frozen
        if self._subscription:
            self._start_heartbeats()
        self._advance_if_wanted()  # its background fetches go on where they stopped

    @property
    def member_id(self) -> str:
        return self._member_id

    def assignment(self) -> list:
        return [TopicPartition(*tp) for tp in self._assignment]

    # ---- membership --------------------------------------------------------------------------------
    def _start_heartbeats(self) -> None:
        self._heartbeat_gen += 1
        self._heartbeating = True
        self._heartbeat(self._heartbeat_gen)
        # the first assignment: confluent-kafka's subscribe() returns at once, but its first
        # poll() waits for it; here subscribe() lets the join finish
        self._sim.run_until(lambda: bool(self._assignment) or not self.alive, 3 * HEARTBEAT_INTERVAL_MS)

    def _heartbeat(self, gen: int, topics_changed: bool = True) -> None:
        if gen != self._heartbeat_gen or not self.alive:
            return
        request = ShareGroupHeartbeatRequest(
            group=self._group,
            member_id=self._member_id,
            member_epoch=self._epoch,
            client_id=self.node_id,
            topics=self._subscription,
        )

        def answered(error, result) -> None:
            if gen != self._heartbeat_gen or not self.alive:
                return
            if error is Errors.UnknownMemberIdError:  # the coordinator forgot us (failover): rejoin
                self._epoch = 0
            if error is not None:
                self._sim.schedule(self.settings["retry.backoff.ms"], self._heartbeat, gen)
                return
            self._epoch = result["member_epoch"]
            if list(result["assignment"]) != self._assignment:
                self._assignment = [tuple(tp) for tp in result["assignment"]]
                self._history.record(self.node_id, INFO, OpName.ASSIGNED, [list(tp) for tp in self._assignment])
                if self._fetch_wanted():
                    self._advance()
            self._sim.schedule(result["heartbeat_interval_ms"], self._heartbeat, gen)

        self._ask_coordinator(request, answered)

    def _leave(self) -> None:
        self._heartbeat_gen += 1
        self._heartbeating = False
        if self._epoch >= 0 and self._coordinators.get(("group", self._group)) is not None:
            self._ask_coordinator(
                ShareGroupHeartbeatRequest(group=self._group, member_id=self._member_id, member_epoch=-1),
                lambda error, result: None,
            )
        self._assignment = []
        self._epoch = 0

    # ---- fetching ----------------------------------------------------------------------------------
    def _advance(self) -> None:
        """Send a ShareFetch to the leader of every assigned partition that has none in flight,
        carrying that partition's pending acknowledgements - while a poll asks for records, and
        after an empty poll until records come (see ``_wants_records``)."""
        if not self.alive or self._buffer:
            return
        missing = False
        for tp in self._assignment:
            leader = self._leaders.get(tp)
            if leader is None:
                missing = True
                continue
            if tp in self._fetching:
                continue
            self._fetching.add(tp)
            acks = tuple(self._acks.pop(tp, ()))
            op = self._ack_op(tp, acks) if acks else None
            request = ShareFetchRequest(
                self._next_corr(),
                self._group,
                self._member_id,
                tp,
                self.settings["max.poll.records"],
                self.settings["fetch.wait.max.ms"],
                acks,
                batch_size=self.settings["max.poll.records"],
            )
            timeout = self.settings["fetch.wait.max.ms"] + self.settings["socket.timeout.ms"]
            self._send(node_name(leader), request, lambda resp, tp=tp, op=op: self._on_fetch(tp, resp, op), timeout)
        if missing and self._metadata_corr is None:
            self._metadata_corr = self._send(self._any_broker(), MetadataRequest(self._next_corr()), self._on_metadata)

    def _on_fetch(self, tp, resp, op) -> None:
        self._fetching.discard(tp)
        if isinstance(resp, type):
            self._complete_ack(op, tp, resp)
            self._leaders.pop(tp, None)
            return self._retry()
        self._complete_ack(op, tp, resp.ack_error)
        if resp.error is not None:
            self._leaders.pop(tp, None)
            return self._retry()
        for offset, record, count in resp.records:
            self._buffer.append(Message(tp[0], tp[1], offset, record, count))
        if not resp.records and self._fetch_wanted():
            self._advance()

    def _fetch_wanted(self) -> bool:
        return self._polling or self._wants_records

    def _retry(self) -> None:
        self._sim.schedule(self.settings["retry.backoff.ms"], self._advance_if_wanted)

    def _advance_if_wanted(self) -> None:
        if self._fetch_wanted():
            self._advance()

    def _on_metadata(self, resp) -> None:
        self._metadata_corr = None
        if not isinstance(resp, type):
            self._learn_brokers(resp.brokers)
            for tp, (leader, _) in resp.leaders.items():
                if leader is not None:
                    self._leaders[tp] = leader
                else:
                    self._leaders.pop(tp, None)
        if self._fetch_wanted():
            if any(tp not in self._leaders for tp in self._assignment):
                self._retry()
            else:
                self._advance()

    # ---- acknowledgements --------------------------------------------------------------------------
    def _accept_delivered(self) -> None:
        """Implicit mode: every record of the previous poll is accepted."""
        if self._explicit:
            return
        for topic, partition, offset in list(self._delivered):
            self._acks.setdefault((topic, partition), []).append((offset, int(AcknowledgeType.ACCEPT)))
        self._delivered.clear()

    def _send_pending_acks(self, results: dict | None = None, close: bool = False) -> None:
        """A ShareAcknowledge per partition with pending acknowledgements (and, on close, per
        assigned partition, to end the share session); ``results[tp]`` gets each outcome."""
        tps = set(self._acks) | (set(self._assignment) if close else set())
        for tp in sorted(tps):
            if tp in self._fetching and not close:
                continue  # the fetch in flight answers; the next fetch carries them
            acks = tuple(self._acks.pop(tp, ()))
            leader = self._leaders.get(tp)
            op = self._ack_op(tp, acks) if acks else None
            if leader is None:
                self._complete_ack(op, tp, Errors.NotLeaderForPartitionError)
                if results is not None and acks:
                    results[tp] = Errors.NotLeaderForPartitionError
                continue
            if results is not None and (acks or close):
                results[tp] = _WAITING

            def answered(resp, tp=tp, op=op) -> None:
                error = resp if isinstance(resp, type) else resp.error
                self._complete_ack(op, tp, error)
                if error is not None:
                    self._leaders.pop(tp, None)
                if results is not None and tp in results:
                    results[tp] = error

            request = ShareAcknowledgeRequest(self._next_corr(), self._group, self._member_id, tp, acks, close)
            self._send(node_name(leader), request, answered)

    def _ack_op(self, tp, acks: tuple):
        names = {int(t): t.name.lower() for t in AcknowledgeType}
        return self._history.invoke(
            self.node_id, OpName.SHARE_ACK, [[tp[1], o, names[k]] for o, k in acks], topic=tp[0], partition=tp[1]
        )

    def _complete_ack(self, op, tp, error) -> None:
        if op is None:
            return
        if error is None:
            outcome = OK
        elif error is Errors.InvalidRecordStateError:
            outcome = FAIL  # the broker refused them: the records were no longer this member's
        else:
            outcome = INFO  # lost answer, timeout, leader gone: maybe applied, maybe not
        self._history.complete(op, outcome, error=None if error is None else _name(error))
        for _, o, k in op.value:
            renewed = self._renewing.pop((tp[0], tp[1], o), None) if k == "renew" else None
            if renewed is not None and error is None:
                self._renewed.append(renewed)
        offsets = {o for _, o, k in op.value if k != "renew"}
        self._results.append(
            ({TopicPartition(*tp): offsets}, None if error is None else KafkaException(KafkaError(error)))
        )

    def _run_callbacks(self) -> None:
        results, self._results = self._results, []
        if self._callback is not None:
            for offsets, exc in results:
                self._callback(offsets, exc)

    # ---- plumbing ----------------------------------------------------------------------------------
    def _check_open(self) -> None:
        if self._closed:
            raise IllegalStateException("this share consumer is closed (or crashed); create a new one")


#: a result not in yet
_WAITING = object()


def _name(error) -> str:
    return error.__name__ if isinstance(error, type) else type(error).__name__


__all__ = ["AcknowledgeType", "IllegalStateException", "KafkaError", "KafkaException", "Message", "ShareConsumer"]
