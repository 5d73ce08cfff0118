"""Small experiments run the same way on the wire cluster and on Kafka 4.3.1 (tests/wire and
tests/real/test_confluent_*.py), so a test on each cluster asserts the same outcome.

Each probe takes a bootstrap address and a topic that exists (one partition, RF 3), and returns
plain values the tests compare. confluent-kafka is imported inside the probes: it is in the
``clients`` extra, and a test without it is skipped by ``pytest.importorskip``.
"""

from __future__ import annotations

import socket
import struct
import time
import uuid

from kafka.protocol.metadata import MetadataRequest, MetadataResponse
from kafka.protocol.producer import ProduceRequest, ProduceResponse
from kafka.record.default_records import DefaultRecordBatchBuilder
from kafka.record.util import calc_crc32c

from course_lib.wire.apis.common import build

#: the four codecs Kafka clients use, as librdkafka and kafka-python name them
CODECS = ("gzip", "snappy", "lz4", "zstd")


class RawClient:
    """A bare Kafka client on one socket to one broker: framed kafka-python requests in, raw answer
    frames out, and bytes no library would send (tests/wire's bad-input and nemesis tests)."""

    def __init__(self, address: str, client_id: str = "raw", timeout: float = 10):
        host, port = address.split(",")[0].rsplit(":", 1)
        self.sock = socket.create_connection((host, int(port)), timeout=timeout)
        self.corr, self.client_id = 0, client_id

    def send_bytes(self, payload: bytes) -> None:
        self.sock.sendall(struct.pack(">i", len(payload)) + payload)

    def request(self, request, version: int) -> bytes:
        self.corr += 1
        request.API_VERSION = version
        request.with_header(correlation_id=self.corr, client_id=self.client_id)
        self.sock.sendall(bytes(request.encode(header=True, framed=True)))
        return self.read_frame()

    def read_frame(self) -> bytes:
        size = struct.unpack(">i", self._exactly(4))[0]
        return self._exactly(size)

    def assert_closed(self) -> None:
        """The broker closed this connection: end of stream or a reset. A timeout is no close (a
        broker that hangs must fail the test, not pass it), nor is an answer."""
        assert not self.answered_or_closed(), "the broker answered instead of closing the connection"

    def answered_or_closed(self) -> bool:
        """True if the broker answered, False if it closed the connection; a timeout fails."""
        try:
            self.read_frame()
        except TimeoutError:
            raise AssertionError(
                f"the broker neither answered nor closed the connection within {self.sock.gettimeout()} s"
            ) from None
        except OSError:
            return False
        return True

    def _exactly(self, n: int) -> bytes:
        buf = b""
        while len(buf) < n:
            chunk = self.sock.recv(n - len(buf))
            if not chunk:
                raise ConnectionError("closed by the broker")
            buf += chunk
        return buf

    def close(self) -> None:
        self.sock.close()


def connect(host: str, port: int) -> RawClient:
    """A probe's connection to one broker (a slow broker under load gets 15 s)."""
    return RawClient(f"{host}:{port}", client_id="probe", timeout=15)


def leader_connection(bootstrap: str, topic: str, partition: int = 0) -> RawClient:
    """A raw connection to the leader of ``topic``-``partition`` (found with Metadata v1)."""
    host, port = bootstrap.split(",")[0].rsplit(":", 1)
    first = connect(host, int(port))
    try:
        deadline = time.monotonic() + 30
        while True:
            answer = MetadataResponse.decode(first.request(MetadataRequest(topics=[topic]), 1), version=1, header=True)
            brokers = {b.node_id: (b.host, b.port) for b in answer.brokers}
            leaders = [p.leader_id for t in answer.topics for p in t.partitions if p.partition_index == partition]
            if leaders and leaders[0] in brokers:
                return connect(*brokers[leaders[0]])
            if time.monotonic() > deadline:
                raise AssertionError(f"{topic}-{partition} has no leader: {answer}")
            time.sleep(0.1)
    finally:
        first.close()


def _batch(compression: int = 0) -> bytearray:
    builder = DefaultRecordBatchBuilder(2, compression, False, -1, -1, -1, 1 << 20)
    builder.append(0, int(time.time() * 1000), b"k", b"value-" + b"x" * 64, [])
    return builder.build()


def _recrc(buf: bytearray) -> bytearray:
    """Set the batch's CRC (over everything from the attributes on) to match its bytes."""
    struct.pack_into(">I", buf, 17, calc_crc32c(memoryview(buf)[21:]))
    return buf


