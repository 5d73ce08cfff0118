"""The transactional producer's methods, with kafka-python's names and state rules.

``init_transactions()`` registers the ``transactional_id`` with its coordinator and gets the
producer id and a new epoch - fencing any older instance. ``begin_transaction()``, then
``send()`` (each new partition is added to the transaction before its first batch goes out),
optionally ``send_offsets_to_transaction()`` (the consumer's offsets become part of the
transaction), then ``commit_transaction()`` or ``abort_transaction()``.

Calling them in the wrong order raises what kafka-python 3.0.12 raises: a plain ``KafkaError``
("Invalid transition attempted from state ... to state ...", its ``TransactionManager._transition_to``)
from ``begin``/``commit``/``abort``, ``KafkaError`` from ``send_offsets_to_transaction()`` outside a
transaction, ``IllegalStateError`` from ``send()`` outside one and from any of them without a
``transactional_id``; a second ``init_transactions()`` after one that succeeded returns at once.
A fenced producer gets ``ProducerFencedError`` from the call that learnt it, and kafka-python's
``KafkaError("Cannot execute transactional method because we are in an error state: ...")``
from every later one; it can only be closed.

With ``transaction_version=2`` (and a cluster whose ``transaction.version`` is 2) the producer
speaks transactions v2 (KIP-890) as the Java client 4.3.1 does: no AddPartitionsToTxn (the
partition leaders add the partitions by the produce request), no AddOffsetsToTxn (TxnOffsetCommit
v5 adds the offsets partition), and EndTxn v5 answers a bumped epoch that the next transaction
uses (sequence numbers start again at 0).

Taught in notebooks/06_transactions.
"""

from __future__ import annotations

from typing import Any, Callable

from kafka import errors as Errors
from kafka.structs import ConsumerGroupMetadata, OffsetAndMetadata

from ..broker.group_coordinator import OFFSETS_TOPIC
from ..broker.protocol import (
    AddPartitionsToTxnRequest,
    EndTxnRequest,
    InitTxnProducerIdRequest,
    TxnOffsetCommitRequest,
    TxnRequest,
)
from ..history import FAIL, INFO, OK, OpName

UNINITIALIZED, READY, IN_TRANSACTION, ABORTABLE_ERROR, FATAL_ERROR = (
    "UNINITIALIZED",
    "READY",
    "IN_TRANSACTION",
    "ABORTABLE_ERROR",
    "FATAL_ERROR",
)


