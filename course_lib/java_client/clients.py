"""Thin Python objects over the Java client in a driver process; each method is one Java call.

Names mirror the Java API in snake_case (``initTransactions`` -> ``init_transactions``,
``commitSync`` -> ``commit_sync``); arguments are Python values (``bytes`` keys and values,
``(topic, partition)`` pairs, timeouts in seconds); configs keep Java's names
(``{"enable.idempotence": "true"}``) and are checked by the Java client itself. A call the client
refuses raises :class:`~course_lib.java_client.process.JavaException` with Java's class name.

>>> with DriverProcess() as driver:                                  # doctest: +SKIP
...     producer = JavaProducer(driver, {"bootstrap.servers": servers, "acks": "all"})
...     producer.send("orders", b"paid", key=b"o-1").get(timeout=30)
...     producer.close(timeout=5)
RecordMetadata(topic='orders', partition=0, offset=0, timestamp=...)
"""

from __future__ import annotations

import base64
from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple

from .process import DEFAULT_TIMEOUT_S, DriverProcess, JavaException

MARGIN_S = 30.0  # added to a Java-side timeout: the driver's answer must have time to arrive


class TopicPartition(NamedTuple):
    topic: str
    partition: int


class RecordMetadata(NamedTuple):
    """A send future's result (Java's RecordMetadata)."""

    topic: str
    partition: int
    offset: int
    timestamp: int


class OffsetAndMetadata(NamedTuple):
    offset: int
    metadata: str | None = ""
    leader_epoch: int | None = None


class ConsumerRecord(NamedTuple):
    topic: str
    partition: int
    offset: int
    timestamp: int
    timestamp_type: str
    key: bytes | None
    value: bytes | None
    headers: list[tuple[str, bytes | None]]
    leader_epoch: int | None


# ---- conversions ----------------------------------------------------------------------------
def _b64(b: bytes | str | None) -> str | None:
    if b is None:
        return None
    return base64.b64encode(b.encode() if isinstance(b, str) else bytes(b)).decode()


def _unb64(s: str | None) -> bytes | None:
    return None if s is None else base64.b64decode(s)


def _ms(seconds: float | None) -> int | None:
    return None if seconds is None else int(seconds * 1000)


def _wait(seconds: float | None) -> float:
    return DEFAULT_TIMEOUT_S if seconds is None else seconds + MARGIN_S


def _tps(partitions: Iterable) -> list[dict]:
    return [{"topic": t, "partition": p} for t, p in partitions]


def _offsets(offsets: Mapping) -> list[dict]:
    out = []
    for (topic, partition), o in offsets.items():
        offset, metadata = (o, "") if isinstance(o, int) else (o[0], o[1])
        out.append({"topic": topic, "partition": partition, "offset": offset, "metadata": metadata})
    return out


def _committed(items: list[dict]) -> dict[TopicPartition, OffsetAndMetadata | None]:
    out: dict[TopicPartition, OffsetAndMetadata | None] = {}
    for i in items:
        c = i["committed"]
        out[TopicPartition(i["topic"], i["partition"])] = (
            None if c is None else OffsetAndMetadata(c["offset"], c["metadata"], c["leaderEpoch"])
        )
    return out


def _record_metadata(v: dict) -> RecordMetadata:
    return RecordMetadata(v["topic"], v["partition"], v["offset"], v["timestamp"])


def _consumer_record(r: dict) -> ConsumerRecord:
    return ConsumerRecord(
        r["topic"],
        r["partition"],
        r["offset"],
        r["timestamp"],
        r["timestampType"],
        _unb64(r["key"]),
        _unb64(r["value"]),
        [(k, _unb64(v)) for k, v in r["headers"]],
        r["leaderEpoch"],
    )


class ShareRecord(NamedTuple):
    """A record a KafkaShareConsumer acquired: ``deliveryCount()`` is how many times it was handed out."""

    topic: str
    partition: int
    offset: int
    key: bytes | None
    value: bytes | None
    delivery_count: int | None


