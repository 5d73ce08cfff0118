"""The messages brokers, clients and the controller exchange - a small subset of Kafka's
protocol with the fields that matter for delivery semantics.

Errors travel as kafka-python's exception classes (``kafka.errors``), so code that catches
``NotEnoughReplicasError`` works the same against the simulator and a real cluster.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar, NamedTuple

TopicPartition = tuple  # (topic, partition): kafka-python's TopicPartition is a namedtuple of these


def node_name(broker_id: int) -> str:
    """A broker's address on the simulated network."""
    return f"broker-{broker_id}"


class Record(NamedTuple):
    key: bytes | None
    value: bytes | None
    timestamp_ms: float
    headers: tuple = ()


@dataclass(slots=True)
class RecordBatch:
    """A batch as a producer builds it. Offsets are given by the leader at append time."""

    records: list
    producer_id: int = -1
    producer_epoch: int = -1
    base_sequence: int = -1
    is_transactional: bool = False
    control: str | None = None  # "commit" / "abort" for transaction markers
    #: a batch that came over the wire (course_lib.wire.records): the v2 bytes its producer built,
    #: which Kafka stores and serves as they are (compression, attributes, timestamps) - only the
    #: base offset and leader epoch, outside the CRC, are the broker's to fill in
    produced: bytes | None = field(default=None, compare=False, repr=False)
    #: ... and their compression codec (kafka-python's ids: 0 none, 1 gzip, 2 snappy, 3 lz4, 4 zstd)
    compression: int = field(default=0, compare=False, repr=False)

    @property
    def last_sequence(self) -> int:
        return self.base_sequence + len(self.records) - 1


@dataclass(slots=True)
class LogBatch:
    """A batch in a partition log: the producer's batch plus its offsets and leader epoch."""

    base_offset: int
    leader_epoch: int
    batch: RecordBatch

    @property
    def next_offset(self) -> int:
        return self.base_offset + len(self.batch.records)


@dataclass(frozen=True, slots=True)
class PartitionState:
    """What the controller decided about one partition (KRaft's PartitionRecord)."""

    leader: int | None
    leader_epoch: int
    isr: tuple
    replicas: tuple
    partition_epoch: int = 0
    #: Eligible Leader Replicas (KIP-966): left the ISR while it was below min ISR, so they hold
    #: everything up to the HW and may be elected cleanly once the ISR is empty
    elr: tuple = ()
    #: replicas that were ISR/ELR members and lost that status by an unclean shutdown
    last_known_elr: tuple = ()
    #: the topic's id (KRaft's TopicRecord/PartitionRecord): a topic deleted and created again
    #: under the same name is another topic, and a replica of the old one is a stray to delete
    topic_id: int = 0


@dataclass(frozen=True, slots=True)
class TopicConfig:
    partitions: int
    replication_factor: int
    min_insync_replicas: int
    unclean_leader_election_enable: bool
    #: every topic config set on the topic, by Kafka's name, as given (sorted ``(name, value)``
    #: pairs): DescribeConfigs reports them; the simulator acts on the two fields above only
    overrides: tuple = ()


# ---- client <-> broker -------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class ProduceRequest:
    corr: int
    acks: int
    timeout_ms: float
    batches: dict  # tp -> RecordBatch
    transactional_id: str | None = None
    #: 2: a transactions-v2 producer's request (Produce v12+, KIP-890): the leader adds each
    #: partition to the transaction at the coordinator before it appends (txn_verification)
    transaction_version: int = 1
    kind: ClassVar[str] = "produce_request"

    def describe(self) -> str:
        return "produce " + ", ".join(f"p{tp[1]}:{_ids(b)}{_sequenced(b)}" for tp, b in self.batches.items())


@dataclass(slots=True)
class PartitionResult:
    error: Any = None  # a kafka.errors class, or None
    base_offset: int = -1
    evidence: dict | None = None


@dataclass(frozen=True, slots=True)
class ProduceResponse:
    corr: int
    results: dict  # tp -> PartitionResult
    kind: ClassVar[str] = "produce_response"

    def describe(self) -> str:
        return "ack " + ", ".join(
            f"p{tp[1]}@{r.base_offset}" if r.error is None else f"p{tp[1]}:{r.error.__name__}"
            for tp, r in self.results.items()
        )