def _with_codec_bits(codec_id: int) -> bytearray:
    """An uncompressed batch whose attributes claim ``codec_id``, with a valid CRC: its records
    are not what that codec (or no codec, for ids Kafka does not know) can read."""
    buf = _batch()
    attributes = struct.unpack_from(">h", buf, 21)[0]
    struct.pack_into(">h", buf, 21, (attributes & ~0x7) | codec_id)
    return _recrc(buf)


def malformed_batches() -> dict:
    """name -> (batch bytes, Produce version) a well-behaved client never sends."""
    bad_crc = _batch()
    bad_crc[-1] ^= 0xFF  # the last byte of the value, after the CRC was computed
    zstd = _batch(4)
    return {
        "bad crc": (bytes(bad_crc), 9),
        "unknown codec id 5": (bytes(_with_codec_bits(5)), 9),
        "gzip bits over plain records": (bytes(_with_codec_bits(1)), 9),
        "zstd at Produce v6": (bytes(zstd), 6),
        "zstd at Produce v7": (bytes(zstd), 7),
        "two batches": (bytes(_batch()) + bytes(_batch()), 9),
    }


def raw_produce_error_codes(bootstrap: str, topic: str) -> dict:
    """name -> the error code the leader answers each malformed batch of
    :func:`malformed_batches` with (acks=-1); the connection must stay open throughout."""
    conn = leader_connection(bootstrap, topic)
    out = {}
    try:
        for name, (records, version) in malformed_batches().items():
            request = ProduceRequest(
                transactional_id=None,
                acks=-1,
                timeout_ms=10000,
                topic_data=[(topic, [(0, records)])],
            )
            answer = ProduceResponse.decode(conn.request(request, version), version=version, header=True)
            (part,) = answer.responses[0].partition_responses
            out[name] = part.error_code
    finally:
        conn.close()
    return out


def librdkafka_codec_roundtrip(bootstrap: str, topic: str, codec: str, count: int = 20) -> list[str]:
    """confluent-kafka produces ``count`` values with ``codec`` (acks=all, idempotent) and reads
    them back from the beginning; returns what it read (raises on a failed delivery)."""
    from confluent_kafka import Producer

    producer = Producer(
        {
            "bootstrap.servers": bootstrap,
            "compression.type": codec,
            "enable.idempotence": True,
            "linger.ms": 5,
            "message.timeout.ms": 30000,
        }
    )
    errors: list = []
    sent = [f"{codec}-{i}" for i in range(count)]
    for value in sent:
        producer.produce(topic, value=value.encode(), on_delivery=lambda err, msg: err and errors.append(err))
    left = producer.flush(30)
    assert left == 0 and not errors, f"{codec}: {left} undelivered, errors {errors}"
    return consume_values(bootstrap, topic, count)


def consume_values(bootstrap: str, topic: str, count: int, isolation: str = "read_uncommitted") -> list[str]:
    """confluent-kafka reads ``count`` values of ``topic`` from its start (fresh group)."""
    from confluent_kafka import Consumer

    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"probe-{uuid.uuid4().hex[:8]}",
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
            "isolation.level": isolation,
        }
    )
    got: list[str] = []
    try:
        consumer.subscribe([topic])
        deadline = time.monotonic() + 30
        while len(got) < count and time.monotonic() < deadline:
            msg = consumer.poll(0.5)
            if msg is None:
                continue
            assert msg.error() is None, msg.error()
            got.append(msg.value().decode())
    finally:
        consumer.close()
    return got


def kafka_python_codec_roundtrip(bootstrap: str, topic: str, codec: str, count: int = 20) -> list[str]:
    """kafka-python produces with ``compression_type=codec`` and confluent-kafka reads back."""
    from kafka import KafkaProducer

    producer = KafkaProducer(bootstrap_servers=bootstrap, compression_type=codec, acks="all")
    try:
        futures = [producer.send(topic, f"kp-{codec}-{i}".encode()) for i in range(count)]
        producer.flush(30)
        for f in futures:
            f.get(timeout=30)
    finally:
        producer.close(timeout=10)
    return consume_values(bootstrap, topic, count)


def _coordinator(bootstrap: str, key: str, key_type: int) -> RawClient:
    """A raw connection to the coordinator of a group (``key_type`` 0) or transactional id (1)."""
    from kafka.protocol.metadata import FindCoordinatorRequest, FindCoordinatorResponse

    host, port = bootstrap.split(",")[0].rsplit(":", 1)
    first = connect(host, int(port))
    try:
        deadline = time.monotonic() + 30
        while True:
            frame = first.request(FindCoordinatorRequest(key=key, key_type=key_type), 1)
            answer = FindCoordinatorResponse.decode(frame, version=1, header=True)
            if answer.error_code == 0:
                return connect(answer.host, answer.port)
            if time.monotonic() > deadline:
                raise AssertionError(f"no coordinator for {key!r}: {answer}")
            time.sleep(0.2)
    finally:
        first.close()


