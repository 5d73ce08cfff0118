"""Dead-letter queues for share groups (KIP-1191, Kafka 4.4, ``share.version`` 2): a record a
share group gives up on - REJECTed by a consumer, or over ``share.delivery.count.limit`` - is
archived *and* written to the group's dead-letter topic (Kafka's ``ShareGroupDLQStateManager``,
called by ``SharePartition`` on the way to ARCHIVED).

What a dead letter is, as measured on Kafka 4.4.0 (docs/kafka-4.4.0.md §3):

- one record per archived record, in the DLQ partition numbered like the source partition (not
  by key), stamped when it is written; no key and no value, and six string headers naming where
  it came from and why (:data:`DLQ_HEADERS`, :data:`REJECTED`, :data:`OVER_LIMIT`);
- with the group config ``errors.deadletterqueue.copy.record.enable``, also the source record's
  key and value (not its headers, not its timestamp) - unless that does not fit the DLQ topic's
  ``max.message.bytes``: then the header-only record.

It is best effort. The record is archived whether or not the dead letter is written, nothing
tells the consumer, and nothing retries later; only the broker's log says so ("Failed to write
to DLQ, proceeding to ARCHIVED regardless."; here the event log's ``share_dlq_failed``). A
dead letter is not written when the topic name lacks the cluster's
``errors.deadletterqueue.topic.name.prefix``, when the topic is missing and
``errors.deadletterqueue.auto.create.topics.enable`` is off (on: the broker creates it with the
cluster's defaults, opted in), when the topic did not opt in with the topic config
``errors.deadletterqueue.group.enable``, or when even the header-only record is too big.

The write is a Produce with acks=-1 to the DLQ partition's leader, as Kafka's is. Kafka makes
the ARCHIVED state change wait for that attempt; here the archive goes on beside it - a
consumer sees the same, since an archived record is never handed out again.

Taught in notebooks/05c_share_groups.
"""

from __future__ import annotations

from kafka.record.default_records import DefaultRecordBatchBuilder

from .protocol import ProduceRequest, Record, RecordBatch, node_name
from .topic_configs import catalogue
from .topic_requests import create_topic_request

#: the headers of every dead letter, in the order Kafka 4.4.0 writes them
DLQ_HEADERS = (
    "__dlq.errors.topic",
    "__dlq.errors.partition",
    "__dlq.errors.offset",
    "__dlq.errors.group",
    "__dlq.errors.delivery.count",
    "__dlq.errors.message",
)
#: ``__dlq.errors.message``: why the record was given up on (``SharePartition``'s texts)
REJECTED = "Offset rejected by client."
OVER_LIMIT = "Offset delivery count exceeded the threshold."
#: the topic config by which a topic opts in as a dead-letter topic
OPT_IN = "errors.deadletterqueue.group.enable"
#: the DLQ write's Produce (``ShareGroupDLQStateManager``'s constants)
ACKS, TIMEOUT_MS = -1, 30_000
#: how often a write waiting for an auto-created topic looks whether its leader is known
TOPIC_POLL_MS = 100
FAILED = "Failed to write to DLQ, proceeding to ARCHIVED regardless."


