"""DescribeTransactions (65) and ListTransactions (66): what ``kafka-transactions describe`` and
``list`` show (``Admin.describeTransactions``/``listTransactions``), read from this broker's
transaction coordinator (:class:`~course_lib.broker.txn_coordinator.TxnCoordinator`).

As Kafka's ``TransactionCoordinator.handleDescribeTransactions``: a transactional id the client
may not DESCRIBE is TRANSACTIONAL_ID_AUTHORIZATION_FAILED, one this broker does not coordinate
NOT_COORDINATOR, one it has never seen TRANSACTIONAL_ID_NOT_FOUND; the topics of a transaction
the client may not DESCRIBE are left out. ListTransactions (``TransactionStateManager.listTransactionStates``)
lists what this broker coordinates (nothing on another broker), filtered by producer id, state
(a name Kafka does not know is sent back in ``unknown_state_filters`` and matches nothing), how
long ago it started (v1) and a transactional id pattern (v2), and only the ids the client may
DESCRIBE.
"""

from __future__ import annotations

import re

from kafka import errors as Errors
from kafka.protocol.admin.transactions import DescribeTransactionsResponse, ListTransactionsResponse

from ...broker.acls import DESCRIBE, TOPIC, TRANSACTIONAL_ID
from ..authorization import allowed_names, authorized
from .common import _reply

#: Kafka's error code for a pattern that does not compile
INVALID_REGULAR_EXPRESSION = 128
#: Kafka's TransactionState names (TransactionState.fromName)
STATES = frozenset(
    {
        "Empty",
        "Ongoing",
        "PrepareCommit",
        "PrepareAbort",
        "CompleteCommit",
        "CompleteAbort",
        "Dead",
        "PrepareEpochFence",
    }
)


def _coordinator(gw):
    """This broker's transaction coordinator, or None if it coordinates nothing now."""
    txns = gw.wire.cluster.brokers[gw.broker_id].txns
    return txns if txns.refresh() else None


def _start_ms(gw, meta) -> int:
    """When the transaction started, in wall-clock ms (-1 before it did: Empty)."""
    if meta.state == "Empty":
        return -1
    return int(meta.started_ms + gw.wire.cluster.wall_clock_offset_ms)


def describe_transactions(gw, req) -> None:
    txns = _coordinator(gw)

    def state(tid: str) -> dict:
        row: dict = {"error_code": 0, "transactional_id": tid, "transaction_state": "", "topics": []}
        row.update(transaction_timeout_ms=0, transaction_start_time_ms=-1, producer_id=-1, producer_epoch=-1)
        if not authorized(gw, DESCRIBE, TRANSACTIONAL_ID, tid):
            return {**row, "error_code": Errors.TransactionalIdAuthorizationFailedError.errno}
        if txns is None:
            return {**row, "error_code": Errors.NotCoordinatorError.errno}
        if not tid:
            return {**row, "error_code": Errors.InvalidRequestError.errno}
        meta = txns.txns.get(tid)
        if meta is None or meta.state == "Dead":
            return {**row, "error_code": Errors.TransactionalIdNotFoundError.errno}
        partitions: dict = {}
        for topic, partition in sorted(meta.partitions):
            partitions.setdefault(topic, []).append(partition)
        visible = allowed_names(gw, DESCRIBE, TOPIC, partitions)
        return {
            **row,
            "transaction_state": meta.state,
            "transaction_timeout_ms": int(meta.timeout_ms),
            "transaction_start_time_ms": _start_ms(gw, meta),
            "producer_id": meta.producer_id,
            "producer_epoch": meta.producer_epoch,
            "topics": [{"topic": t, "partitions": ps} for t, ps in partitions.items() if t in visible],
        }

    _reply(
        gw,
        DescribeTransactionsResponse,
        throttle_time_ms=0,
        transaction_states=[state(t) for t in req.transactional_ids],
    )


def list_transactions(gw, req) -> None:
    txns = _coordinator(gw)
    names = list(req.state_filters)
    unknown = [n for n in names if n not in STATES]
    duration = req.duration_filter if gw.version >= 1 else -1
    pattern = req.transactional_id_pattern if gw.version >= 2 else None
    try:
        matcher = re.compile(pattern) if pattern else None
    except re.error:
        # INVALID_REGULAR_EXPRESSION (kafka-python 3.0.12 has no class for it)
        return _reply(gw, ListTransactionsResponse, throttle_time_ms=0, error_code=INVALID_REGULAR_EXPRESSION)
    now = gw.wire.cluster.sim.now + gw.wire.cluster.wall_clock_offset_ms

    def listed(tid: str, meta) -> bool:
        return (
            meta.state != "Dead"
            and (not req.producer_id_filters or meta.producer_id in req.producer_id_filters)
            and (not names or meta.state in names)
            # started more than ``duration`` ms ago (one not started, at -1, always has)
            and (duration < 0 or now - _start_ms(gw, meta) > duration)
            and (matcher is None or matcher.fullmatch(tid) is not None)
            and authorized(gw, DESCRIBE, TRANSACTIONAL_ID, tid)
        )

    rows = [
        {"transactional_id": tid, "producer_id": meta.producer_id, "transaction_state": meta.state}
        for tid, meta in sorted((txns.txns if txns is not None else {}).items())
        if listed(tid, meta)
    ]
    _reply(
        gw,
        ListTransactionsResponse,
        throttle_time_ms=0,
        error_code=0,
        unknown_state_filters=unknown,
        transaction_states=rows,
    )