def error_codes(answer) -> set[int]:
    """Every error code an answer carries: its own, its topics' and their partitions'."""
    codes = {getattr(answer, "error_code", 0)}
    for topic in getattr(answer, "topics", ()):
        codes.add(getattr(topic, "error_code", 0))
        codes |= {getattr(p, "error_code", 0) for p in getattr(topic, "partitions", ())}
    return codes


#: the coordinator errors :func:`ask_coordinator` asks again after: UNKNOWN_TOPIC_OR_PARTITION (3) and
#: LEADER_NOT_AVAILABLE (5) while a new cluster creates its internal topic, COORDINATOR_LOAD_IN_PROGRESS
#: (14), COORDINATOR_NOT_AVAILABLE (15), NOT_COORDINATOR (16)
COORDINATOR_NOT_READY = frozenset({3, 5, 14, 15, 16})


def ask_coordinator(
    raw: list,
    bootstrap: str,
    key: str,
    key_type: int,
    request,
    response,
    version: int = 1,
    timeout_s: float = 30,
    retriable: frozenset = COORDINATOR_NOT_READY,
):
    """``request`` to the coordinator of ``key`` (``raw[0]``, a connection from :func:`_coordinator`)
    until no error of the answer (:func:`error_codes`) is ``retriable``. As a client does, on
    NOT_COORDINATOR (16) it finds the coordinator again and replaces ``raw[0]``: a shared cluster's
    coordinators move when a test kills or pauses a broker."""
    deadline = time.monotonic() + timeout_s
    while True:
        answer = response.decode(raw[0].request(request, version), version=version, header=True)
        errors = error_codes(answer)
        if not errors & retriable or time.monotonic() > deadline:
            return answer
        if 16 in errors:
            raw[0].close()
            raw[0] = _coordinator(bootstrap, key, key_type)
        time.sleep(0.1)


#: and CONCURRENT_TRANSACTIONS (51): the transactional id's previous transaction still completing
TXN_NOT_READY = COORDINATOR_NOT_READY | {51}


def _ask_txn(raw: list, bootstrap: str, txn_id: str, request, response, version: int = 1, retriable=TXN_NOT_READY):
    """:func:`ask_coordinator` for the transaction coordinator of ``txn_id``."""
    return ask_coordinator(raw, bootstrap, txn_id, 1, request, response, version, retriable=retriable)


def _until_ok(send, what: str, retriable=(14, 15, 51), timeout_s: float = 30):
    """``send()`` until its answer's error code is not a retriable coordinator error."""
    deadline = time.monotonic() + timeout_s
    while True:
        answer = send()
        if answer.error_code not in retriable or time.monotonic() > deadline:
            return answer
        time.sleep(0.2)