class DeadLetterWriter:
    """A broker's dead-letter writes: :meth:`archived` is called by a share-partition for the
    records it archives because they were rejected or ran out of deliveries."""

    def __init__(self, broker):
        self.broker = broker
        self._corr = 0
        #: corr -> the dead letter's description, while its Produce is unanswered
        self._pending: dict[int, dict] = {}
        #: dead-letter topic being auto-created -> the dead letters waiting for it, in order
        self._creating: dict[str, list] = {}
        #: every dead letter begun: (share-partition, offset) - for the share invariants
        self.begun: list[tuple] = []

    def crash(self) -> None:
        self._pending.clear()
        self._creating.clear()

    def archived(self, sp, offsets: list, why: str) -> None:
        """``offsets`` of share-partition ``sp`` were just archived, for ``why`` (:data:`REJECTED`
        or :data:`OVER_LIMIT`): write their dead letters if the group has a dead-letter topic."""
        topic = sp.settings.dlq_topic_name
        if not topic or self.broker.options.share_version < 2:  # share.version 1: no DLQ at all
            return
        records = {o: r for o, r, _ in sp.partition.log.records(min(offsets), max(offsets) + 1)}
        for offset in offsets:
            self.begun.append((sp, offset))
            letter = {
                "group": sp.group,
                "topic": sp.tp[0],
                "partition": sp.tp[1],
                "offset": offset,
                "delivery_count": sp.records[offset].count,
                "why": why,
                "dlq_topic": topic,
                "copy": sp.settings.dlq_copy_record_enable,
                "written_at_ms": self.broker.sim.now + self.broker.cluster.wall_clock_offset_ms,
            }
            self._write(letter, records[offset], TIMEOUT_MS)

    def _write(self, letter: dict, source: Record, wait_ms: float) -> None:
        broker, options = self.broker, self.broker.options
        topic, prefix = letter["dlq_topic"], options.errors_deadletterqueue_topic_name_prefix
        if not topic.startswith(prefix):
            return self._failed(letter, f"Configured DLQ topic name does not comply with the DLQ topic prefix {prefix}")
        config = broker.topic_configs.get(topic)
        if config is None or topic in self._creating:
            if not options.errors_deadletterqueue_auto_create_topics_enable:
                return self._failed(letter, f"DLQ topic {topic} does not exist and auto create is disabled on cluster")
            return self._when_created(letter, source, wait_ms)
        overrides = dict(config.overrides)
        if overrides.get(OPT_IN, "false") != "true":
            return self._failed(letter, f"DLQ is not enabled on configured DLQ topic {topic}")
        tp = (topic, letter["partition"])
        state = broker.metadata.get(tp)
        if state is None or state.leader is None:  # fewer DLQ partitions, or no leader (not measured)
            return self._failed(letter, f"no leader for DLQ partition {tp[0]}-{tp[1]}")
        limit = int(
            overrides.get(
                "max.message.bytes", catalogue(options.kafka_version)["topic"]["max.message.bytes"]["default"]
            )
        )
        letter["written_at_ms"] = broker.sim.now + broker.cluster.wall_clock_offset_ms
        record = dead_letter(letter, source, letter["written_at_ms"])
        if _batch_bytes(record) > limit and record.value is not None:
            # the source record does not fit: Kafka finds no record to copy ("Total offsets
            # requested: 1, Records found: 0") and writes the header-only record instead
            record = record._replace(key=None, value=None)
        if _batch_bytes(record) > limit:
            return self._failed(letter, f"RecordTooLargeException: the dead letter is over {topic}'s max.message.bytes")
        self._corr += 1
        self._pending[self._corr] = letter
        broker.send(node_name(state.leader), ProduceRequest(self._corr, ACKS, TIMEOUT_MS, {tp: RecordBatch([record])}))
        broker.schedule_timer(TIMEOUT_MS, self._timed_out, self._corr)

    def _when_created(self, letter: dict, source: Record, wait_ms: float) -> None:
        """Auto-create the dead-letter topic (the cluster's defaults, opted in) and write once
        this broker knows it: the write waits for CreateTopics, the archiving does not. Dead
        letters arriving meanwhile queue behind, so they are written in order."""
        cluster, options, topic = self.broker.cluster, self.broker.options, letter["dlq_topic"]
        queued = self._creating.setdefault(topic, [])
        queued.append((letter, source))
        if len(queued) > 1:
            return
        if topic not in cluster.controller.configs:
            rf = min(options.default_replication_factor, len(cluster.brokers))
            error, message = create_topic_request(cluster, topic, options.num_partitions, rf, {OPT_IN: "true"})
            if error is not None:
                for letter, _ in self._creating.pop(topic):
                    self._failed(letter, f"creating DLQ topic {topic}: {message or error.__name__}")
                return
            cluster.record(
                self.broker.node_id, "dlq_topic_created", {"topic": topic, "partitions": options.num_partitions}
            )
        self._await_topic(topic, wait_ms)

    def _await_topic(self, topic: str, wait_ms: float) -> None:
        leaders = [s.leader for (t, _), s in self.broker.metadata.items() if t == topic]
        if topic in self.broker.topic_configs and leaders and None not in leaders:
            for letter, source in self._creating.pop(topic, []):
                self._write(letter, source, wait_ms)
        elif wait_ms <= 0:
            for letter, _ in self._creating.pop(topic, []):
                self._failed(letter, f"DLQ topic {topic} was not created within {TIMEOUT_MS} ms")
        else:
            self.broker.schedule_timer(TOPIC_POLL_MS, self._await_topic, topic, wait_ms - TOPIC_POLL_MS)

    def on_produce_response(self, resp) -> None:
        letter = self._pending.pop(resp.corr, None)
        if letter is None:
            return
        [(tp, result)] = resp.results.items()
        if result.error is not None:
            return self._failed(letter, result.error.__name__)
        self._note("share_dead_lettered", {**letter, "dlq_partition": tp[1], "dlq_offset": result.base_offset})

    def _timed_out(self, corr: int) -> None:
        letter = self._pending.pop(corr, None)
        if letter is not None:
            self._failed(letter, f"TimeoutException: no answer within {TIMEOUT_MS} ms")

    def _failed(self, letter: dict, cause: str) -> None:
        self._note("share_dlq_failed", {**letter, "error": f"{FAILED} {cause}"})

    def _note(self, f: str, value: dict) -> None:
        value = {k: v for k, v in value.items() if k != "copy"}
        self.broker.cluster.record(f"share-{self.broker.broker_id}", f, value)


def dead_letter(letter: dict, source: Record, now_ms: float) -> Record:
    """The dead letter of ``source``: six headers, and its key and value if the group copies them.

    >>> letter = {"topic": "jobs", "partition": 0, "offset": 1, "group": "g", "delivery_count": 1, "why": REJECTED, "copy": True}
    >>> r = dead_letter(letter, Record(b"k1", b"job-1", 5.0, (("h", b"v1"),)), 99.0)
    >>> r.key, r.value, r.timestamp_ms, r.headers[-1]
    (b'k1', b'job-1', 99.0, ('__dlq.errors.message', b'Offset rejected by client.'))
    """
    values = (
        letter["topic"],
        letter["partition"],
        letter["offset"],
        letter["group"],
        letter["delivery_count"],
        letter["why"],
    )
    headers = tuple((name, str(value).encode()) for name, value in zip(DLQ_HEADERS, values))
    if letter["copy"]:
        return Record(source.key, source.value, now_ms, headers)
    return Record(None, None, now_ms, headers)


def _batch_bytes(record: Record) -> int:
    """The size of a one-record v2 batch holding ``record`` (what max.message.bytes limits)."""
    headers = list(record.headers)
    return DefaultRecordBatchBuilder.header_size_in_bytes() + DefaultRecordBatchBuilder.size_in_bytes(
        0, 0, record.key, record.value, headers
    )