@dataclass(frozen=True, slots=True)
class MetadataRequest:
    corr: int
    kind: ClassVar[str] = "metadata_request"


@dataclass(frozen=True, slots=True)
class MetadataResponse:
    corr: int
    brokers: tuple
    topics: dict  # topic -> number of partitions
    leaders: dict  # tp -> (leader or None, leader_epoch)
    #: topic -> topic id (Metadata v10+): a client sees a topic deleted and created again
    topic_ids: dict = field(default_factory=dict)
    kind: ClassVar[str] = "metadata_response"


@dataclass(frozen=True, slots=True)
class InitProducerIdRequest:
    corr: int
    transactional_id: str | None = None
    transaction_timeout_ms: float = 60000
    kind: ClassVar[str] = "init_producer_id_request"


@dataclass(frozen=True, slots=True)
class InitProducerIdResponse:
    corr: int
    error: Any
    producer_id: int
    producer_epoch: int
    kind: ClassVar[str] = "init_producer_id_response"


# ---- broker <-> broker ---------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class FetchRequest:
    replica_id: int
    tp: TopicPartition
    fetch_offset: int
    last_fetched_epoch: int
    leader_epoch: int
    generation: int
    max_wait_ms: float
    topic_id: int = 0  # inter-broker fetches name the topic id (Fetch v13+): a stale follower is refused
    kind: ClassVar[str] = "fetch_request"

    def describe(self) -> str:
        return f"fetch p{self.tp[1]} from {self.fetch_offset}"


@dataclass(frozen=True, slots=True)
class FetchResponse:
    tp: TopicPartition
    generation: int
    error: Any = None
    batches: list = field(default_factory=list)
    high_watermark: int = 0
    diverging: tuple | None = None  # (epoch, end_offset): truncate before fetching again
    log_start_offset: int = 0  # the leader's: a follower moves its own up to it (DeleteRecords)
    kind: ClassVar[str] = "fetch_response"

    def describe(self) -> str:
        if self.error is not None:
            return f"fetch error {self.error.__name__}"
        if self.diverging:
            return f"diverging at epoch {self.diverging[0]}, end {self.diverging[1]}"
        return f"{sum(len(b.batch.records) for b in self.batches)} records, hw {self.high_watermark}"


# ---- broker <-> controller -----------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class BrokerHeartbeat:
    broker_id: int
    incarnation: int  # a restarted broker registers anew (KRaft's incarnation id / broker epoch)
    metadata_version: int  # how far this broker has applied the controller's decisions
    kind: ClassVar[str] = "heartbeat"


@dataclass(frozen=True, slots=True)
class AlterPartition:
    tp: TopicPartition
    leader: int
    leader_epoch: int
    partition_epoch: int
    isr: tuple
    topic_id: int = 0  # AlterPartition v2+ names the topic id
    kind: ClassVar[str] = "alter_partition"

    def describe(self) -> str:
        return f"ISR p{self.tp[1]} -> {list(self.isr)}"


@dataclass(frozen=True, slots=True)
class AlterPartitionResponse:
    tp: TopicPartition
    error: Any
    state: PartitionState
    kind: ClassVar[str] = "alter_partition_response"


@dataclass(frozen=True, slots=True)
class PartitionUpdate:
    """Controller -> brokers: the new state of some partitions (metadata propagation).

    Like KRaft's metadata log, updates are applied in order: an incremental update is applied
    only on top of ``version - 1``; a broker that missed one (it was isolated, or restarted)
    reports its version in its heartbeat and gets a full snapshot (``full=True``).

    A snapshot is the whole image: a topic it lacks was deleted, a partition with another topic
    id belongs to a deleted topic of the same name, and the broker deletes those replicas.
    """

    states: dict  # tp -> PartitionState
    configs: dict  # topic -> TopicConfig
    version: int
    full: bool = False
    #: the brokers registered and not fenced: what a metadata answer lists (KRaft's alive brokers)
    live_brokers: tuple = ()
    #: topics deleted by this update (KRaft's RemoveTopicRecord): brokers delete their replicas
    deleted: tuple = ()
    kind: ClassVar[str] = "partition_update"

    def describe(self) -> str:
        changes = [f"p{tp[1]} leader {s.leader} e{s.leader_epoch}" for tp, s in self.states.items()]
        return "; ".join(changes + [f"delete {t}" for t in self.deleted])