def txn_offset_commit_codes(bootstrap: str, topic: str) -> dict:
    """While a confluent-kafka consumer is a member of group ``g``, a transactional producer (raw
    requests) commits offsets for ``g`` with TxnOffsetCommit v0 (no member fields) and v3 with
    and without a member; returns case -> the partition's error code. Then aborts."""
    from confluent_kafka import Consumer
    from kafka.protocol.producer import (
        AddOffsetsToTxnRequest,
        AddOffsetsToTxnResponse,
        EndTxnRequest,
        EndTxnResponse,
        InitProducerIdRequest,
        InitProducerIdResponse,
        TxnOffsetCommitRequest,
        TxnOffsetCommitResponse,
    )

    group, txn_id = f"g-{uuid.uuid4().hex[:8]}", f"tx-{uuid.uuid4().hex[:8]}"
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "auto.offset.reset": "earliest"})
    txn = grp = None
    try:
        consumer.subscribe([topic])
        deadline = time.monotonic() + 30
        while not consumer.assignment() and time.monotonic() < deadline:
            consumer.poll(0.2)
        assert consumer.assignment(), "the consumer never joined its group"
        txn = [_coordinator(bootstrap, txn_id, 1)]
        init = InitProducerIdRequest(transactional_id=txn_id, transaction_timeout_ms=60000)
        pid = _ask_txn(txn, bootstrap, txn_id, init, InitProducerIdResponse)
        assert pid.error_code == 0, pid
        ids = {"transactional_id": txn_id, "producer_id": pid.producer_id, "producer_epoch": pid.producer_epoch}
        added = _ask_txn(txn, bootstrap, txn_id, AddOffsetsToTxnRequest(group_id=group, **ids), AddOffsetsToTxnResponse)
        assert added.error_code == 0, added
        grp = [_coordinator(bootstrap, group, 0)]
        cases = {
            "v0": (0, {}),
            "v3 no member": (3, {"member_id": "", "generation_id": -1, "group_instance_id": None}),
            "v3 unknown member": (3, {"member_id": "nobody", "generation_id": 1, "group_instance_id": None}),
        }
        out = {}
        for name, (version, member) in cases.items():
            request = build(
                TxnOffsetCommitRequest,
                group_id=group,
                topics=[{"name": topic, "partitions": [{"partition_index": 0, "committed_offset": 1}]}],
                **ids,
                **member,
            )
            answer = ask_coordinator(grp, bootstrap, group, 0, request, TxnOffsetCommitResponse, version)
            out[name] = answer.topics[0].partitions[0].error_code
        ended = _ask_txn(txn, bootstrap, txn_id, EndTxnRequest(committed=False, **ids), EndTxnResponse)
        assert ended.error_code == 0, ended
        # a zombie: the producer is fenced by a new InitProducerId between AddOffsetsToTxn and
        # its TxnOffsetCommit
        added = _ask_txn(txn, bootstrap, txn_id, AddOffsetsToTxnRequest(group_id=group, **ids), AddOffsetsToTxnResponse)
        assert added.error_code == 0, added
        again = _ask_txn(txn, bootstrap, txn_id, init, InitProducerIdResponse)
        assert again.error_code == 0 and again.producer_epoch > ids["producer_epoch"], again
        for version in (0, 3):
            member = {} if version == 0 else {"member_id": "", "generation_id": -1, "group_instance_id": None}
            request = build(
                TxnOffsetCommitRequest,
                group_id=group,
                topics=[{"name": topic, "partitions": [{"partition_index": 0, "committed_offset": 2}]}],
                **ids,
                **member,
            )
            answer = ask_coordinator(grp, bootstrap, group, 0, request, TxnOffsetCommitResponse, version)
            out[f"v{version} fenced"] = answer.topics[0].partitions[0].error_code
        return out
    finally:
        for conn in (txn, grp):
            if conn is not None:
                conn[0].close()
        consumer.close()


def consume_transform_produce(bootstrap: str, source: str, sink: str, count: int = 10) -> tuple[list, int]:
    """confluent-kafka's consume-transform-produce loop: read ``count`` values of ``source`` in a
    group, write them upper-cased to ``sink`` in one transaction with the group's offsets
    (send_offsets_to_transaction: TxnOffsetCommit v3+ with the member), commit. Returns what a
    read_committed consumer finds in ``sink`` and the group's committed offset of ``source``."""
    from confluent_kafka import Consumer, Producer, TopicPartition

    group = f"ctp-{uuid.uuid4().hex[:8]}"
    producer = Producer({"bootstrap.servers": bootstrap, "transactional.id": f"ctp-{uuid.uuid4().hex[:8]}"})
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": group,
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
            "isolation.level": "read_committed",
        }
    )
    try:
        producer.init_transactions(30)
        consumer.subscribe([source])
        read: list = []
        deadline = time.monotonic() + 30
        while len(read) < count and time.monotonic() < deadline:
            msg = consumer.poll(0.5)
            if msg is not None and msg.error() is None:
                read.append(msg)
        assert len(read) == count, f"read {len(read)} of {count}"
        producer.begin_transaction()
        for msg in read:
            producer.produce(sink, value=msg.value().upper())
        positions = consumer.position(consumer.assignment())
        producer.send_offsets_to_transaction(positions, consumer.consumer_group_metadata(), 30)
        producer.commit_transaction(30)
        # the commit is answered before the markers are written: the offsets follow shortly
        deadline = time.monotonic() + 15
        while (committed := consumer.committed([TopicPartition(source, 0)], 30)[0].offset) < 0:
            if time.monotonic() > deadline:
                break
            time.sleep(0.1)
    finally:
        consumer.close()
    return consume_values(bootstrap, sink, count, "read_committed"), committed


def produce_values(bootstrap: str, topic: str, values: list[str]) -> None:
    """confluent-kafka writes ``values`` (acks=all), all delivered or raises."""
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": bootstrap, "acks": "all"})
    errors: list = []
    for value in values:
        producer.produce(topic, value=value.encode(), on_delivery=lambda err, msg: err and errors.append(err))
    assert producer.flush(30) == 0 and not errors, errors


