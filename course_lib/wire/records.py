"""Kafka's v2 record batches <-> the simulator's batches, with kafka-python's ``kafka.record``.

A produce request carries, per partition, the bytes of a v2 batch built by the client (producer
id, epoch, base sequence, transactional flag, records with key/value/headers/timestamp). The
simulator stores a :class:`~course_lib.broker.protocol.RecordBatch`; a fetch answer rebuilds v2
batches from the stored :class:`~course_lib.broker.protocol.LogBatch` es with their offsets and
leader epochs, and transaction markers as *control batches* (attribute bit 5) whose one record
says COMMIT or ABORT - which is what read_committed consumers and kafka-python's fetcher skip.

Compression (gzip, snappy, lz4, zstd: kafka-python's ``kafka.codec`` with the ``clients`` extra's
packages) is undone on the way in - the simulator reasons about records - but the batch is also kept
as produced and fetched as stored, as Kafka does with ``compression.type=producer`` (its
``LogValidator`` fills in only the base offset and partition leader epoch, which lie outside the
CRC): a consumer sees the producer's codec, attributes and timestamps. That needs the CRC checked
on the way in (``CHECK_EVERY_CRC``); without a C CRC32C the batch is rebuilt with the producer's
codec.
A batch that cannot be taken gets the error Kafka 4.3.1 answers it with, measured with the same
raw frames (tests/wire/test_codecs.py, tests/real/test_confluent_codecs.py): not one v2 batch is
INVALID_RECORD (``ProduceRequest.validateRecords``), zstd below Produce v7
UNSUPPORTED_COMPRESSION_TYPE (same place), a CRC mismatch CORRUPT_MESSAGE (``UnifiedLog``'s
analysis), and a codec id Kafka does not know or records the codec cannot read
UNKNOWN_SERVER_ERROR (an ``IllegalArgumentException`` / ``KafkaException`` that
``ReplicaManager.appendToLocalLog`` maps with ``Errors.forException``).
"""

from __future__ import annotations

import struct
import time

from kafka import errors as Errors
from kafka.record import util as record_util
from kafka.record.default_records import DefaultRecordBatch, DefaultRecordBatchBuilder
from kafka.record.memory_records import MemoryRecords

from ..broker.protocol import LogBatch, Record, RecordBatch


class InvalidRecords(ValueError):
    """The records of a produce request cannot be appended; ``error`` is Kafka's answer for them."""

    def __init__(self, message: str, error: type = Errors.InvalidRecordError):
        super().__init__(message)
        self.error = error


#: Produce v7 is the first that may carry zstd batches (KIP-110)
ZSTD_MIN_PRODUCE_VERSION = 7
_KNOWN_CODECS = frozenset(
    {
        DefaultRecordBatch.CODEC_NONE,
        DefaultRecordBatch.CODEC_GZIP,
        DefaultRecordBatch.CODEC_SNAPPY,
        DefaultRecordBatch.CODEC_LZ4,
        DefaultRecordBatch.CODEC_ZSTD,
    }
)
#: the CRC is checked when a C CRC32C is installed (the ``crc32c`` package, in the clients
#: extra): kafka-python's pure-Python one costs ~6 ms per 16 KB batch. Without it a batch whose
#: records still decode is taken (and rebuilt for fetch answers: its bytes never leave this
#: process), and a CRC mismatch is still told apart once decoding fails.
CHECK_EVERY_CRC = record_util.crc32c_c is not None


