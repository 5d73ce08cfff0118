"""The transaction coordinator: ``transactional.id`` -> producer id and epoch, the partitions in
the open transaction, and the two-phase protocol that ends it.

- ``init_producer_id``: the same transactional id always maps to the same producer id; every
  call bumps the epoch, which *fences* the previous instance (a zombie): its requests carry an
  older epoch and are refused with ``ProducerFenced``. If that instance left a transaction open,
  it is aborted first.
- ``add_partitions`` records every partition the transaction writes to (and the offsets
  partition for ``send_offsets_to_transaction``).
- ``end_txn``: the decision (PrepareCommit / PrepareAbort) is written to ``__transaction_state``
  and replicated *before* the producer is answered - from then on the outcome is certain even if
  this broker dies. Then a COMMIT or ABORT marker is written to every partition of the
  transaction, and the transaction is complete.
- A transaction open longer than ``transaction_timeout_ms`` is aborted (and its producer fenced).

Transactions v2 (KIP-890, ``transaction.version=2``, chosen per request by the client's versions
as on Kafka: a kafka-python producer keeps v1 on a v2 cluster): the partition leaders add the
partitions (:mod:`.txn_verification`) with the producer's *current* epoch only, and EndTxn v5
bumps the epoch at every transaction's end - the markers carry the new epoch, so a late write of
the finished transaction is refused at its partition, and the producer is answered the new epoch
for its next transaction. (Kafka: ``TransactionCoordinator.endTransaction`` with
``clientTransactionVersion.supportsEpochBump()``, ``TransactionMetadata.prepareAbortOrCommit``.)

Taught in notebooks/06_transactions.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Callable, ClassVar

from kafka import errors as Errors

from .coordinator_log import CoordinatorLog
from .protocol import (
    AddPartitionsToTxnRequest,
    EndTxnRequest,
    InitTxnProducerIdRequest,
    TxnRequest,
    WriteTxnMarker,
    node_name,
)

TXN_TOPIC = "__transaction_state"
MARKER_RETRY_MS = 100


@dataclass(frozen=True)
class TxnMetadata:
    producer_id: int
    producer_epoch: int
    timeout_ms: float
    state: str = "Empty"  # Empty / Ongoing / PrepareCommit / PrepareAbort / CompleteCommit / CompleteAbort
    partitions: frozenset = field(default_factory=frozenset)
    started_ms: float = 0.0


class TxnCoordinator(CoordinatorLog):
    TOPIC = TXN_TOPIC

    def __init__(self, broker):
        super().__init__(broker)
        self.reset()
        self._corr = 0
        self._checking = False
        self._markers_in_flight: dict[int, tuple] = {}  # corr -> (transactional id, metadata, tp)

    def reset(self) -> None:
        self.txns: dict[str, TxnMetadata] = {}
        self.markers_pending: dict[str, set] = {}  # tid -> partitions still without their marker
        self.writing: set[str] = set()  # ids with a state change on its way to the log

    def apply(self, stored) -> None:
        for record in stored.batch.records:
            self.txns[record.key] = record.value

    def refresh(self) -> bool:
        fresh = self._epoch is None or (self.partition() is not None and self._epoch != self.partition().leader_epoch)
        ok = super().refresh()
        if ok and fresh:  # a new coordinator finishes what the old one decided
            for tid, meta in sorted(self.txns.items()):
                if meta.state in ("PrepareCommit", "PrepareAbort") and tid not in self.markers_pending:
                    self._write_markers(tid, meta)
        return ok

    # ---- requests ------------------------------------------------------------------------------
    def handle(self, src: str, req: TxnRequest) -> None:
        if not self.refresh():
            return self.respond(src, req, Errors.NotCoordinatorError)
        if req.transactional_id in self.writing or self._markers_outstanding(req):
            # one state change at a time per transactional id, as Kafka's pending-state check
            return self.respond(src, req, Errors.ConcurrentTransactionsError)
        self._ensure_checking()
        self.HANDLERS[type(req)](self, src, req)

    def _markers_outstanding(self, req: TxnRequest) -> bool:
        """Kafka's ``pendingTransitionInProgress`` while a decided transaction's markers are
        written (its state pending CompleteCommit/CompleteAbort): CONCURRENT_TRANSACTIONS before
        the producer id and epoch are looked at - so a transactions-v2 producer's request with
        the epoch the commit just bumped is not fenced. Only EndTxn v1 checks them first
        (``TransactionCoordinator.endTransaction``: the id, the epoch, then the pending state)."""
        if req.transactional_id not in self.markers_pending:
            return False
        return not (isinstance(req, EndTxnRequest) and req.transaction_version < 2)

    def _change(self, tid: str, meta: TxnMetadata, then) -> None:
        """Write ``tid``'s new state; ``then(error)`` once it is replicated (or refused)."""
        self.writing.add(tid)

        def written(error):
            self.writing.discard(tid)
            then(error)

        self.write([(tid, meta)], written)

    def _fenced(self, tid, producer_id, producer_epoch):
        meta = self.txns.get(tid)
        if meta is None or meta.producer_id != producer_id:
            return Errors.InvalidProducerIdMappingError
        if producer_epoch < meta.producer_epoch:
            return Errors.ProducerFencedError
        if meta.state in ("PrepareCommit", "PrepareAbort"):
            return Errors.ConcurrentTransactionsError
        return None

    def _init_producer_id(self, src: str, req: InitTxnProducerIdRequest) -> None:
        transactional_id, transaction_timeout_ms = req.transactional_id, req.transaction_timeout_ms
        meta = self.txns.get(transactional_id)
        if meta is not None and meta.state in ("PrepareCommit", "PrepareAbort"):
            return self.respond(src, req, Errors.ConcurrentTransactionsError)
        if meta is not None and meta.state == "Ongoing":
            self._abort(transactional_id, meta, reason="a new instance called init_transactions()")
            return self.respond(src, req, Errors.ConcurrentTransactionsError)  # the client retries
        if meta is None:
            pid, _ = self.broker.cluster.controller.allocate_producer_id()
            meta = TxnMetadata(pid, 0, transaction_timeout_ms)
        else:
            meta = replace(
                meta,
                producer_epoch=meta.producer_epoch + 1,
                timeout_ms=transaction_timeout_ms,
                state="Empty",
                partitions=frozenset(),
            )
        self._change(
            transactional_id,
            meta,
            lambda err: self.respond(
                src,
                req,
                err and Errors.CoordinatorNotAvailableError,
                None if err else {"producer_id": meta.producer_id, "producer_epoch": meta.producer_epoch},
            ),
        )

    def _fenced_v2(self, tid, producer_id, producer_epoch):
        """Transactions v2's strict check: only the current epoch may act (Kafka 4.2+)."""
        error = self._fenced(tid, producer_id, producer_epoch)
        if error is None and producer_epoch != self.txns[tid].producer_epoch:
            return Errors.ProducerFencedError
        return error

    def _add_partitions(self, src: str, req: AddPartitionsToTxnRequest) -> None:
        transactional_id = req.transactional_id
        v2 = req.transaction_version >= 2
        fenced = self._fenced_v2 if v2 else self._fenced
        error = fenced(transactional_id, req.producer_id, req.producer_epoch)
        if error is not None:
            return self.respond(src, req, error)
        meta = self.txns[transactional_id]
        if v2 and meta.state == "Ongoing" and {tuple(tp) for tp in req.partitions} <= meta.partitions:
            return self.respond(src, req)  # already in the transaction: nothing to write
        started = meta.started_ms if meta.state == "Ongoing" else self.broker.sim.now
        new = replace(
            meta, state="Ongoing", partitions=meta.partitions | {tuple(tp) for tp in req.partitions}, started_ms=started
        )
        self._change(
            transactional_id, new, lambda err: self.respond(src, req, err and Errors.CoordinatorNotAvailableError)
        )

    def _end_txn(self, src: str, req: EndTxnRequest) -> None:
        if req.transaction_version >= 2:
            return self._end_txn_v2(src, req)
        transactional_id, commit = req.transactional_id, req.commit
        producer_id, producer_epoch = req.producer_id, req.producer_epoch
        meta = self.txns.get(transactional_id)
        if meta is not None and meta.producer_id == producer_id and meta.producer_epoch == producer_epoch:
            if meta.state == ("CompleteCommit" if commit else "CompleteAbort"):
                return self.respond(src, req)  # a retry of a request that already succeeded
            # a retry while its markers are written: CONCURRENT_TRANSACTIONS (_fenced), the client
            # asks again until they are (TransactionCoordinator.endTransaction with transactions v1)
        error = self._fenced(transactional_id, producer_id, producer_epoch)
        if error is not None:
            return self.respond(src, req, error)
        assert meta is not None  # _fenced refuses an unknown transactional id
        if meta.state != "Ongoing":
            if not commit or not meta.partitions:
                return self.respond(src, req)  # nothing was written: nothing to commit or abort
            return self.respond(src, req, Errors.InvalidTxnStateError)
        prepared = replace(meta, state="PrepareCommit" if commit else "PrepareAbort")

        def decided(err):
            if err is not None:
                return self.respond(src, req, Errors.CoordinatorNotAvailableError)
            self.respond(src, req)
            self._write_markers(transactional_id, prepared)

        self._change(transactional_id, prepared, decided)

    def _end_txn_v2(self, src: str, req: EndTxnRequest) -> None:
        """EndTxn v5: the decision is written with the epoch bumped, and answered with it."""
        tid, commit = req.transactional_id, req.commit
        meta = self.txns.get(tid)
        if meta is None or meta.producer_id != req.producer_id:
            return self.respond(src, req, Errors.InvalidProducerIdMappingError)
        wanted, complete = ("PrepareCommit", "CompleteCommit") if commit else ("PrepareAbort", "CompleteAbort")

        def new_id(m: TxnMetadata) -> dict:
            return {"producer_id": m.producer_id, "producer_epoch": m.producer_epoch}

        if req.producer_epoch == meta.producer_epoch - 1 and meta.state in (wanted, complete):
            return self.respond(src, req, None, new_id(meta))  # a retry of the request that ended it
        if req.producer_epoch != meta.producer_epoch:
            return self.respond(src, req, Errors.ProducerFencedError)
        if meta.state in ("PrepareCommit", "PrepareAbort"):
            return self.respond(src, req, Errors.ConcurrentTransactionsError)
        if meta.state != "Ongoing" and commit:
            return self.respond(src, req, Errors.InvalidTxnStateError)
        # Ongoing, or an abort with nothing ongoing: v2 still bumps, fencing writes in flight
        prepared = replace(meta, producer_epoch=meta.producer_epoch + 1, state=wanted)

        def decided(err):
            if err is not None:
                return self.respond(src, req, Errors.CoordinatorNotAvailableError)
            self.respond(src, req, None, new_id(prepared))
            self._write_markers(tid, prepared)

        self._change(tid, prepared, decided)

    #: request class -> its handler (the broker sends this coordinator every class named here)
    HANDLERS: ClassVar[dict[type, Callable[[Any, str, Any], None]]] = {
        InitTxnProducerIdRequest: _init_producer_id,
        AddPartitionsToTxnRequest: _add_partitions,
        EndTxnRequest: _end_txn,
    }

    def _abort(self, tid: str, meta: TxnMetadata, reason: str) -> None:
        """Abort with a bumped epoch: the markers themselves fence the old producer."""
        prepared = replace(meta, producer_epoch=meta.producer_epoch + 1, state="PrepareAbort")
        self.broker.cluster.record(
            f"coordinator-{self.broker.broker_id}", "txn_abort", {"transactional_id": tid, "reason": reason}
        )

        def written(err) -> None:
            if err is None:
                self._write_markers(tid, prepared)

        self._change(tid, prepared, written)

    # ---- markers -----------------------------------------------------------------------------------
    def _write_markers(self, tid: str, meta: TxnMetadata) -> None:
        self.markers_pending[tid] = set(meta.partitions)
        for tp in sorted(meta.partitions):
            self._send_marker(tid, meta, tp)
        if not meta.partitions:
            self._complete(tid, meta)

    def _send_marker(self, tid, meta, tp) -> None:
        if tid not in self.markers_pending or tp not in self.markers_pending[tid] or self.partition() is None:
            return
        state = self.broker.metadata.get(tp)
        if state is None and self.broker.live_brokers is not None and tp[0] not in self.broker.topic_configs:
            # the topic was deleted: no marker to write (TransactionMarkerChannelManager skips
            # partitions whose leader it cannot find, "likely deleted already")
            return self._marker_written(tid, meta, tp)
        if state is None or state.leader is None:
            self.broker.schedule_timer(MARKER_RETRY_MS, self._send_marker, tid, meta, tp)
            return
        self._corr += 1
        corr = self._corr
        self._markers_in_flight[corr] = (tid, meta, tp)
        self.broker.send(
            node_name(state.leader),
            WriteTxnMarker(corr, tp, meta.producer_id, meta.producer_epoch, meta.state == "PrepareCommit"),
        )
        self.broker.schedule_timer(3000, self._marker_timeout, corr)

    def _marker_timeout(self, corr) -> None:
        entry = self._markers_in_flight.pop(corr, None)
        if entry is not None:
            self._send_marker(*entry)

    def on_marker_response(self, resp) -> None:
        entry = self._markers_in_flight.pop(resp.corr, None)
        if entry is None:
            return
        tid, meta, tp = entry
        if resp.error is not None:
            self.broker.schedule_timer(MARKER_RETRY_MS, self._send_marker, tid, meta, tp)
            return
        self._marker_written(tid, meta, tp)

    def _marker_written(self, tid, meta, tp) -> None:
        pending = self.markers_pending.get(tid)
        if pending is not None:
            pending.discard(tp)
            if not pending:
                self._complete(tid, meta)

    def _complete(self, tid: str, meta: TxnMetadata) -> None:
        self.markers_pending.pop(tid, None)
        done = replace(
            meta, state="CompleteCommit" if meta.state == "PrepareCommit" else "CompleteAbort", partitions=frozenset()
        )
        self._change(tid, done, lambda err: None)

    # ---- timeouts ------------------------------------------------------------------------------------
    def _ensure_checking(self) -> None:
        if not self._checking:
            self._checking = True
            self.broker.schedule_timer(
                self.broker.options.transaction_abort_timed_out_transaction_cleanup_interval_ms, self._check_timeouts
            )

    def _check_timeouts(self) -> None:
        self._checking = False
        if not self.refresh():
            return
        now = self.broker.sim.now
        for tid, meta in sorted(self.txns.items()):
            if meta.state == "Ongoing" and now - meta.started_ms > meta.timeout_ms:
                self._abort(tid, meta, reason=f"open longer than transaction_timeout_ms={meta.timeout_ms:g}")
        if any(m.state not in ("CompleteCommit", "CompleteAbort", "Empty") for m in self.txns.values()):
            self._ensure_checking()


def markers_written(cluster) -> bool:
    """Every decided transaction of ``cluster`` (a :class:`~course_lib.broker.Cluster`) has its
    markers written and its completion with them (Kafka writes them after EndTxn is answered)."""
    for broker in cluster.brokers.values():
        txns = broker.txns
        if broker.alive and (
            txns.markers_pending or any(m.state in ("PrepareCommit", "PrepareAbort") for m in txns.txns.values())
        ):
            return False
    return True