def fenced_answers(bootstrap: str) -> dict:
    """A transactional producer is fenced by a second InitProducerId; its AddOffsetsToTxn and
    EndTxn with the old epoch, at versions before and after KIP-588's PRODUCER_FENCED, get
    these codes (API and version -> error code)."""
    from kafka.protocol.producer import (
        AddOffsetsToTxnRequest,
        AddOffsetsToTxnResponse,
        EndTxnRequest,
        EndTxnResponse,
        InitProducerIdRequest,
        InitProducerIdResponse,
    )

    txn_id = f"zombie-{uuid.uuid4().hex[:8]}"
    txn = [_coordinator(bootstrap, txn_id, 1)]
    try:
        init = InitProducerIdRequest(transactional_id=txn_id, transaction_timeout_ms=60000)
        first = _ask_txn(txn, bootstrap, txn_id, init, InitProducerIdResponse)
        second = _ask_txn(txn, bootstrap, txn_id, init, InitProducerIdResponse)
        assert first.error_code == second.error_code == 0, (first, second)
        assert (second.producer_id, second.producer_epoch) > (first.producer_id, first.producer_epoch), (first, second)
        old = {"transactional_id": txn_id, "producer_id": first.producer_id, "producer_epoch": first.producer_epoch}
        out = {}
        # what is measured is asked again only while the coordinator is not ready (a shared
        # cluster's coordinator moves when a test kills a broker), never after the fencing error
        for version in (1, 2):
            request = AddOffsetsToTxnRequest(group_id="zombie-group", **old)
            answer = _ask_txn(txn, bootstrap, txn_id, request, AddOffsetsToTxnResponse, version, COORDINATOR_NOT_READY)
            out[f"AddOffsetsToTxn v{version}"] = answer.error_code
        for version in (1, 2):
            request = EndTxnRequest(committed=True, **old)
            answer = _ask_txn(txn, bootstrap, txn_id, request, EndTxnResponse, version, COORDINATOR_NOT_READY)
            out[f"EndTxn v{version}"] = answer.error_code
        return out
    finally:
        txn[0].close()


# ---- the admin APIs librdkafka's AdminClient calls --------------------------------------------
def _admin(bootstrap: str):
    from confluent_kafka.admin import AdminClient

    return AdminClient({"bootstrap.servers": bootstrap})


def _code(future, timeout: float = 30) -> int:
    """0 when ``future`` succeeds, else the Kafka error code it failed with."""
    from confluent_kafka import KafkaException

    try:
        future.result(timeout)
        return 0
    except KafkaException as exc:
        return exc.args[0].code()


def create_partitions_outcome(bootstrap: str, topic: str, missing: str) -> dict:
    """``topic`` (1 partition, RF 3) grows to 3 partitions; shrinking and an unknown topic are refused."""
    from confluent_kafka.admin import NewPartitions

    admin = _admin(bootstrap)
    out = {"grow to 3": _code(admin.create_partitions([NewPartitions(topic, 3)])[topic])}
    deadline = time.monotonic() + 30
    while True:
        meta = admin.list_topics(topic, timeout=10).topics[topic]
        if len(meta.partitions) == 3 or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    out["partitions"] = sorted(meta.partitions)
    out["replicas"] = sorted(len(p.replicas) for p in meta.partitions.values())
    out["all led"] = all(p.leader >= 0 for p in meta.partitions.values())
    out["shrink to 2"] = _code(admin.create_partitions([NewPartitions(topic, 2)])[topic])
    out["same count"] = _code(admin.create_partitions([NewPartitions(topic, 3)])[topic])
    out["unknown topic"] = _code(admin.create_partitions([NewPartitions(missing, 2)])[missing])
    out["validate only"] = _code(admin.create_partitions([NewPartitions(topic, 5)], validate_only=True)[topic])
    out["after validate only"] = len(admin.list_topics(topic, timeout=10).topics[topic].partitions)
    # a record to the new partition is written and read back
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": bootstrap, "acks": "all"})
    errors: list = []
    producer.produce(topic, value=b"p2", partition=2, on_delivery=lambda err, msg: err and errors.append(err))
    out["produce to partition 2"] = producer.flush(30) == 0 and not errors
    return out