# ---- futures --------------------------------------------------------------------------------
class JavaFuture:
    """A Java future held by the driver (a send's, a commitAsync's callback)."""

    def __init__(self, driver: DriverProcess, future_id: str, convert, what: str):
        self._driver, self.id, self._convert, self._what = driver, future_id, convert, what

    def get(self, timeout: float | None = None) -> Any:
        """``Future.get(timeout)``: the result, or :class:`JavaException` (the cause of Java's
        ExecutionException; ``java.util.concurrent.TimeoutException`` when not done in time)."""
        v = self._driver.request(
            "future.get", future=self.id, timeout_ms=_ms(timeout), what=self._what, timeout=_wait(timeout)
        )
        return self._convert(v)

    def outcome(self) -> tuple[str, Any]:
        """Without waiting: ``("pending", None)``, ``("done", result)`` or ``("failed", JavaException)``."""
        return outcomes(self._driver, [self])[0]

    def done(self) -> bool:
        return self.outcome()[0] != "pending"


def outcomes(driver: DriverProcess, futures: list[JavaFuture]) -> list[tuple[str, Any]]:
    """The outcome of every future, in one call (what each send of a sequence came to)."""
    out: list[tuple[str, Any]] = []
    answers = driver.request("future.outcomes", futures=[f.id for f in futures], what="future outcomes")
    for f, a in zip(futures, answers, strict=True):
        state = a["state"]
        if state == "done":
            out.append((state, f._convert(a["value"])))
        elif state == "failed":
            out.append((state, JavaException.from_json(a["error"])))
        else:
            out.append((state, None))
    return out


# ---- clients --------------------------------------------------------------------------------
class _JavaClient:
    kind = ""

    def __init__(self, driver: DriverProcess, config: Mapping[str, Any]):
        self._driver = driver
        self.config = dict(config)
        self.handle = driver.request(f"{self.kind}.create", config=self.config, what=f"a new {self.kind}")

    def _call(self, op: str, *, timeout: float | None = None, what: str | None = None, **fields):
        return self._driver.request(
            f"{self.kind}.{op}",
            handle=self.handle,
            what=what or f"{self.kind} {self.handle}",
            timeout=timeout,
            **fields,
        )

    def close(self, timeout: float | None = None) -> None:
        """``close()`` or ``close(Duration.ofMillis(timeout * 1000))``."""
        self._driver.request(
            "close", handle=self.handle, timeout_ms=_ms(timeout), what=f"{self.handle}.close", timeout=_wait(timeout)
        )


class JavaProducer(_JavaClient):
    """``KafkaProducer<byte[], byte[]>`` (serializers default to ByteArraySerializer)."""

    kind = "producer"

    def send(
        self,
        topic: str,
        value: bytes | None = None,
        key: bytes | None = None,
        partition: int | None = None,
        timestamp: int | None = None,
        headers: list[tuple[str, bytes | None]] | None = None,
    ) -> JavaFuture:
        fid = self._call(
            "send",
            topic=topic,
            value=_b64(value),
            key=_b64(key),
            partition=partition,
            timestamp=timestamp,
            headers=[[k, _b64(v)] for k, v in headers or []],
        )
        return JavaFuture(self._driver, fid, _record_metadata, f"the send {fid} of {self.handle} to {topic}")

    def send_many(self, topic: str, count: int, value_bytes: int = 1024, partition: int | None = None) -> dict:
        """``count`` sends of ``value_bytes`` each in a loop in Java, then every future's get:
        ``{"records", "failed", "seconds", "first_error"}`` (a throughput measurement)."""
        return self._call(
            "send_many",
            topic=topic,
            count=count,
            value_bytes=value_bytes,
            partition=partition,
            what=f"{count} sends of {self.handle}",
        )

    def flush(self, timeout: float | None = None) -> None:
        """``flush()`` (Java's has no timeout; ``timeout`` bounds the wait for it here)."""
        self._call("flush", timeout=timeout)

    def init_transactions(self) -> None:
        self._call("initTransactions")

    def begin_transaction(self) -> None:
        self._call("beginTransaction")

    def commit_transaction(self) -> None:
        self._call("commitTransaction")

    def abort_transaction(self) -> None:
        self._call("abortTransaction")

    def send_offsets_to_transaction(self, offsets: Mapping, group: JavaConsumer | str) -> None:
        """``sendOffsetsToTransaction(offsets, consumer.groupMetadata())`` for a consumer, or
        ``new ConsumerGroupMetadata(group_id)`` for a group id (as kafka-python passes it)."""
        who = {"consumer": group.handle} if isinstance(group, JavaConsumer) else {"group_id": group}
        self._call("sendOffsetsToTransaction", offsets=_offsets(offsets), **who)

    def partitions_for(self, topic: str) -> list[int]:
        return self._call("partitionsFor", topic=topic)