def _sequenced(batch: RecordBatch) -> str:
    """An idempotent batch's producer id and sequence numbers: what the leader deduplicates on
    (lesson 04 draws them in its space-time diagram)."""
    if batch.producer_id < 0 or batch.base_sequence < 0:
        return ""
    seq = (
        batch.base_sequence
        if batch.last_sequence == batch.base_sequence
        else f"{batch.base_sequence}-{batch.last_sequence}"
    )
    return f" [pid {batch.producer_id} seq {seq}]"


def _ids(batch: RecordBatch) -> str:
    values = [r.value for r in batch.records]
    if len(values) > 2:
        return f"{_short(values[0])}..{_short(values[-1])}"
    return ",".join(_short(v) for v in values)


def _short(value) -> str:
    if isinstance(value, (bytes, bytearray)):
        try:
            return value.decode()
        except UnicodeDecodeError:
            return value.hex()[:8]
    return str(value)


# ---- consumers ----------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class ConsumerFetchRequest:
    corr: int
    tp: TopicPartition
    fetch_offset: int
    read_committed: bool
    max_wait_ms: float
    max_records: int = 10_000
    kind: ClassVar[str] = "consumer_fetch_request"

    def describe(self) -> str:
        return f"poll p{self.tp[1]} from {self.fetch_offset}"


@dataclass(frozen=True, slots=True)
class ConsumerFetchResponse:
    corr: int
    tp: TopicPartition
    error: Any = None
    batches: list = field(default_factory=list)
    high_watermark: int = 0
    last_stable_offset: int = 0
    aborted: list = field(default_factory=list)  # (producer id, first offset) of aborted txns in range
    kind: ClassVar[str] = "consumer_fetch_response"

    def describe(self) -> str:
        if self.error is not None:
            return f"poll error {self.error.__name__}"
        return f"{sum(len(b.batch.records) for b in self.batches)} records, hw {self.high_watermark}"


@dataclass(frozen=True, slots=True)
class ListOffsetsRequest:
    corr: int
    tp: TopicPartition
    latest: bool
    read_committed: bool
    kind: ClassVar[str] = "list_offsets_request"


@dataclass(frozen=True, slots=True)
class ListOffsetsResponse:
    corr: int
    tp: TopicPartition
    error: Any
    offset: int
    kind: ClassVar[str] = "list_offsets_response"


@dataclass(frozen=True, slots=True)
class OffsetsForLeaderEpochRequest:
    """A consumer checks its position after a leader change (KIP-320): where did ``epoch`` end?"""

    corr: int
    tp: TopicPartition
    epoch: int
    kind: ClassVar[str] = "offsets_for_leader_epoch_request"


@dataclass(frozen=True, slots=True)
class OffsetsForLeaderEpochResponse:
    corr: int
    tp: TopicPartition
    error: Any
    epoch: int = -1
    end_offset: int = -1
    kind: ClassVar[str] = "offsets_for_leader_epoch_response"


@dataclass(frozen=True, slots=True)
class FindCoordinatorRequest:
    corr: int
    key: str
    key_type: str  # "group" or "transaction"
    kind: ClassVar[str] = "find_coordinator_request"


@dataclass(frozen=True, slots=True)
class FindCoordinatorResponse:
    corr: int
    error: Any
    broker_id: int | None
    kind: ClassVar[str] = "find_coordinator_response"


@dataclass(frozen=True, slots=True, kw_only=True)
class CoordinatorRequest:
    """What every request to a group or transaction coordinator has: ``api`` names it in the
    trace and in its answer (a :class:`CoordinatorResponse`), ``coordinator_key`` says which
    coordinator to find (FindCoordinator's key type and key). ``corr`` is stamped by the sender
    when it sends (a retry is the same request with a new correlation id)."""

    api: ClassVar[str] = ""
    kind: ClassVar[str] = "coordinator_request"
    corr: int = 0

    @property
    def coordinator_key(self) -> tuple[str, str]:
        raise NotImplementedError

    def describe(self) -> str:
        return self.api


@dataclass(frozen=True, slots=True, kw_only=True)
class GroupRequest(CoordinatorRequest):
    """A request to the coordinator of ``group`` (the leader of ``__consumer_offsets``)."""

    group: str

    @property
    def coordinator_key(self) -> tuple[str, str]:
        return ("group", self.group)