def delete_records_outcome(bootstrap: str, topic: str) -> dict:
    """10 values, records below offset 4 deleted: the low watermark, the earliest offset, what a
    consumer reads from the beginning; an offset past the high watermark is refused."""
    from confluent_kafka import TopicPartition
    from confluent_kafka.admin import OffsetSpec

    produce_values(bootstrap, topic, [f"r{i}" for i in range(10)])
    admin = _admin(bootstrap)
    tp = TopicPartition(topic, 0, 4)
    futures = admin.delete_records([tp])
    (future,) = futures.values()
    out = {"low watermark": future.result(30).low_watermark}
    (earliest,) = admin.list_offsets({TopicPartition(topic, 0): OffsetSpec.earliest()}).values()
    out["earliest"] = earliest.result(30).offset
    out["read from the beginning"] = consume_values(bootstrap, topic, 6)
    (beyond,) = admin.delete_records([TopicPartition(topic, 0, 100)]).values()
    out["past the high watermark"] = _code(beyond)
    return out


def delete_groups_outcome(bootstrap: str, topic: str) -> dict:
    """A group with a member and committed offsets cannot be deleted; once its member left it
    can, its offsets are gone, and deleting it again finds no group."""
    from confluent_kafka import Consumer, TopicPartition

    produce_values(bootstrap, topic, [f"g{i}" for i in range(3)])
    group = f"del-{uuid.uuid4().hex[:8]}"
    config = {
        "bootstrap.servers": bootstrap,
        "group.id": group,
        "auto.offset.reset": "earliest",
        "enable.auto.commit": False,
    }
    consumer = Consumer(config)
    admin = _admin(bootstrap)
    out = {}
    try:
        consumer.subscribe([topic])
        got = 0
        deadline = time.monotonic() + 30
        while got < 3 and time.monotonic() < deadline:
            msg = consumer.poll(0.5)
            if msg is not None and msg.error() is None:
                got += 1
        consumer.commit(asynchronous=False)
        out["with a member"] = _code(admin.delete_consumer_groups([group])[group])
    finally:
        consumer.close()
    out["after it left"] = _code(admin.delete_consumer_groups([group])[group])
    out["again"] = _code(admin.delete_consumer_groups([group])[group])
    fresh = Consumer(config)
    try:
        out["committed after deletion"] = fresh.committed([TopicPartition(topic, 0)], 30)[0].offset
    finally:
        fresh.close()
    return out


def alter_configs_outcome(bootstrap: str, topic: str, missing: str) -> dict:
    """SET and DELETE of topic configs with IncrementalAlterConfigs, read back with DescribeConfigs."""
    from confluent_kafka.admin import AlterConfigOpType, ConfigEntry, ConfigResource, ResourceType

    admin = _admin(bootstrap)

    def alter(name: str, entries: list, validate_only: bool = False) -> int:
        resource = ConfigResource(ResourceType.TOPIC, name, incremental_configs=entries)
        (future,) = admin.incremental_alter_configs([resource], validate_only=validate_only).values()
        return _code(future)

    def value(name: str, resource_type=ResourceType.TOPIC, resource=topic) -> str:
        (future,) = admin.describe_configs([ConfigResource(resource_type, resource)]).values()
        return future.result(30)[name].value

    def settled(name: str, want: str) -> str:
        """The topic's value once it is ``want`` (or after 15 s): DescribeConfigs is answered
        from a broker's metadata, which applies a change a moment after the controller."""
        deadline = time.monotonic() + 15
        while (got := value(name)) != want and time.monotonic() < deadline:
            time.sleep(0.1)
        return got

    def entry(name, v, op=AlterConfigOpType.SET):
        return ConfigEntry(name, v, incremental_operation=op)

    out = {"set min isr 3": alter(topic, [entry("min.insync.replicas", "3")])}
    out["min isr"] = settled("min.insync.replicas", "3")
    out["set unclean true"] = alter(topic, [entry("unclean.leader.election.enable", "true")])
    out["unclean"] = settled("unclean.leader.election.enable", "true")
    out["validate only min isr 1"] = alter(topic, [entry("min.insync.replicas", "1")], validate_only=True)
    out["min isr after validate only"] = value("min.insync.replicas")
    out["min isr 0"] = alter(topic, [entry("min.insync.replicas", "0")])
    out["unclean maybe"] = alter(topic, [entry("unclean.leader.election.enable", "maybe")])
    out["unknown topic"] = alter(missing, [entry("min.insync.replicas", "2")])
    out["delete min isr"] = alter(topic, [entry("min.insync.replicas", None, AlterConfigOpType.DELETE)])
    broker = admin.describe_cluster().result(30).nodes[0].id
    default = value("min.insync.replicas", ResourceType.BROKER, str(broker))
    out["deleted is the broker default"] = settled("min.insync.replicas", default) == default
    # acks=all still works with min.insync.replicas at 3 and three replicas in sync
    produce_values(bootstrap, topic, ["after-alter"])
    return out