class JavaConsumer(_JavaClient):
    """``KafkaConsumer<byte[], byte[]>`` (deserializers default to ByteArrayDeserializer);
    ``group.protocol=consumer`` selects KIP-848's protocol where the cluster offers it."""

    kind = "consumer"

    def subscribe(self, topics: Iterable[str]) -> None:
        self._call("subscribe", topics=list(topics))

    def assign(self, partitions: Iterable) -> None:
        self._call("assign", partitions=_tps(partitions))

    def unsubscribe(self) -> None:
        self._call("unsubscribe")

    def assignment(self) -> set[TopicPartition]:
        return {TopicPartition(p["topic"], p["partition"]) for p in self._call("assignment")}

    def poll(self, timeout: float = 0.0) -> list[ConsumerRecord]:
        """``poll(Duration)``: the records, in the order Java returns them."""
        recs = self._call("poll", timeout_ms=_ms(timeout), timeout=_wait(timeout), what=f"{self.handle}.poll")
        return [_consumer_record(r) for r in recs]

    def commit_sync(self, offsets: Mapping | None = None, timeout: float | None = None) -> None:
        self._call(
            "commitSync",
            offsets=None if offsets is None else _offsets(offsets),
            timeout_ms=_ms(timeout),
            timeout=_wait(timeout),
        )

    def commit_async(self, offsets: Mapping | None = None) -> JavaFuture:
        """``commitAsync(callback)``; the future completes when Java runs the callback (inside a
        later poll, commit_sync or close of this consumer)."""
        fid = self._call("commitAsync", offsets=None if offsets is None else _offsets(offsets))
        return JavaFuture(self._driver, fid, _committed_from_callback, f"the commitAsync {fid} of {self.handle}")

    def seek(self, partition: tuple[str, int], offset: int) -> None:
        self._call("seek", topic=partition[0], partition=partition[1], offset=offset)

    def seek_to_beginning(self, partitions: Iterable) -> None:
        self._call("seekToBeginning", partitions=_tps(partitions))

    def seek_to_end(self, partitions: Iterable) -> None:
        self._call("seekToEnd", partitions=_tps(partitions))

    def position(self, partition: tuple[str, int], timeout: float | None = None) -> int:
        return self._call(
            "position", topic=partition[0], partition=partition[1], timeout_ms=_ms(timeout), timeout=_wait(timeout)
        )

    def committed(self, partitions: Iterable, timeout: float | None = None) -> dict:
        """``committed(Set)``: partition -> :class:`OffsetAndMetadata` or None (nothing committed)."""
        return _committed(
            self._call("committed", partitions=_tps(partitions), timeout_ms=_ms(timeout), timeout=_wait(timeout))
        )

    def group_metadata(self) -> dict:
        """``groupMetadata()``: groupId, generationId, memberId, groupInstanceId."""
        return self._call("groupMetadata")

    def end_offsets(self, partitions: Iterable) -> dict[TopicPartition, int]:
        return {
            TopicPartition(p["topic"], p["partition"]): p["offset"]
            for p in self._call("endOffsets", partitions=_tps(partitions))
        }

    def beginning_offsets(self, partitions: Iterable) -> dict[TopicPartition, int]:
        got = self._call("beginningOffsets", partitions=_tps(partitions))
        return {TopicPartition(p["topic"], p["partition"]): p["offset"] for p in got}


def _committed_from_callback(v: list[dict]) -> dict[TopicPartition, OffsetAndMetadata | None]:
    return _committed(v)


