"""One replica of a partition on one broker, as leader or follower.

Leader side (Kafka's ``Partition`` + ``ReplicaManager``):

- appends produce batches, checks ``min.insync.replicas`` for ``acks=all`` *before* appending
  (``NotEnoughReplicas``) and again when the request completes (``NotEnoughReplicasAfterAppend``);
  the *effective* min ISR is ``min(min.insync.replicas, replication factor)``;
- learns each follower's LEO from the offset it fetches from, and from that the high watermark:
  the smallest LEO in the ISR. An ``acks=all`` request waits in "purgatory" until the HW passes
  its batch;
- never advances the HW while the ISR is smaller than the effective min ISR (KAFKA-15583,
  Kafka >= 3.7: ``Partition.maybeIncrementLeaderHW``). Records written then - with ``acks=1`` or
  ``acks=0`` - are acknowledged but no consumer can read them, and an ``acks=all`` request already
  in purgatory times out (``RequestTimedOut``) instead of completing. That rule is what makes
  the controller's Eligible Leader Replicas (KIP-966) safe: nothing above the HW is promised;
- removes a follower from the ISR when it has not caught up for ``replica.lag.time.max.ms`` and
  adds it back once it reaches the HW - both by asking the controller (AlterPartition), which
  may refuse a leader that has been replaced;
- parks a follower's fetch that finds no new data until data arrives or ``replica.fetch.wait.max.ms``
  passes (long polling);
- answers a fetch whose last epoch diverges from its own history with the epoch and offset where
  they part, so the follower truncates.

Follower side: fetches from the leader in a loop, appends what it gets, takes the leader's HW
(capped by its own LEO), truncates when told it diverged.

Taught in notebooks/01_replicated_log and notebooks/02_acks_and_durability.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from kafka import errors as Errors

from ..sim.deadline import Deadline
from .log import PartitionLog
from .producer_state import ProducerStateTable
from .protocol import (
    AlterPartition,
    ConsumerFetchResponse,
    FetchRequest,
    FetchResponse,
    ListOffsetsResponse,
    OffsetsForLeaderEpochResponse,
    PartitionResult,
    PartitionState,
    Record,
    RecordBatch,
    TopicConfig,
)
from .txn_index import TxnIndex

FETCH_MAX_BATCHES = 64


@dataclass
class FollowerState:
    leo: int = -1  # unknown until the follower fetches from this leader
    last_caught_up_ms: float = 0.0
    last_fetch_ms: float = 0.0
    leader_leo_at_last_fetch: int = 0


@dataclass
class DelayedProduce:
    """An ``acks=all`` append waiting for the high watermark to pass ``required_offset``."""

    required_offset: int
    base_offset: int
    deadline_ms: float
    done: Callable[[PartitionResult], None]
    evidence: dict


class Partition:
    def __init__(self, broker, tp, config: TopicConfig, topic_id: int = 0):
        self.broker = broker
        self.tp = tp
        self.config = config
        self.topic_id = topic_id  # kept with the log (Kafka's partition.metadata file)
        self.log = PartitionLog()
        self.producers = ProducerStateTable()
        self.txn = TxnIndex()
        self.consumers_waiting: list[tuple] = []  # parked consumer fetches: (src, request, deadline)
        self.state: PartitionState | None = None
        self.is_leader = False
        self.leader_epoch = -1
        self.leader_id: int | None = None
        # leader side
        self.isr: tuple = ()
        self.pending_isr: tuple | None = None
        self.pending_since_ms = 0.0
        self.followers: dict[int, FollowerState] = {}
        self.delayed: list[DelayedProduce] = []
        self.parked: dict[int, tuple] = {}  # follower -> (request, deadline)
        self.park_expiry = Deadline(broker.schedule_timer, lambda: self.sim.now, self._expire_parked)
        self.produce_expiry = Deadline(broker.schedule_timer, lambda: self.sim.now, self._expire_delayed)
        # follower side
        self.fetch_generation = 0
        self.fetch_timeout = Deadline(broker.schedule_timer, lambda: self.sim.now, self._fetch_timed_out)

    # ---- helpers --------------------------------------------------------------------------
    @property
    def sim(self):
        return self.broker.sim

    @property
    def me(self) -> int:
        return self.broker.broker_id

    @property
    def maximal_isr(self) -> tuple:
        """ISR used for the HW: a pending expansion already counts, a pending shrink not yet."""
        if self.pending_isr is None:
            return self.isr
        return tuple(sorted(set(self.isr) | set(self.pending_isr)))

    @property
    def effective_min_isr(self) -> int:
        """``min(min.insync.replicas, replicas)``: Kafka's ``Partition.effectiveMinIsr``."""
        replicas = len(self.state.replicas) if self.state is not None else self.config.replication_factor
        return min(self.config.min_insync_replicas, replicas)

    @property
    def under_min_isr(self) -> bool:
        return len(self.isr) < self.effective_min_isr

    def evidence(self) -> dict:
        return {
            "leader": self.me,
            "leader_epoch": self.leader_epoch,
            "hw": self.log.hw,
            "leo": self.log.leo,
            "isr": list(self.isr),
        }

    # ---- role changes -----------------------------------------------------------------------
    def apply_state(self, state: PartitionState) -> None:
        """The controller's decision reached this broker."""
        old = self.state
        self.state = state
        if state.leader == self.me:
            if not self.is_leader or state.leader_epoch != self.leader_epoch:
                self.become_leader(state)
            else:
                self.isr = state.isr
                if self.pending_isr is not None and set(self.pending_isr) == set(state.isr):
                    self.pending_isr = None
                self.maybe_advance_hw()
        else:
            if (
                self.is_leader
                or old is None
                or state.leader_epoch != self.leader_epoch
                or state.leader != self.leader_id
            ):
                self.become_follower(state)

    def become_leader(self, state: PartitionState) -> None:
        self.is_leader = True
        self.leader_epoch = state.leader_epoch
        self.leader_id = self.me
        self.isr = state.isr
        self.pending_isr = None
        self.log.assign_epoch(state.leader_epoch)
        now = self.sim.now
        self.followers = {
            r: FollowerState(last_caught_up_ms=now if r in state.isr else 0.0) for r in state.replicas if r != self.me
        }
        self.fetch_generation += 1
        self.fetch_timeout.disarm()
        self.maybe_advance_hw()
        self.broker.schedule_isr_check(self)

    def become_follower(self, state: PartitionState) -> None:
        self._resign(Errors.NotLeaderForPartitionError)
        self.is_leader = False
        self.leader_epoch = state.leader_epoch
        self.leader_id = state.leader
        self.fetch_generation += 1
        self.fetch_timeout.disarm()
        if state.leader is not None and self.me in state.replicas:
            self.send_fetch()

    def _resign(self, error) -> None:
        delayed, self.delayed = self.delayed, []
        for d in delayed:
            d.done(PartitionResult(error, -1, d.evidence))
        self.parked.clear()
        self.park_expiry.disarm()
        self.pending_isr = None

    def crash(self) -> None:
        """The process died: in-memory state goes, the log (on disk) stays."""
        for deadline in (self.park_expiry, self.produce_expiry, self.fetch_timeout):
            deadline.reset()
        self.delayed = []
        self.parked.clear()
        self.consumers_waiting = []
        self.is_leader = False
        self.leader_id = None
        self.state = None
        self.pending_isr = None
        self.fetch_generation += 1

    def delete(self) -> None:
        """The topic was deleted (``ReplicaManager.stopPartitions(delete=true)``): what waits here
        gets ``UNKNOWN_TOPIC_OR_PARTITION``, the timers stop, the broker drops the log."""
        self._resign(Errors.UnknownTopicOrPartitionError)
        waiting, self.consumers_waiting = self.consumers_waiting, []
        for src, req, _ in waiting:
            self.broker.send(src, ConsumerFetchResponse(req.corr, self.tp, Errors.UnknownTopicOrPartitionError))
        self.crash()

    def recover(self) -> None:
        """Restart: rebuild the producer-state table and transaction index from the log."""
        self.producers.rebuild(self.log.batches)
        self.txn.rebuild(self.log.batches)
        self.log.hw = min(self.log.hw, self.log.leo)

    def _appended(self, stored) -> None:
        """Bookkeeping every replica does for every batch it appends, leader or follower."""
        self.producers.update(stored)
        self.txn.on_append(stored)

    # ---- leader: produce ----------------------------------------------------------------------
    def append(self, batch: RecordBatch, acks: int, timeout_ms: float, done: Callable[[PartitionResult], None]) -> None:
        if not self.is_leader:
            return done(PartitionResult(Errors.NotLeaderForPartitionError))
        if acks == -1 and self.under_min_isr:
            return done(PartitionResult(Errors.NotEnoughReplicasError, -1, self.evidence()))
        error, duplicate_of = self.producers.check(batch)
        if error is not None:
            return done(PartitionResult(error, -1, self.evidence()))
        if duplicate_of is not None:
            base = duplicate_of
            evidence = {**self.evidence(), "duplicate": True}
        else:
            stored = self.log.append(batch, self.leader_epoch)
            self._appended(stored)
            base = stored.base_offset
            evidence = self.evidence()
            self._wake_parked_fetches()
            self.maybe_advance_hw()
        required = base + len(batch.records)
        if acks != -1:
            return done(PartitionResult(None, base, evidence))
        if self.log.hw >= required:
            return self._complete(DelayedProduce(required, base, 0, done, evidence))
        deadline = self.sim.now + timeout_ms
        self.delayed.append(DelayedProduce(required, base, deadline, done, evidence))
        if deadline < self.produce_expiry.at:
            self.produce_expiry.arm(deadline)

    def _complete(self, d: DelayedProduce) -> None:
        evidence = {**d.evidence, "hw": self.log.hw, "isr": list(self.isr)}
        if len(self.maximal_isr) < self.effective_min_isr:
            d.done(PartitionResult(Errors.NotEnoughReplicasAfterAppendError, d.base_offset, evidence))
        else:
            d.done(PartitionResult(None, d.base_offset, evidence))

    def _expire_delayed(self) -> None:
        now = self.sim.now
        keep = []
        for d in self.delayed:
            if d.deadline_ms <= now:
                d.done(PartitionResult(Errors.RequestTimedOutError, d.base_offset, d.evidence))
            else:
                keep.append(d)
        self.delayed = keep
        if keep:
            self.produce_expiry.arm(min(d.deadline_ms for d in keep))

    def maybe_advance_hw(self) -> None:
        if not self.is_leader or self.under_min_isr:
            return  # KAFKA-15583: under min ISR the HW stays where it is
        hw = self.log.leo
        followers = self.followers
        for r in self.maximal_isr:
            if r != self.me:
                leo = followers[r].leo if r in followers else -1
                if leo < hw:
                    hw = leo
        if hw > self.log.hw:
            self.log.hw = hw
            if self.consumers_waiting:
                self._wake_consumers()
            if self.broker.shares.parked:  # share fetches waiting for records (share groups only)
                self.broker.shares.wake(self.tp)
            if self.delayed:
                waiting = []
                for d in self.delayed:
                    if d.required_offset <= hw:
                        self._complete(d)
                    else:
                        waiting.append(d)
                self.delayed = waiting

    # ---- leader: followers ----------------------------------------------------------------------
    def handle_fetch(self, src: str, req: FetchRequest) -> None:
        if req.topic_id != self.topic_id:  # a replica of a deleted topic of the same name
            return self.broker.send(src, FetchResponse(self.tp, req.generation, Errors.InconsistentTopicIdError))
        if not self.is_leader or req.leader_epoch != self.leader_epoch:
            error = (
                Errors.NotLeaderForPartitionError
                if not self.is_leader
                else Errors.FencedLeaderEpochError
                if req.leader_epoch < self.leader_epoch
                else Errors.UnknownLeaderEpochError
            )
            return self.broker.send(src, FetchResponse(self.tp, req.generation, error))
        if req.last_fetched_epoch >= 0:
            epoch, end = self.log.end_offset_for_epoch(req.last_fetched_epoch)
            if epoch != req.last_fetched_epoch or end < req.fetch_offset:
                return self.broker.send(
                    src, FetchResponse(self.tp, req.generation, diverging=(epoch, end), high_watermark=self.log.hw)
                )
        follower = self.followers.setdefault(req.replica_id, FollowerState())
        now = self.sim.now
        offset = req.fetch_offset
        if offset >= self.log.leo:
            follower.last_caught_up_ms = now
        elif offset >= follower.leader_leo_at_last_fetch:
            follower.last_caught_up_ms = max(follower.last_caught_up_ms, follower.last_fetch_ms)
        follower.leo = offset
        follower.leader_leo_at_last_fetch = self.log.leo
        follower.last_fetch_ms = now
        self.maybe_expand_isr(req.replica_id)
        self.maybe_advance_hw()
        if offset < self.log.leo:
            self._answer_fetch(src, req)
        else:
            deadline = now + req.max_wait_ms
            self.parked[req.replica_id] = (req, deadline)
            if deadline < self.park_expiry.at:
                self.park_expiry.arm(deadline)

    def _answer_fetch(self, src: str, req: FetchRequest) -> None:
        batches = self.log.read(req.fetch_offset, FETCH_MAX_BATCHES)
        self.broker.send(
            src,
            FetchResponse(self.tp, req.generation, None, batches, self.log.hw, log_start_offset=self.log.start_offset),
        )

    def _expire_parked(self) -> None:
        """replica.fetch.wait.max.ms passed: answer the parked fetches, empty."""
        now = self.sim.now
        for replica_id, (req, deadline) in sorted(self.parked.items()):
            if deadline <= now:
                del self.parked[replica_id]
                self._answer_fetch(self.broker.node_of(replica_id), req)
        if self.parked:
            self.park_expiry.arm(min(d for _, d in self.parked.values()))

    def _wake_parked_fetches(self) -> None:
        if self.parked:
            parked, self.parked = self.parked, {}
            self.park_expiry.disarm()
            for replica_id, (req, _) in parked.items():
                self._answer_fetch(self.broker.node_of(replica_id), req)

    def maybe_expand_isr(self, replica_id: int) -> None:
        if replica_id in self.isr or self.pending_isr is not None:
            return
        follower = self.followers[replica_id]
        epoch_start = self.log.epochs[-1][1] if self.log.epochs else 0
        if follower.leo >= self.log.hw and follower.leo >= epoch_start:
            self._propose_isr(tuple(sorted(self.isr + (replica_id,))))

    def check_isr(self) -> None:
        """Periodic: drop followers that have not caught up within replica.lag.time.max.ms."""
        if not self.is_leader:
            return
        now = self.sim.now
        if self.pending_isr is not None:
            if now - self.pending_since_ms < self.broker.options.alter_partition_timeout_ms:
                return
            self.pending_isr = None  # the controller never answered: try again
        lag_max = self.broker.options.replica_lag_time_max_ms
        out = [r for r in self.isr if r != self.me and now - self.followers[r].last_caught_up_ms > lag_max]
        if out:
            self._propose_isr(tuple(r for r in self.isr if r not in out))

    def _propose_isr(self, isr: tuple) -> None:
        self.pending_isr = isr
        self.pending_since_ms = self.sim.now
        assert self.state is not None, "only a leader (which has the controller's state) proposes an ISR"
        self.broker.send_controller(
            AlterPartition(self.tp, self.me, self.leader_epoch, self.state.partition_epoch, isr, self.topic_id)
        )

    def on_alter_partition_response(self, src: str, resp) -> None:
        self.pending_isr = None
        if resp.error is None or resp.state.leader_epoch == self.leader_epoch:
            self.apply_state(resp.state)

    # ---- follower --------------------------------------------------------------------------------
    def send_fetch(self) -> None:
        if self.is_leader or self.leader_id is None or not self.broker.alive:
            return
        generation = self.fetch_generation
        req = FetchRequest(
            self.me,
            self.tp,
            self.log.leo,
            self.log.last_epoch,
            self.leader_epoch,
            generation,
            self.broker.options.replica_fetch_wait_max_ms,
            self.topic_id,
        )
        self.broker.send(self.broker.node_of(self.leader_id), req)
        options = self.broker.options
        self.fetch_timeout.arm(self.sim.now + options.replica_fetch_wait_max_ms + options.replica_socket_timeout_ms)

    def _fetch_timed_out(self) -> None:
        """No answer (lost in the network) or the back-off after an error ended: fetch again."""
        if not self.is_leader:
            self.fetch_generation += 1
            self.send_fetch()

    def retry_fetch_later(self) -> None:
        self.fetch_generation += 1
        self.fetch_timeout.arm(self.sim.now + self.broker.options.replica_fetch_backoff_ms)

    def on_fetch_response(self, src: str, resp: FetchResponse) -> None:
        if resp.generation != self.fetch_generation or self.is_leader:
            return  # an answer to a fetch from an earlier leader or incarnation
        self.fetch_timeout.disarm()
        if resp.error is not None:
            return self.retry_fetch_later()
        log = self.log
        if resp.diverging is not None:
            epoch, end = resp.diverging
            own_end = log.end_offset_for_epoch(epoch)[1]
            removed = log.truncate(max(min(end, own_end), 0))
            if removed:
                self.producers.rebuild(log.batches)
                self.txn.rebuild(log.batches)
                self.broker.on_truncate(self, removed)
            return self.send_fetch()
        for stored in resp.batches:
            if stored.next_offset <= log.leo:
                continue
            log.append_replicated(stored)
            self._appended(stored)
        hw = min(resp.high_watermark, log.leo)
        if hw > log.hw:
            log.hw = hw
        log.advance_start(resp.log_start_offset)  # Kafka's follower: maybeIncrementLogStartOffset
        self.send_fetch()

    # ---- leader: consumers -----------------------------------------------------------------------
    def readable_end(self, read_committed: bool) -> int:
        """Consumers read below the high watermark; read_committed ones below the LSO."""
        return self.txn.last_stable_offset(self.log.hw) if read_committed else self.log.hw

    def handle_consumer_fetch(self, src: str, req) -> None:
        if not self.is_leader:
            return self.broker.send(src, ConsumerFetchResponse(req.corr, self.tp, Errors.NotLeaderForPartitionError))
        if req.fetch_offset > self.log.leo or req.fetch_offset < self.log.start_offset:
            return self.broker.send(src, ConsumerFetchResponse(req.corr, self.tp, Errors.OffsetOutOfRangeError))
        if req.fetch_offset >= self.readable_end(req.read_committed) and req.max_wait_ms > 0:
            self.consumers_waiting.append((src, req, self.sim.now + req.max_wait_ms))
            self.broker.schedule_timer(req.max_wait_ms, self._consumer_wait_over, req)
            return
        self._answer_consumer(src, req)

    def _answer_consumer(self, src: str, req) -> None:
        end = self.readable_end(req.read_committed)
        batches = self.log.read(req.fetch_offset, FETCH_MAX_BATCHES, below=end) if req.fetch_offset < end else []
        aborted = self.txn.aborted_in(req.fetch_offset, end) if req.read_committed else []
        self.broker.send(
            src,
            ConsumerFetchResponse(
                req.corr, self.tp, None, batches, self.log.hw, self.txn.last_stable_offset(self.log.hw), aborted
            ),
        )

    def _consumer_wait_over(self, req) -> None:
        for i, (src, waiting, _) in enumerate(self.consumers_waiting):
            if waiting is req:
                del self.consumers_waiting[i]
                return self._answer_consumer(src, req)

    def _wake_consumers(self) -> None:
        waiting, self.consumers_waiting = self.consumers_waiting, []
        for src, req, deadline in waiting:
            if req.fetch_offset < self.readable_end(req.read_committed):
                self._answer_consumer(src, req)
            else:
                self.consumers_waiting.append((src, req, deadline))

    def list_offsets(self, src: str, req) -> None:
        if not self.is_leader:
            return self.broker.send(src, ListOffsetsResponse(req.corr, self.tp, Errors.NotLeaderForPartitionError, -1))
        offset = self.readable_end(req.read_committed) if req.latest else self.log.start_offset
        self.broker.send(src, ListOffsetsResponse(req.corr, self.tp, None, offset))

    def offsets_for_leader_epoch(self, src: str, req) -> None:
        """KIP-320: the largest epoch <= ``req.epoch`` in this leader's log and where it ended."""
        if not self.is_leader:
            return self.broker.send(
                src, OffsetsForLeaderEpochResponse(req.corr, self.tp, Errors.NotLeaderForPartitionError)
            )
        epoch, end = self.log.end_offset_for_epoch(req.epoch)
        self.broker.send(src, OffsetsForLeaderEpochResponse(req.corr, self.tp, None, epoch, end))

    # ---- leader: transaction markers ---------------------------------------------------------------
    def write_marker(self, producer_id: int, producer_epoch: int, commit: bool, done) -> None:
        """Append a COMMIT/ABORT control record for ``producer_id``; ``done(error)`` once replicated."""
        if not self.is_leader:
            return done(Errors.NotLeaderForPartitionError)
        if self.under_min_isr:  # markers are written with acks=all (ReplicaManager.appendRecords(-1))
            return done(Errors.NotEnoughReplicasError)
        entry = self.producers.entries.get(producer_id)
        if entry is not None and producer_epoch < entry.epoch:
            return done(Errors.InvalidProducerEpochError)
        marker = RecordBatch(
            [Record(None, None, self.sim.now)], producer_id, producer_epoch, -1, True, "commit" if commit else "abort"
        )
        stored = self.log.append(marker, self.leader_epoch)
        self._appended(stored)
        self._wake_parked_fetches()
        self.maybe_advance_hw()
        if self.consumers_waiting:
            self._wake_consumers()  # the LSO may have moved past the transaction
        required = stored.next_offset
        if self.log.hw >= required:
            return done(None)
        self.delayed.append(
            DelayedProduce(required, stored.base_offset, self.sim.now + 30_000, lambda result: done(result.error), {})
        )
        self.produce_expiry.arm(min(d.deadline_ms for d in self.delayed))