def describe_cluster_outcome(bootstrap: str) -> dict:
    admin = _admin(bootstrap)
    result = admin.describe_cluster().result(30)
    return {
        "brokers": len(result.nodes),
        "has a cluster id": bool(result.cluster_id),
        "controller is a broker": result.controller is not None
        and result.controller.id in {n.id for n in result.nodes},
    }


# ---- small experiments of issue 30 that agree: kept as regression checks ------------------------
def group_read_with_commits(bootstrap: str, topic: str) -> dict:
    """20 keyed values into ``topic`` (3 partitions); a group member reads them all and commits;
    a second member of the group, after the first left, finds nothing left to read."""
    from confluent_kafka import Consumer, Producer, TopicPartition

    producer = Producer({"bootstrap.servers": bootstrap, "acks": "all", "enable.idempotence": True})
    for i in range(20):
        producer.produce(topic, key=f"k{i}".encode(), value=f"v{i}".encode())
    assert producer.flush(30) == 0
    group = f"read-{uuid.uuid4().hex[:8]}"
    config = {
        "bootstrap.servers": bootstrap,
        "group.id": group,
        "auto.offset.reset": "earliest",
        "enable.auto.commit": False,
    }
    first = Consumer(config)
    read: dict = {}
    try:
        first.subscribe([topic])
        deadline = time.monotonic() + 30
        while len(read) < 20 and time.monotonic() < deadline:
            msg = first.poll(0.5)
            if msg is not None and msg.error() is None:
                read[msg.value().decode()] = (msg.partition(), msg.offset())
        first.commit(asynchronous=False)
        committed = sorted(tp.offset for tp in first.committed([TopicPartition(topic, p) for p in range(3)], 30))
    finally:
        first.close()
    second = Consumer(config)
    later = []
    try:
        second.subscribe([topic])
        deadline = time.monotonic() + 8
        while time.monotonic() < deadline:
            msg = second.poll(0.5)
            if msg is not None and msg.error() is None:
                later.append(msg.value().decode())
            if (
                second.assignment()
                and all(p.offset >= 0 for p in second.position(second.assignment()))
                and time.monotonic() > deadline - 5
            ):
                break
    finally:
        second.close()
    return {
        "read": sorted(read, key=lambda v: int(v[1:])),
        "partition split": sorted(sum(1 for p, _ in read.values() if p == n) for n in range(3)),
        "committed": committed,
        "read again by the group": later,
    }


def transactions_with_markers(bootstrap: str, topic: str) -> dict:
    """Three transactions into ``topic`` (1 partition): 3 values committed, 2 aborted, 1
    committed. What read_committed and read_uncommitted consumers see, with offsets (each
    transaction marker takes one offset), and the end offset."""
    from confluent_kafka import Consumer, Producer, TopicPartition

    producer = Producer({"bootstrap.servers": bootstrap, "transactional.id": f"tx-{uuid.uuid4().hex[:8]}"})
    producer.init_transactions(30)
    for values, commit in ((["a0", "a1", "a2"], True), (["b0", "b1"], False), (["c0"], True)):
        producer.begin_transaction()
        for v in values:
            producer.produce(topic, value=v.encode())
        producer.flush(30)
        (producer.commit_transaction if commit else producer.abort_transaction)(30)
    out = {}
    for isolation in ("read_committed", "read_uncommitted"):
        consumer = Consumer(
            {
                "bootstrap.servers": bootstrap,
                "group.id": f"m-{uuid.uuid4().hex[:8]}",
                "auto.offset.reset": "earliest",
                "enable.auto.commit": False,
                "isolation.level": isolation,
            }
        )
        seen = []
        try:
            consumer.assign([TopicPartition(topic, 0, 0)])
            want = 4 if isolation == "read_committed" else 6
            deadline = time.monotonic() + 30
            while len(seen) < want and time.monotonic() < deadline:
                msg = consumer.poll(0.5)
                if msg is not None and msg.error() is None:
                    seen.append((msg.offset(), msg.value().decode()))
            low, high = consumer.get_watermark_offsets(TopicPartition(topic, 0), timeout=10)
        finally:
            consumer.close()
        out[isolation] = seen
        out["end offset"] = high
    return out