class JavaShareConsumer(_JavaClient):
    """``KafkaShareConsumer<byte[], byte[]>`` (KIP-932): records acquired under a lock and
    acknowledged one by one (``share.acknowledgement.mode=explicit``) or all at the next poll."""

    kind = "shareConsumer"

    def subscribe(self, topics: Iterable[str]) -> None:
        self._call("subscribe", topics=list(topics))

    def poll(self, timeout: float = 0.0) -> list[ShareRecord]:
        recs = self._call("poll", timeout_ms=_ms(timeout), timeout=_wait(timeout), what=f"{self.handle}.poll")
        return [
            ShareRecord(
                r["topic"], r["partition"], r["offset"], _unb64(r["key"]), _unb64(r["value"]), r["deliveryCount"]
            )
            for r in recs
        ]

    def acknowledge(self, record: ShareRecord, kind: str = "ACCEPT") -> None:
        """``acknowledge(topic, partition, offset, AcknowledgeType.valueOf(kind))``."""
        self._call("acknowledge", topic=record.topic, partition=record.partition, offset=record.offset, type=kind)

    def commit_sync(self, timeout: float | None = None) -> dict:
        """``commitSync()``: (topic, partition) -> None, or that partition's error (Java's class and message)."""
        rows = self._call("commitSync", timeout_ms=_ms(timeout), timeout=_wait(timeout))
        return {TopicPartition(r["topic"], r["partition"]): r.get("error") for r in rows}

    def commit_async(self) -> None:
        """``commitAsync()``: its outcomes come through :meth:`acknowledgement_commits`."""
        self._call("commitAsync")

    def acknowledgement_commits(self) -> list[tuple[dict, dict | None]]:
        """What Java gave the acknowledgement commit callback (inside this consumer's poll,
        commitSync, commitAsync or close) since the last asking: ``({TopicPartition: offsets},
        None or the error's class and message)`` each."""
        return [
            (
                {TopicPartition(p["topic"], p["partition"]): set(p["offsets"]) for p in report["partitions"]},
                report.get("error"),
            )
            for report in self._call("acknowledgementCommits")
        ]


