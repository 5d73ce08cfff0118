"""A broker process: hosts partition replicas, answers clients, heartbeats to the controller.

``crash()`` kills the process: everything in memory (roles, waiting requests, follower
progress) is gone, while the log - on disk - survives. ``restart()`` recovers from that log,
rebuilds producer state from it and rejoins as a follower once the controller hears from it;
the follower then truncates any tail it wrote as a leader that the new leader never had.

Taught in notebooks/01_replicated_log.
"""

from __future__ import annotations

from typing import Any, Callable

from kafka import errors as Errors

from .group_coordinator import OFFSETS_TOPIC, GroupCoordinator
from .options import ClusterOptions
from .partition import Partition
from .protocol import (
    AlterPartitionResponse,
    BrokerHeartbeat,
    ConsumerFetchRequest,
    CoordinatorResponse,
    ConsumerFetchResponse,
    FetchRequest,
    FetchResponse,
    FindCoordinatorRequest,
    FindCoordinatorResponse,
    InitProducerIdRequest,
    InitProducerIdResponse,
    ListOffsetsRequest,
    ListOffsetsResponse,
    MetadataRequest,
    MetadataResponse,
    OffsetsForLeaderEpochRequest,
    OffsetsForLeaderEpochResponse,
    PartitionResult,
    PartitionUpdate,
    ProduceRequest,
    ProduceResponse,
    ShareAcknowledgeRequest,
    ShareFetchRequest,
    ShareGroupStateResponse,
    ShareGroupStateSummaryResponse,
    TopicConfig,
    WriteTxnMarker,
    WriteTxnMarkerResponse,
    node_name,
)
from .share_coordinator import ShareCoordinator
from .share_group import ShareGroupCoordinator
from .share_partition import SharePartitionManager
from .txn_coordinator import TXN_TOPIC, TxnCoordinator
from .txn_verification import TxnVerifier, produce_v2

#: how a node handles one kind of message: ``handler(node, src, message)``
Handler = Callable[[Any, str, Any], None]


def to_partition(method: Callable[[Partition, str, Any], None], refusal=None) -> Handler:
    """A message about one partition replica (it has a ``tp``): handled by this broker's replica
    with ``method``; if the broker holds none, answered with ``refusal(message, error)`` - the
    error :meth:`Broker.no_replica_error` chose - or, without a refusal, ignored."""

    def route(broker: Broker, src: str, msg) -> None:
        partition = broker.partitions.get(msg.tp)
        if partition is not None:
            method(partition, src, msg)
        elif refusal is not None:
            broker.send(src, refusal(msg, broker.no_replica_error(msg.tp)))

    return route


class _PendingProduce:
    """Collects per-partition results of one produce request; responds when all are in."""

    __slots__ = ("broker", "src", "corr", "results", "remaining", "incarnation")

    def __init__(self, broker, src, corr, count):
        self.broker, self.src, self.corr = broker, src, corr
        self.results: dict = {}
        self.remaining = count
        self.incarnation = broker.incarnation

    def done_for(self, tp):
        def done(result: PartitionResult) -> None:
            self.results[tp] = result
            self.remaining -= 1
            if self.remaining == 0 and self.broker.incarnation == self.incarnation:
                self.broker.send(self.src, ProduceResponse(self.corr, self.results))

        return done


class _FireAndForget:
    """acks=0: nobody waits for the answer. But if a partition refuses the batch, Kafka closes
    the connection (``KafkaApis.handleProduceRequest``: "close the connection on error") - the
    only signal an acks=0 producer gets; kafka-python then refreshes its metadata and finds the
    new leader, so only what was sent to the deposed leader before that is lost."""

    __slots__ = ("broker", "closed", "src")

    def __init__(self, broker, src):
        self.broker, self.src, self.closed = broker, src, False

    def done_for(self, tp):
        return self.done

    def done(self, result: PartitionResult) -> None:
        if result.error is not None and not self.closed and self.broker.alive:
            self.closed = True
            self.broker.network.close_connection(self.broker.node_id, self.src)