class Transactions:
    """Mixed into :class:`course_lib.clients.KafkaProducer`."""

    # provided by the producer (and its Requests mixin); declared for the type checker
    config: dict
    node_id: str
    _cluster: Any
    _next_sequence: dict
    producer_id: int
    producer_epoch: int
    _history: Any
    _accumulator: dict
    _fail: Callable[..., Any]
    _abort_undrained: Callable[..., Any]
    flush: Callable[..., Any]
    _call_coordinator: Callable[..., Any]
    _ask_coordinator: Callable[..., Any]

    @property
    def _transactions_v2(self) -> bool:
        """KIP-890 for this producer: asked for, and finalized by the cluster (as Java reads
        ``transaction.version`` in ApiVersions)."""
        return self.config["transaction_version"] >= 2 and self._cluster.options.transaction_version >= 2

    def _init_transactions_state(self) -> None:
        self.transaction_state = UNINITIALIZED
        self._txn_partitions: set = set()  # added to the current transaction
        self._txn_adding = False
        self._txn_error: Any = None  # the exception that ended the transaction (raised again to callers)
        self._txn_count = 0
        self._initialized = False  # init_transactions() succeeded once: later calls return at once

    def _require_transactional(self, what: str, fail_if_in_error: bool = True) -> str:
        tid = self.config["transactional_id"]
        if tid is None:
            raise Errors.IllegalStateError(
                f"Cannot use {what}() without enabling transactions: create the producer with transactional_id='...'"
            )
        # kafka-python's _maybe_fail_with_error: an abortable error refuses everything but abort
        if fail_if_in_error and self.transaction_state in (ABORTABLE_ERROR, FATAL_ERROR):
            raise self._in_error_state()
        return tid

    def _require_state(self, what: str, target: str, *allowed: str) -> None:
        """kafka-python's ``TransactionManager._transition_to``: a call in the wrong state raises a
        plain ``KafkaError`` (not ``IllegalStateError``), naming the transition it refused."""
        if self.transaction_state not in allowed:
            raise Errors.KafkaError(
                f"TransactionalId {self.config['transactional_id']}: Invalid transition attempted from state "
                f"{self.transaction_state} to state {target} ({what}() is allowed only in {' or '.join(allowed)}; "
                f"the order is init_transactions(), then begin_transaction(), send()..., commit_transaction() "
                f"or abort_transaction())"
            )

    def _txn_call(self, request: TxnRequest):
        try:
            return self._call_coordinator(request, self.config["max_block_ms"])
        except Errors.ProducerFencedError as exc:
            self._fatal(exc)
            raise self._txn_error from None

    def _in_error_state(self) -> Errors.KafkaError:
        """What kafka-python raises from any transactional call after a fatal error (the call that
        met the error itself raised it): ``TransactionManager._maybe_fail_with_error``."""
        return Errors.KafkaError(
            f"Cannot execute transactional method because we are in an error state: {self._txn_error!r}"
        )

    def _fatal(self, exc) -> None:
        """Fenced: nothing this instance still holds may be written; everything queued fails."""
        self.transaction_state = FATAL_ERROR
        self._txn_error = Errors.ProducerFencedError(
            f"{self.config['transactional_id']!r} was fenced: another producer with the same transactional_id "
            f"called init_transactions() (or the transaction timed out). This instance is a zombie: close it."
        )
        for dq in self._accumulator.values():
            while dq:
                self._fail(dq.popleft(), self._txn_error, None)

    # ---- public API ------------------------------------------------------------------------------
    def init_transactions(self):
        tid = self._require_transactional("init_transactions", fail_if_in_error=False)
        if self._initialized:
            # kafka-python keeps the first call's result and only waits on it again: a no-op, in any state
            return
        self._require_state("init_transactions", "INITIALIZING", UNINITIALIZED)
        result = self._txn_call(
            InitTxnProducerIdRequest(transactional_id=tid, transaction_timeout_ms=self.config["transaction_timeout_ms"])
        )
        self.producer_id, self.producer_epoch = result["producer_id"], result["producer_epoch"]
        self._next_sequence.clear()
        self.transaction_state = READY
        self._initialized = True
        self._history.record(
            self.node_id,
            OK,
            OpName.INIT_TRANSACTIONS,
            tid,
            evidence={"producer_id": self.producer_id, "producer_epoch": self.producer_epoch},
        )

    def begin_transaction(self):
        self._require_transactional("begin_transaction")
        self._require_state("begin_transaction", IN_TRANSACTION, READY)
        self.transaction_state = IN_TRANSACTION
        self._txn_partitions = set()
        self._txn_count += 1
        self._history.record(self.node_id, OK, OpName.BEGIN_TRANSACTION, self._txn_count)

    def send_offsets_to_transaction(self, offsets, group_metadata):
        tid = self._require_transactional("send_offsets_to_transaction")
        if self.transaction_state != IN_TRANSACTION:  # kafka-python: KafkaError, not a transition error
            raise Errors.KafkaError(
                "Cannot send offsets to transaction because the producer is not in an active transaction: "
                "call begin_transaction() first"
            )
        if isinstance(group_metadata, str):
            group_metadata = ConsumerGroupMetadata(group_metadata)
        if not isinstance(group_metadata, ConsumerGroupMetadata):
            raise TypeError("group_metadata must be consumer.group_metadata() (or a group id string)")
        if not isinstance(offsets, dict):
            raise TypeError("offsets must be dict[TopicPartition, OffsetAndMetadata]")
        plain = {tuple(tp): (m.offset if isinstance(m, OffsetAndMetadata) else m) for tp, m in offsets.items()}
        v2 = self._transactions_v2
        if v2:  # TxnOffsetCommit v5 adds the offsets partition itself
            self._txn_partitions.add((OFFSETS_TOPIC, 0))
        else:
            self._add_to_transaction([(OFFSETS_TOPIC, 0)])
        request = TxnOffsetCommitRequest(
            transactional_id=tid,
            producer_id=self.producer_id,
            producer_epoch=self.producer_epoch,
            group=group_metadata.group_id,
            member_id=group_metadata.member_id,
            generation=group_metadata.generation_id,
            offsets=plain,
            transaction_version=2 if v2 else 1,
        )
        try:
            self._call_coordinator(request, self.config["max_block_ms"])
        except Errors.ProducerFencedError as exc:
            self._fatal(exc)
            raise self._txn_error from None
        except (Errors.IllegalGenerationError, Errors.UnknownMemberIdError, Errors.RebalanceInProgressError) as exc:
            self.transaction_state = ABORTABLE_ERROR
            self._txn_error = exc
            raise Errors.CommitFailedError(
                f"{type(exc).__name__}: this consumer's group generation is over (it was fenced by a rebalance); "
                f"abort the transaction"
            ) from None
        self._history.record(
            self.node_id,
            OK,
            OpName.SEND_OFFSETS,
            [[t, p, o] for (t, p), o in sorted(plain.items())],
            evidence={"transaction": self._txn_count},
        )

    def commit_transaction(self):
        self._end_transaction(commit=True)

    def abort_transaction(self):
        self._end_transaction(commit=False)

    def _end_transaction(self, commit: bool):
        what = "commit_transaction" if commit else "abort_transaction"
        # an abortable error refuses commit (kafka-python: "... we are in an error state") but not abort
        tid = self._require_transactional(what, fail_if_in_error=False)
        if commit and self.transaction_state == ABORTABLE_ERROR:
            raise Errors.KafkaError(
                f"Cannot commit: an earlier error ({self._txn_error!r}) means this transaction must be aborted"
            )
        if self.transaction_state == FATAL_ERROR:
            raise self._in_error_state()
        if commit:
            self._require_state(what, "COMMITTING_TRANSACTION", IN_TRANSACTION)
        else:
            self._require_state(what, "ABORTING_TRANSACTION", IN_TRANSACTION, ABORTABLE_ERROR)
        op = self._history.invoke(self.node_id, OpName.END_TRANSACTION, self._txn_count)
        if not commit:  # KIP-654: the error behind the abort, else TransactionAbortedError
            self._abort_undrained(
                self._txn_error if self.transaction_state == ABORTABLE_ERROR else Errors.TransactionAbortedError()
            )
        self.flush()
        if self.transaction_state == FATAL_ERROR:
            self._history.complete(op, FAIL, error="ProducerFencedError")
            raise self._in_error_state()
        if commit and self.transaction_state == ABORTABLE_ERROR:
            self._history.complete(op, FAIL, error="TransactionAbortableError")
            raise Errors.KafkaError(f"Cannot commit: a send in this transaction failed ({self._txn_error}); abort it")
        try:
            if self._txn_partitions:
                v2 = self._transactions_v2
                ended = self._txn_call(
                    EndTxnRequest(
                        transactional_id=tid,
                        producer_id=self.producer_id,
                        producer_epoch=self.producer_epoch,
                        commit=commit,
                        transaction_version=2 if v2 else 1,
                    )
                )
                if v2 and ended:  # EndTxn v5: the next transaction runs under the bumped epoch
                    self.producer_id, self.producer_epoch = ended["producer_id"], ended["producer_epoch"]
                    self._next_sequence.clear()
        except Exception as exc:
            self._history.complete(op, INFO, error=type(exc).__name__)
            raise
        self._history.complete(op, OK, value={"transaction": self._txn_count, "commit": commit})
        self.transaction_state = READY
        self._txn_partitions = set()

    # ---- used by the sender -------------------------------------------------------------------------
    def _check_send_allowed(self) -> None:
        if self.config["transactional_id"] is not None and self.transaction_state != IN_TRANSACTION:
            # kafka-python's TransactionManager._fail_if_not_ready_for_send
            if self.transaction_state in (ABORTABLE_ERROR, FATAL_ERROR):
                raise Errors.KafkaError(
                    "Cannot perform send because at least one previous transactional or "
                    f"idempotent request has failed with errors: {self._txn_error!r}"
                )
            if self.transaction_state == UNINITIALIZED:
                raise Errors.IllegalStateError(
                    "Cannot perform a 'send' before completing a call to init_transactions when transactions "
                    "are enabled: call init_transactions(), then begin_transaction()"
                )
            raise Errors.IllegalStateError(
                f"Cannot call send in state {self.transaction_state}: call begin_transaction() first"
            )

    def _add_to_transaction(self, tps) -> None:
        """Blocking AddPartitionsToTxn (used for the offsets partition)."""
        new = [tp for tp in tps if tp not in self._txn_partitions]
        if new:
            self._txn_call(self._add_partitions_request(new))
            self._txn_partitions.update(new)

    def _add_partitions_request(self, tps) -> AddPartitionsToTxnRequest:
        return AddPartitionsToTxnRequest(
            transactional_id=self.config["transactional_id"],
            producer_id=self.producer_id,
            producer_epoch=self.producer_epoch,
            partitions=[list(tp) for tp in tps],
        )

    def _partitions_ready_for_transaction(self) -> set | None:
        """Partitions whose batches may be sent now; starts adding the others (non-blocking)."""
        if self.config["transactional_id"] is None:
            return None
        if self._transactions_v2:  # KIP-890: the produce request adds them (txn_verification)
            self._txn_partitions.update(tp for tp, dq in self._accumulator.items() if dq)
            return self._txn_partitions
        waiting = [tp for tp, dq in self._accumulator.items() if dq and tp not in self._txn_partitions]
        if waiting and not self._txn_adding:
            self._txn_adding = True

            def added(error, result):
                self._txn_adding = False
                if error is None:
                    self._txn_partitions.update(waiting)
                elif error is Errors.ProducerFencedError:
                    self._fatal(error)
                self._wakeup(0 if error is None else self.config["retry_backoff_ms"])

            self._ask_coordinator(self._add_partitions_request(waiting), added)
        return self._txn_partitions

    def _transaction_send_failed(self, exc) -> None:
        """What a failed send does to the transaction - kafka-python 3.0.12's
        ``TransactionManager.classify_batch_error``, not Java's:

        - retriable errors that ran out of time (``KafkaTimeoutError`` "Expiring N record(s)",
          ``NotEnoughReplicas``...) change *nothing*: ``commit_transaction()`` then commits the
          records that did get through. Java's producer (KAFKA-5385) makes every failed send
          abortable, so its commit raises. With kafka-python, "a transaction is atomic" holds only
          if the application checks its send futures (or ``flush()`` and inspects them) first;
        - ``InvalidProducerEpoch`` (the broker's answer to a zombie's produce): kafka-python tries
          to bump its epoch (KIP-360), the coordinator refuses a fenced producer, and the producer
          is left fenced: commit/abort raise ``ProducerFencedError``;
        - ``ProducerFenced`` / ``InvalidTxnState``: fatal;
        - any other error: the transaction can only be aborted.
        """
        if self.config["transactional_id"] is None or self.transaction_state != IN_TRANSACTION:
            return
        if isinstance(exc, (Errors.ProducerFencedError, Errors.InvalidProducerEpochError, Errors.InvalidTxnStateError)):
            self._fatal(exc)
        elif not isinstance(exc, Errors.RetriableError):
            self.transaction_state = ABORTABLE_ERROR
            self._txn_error = exc