@dataclass(frozen=True, slots=True, kw_only=True)
class JoinGroupRequest(GroupRequest):
    api: ClassVar[str] = "join_group"
    member_id: str
    client_id: str
    topics: list
    session_timeout_ms: float
    rebalance_timeout_ms: float | None = None  # None: the session timeout
    group_instance_id: str | None = None  # static membership (KIP-345)


@dataclass(frozen=True, slots=True, kw_only=True)
class HeartbeatRequest(GroupRequest):
    """A group member's heartbeat (Kafka's Heartbeat API; a broker's heartbeat to the
    controller is :class:`BrokerHeartbeat`)."""

    api: ClassVar[str] = "heartbeat"
    member_id: str
    generation: int


@dataclass(frozen=True, slots=True, kw_only=True)
class LeaveGroupRequest(GroupRequest):
    api: ClassVar[str] = "leave_group"
    member_id: str


class CommittedOffset(int):
    """A committed offset with what its committer attached: OffsetCommit's and TxnOffsetCommit's
    ``committed_leader_epoch`` and ``committed_metadata``, which Kafka stores in the offset's record
    (``OffsetAndMetadata``) and OffsetFetch hands back. An int, so every reader of committed
    offsets (lag, the checker, the simulator's clients) sees the offset and nothing else.

    >>> committed = CommittedOffset(42, leader_epoch=3, metadata="batch 7")
    >>> committed + 1, committed.leader_epoch, committed.metadata
    (43, 3, 'batch 7')
    >>> CommittedOffset(5) == 5 and CommittedOffset(5).leader_epoch == -1
    True
    """

    leader_epoch: int
    metadata: str

    def __new__(cls, offset: int, leader_epoch: int = -1, metadata: str | None = ""):
        self = super().__new__(cls, offset)
        self.leader_epoch = leader_epoch
        self.metadata = metadata or ""
        return self

    def __repr__(self) -> str:
        return int.__repr__(self)


@dataclass(frozen=True, slots=True, kw_only=True)
class OffsetCommitRequest(GroupRequest):
    api: ClassVar[str] = "offset_commit"
    member_id: str
    generation: int
    offsets: dict  # tp -> offset


@dataclass(frozen=True, slots=True, kw_only=True)
class OffsetFetchRequest(GroupRequest):
    api: ClassVar[str] = "offset_fetch"
    partitions: list


@dataclass(frozen=True, slots=True, kw_only=True)
class TxnOffsetCommitRequest(GroupRequest):
    """``send_offsets_to_transaction``: offsets that count only if the transaction commits
    (sent to the *group's* coordinator)."""

    api: ClassVar[str] = "txn_offset_commit"
    member_id: str
    generation: int
    offsets: dict  # tp -> offset
    producer_id: int
    producer_epoch: int
    transactional_id: str | None = None
    #: 2: TxnOffsetCommit v5 (KIP-890): the coordinator adds the offsets partition itself
    transaction_version: int = 1


@dataclass(frozen=True, slots=True, kw_only=True)
class ConsumerGroupHeartbeatRequest(GroupRequest):
    """KIP-848's one request of a consumer group member (join: epoch 0, leave: -1). ``None``
    fields are "unchanged since my last heartbeat", as on the wire."""

    api: ClassVar[str] = "consumer_group_heartbeat"
    member_id: str
    member_epoch: int
    client_id: str = ""
    topics: tuple | None = None
    owned: tuple | None = None  # ((topic, partition), ...)
    assignor: str | None = None
    rebalance_timeout_ms: float = -1
    instance_id: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ConsumerGroupDescribeRequest(GroupRequest):
    api: ClassVar[str] = "consumer_group_describe"


@dataclass(frozen=True, slots=True, kw_only=True)
class TxnRequest(CoordinatorRequest):
    """A request to the coordinator of ``transactional_id`` (the leader of ``__transaction_state``)."""

    transactional_id: str

    @property
    def coordinator_key(self) -> tuple[str, str]:
        return ("transaction", self.transactional_id)


@dataclass(frozen=True, slots=True, kw_only=True)
class InitTxnProducerIdRequest(TxnRequest):
    """InitProducerId with a ``transactional.id`` (``init_transactions()``): the transaction
    coordinator answers. Without one (an idempotent producer) any broker answers an
    :class:`InitProducerIdRequest`."""

    api: ClassVar[str] = "init_producer_id"
    transaction_timeout_ms: float