class Broker:
    def __init__(self, cluster, broker_id: int, options: ClusterOptions):
        self.cluster = cluster
        self.sim = cluster.sim
        self.network = cluster.network
        self.options = options
        self.broker_id = broker_id
        self.node_id = node_name(broker_id)
        self.alive = True
        self.paused = False
        self._held: list = []  # what arrived while paused (SIGSTOP): handled on resume
        self.incarnation = 0
        self.partitions: dict[tuple, Partition] = {}
        self.metadata: dict[tuple, Any] = {}  # tp -> PartitionState (this broker's view)
        self.metadata_version = 0
        self.live_brokers: tuple | None = None  # from the controller; None: no metadata yet
        self.topic_configs: dict[str, TopicConfig] = {}
        # tp -> fetch generation of its deleted replica: a replica of a topic created again
        # under the same name starts above it, so no answer to the old replica's fetch is taken
        self._retired_generations: dict[tuple, int] = {}
        self.network.add(self)
        self.groups = GroupCoordinator(self)
        self.txns = TxnCoordinator(self)
        self.verifier = TxnVerifier(self)
        # share groups (KIP-932): nothing runs or is scheduled until a share consumer shows up
        self.share_groups = ShareGroupCoordinator(self)
        self.shares = SharePartitionManager(self)
        self.share_state = ShareCoordinator(self)
        self._heartbeat()

    def __repr__(self) -> str:
        return f"<Broker {self.broker_id} {'up' if self.alive else 'DOWN'}>"

    # ---- plumbing ---------------------------------------------------------------------------
    def node_of(self, broker_id: int) -> str:
        return node_name(broker_id)

    def send(self, dst: str, msg) -> None:
        if self.alive:
            self.network.send(self.node_id, dst, msg)

    def send_controller(self, msg) -> None:
        self.send(self.cluster.controller.node_id, msg)

    def schedule_timer(self, delay_ms: float, fn, *args) -> int:
        """A timer that dies with this incarnation of the process."""
        return self.sim.schedule(delay_ms, self._fire, self.incarnation, fn, args)

    def _fire(self, incarnation: int, fn, args) -> None:
        if self.alive and incarnation == self.incarnation:
            if self.paused:
                self._held.append((fn, args))
            else:
                fn(*args)

    def schedule_isr_check(self, partition: Partition) -> None:
        epoch = partition.leader_epoch
        interval = self.options.replica_lag_time_max_ms / 2

        def tick():
            if partition.is_leader and partition.leader_epoch == epoch:
                partition.check_isr()
                self.schedule_timer(interval, tick)

        self.schedule_timer(interval, tick)

    def _heartbeat(self) -> None:
        self.send_controller(BrokerHeartbeat(self.broker_id, self.incarnation, self.metadata_version))
        self.schedule_timer(self.options.broker_heartbeat_interval_ms, self._heartbeat)

    # ---- hooks for the history ---------------------------------------------------------------------
    def on_truncate(self, partition: Partition, removed) -> None:
        self.cluster.on_truncate(self, partition, removed)

    # ---- lifecycle ------------------------------------------------------------------------------
    def crash(self) -> None:
        if not self.alive:
            return
        self.alive = False
        self.paused = False
        self._held = []
        for partition in self.partitions.values():
            partition.crash()
        self.shares.crash()
        self.share_groups.groups.clear()
        self.metadata.clear()
        self.metadata_version = 0
        self.live_brokers = None
        self.network.node_down(self.node_id)

    def pause(self) -> None:
        """SIGSTOP: the process stops handling anything; its sockets still take in data."""
        self.paused = True

    def resume(self) -> None:
        """SIGCONT: handle, in order, everything that arrived and every timer that fired."""
        self.paused = False
        held, self._held = self._held, []
        for fn, args in held:
            if self.alive and not self.paused:
                fn(*args)

    def restart(self) -> None:
        if self.alive:
            return
        self.alive = True
        self.incarnation += 1
        for partition in self.partitions.values():
            partition.recover()
        self._heartbeat()

    # ---- requests ---------------------------------------------------------------------------------
    def receive(self, src: str, msg) -> None:
        if self.paused:
            self._held.append((self.receive, (src, msg)))
            return
        handler = HANDLERS.get(type(msg))
        if handler is None:
            raise AssertionError(f"broker {self.broker_id} got an unknown message {msg.kind!r}")
        handler(self, src, msg)

    def _metadata(self, src: str, msg: MetadataRequest) -> None:
        self.send(
            src,
            MetadataResponse(
                msg.corr,
                # only live brokers, as Kafka answers: a client that asked while the others
                # were down knows no other broker to ask later (kafka-python never goes back
                # to bootstrap_servers)
                self.live_brokers if self.live_brokers is not None else tuple(sorted(self.cluster.brokers)),
                {t: c.partitions for t, c in self.topic_configs.items()},
                {tp: (s.leader, s.leader_epoch) for tp, s in self.metadata.items()},
                {tp[0]: s.topic_id for tp, s in self.metadata.items()},
            ),
        )

    def _init_producer_id(self, src: str, msg: InitProducerIdRequest) -> None:
        pid, epoch = self.cluster.controller.allocate_producer_id(msg.transactional_id)
        self.send(src, InitProducerIdResponse(msg.corr, None, pid, epoch))

    def _write_txn_marker(self, src: str, msg: WriteTxnMarker) -> None:
        partition = self.partitions.get(msg.tp)
        reply = lambda error: self.send(src, WriteTxnMarkerResponse(msg.corr, msg.tp, error))  # noqa: E731
        if partition is None:
            return reply(Errors.NotLeaderForPartitionError)
        partition.write_marker(msg.producer_id, msg.producer_epoch, msg.commit, reply)

    def _find_coordinator(self, src: str, msg: FindCoordinatorRequest) -> None:
        """Any broker answers: the coordinator is the leader of the internal topic's partition
        (created on first use, as Kafka creates __consumer_offsets)."""
        topic = OFFSETS_TOPIC if msg.key_type == "group" else TXN_TOPIC
        self.cluster.controller.ensure_internal_topic(topic)
        state = self.metadata.get((topic, 0))
        if state is None or state.leader is None:
            return self.send(src, FindCoordinatorResponse(msg.corr, Errors.CoordinatorNotAvailableError, None))
        self.send(src, FindCoordinatorResponse(msg.corr, None, state.leader))

    def on_disconnect(self, peer: str) -> None:
        """A connection closed: the share sessions it carried end; followers fetching from that
        peer back off and retry."""
        self.shares.disconnected(peer)
        for partition in self.partitions.values():
            if not partition.is_leader and partition.leader_id is not None and node_name(partition.leader_id) == peer:
                partition.retry_fetch_later()

    def _handle_produce(self, src: str, req: ProduceRequest) -> None:
        pending = _FireAndForget(self, src) if req.acks == 0 else _PendingProduce(self, src, req.corr, len(req.batches))

        def append(tp, batch) -> None:
            done = pending.done_for(tp)
            partition = self.partitions.get(tp)
            if partition is None:
                return done(PartitionResult(self.no_replica_error(tp, produce=True)))
            partition.append(batch, req.acks, req.timeout_ms, done)

        if req.transaction_version >= 2:  # KIP-890: partitions join the transaction here
            return produce_v2(self, req, append, lambda tp, result: pending.done_for(tp)(result))
        for tp, batch in req.batches.items():
            append(tp, batch)

    def no_replica_error(self, tp, produce: bool = False):
        """What a request for a partition this broker holds no replica of gets (Kafka's
        ``ReplicaManager.getPartitionOrError``): ``NOT_LEADER_OR_FOLLOWER`` if the partition is in
        its metadata, ``UNKNOWN_TOPIC_OR_PARTITION`` if not (a deleted topic). A broker that has
        no metadata yet (just restarted) answers consumers as a non-leader."""
        if tp in self.metadata or (not produce and self.live_brokers is None):
            return Errors.NotLeaderForPartitionError
        return Errors.UnknownTopicOrPartitionError

    def _apply_update(self, update: PartitionUpdate) -> None:
        if not update.full and update.version != self.metadata_version + 1:
            return  # a gap: wait for the full snapshot the next heartbeat brings
        if update.full and update.version < self.metadata_version:
            return
        self.metadata_version = update.version
        self.live_brokers = update.live_brokers
        self._delete_topics(update)
        self.topic_configs.update(update.configs)
        for tp, state in update.states.items():
            self.metadata[tp] = state
            if self.broker_id in state.replicas:
                partition = self.partitions.get(tp)
                if partition is None:
                    partition = self.partitions[tp] = Partition(self, tp, self.topic_configs[tp[0]], state.topic_id)
                    partition.fetch_generation = self._retired_generations.pop(tp, -1) + 1
                partition.config = self.topic_configs[tp[0]]
                partition.apply_state(state)
            elif tp in self.partitions:  # reassigned away (ReplicaManager.applyDelta deletes it)
                self._delete_replica(tp)

    def _delete_topics(self, update: PartitionUpdate) -> None:
        """Forget deleted topics and delete their replicas (KRaft brokers on a metadata delta:
        ``ReplicaManager.applyDelta`` stops and deletes the partitions of a removed topic). A
        snapshot is the whole image: replicas it lacks, or that it names under another topic id
        (the topic was deleted and created again while this broker was away), are strays."""
        deleted = set(update.deleted)
        if update.full:
            deleted |= {t for t in self.topic_configs if t not in update.configs}
            for tp in [tp for tp in self.metadata if tp not in update.states]:
                del self.metadata[tp]
        for tp, partition in sorted(self.partitions.items()):
            state = update.states.get(tp)
            if (
                tp[0] in deleted
                or (update.full and state is None)
                or (state is not None and state.topic_id != partition.topic_id)
            ):
                self._delete_replica(tp)
        if not deleted:
            return
        for topic in sorted(deleted):
            self.topic_configs.pop(topic, None)
        for tp in [tp for tp in self.metadata if tp[0] in deleted]:
            del self.metadata[tp]
        self.groups.on_topics_deleted(deleted)

    def _delete_replica(self, tp) -> None:
        partition = self.partitions.pop(tp)
        partition.delete()
        self._retired_generations[tp] = partition.fetch_generation
        self.cluster.record(
            self.node_id,
            "delete_replica",
            {"topic": tp[0], "partition": tp[1], "topic_id": partition.topic_id, "leo": partition.log.leo},
        )