class JavaAdmin(_JavaClient):
    """``Admin``: each topic (partition) of a call succeeds or fails alone; a failed part is a
    :class:`JavaException` in the returned dict, as Java's per-key futures fail alone."""

    kind = "admin"

    def create_topics(self, topics: Iterable[Mapping], timeout: float = 30.0) -> dict[str, None | JavaException]:
        """``topics``: ``{"name", "partitions"?, "replication_factor"?, "configs"?}`` each, or with
        ``"assignments": {partition: [broker, ...]}`` instead of partitions and replication factor."""
        got = self._call("createTopics", topics=list(topics), timeout_ms=_ms(timeout), timeout=_wait(timeout))
        return {name: _part(v, lambda _: None) for name, v in got.items()}

    def delete_topics(self, names: Iterable[str], timeout: float = 30.0) -> dict[str, None | JavaException]:
        got = self._call("deleteTopics", topics=list(names), timeout_ms=_ms(timeout), timeout=_wait(timeout))
        return {name: _part(v, lambda _: None) for name, v in got.items()}

    def create_partitions(
        self, topics: Mapping[str, tuple[int, list | None]], validate_only: bool = False, timeout: float = 30.0
    ) -> dict[str, None | JavaException]:
        """``topics``: name -> (total partitions, the new partitions' replicas or None)
        (``NewPartitions.increaseTo``)."""
        parts = [{"name": name, "total": total, "assignments": given} for name, (total, given) in topics.items()]
        got = self._call(
            "createPartitions",
            topics=parts,
            validate_only=validate_only,
            timeout_ms=_ms(timeout),
            timeout=_wait(timeout),
        )
        return {name: _part(v, lambda _: None) for name, v in got.items()}

    def describe_log_dirs(self, brokers: Iterable[int], timeout: float = 30.0) -> dict[int, dict | JavaException]:
        """broker -> {dir: ``{"error", "totalBytes", "usableBytes", "replicas": [{"topic",
        "partition", "size", "offsetLag", "isFuture"}]}``} (``Admin.describeLogDirs``)."""
        got = self._call("describeLogDirs", brokers=list(brokers), timeout_ms=_ms(timeout), timeout=_wait(timeout))
        return {int(b): _part(v, lambda x: x) for b, v in got.items()}

    def alter_replica_log_dirs(self, moves: Mapping[tuple[str, int, int], str], timeout: float = 30.0) -> dict:
        """(topic, partition, broker) -> directory; the same keys -> None or the :class:`JavaException`."""
        rows = [{"topic": t, "partition": p, "broker": b, "dir": d} for (t, p, b), d in moves.items()]
        got = self._call("alterReplicaLogDirs", moves=rows, timeout_ms=_ms(timeout), timeout=_wait(timeout))
        return {_key(k, 3): _part(v, lambda _: None) for k, v in got.items()}

    def describe_metadata_quorum(self, timeout: float = 30.0) -> dict:
        """``{"leaderId", "leaderEpoch", "highWatermark", "voters", "observers": [{"replicaId",
        "logEndOffset"}]}`` (``Admin.describeMetadataQuorum``); a failure raises."""
        return self._call("describeMetadataQuorum", timeout_ms=_ms(timeout), timeout=_wait(timeout))

    def elect_leaders(self, election_type: str, partitions: Iterable, timeout: float = 30.0) -> dict:
        """``election_type``: ``"PREFERRED"`` or ``"UNCLEAN"``; partition -> None or the
        :class:`JavaException` of its election; a failure of the whole request raises."""
        got = self._call(
            "electLeaders",
            type=election_type,
            partitions=_tps(partitions),
            timeout_ms=_ms(timeout),
            timeout=_wait(timeout),
        )
        return {
            TopicPartition(r["topic"], r["partition"]): JavaException.from_json(r["error"]) if "error" in r else None
            for r in got
        }

    def alter_partition_reassignments(self, targets: Mapping, timeout: float = 30.0) -> dict:
        """partition -> its target replicas, or None to cancel its reassignment; partition -> None
        or the :class:`JavaException`."""
        rows = [{"topic": t, "partition": p, "replicas": replicas} for (t, p), replicas in targets.items()]
        got = self._call(
            "alterPartitionReassignments", reassignments=rows, timeout_ms=_ms(timeout), timeout=_wait(timeout)
        )
        return {TopicPartition(*_key(k, 2)): _part(v, lambda _: None) for k, v in got.items()}

    def list_partition_reassignments(self, partitions: Iterable, timeout: float = 30.0) -> dict:
        """partition -> ``{"replicas", "addingReplicas", "removingReplicas"}`` of the ongoing ones."""
        got = self._call(
            "listPartitionReassignments", partitions=_tps(partitions), timeout_ms=_ms(timeout), timeout=_wait(timeout)
        )
        return {TopicPartition(r.pop("topic"), r.pop("partition")): r for r in got}

    def list_config_resources(self, types: Iterable[str], timeout: float = 30.0) -> list[tuple[str, str]]:
        """(type, name) of every config resource of ``types`` (``ConfigResource.Type`` names)."""
        got = self._call("listConfigResources", types=list(types), timeout_ms=_ms(timeout), timeout=_wait(timeout))
        return [(r["type"], r["name"]) for r in got]

    def describe_configs(self, resources: Iterable[tuple[str, str]], timeout: float = 30.0) -> dict:
        """(type, name) -> {config: ``{"value", "source", "readOnly", "sensitive", "type"}``} or the
        :class:`JavaException`."""
        rows = [{"type": t, "name": n} for t, n in resources]
        got = self._call("describeConfigs", resources=rows, timeout_ms=_ms(timeout), timeout=_wait(timeout))
        return {_resource(k): _part(v, lambda x: x) for k, v in got.items()}

    def incremental_alter_configs(self, changes: Mapping, validate_only: bool = False, timeout: float = 30.0) -> dict:
        """(type, name) -> [(config, value, op)] (op: SET, DELETE, APPEND, SUBTRACT); the same keys
        -> None or the :class:`JavaException`."""
        rows = [
            {"type": t, "name": n, "ops": [{"name": c, "value": v, "op": op} for c, v, op in ops]}
            for (t, n), ops in changes.items()
        ]
        got = self._call(
            "incrementalAlterConfigs",
            resources=rows,
            validate_only=validate_only,
            timeout_ms=_ms(timeout),
            timeout=_wait(timeout),
        )
        return {_resource(k): _part(v, lambda _: None) for k, v in got.items()}

    def alter_share_group_offsets(self, group: str, offsets: Mapping, timeout: float = 30.0) -> dict:
        """partition -> its new start offset; partition -> None or the :class:`JavaException`."""
        rows = [{"topic": t, "partition": p, "offset": o} for (t, p), o in offsets.items()]
        got = self._call(
            "alterShareGroupOffsets", group=group, offsets=rows, timeout_ms=_ms(timeout), timeout=_wait(timeout)
        )
        return {TopicPartition(*_key(k, 2)): _part(v, lambda _: None) for k, v in got.items()}

    def delete_share_group_offsets(self, group: str, topics: Iterable[str], timeout: float = 30.0) -> dict:
        """topic -> None or the :class:`JavaException` (the group forgets its share state of the topic)."""
        got = self._call(
            "deleteShareGroupOffsets", group=group, topics=list(topics), timeout_ms=_ms(timeout), timeout=_wait(timeout)
        )
        return {name: _part(v, lambda _: None) for name, v in got.items()}

    def describe_share_groups(self, groups: Iterable[str], timeout: float = 30.0) -> dict[str, dict | JavaException]:
        """group -> ``{"groupId", "state", "groupEpoch", "members": [{"memberId", "clientId",
        "memberEpoch", "assignment": [{"topic", "partition"}]}]}`` (``Admin.describeShareGroups``)."""
        got = self._call("describeShareGroups", groups=list(groups), timeout_ms=_ms(timeout), timeout=_wait(timeout))
        return {name: _part(v, lambda x: x) for name, v in got.items()}

    def list_share_group_offsets(self, groups: Iterable[str], timeout: float = 30.0) -> dict[str, dict | JavaException]:
        """group -> {(topic, partition): ``{"startOffset", "leaderEpoch", "lag"}``} of every
        partition the group has share state for (``Admin.listShareGroupOffsets``, what
        ``kafka-share-groups --describe --offsets`` shows; DescribeShareGroupOffsets), None for one
        without a start offset yet (Java's map holds null for it)."""
        got = self._call("listShareGroupOffsets", groups=list(groups), timeout_ms=_ms(timeout), timeout=_wait(timeout))
        return {
            name: _part(v, lambda rows: {(r["topic"], r["partition"]): r.get("offsets") for r in rows})
            for name, v in got.items()
        }

    def describe_transactions(self, ids: Iterable[str], timeout: float = 30.0) -> dict[str, dict | JavaException]:
        """id -> ``{"state", "producerEpoch", "transactionTimeoutMs", "transactionStartTimeMs" (-1:
        none), "topicPartitions": [{"topic", "partition"}]}`` (``Admin.describeTransactions``)."""
        got = self._call("describeTransactions", ids=list(ids), timeout_ms=_ms(timeout), timeout=_wait(timeout))
        return {name: _part(v, lambda x: x) for name, v in got.items()}

    def list_transactions(
        self, states: Iterable[str] = (), pattern: str | None = None, timeout: float = 30.0
    ) -> list[dict]:
        """``[{"transactionalId", "producerId", "state"}]`` of every broker's coordinator
        (``Admin.listTransactions``, ``kafka-transactions list``), filtered by state names and a
        transactional id pattern; a failure raises its :class:`JavaException`."""
        fields = {"states": list(states), "pattern": pattern}
        return self._call("listTransactions", timeout_ms=_ms(timeout), timeout=_wait(timeout), **fields)

    def describe_topics(self, names: Iterable[str], timeout: float = 30.0) -> dict[str, dict | JavaException]:
        """name -> ``{"name", "internal", "topicId", "partitions": [{"partition", "leader", "replicas", "isr"}]}``"""
        got = self._call("describeTopics", topics=list(names), timeout_ms=_ms(timeout), timeout=_wait(timeout))
        return {name: _part(v, lambda x: x) for name, v in got.items()}

    def list_offsets(
        self, specs: Mapping, isolation_level: str = "read_uncommitted", timeout: float = 30.0
    ) -> dict[TopicPartition, dict | JavaException]:
        """``specs``: partition -> ``"earliest"``, ``"latest"``, ``"max_timestamp"`` or a
        timestamp (ms); each answer is ``{"offset", "timestamp", "leaderEpoch"}``."""
        parts = [{"topic": t, "partition": p, "spec": s} for (t, p), s in specs.items()]
        got = self._call(
            "listOffsets",
            partitions=parts,
            isolation_level=isolation_level,
            timeout_ms=_ms(timeout),
            timeout=_wait(timeout),
        )
        out: dict[TopicPartition, dict | JavaException] = {}
        for p in got:
            tp = TopicPartition(p["topic"], p["partition"])
            out[tp] = (
                JavaException.from_json(p["error"])
                if "error" in p
                else {k: p[k] for k in ("offset", "timestamp", "leaderEpoch")}
            )
        return out


def _key(text: str, parts: int) -> tuple:
    """The driver's "topic:partition[:broker]" key as a tuple (a topic name holds no colon)."""
    topic, *numbers = text.split(":", parts - 1)
    return (topic, *map(int, numbers))


def _resource(text: str) -> tuple[str, str]:
    """The driver's "TYPE:name" key of a config resource as (type, name)."""
    kind, name = text.split(":", 1)
    return kind, name


def _part(v: dict, convert):
    return JavaException.from_json(v["error"]) if "error" in v else convert(v.get("value"))