def aiokafka_consume_transform_produce(bootstrap: str, source: str, sink: str, count: int = 10) -> tuple[list, int]:
    """aiokafka's consume-transform-produce loop: a group member reads ``count`` values of
    ``source``; a transactional producer writes them upper-cased to ``sink`` with the group's
    offsets (TxnOffsetCommit v0, the only version aiokafka 0.14 has: no member id) and commits.
    Returns what read_committed finds in ``sink`` and the group's committed offset of ``source``."""
    import asyncio

    from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition

    group = f"aio-{uuid.uuid4().hex[:8]}"

    async def run() -> int:
        consumer = AIOKafkaConsumer(
            source,
            bootstrap_servers=bootstrap,
            group_id=group,
            auto_offset_reset="earliest",
            enable_auto_commit=False,
            isolation_level="read_committed",
        )
        producer = AIOKafkaProducer(bootstrap_servers=bootstrap, transactional_id=f"aio-{uuid.uuid4().hex[:8]}")
        await consumer.start()
        await producer.start()
        try:
            read = []
            deadline = time.monotonic() + 30
            while len(read) < count and time.monotonic() < deadline:
                batches = await consumer.getmany(timeout_ms=500)
                for records in batches.values():
                    read.extend(records)
            assert len(read) == count, f"read {len(read)} of {count}"
            tp = TopicPartition(source, 0)
            async with producer.transaction():
                for record in read:
                    await producer.send(sink, record.value.upper())
                await producer.send_offsets_to_transaction({tp: read[-1].offset + 1}, group)
            # EndTxn is answered before the markers are written (on Kafka too): the offsets
            # become the group's a moment later
            deadline = time.monotonic() + 15
            while (committed := await consumer.committed(tp)) is None and time.monotonic() < deadline:
                await asyncio.sleep(0.1)
            return committed
        finally:
            await producer.stop()
            await consumer.stop()

    committed = asyncio.run(run())
    return consume_values(bootstrap, sink, count, "read_committed"), committed


def acks0_bad_batch_closes_the_connection(bootstrap: str, topic: str) -> bool:
    """A batch with a bad CRC at acks=0 has no answer to carry its error: does the leader close
    the connection (a Metadata request behind it finds it closed)?"""
    conn = leader_connection(bootstrap, topic)
    try:
        records, version = malformed_batches()["bad crc"]
        request = ProduceRequest(transactional_id=None, acks=0, timeout_ms=10000, topic_data=[(topic, [(0, records)])])
        conn.corr += 1
        request.API_VERSION = version
        request.with_header(correlation_id=conn.corr, client_id="probe")
        conn.sock.sendall(bytes(request.encode(header=True, framed=True)))
        try:
            conn.request(MetadataRequest(topics=[topic]), 1)
            return False
        except (ConnectionError, OSError):
            return True
    finally:
        conn.close()


def fetched_batches(bootstrap: str, topic: str, codec: str, count: int = 5) -> list[tuple]:
    """kafka-python produces ``count`` records with ``codec`` in one batch (a linger holds them
    together) with create times of its own; a raw Fetch v4 reads partition 0 back. Returns per
    fetched batch ``(codec id, records, first timestamp - the producer's, max timestamp - the
    producer's, timestamp type)``: what a consumer sees of the batch as produced."""
    from kafka import KafkaProducer
    from kafka.protocol.consumer import FetchRequest, FetchResponse
    from kafka.record.memory_records import MemoryRecords

    base_ms = int(time.time() * 1000) - 60_000  # a minute back: not the broker's clock
    compression = None if codec == "none" else codec
    producer = KafkaProducer(bootstrap_servers=bootstrap, compression_type=compression, acks="all", linger_ms=500)
    try:
        futures = [
            # compressible values: kafka-python sends a batch uncompressed when the codec gains nothing
            producer.send(topic, f"{codec}-{i} ".encode() * 40, partition=0, timestamp_ms=base_ms + 10 * i)
            for i in range(count)
        ]
        producer.flush(30)
        for f in futures:
            f.get(timeout=30)
    finally:
        producer.close(timeout=10)
    leader = leader_connection(bootstrap, topic)
    try:
        request = build(
            FetchRequest,
            4,
            replica_id=-1,
            max_wait_ms=100,
            min_bytes=1,
            max_bytes=1 << 20,
            isolation_level=0,
            topics=[
                {"topic": topic, "partitions": [{"partition": 0, "fetch_offset": 0, "partition_max_bytes": 1 << 20}]}
            ],
        )
        answer = FetchResponse.decode(leader.request(request, 4), version=4, header=True)
    finally:
        leader.close()
    records = MemoryRecords(bytes(answer.responses[0].partitions[0].records))
    out = []
    while (batch := records.next_batch()) is not None:
        out.append(
            (
                batch.compression_type,
                len(list(batch)),
                batch.first_timestamp - base_ms,
                batch.max_timestamp - base_ms,
                batch.timestamp_type,
            )
        )
    return out