#: message class -> how a broker handles it. A new request: its dataclass in :mod:`.protocol`, its
#: handler (here, in the module of its partition or coordinator, or a module of its own), one entry here.
HANDLERS: dict[type, Handler] = {
    ProduceRequest: Broker._handle_produce,
    MetadataRequest: Broker._metadata,
    InitProducerIdRequest: Broker._init_producer_id,
    FindCoordinatorRequest: Broker._find_coordinator,
    PartitionUpdate: lambda broker, src, msg: broker._apply_update(msg),
    FetchRequest: to_partition(
        Partition.handle_fetch, lambda m, e: FetchResponse(m.tp, m.generation, Errors.UnknownTopicOrPartitionError)
    ),
    FetchResponse: to_partition(Partition.on_fetch_response),
    AlterPartitionResponse: to_partition(Partition.on_alter_partition_response),
    ConsumerFetchRequest: to_partition(
        Partition.handle_consumer_fetch, lambda m, e: ConsumerFetchResponse(m.corr, m.tp, e)
    ),
    ListOffsetsRequest: to_partition(Partition.list_offsets, lambda m, e: ListOffsetsResponse(m.corr, m.tp, e, -1)),
    OffsetsForLeaderEpochRequest: to_partition(
        Partition.offsets_for_leader_epoch, lambda m, e: OffsetsForLeaderEpochResponse(m.corr, m.tp, e)
    ),
    WriteTxnMarker: Broker._write_txn_marker,
    WriteTxnMarkerResponse: lambda broker, src, msg: broker.txns.on_marker_response(msg),
    # the coordinator's answer to a leader's AddPartitionsToTxn (transactions v2: txn_verification)
    CoordinatorResponse: lambda broker, src, msg: broker.verifier.on_response(msg),
    # every coordinator request goes to the coordinator whose table names it
    **{cls: lambda broker, src, msg: broker.groups.handle(src, msg) for cls in GroupCoordinator.HANDLERS},
    **{cls: lambda broker, src, msg: broker.txns.handle(src, msg) for cls in TxnCoordinator.HANDLERS},
    # share groups: membership at the group coordinator, records at the partition leader, their
    # state at the share coordinator
    **{cls: lambda broker, src, msg: broker.share_groups.handle(src, msg) for cls in ShareGroupCoordinator.HANDLERS},
    ShareFetchRequest: lambda broker, src, msg: broker.shares.dispatch(src, msg),
    # the answer to a share-partition's dead-letter write (KIP-1191: a Produce to the DLQ's leader)
    ProduceResponse: lambda broker, src, msg: broker.shares.dead_letters.on_produce_response(msg),
    ShareAcknowledgeRequest: lambda broker, src, msg: broker.shares.dispatch(src, msg),
    **{cls: lambda broker, src, msg: broker.share_state.handle(src, msg) for cls in ShareCoordinator.HANDLERS},
    ShareGroupStateResponse: lambda broker, src, msg: broker.shares.on_state_response(msg),
    ShareGroupStateSummaryResponse: lambda broker, src, msg: broker.shares.on_state_response(msg),
}