def decode_produce(data, version: int = ZSTD_MIN_PRODUCE_VERSION) -> RecordBatch:
    """The one v2 batch a producer sends per partition (in a Produce request of ``version``), as
    a simulator batch; :class:`InvalidRecords` with Kafka's error otherwise."""
    if not data:
        raise InvalidRecords("no records")
    records = MemoryRecords(bytes(data))
    batch = records.next_batch()
    if batch is None or records.has_next():
        raise InvalidRecords("expected exactly one record batch per partition")
    if not isinstance(batch, DefaultRecordBatch):
        raise InvalidRecords("only v2 record batches (magic 2) are supported")
    if batch.compression_type == DefaultRecordBatch.CODEC_ZSTD and version < ZSTD_MIN_PRODUCE_VERSION:
        raise InvalidRecords(
            f"Produce v{version} may not carry zstd batches (v7+)", Errors.UnsupportedCompressionTypeError
        )
    if CHECK_EVERY_CRC and not batch.validate_crc():
        raise InvalidRecords("record batch CRC mismatch", Errors.CorruptRecordError)
    if batch.compression_type not in _KNOWN_CODECS:
        raise InvalidRecords(f"unknown compression type id {batch.compression_type}", Errors.UnknownError)
    try:
        recs = [Record(r.key, r.value, r.timestamp, tuple(r.headers)) for r in batch]
    except Exception as exc:  # noqa: BLE001 - each codec library raises its own errors on bad input
        if not CHECK_EVERY_CRC and not batch.validate_crc():
            raise InvalidRecords("record batch CRC mismatch", Errors.CorruptRecordError) from exc
        raise InvalidRecords(f"records cannot be read: {exc!r}", Errors.UnknownError) from exc
    if not recs:
        raise InvalidRecords("empty record batch")
    size = _BATCH_START + struct.unpack_from(">i", data, _LENGTH_AT)[0]
    return RecordBatch(
        recs,
        producer_id=batch.producer_id,
        producer_epoch=batch.producer_epoch,
        base_sequence=batch.base_sequence,
        is_transactional=batch.is_transactional,
        produced=bytes(data[:size]) if CHECK_EVERY_CRC else None,
        compression=batch.compression_type,
    )


class _ControlBatchBuilder(DefaultRecordBatchBuilder):
    """A builder whose batches carry the control bit (only brokers write control batches)."""

    __slots__ = ()

    def _get_attributes(self, include_compression_type=True):
        return super()._get_attributes(include_compression_type) | self.CONTROL_MASK


_HEADER = DefaultRecordBatch.HEADER_STRUCT
#: a v2 batch: base offset (int64), batch length (int32, counting the bytes after it), then the
#: partition leader epoch - the first byte the length counts
_LENGTH_AT, _BATCH_START = 8, 12
_CONTROL_KEY = struct.Struct(">hh")  # version 0, type (0 abort, 1 commit)
_CONTROL_VALUE = struct.Struct(">hi")  # version 0, coordinator epoch


def encode_batch(stored: LogBatch) -> bytes:
    """A stored batch as the v2 bytes a fetch answer carries, offsets and leader epoch included:
    the producer's own bytes when it came over the wire, else built here (the simulator's own
    producers, transaction markers)."""
    batch = stored.batch
    if batch.produced is not None:
        return _with_offsets(bytearray(batch.produced), stored)
    builder_cls = _ControlBatchBuilder if batch.control is not None else DefaultRecordBatchBuilder
    builder = builder_cls(
        2,
        batch.compression,
        batch.is_transactional,
        batch.producer_id,
        batch.producer_epoch,
        batch.base_sequence,
        1 << 30,
    )
    if batch.control is not None:
        key = _CONTROL_KEY.pack(0, 1 if batch.control == "commit" else 0)
        value = _CONTROL_VALUE.pack(0, 0)
        ts = _timestamp(batch.records[0].timestamp_ms)
        builder.append(0, ts, key, value, [])
    else:
        for delta, rec in enumerate(batch.records):
            builder.append(delta, _timestamp(rec.timestamp_ms), rec.key, rec.value, list(rec.headers))
    return _with_offsets(builder.build(), stored)


def _with_offsets(buf: bytearray, stored: LogBatch) -> bytes:
    # base offset and partition leader epoch lie before the CRC'd part: the broker fills them in
    struct.pack_into(">q", buf, 0, stored.base_offset)
    struct.pack_into(">i", buf, _BATCH_START, stored.leader_epoch)
    return bytes(buf)


def encode_batches(batches) -> bytes:
    return b"".join(encode_batch(b) for b in batches)


def _timestamp(ts) -> int:
    """Producers' records keep their create time; records the simulator wrote itself (markers,
    whose timestamp is virtual time) get the wall clock."""
    ts = int(ts)
    return ts if ts > 1_000_000_000_000 else int(time.time() * 1000)


__all__ = ["CHECK_EVERY_CRC", "InvalidRecords", "decode_produce", "encode_batch", "encode_batches", "_HEADER"]