@dataclass(frozen=True, slots=True, kw_only=True)
class AddPartitionsToTxnRequest(TxnRequest):
    api: ClassVar[str] = "add_partitions"
    producer_id: int
    producer_epoch: int
    partitions: list  # [topic, partition] pairs
    #: 2: sent by a partition leader for a transactions-v2 produce (AddPartitionsToTxn v5 from
    #: broker to coordinator): the epoch must be the current one, and a finished transaction's
    #: producer starts the next one by it
    transaction_version: int = 1


@dataclass(frozen=True, slots=True, kw_only=True)
class EndTxnRequest(TxnRequest):
    api: ClassVar[str] = "end_txn"
    producer_id: int
    producer_epoch: int
    commit: bool
    #: 2: EndTxn v5 (KIP-890): the coordinator bumps the epoch and answers the new one
    transaction_version: int = 1


@dataclass(frozen=True, slots=True)
class CoordinatorResponse:
    corr: int
    api: str
    error: Any = None
    result: Any = None
    kind: ClassVar[str] = "coordinator_response"

    def describe(self) -> str:
        return f"{self.api} {'ok' if self.error is None else self.error.__name__}"


@dataclass(frozen=True, slots=True)
class WriteTxnMarker:
    """Transaction coordinator -> partition leader: append a commit/abort marker."""

    corr: int
    tp: TopicPartition
    producer_id: int
    producer_epoch: int
    commit: bool
    kind: ClassVar[str] = "write_txn_marker"

    def describe(self) -> str:
        return f"{'COMMIT' if self.commit else 'ABORT'} marker p{self.tp[1]}"


@dataclass(frozen=True, slots=True)
class WriteTxnMarkerResponse:
    corr: int
    tp: TopicPartition
    error: Any
    kind: ClassVar[str] = "write_txn_marker_response"


# ---- share groups (KIP-932) ---------------------------------------------------------------------
@dataclass(frozen=True, slots=True, kw_only=True)
class ShareGroupHeartbeatRequest(GroupRequest):
    """A share group member's heartbeat (ShareGroupHeartbeat, API 76): joins with epoch 0, leaves
    with epoch -1, and gets the member's assignment back each time. The member id is the
    client's own (KIP-848/932: the client generates it), so a rejoin keeps it."""

    api: ClassVar[str] = "share_group_heartbeat"
    member_id: str
    member_epoch: int
    client_id: str = ""
    topics: tuple | None = None  # the subscription (None: unchanged)


@dataclass(frozen=True, slots=True, kw_only=True)
class ShareGroupDescribeRequest(GroupRequest):
    """ShareGroupDescribe (API 77): the group's members and their assignments."""

    api: ClassVar[str] = "share_group_describe"


@dataclass(frozen=True, slots=True, kw_only=True)
class AlterShareGroupOffsetsRequest(GroupRequest):
    """AlterShareGroupOffsets (API 91): set the start offset of each ``(topic, partition, start
    offset)`` of an empty share group (creating the group if it does not exist)."""

    api: ClassVar[str] = "alter_share_group_offsets"
    offsets: tuple


@dataclass(frozen=True, slots=True, kw_only=True)
class DeleteShareGroupOffsetsRequest(GroupRequest):
    """DeleteShareGroupOffsets (API 92): forget an empty share group's state of ``topics``."""

    api: ClassVar[str] = "delete_share_group_offsets"
    topics: tuple


@dataclass(frozen=True, slots=True)
class ShareFetchRequest:
    """ShareFetch (API 78) for one partition: acknowledge ``acknowledgements`` (``(offset,
    ack type)`` pairs) first, then acquire about ``max_records`` records for ``member_id``:
    whole record batches, so possibly more (``acquire_mode`` 0, *batch_optimized*, Kafka's
    default), or at most ``max_records`` (1, *record_limit*, KIP-1206); ``batch_size`` (0: as
    ``max_records``) is how many records one acquired batch (one lock) should hold."""

    corr: int
    group: str
    member_id: str
    tp: TopicPartition
    max_records: int
    max_wait_ms: float
    acknowledgements: tuple = ()
    batch_size: int = 0
    acquire_mode: int = 0
    kind: ClassVar[str] = "share_fetch_request"

    def describe(self) -> str:
        acks = f", ack {len(self.acknowledgements)}" if self.acknowledgements else ""
        return f"share fetch p{self.tp[1]}{acks}"


@dataclass(frozen=True, slots=True)
class ShareFetchResponse:
    corr: int
    tp: TopicPartition
    error: Any = None
    records: tuple = ()  # (offset, Record, delivery count) the member now holds under a lock
    ack_error: Any = None  # the piggybacked acknowledgements' outcome
    kind: ClassVar[str] = "share_fetch_response"

    def describe(self) -> str:
        if self.error is not None:
            return f"share fetch error {self.error.__name__}"
        return f"{len(self.records)} acquired"


@dataclass(frozen=True, slots=True)
class ShareAcknowledgeRequest:
    """ShareAcknowledge (API 79) for one partition; ``close`` ends the member's share session:
    what it still holds is released at once (``SharePartition.releaseAcquiredRecords``)."""

    corr: int
    group: str
    member_id: str
    tp: TopicPartition
    acknowledgements: tuple  # (offset, ack type)
    close: bool = False
    kind: ClassVar[str] = "share_acknowledge_request"

    def describe(self) -> str:
        return f"share ack p{self.tp[1]} x{len(self.acknowledgements)}" + (" close" if self.close else "")


@dataclass(frozen=True, slots=True)
class ShareAcknowledgeResponse:
    corr: int
    tp: TopicPartition
    error: Any = None
    kind: ClassVar[str] = "share_acknowledge_response"

    def describe(self) -> str:
        return "share ack " + ("ok" if self.error is None else self.error.__name__)


@dataclass(frozen=True, slots=True)
class ReadShareGroupStateRequest:
    """Share-partition leader -> share coordinator: the persisted state of (group, tp)."""

    corr: int
    group: str
    tp: TopicPartition
    leader_epoch: int
    kind: ClassVar[str] = "read_share_group_state"


@dataclass(frozen=True, slots=True)
class ReadShareGroupStateSummaryRequest:
    """Group coordinator -> share coordinator: each share-partition of ``group`` it holds state
    for (Kafka's ReadShareGroupStateSummary, for DescribeShareGroupOffsets)."""

    corr: int
    group: str
    kind: ClassVar[str] = "read_share_group_state_summary"


@dataclass(frozen=True, slots=True)
class ShareGroupStateSummaryResponse:
    corr: int
    error: Any = None
    #: (topic, partition, leader epoch, start offset, records acknowledged or archived from it on)
    partitions: tuple = ()
    kind: ClassVar[str] = "share_group_state_summary_response"


@dataclass(frozen=True, slots=True)
class WriteShareGroupStateRequest:
    """Share-partition leader -> share coordinator: the new start offset and the records whose
    state changed, ``(offset, state, delivery count)``. A write from an older leader epoch than
    one already seen is fenced (``FENCED_LEADER_EPOCH``)."""

    corr: int
    group: str
    tp: TopicPartition
    leader_epoch: int
    start_offset: int
    updates: tuple
    kind: ClassVar[str] = "write_share_group_state"

    def describe(self) -> str:
        return f"persist p{self.tp[1]} start {self.start_offset} x{len(self.updates)}"


@dataclass(frozen=True, slots=True)
class InitializeShareGroupStateRequest:
    """Group coordinator -> share coordinator: (group, tp)'s state starts again at
    ``start_offset``, with no record in flight (Kafka's InitializeShareGroupState, as
    AlterShareGroupOffsets writes it)."""

    corr: int
    group: str
    tp: TopicPartition
    start_offset: int
    kind: ClassVar[str] = "initialize_share_group_state"


@dataclass(frozen=True, slots=True)
class DeleteShareGroupStateRequest:
    """Group coordinator -> share coordinator: forget the state of ``group`` on ``tps``
    (Kafka's DeleteShareGroupState, as DeleteShareGroupOffsets writes it)."""

    corr: int
    group: str
    tps: tuple
    kind: ClassVar[str] = "delete_share_group_state"


@dataclass(frozen=True, slots=True)
class ShareGroupStateResponse:
    corr: int
    error: Any = None
    start_offset: int = -1  # -1: nothing persisted yet
    states: tuple = ()  # (offset, state, delivery count)
    kind: ClassVar[str] = "share_group_state_response"
