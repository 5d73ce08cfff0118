"""InitProducerId, AddPartitionsToTxn, AddOffsetsToTxn, EndTxn, TxnOffsetCommit: idempotence and transactions."""

from __future__ import annotations

from kafka.protocol.producer import (
    AddOffsetsToTxnResponse,
    AddPartitionsToTxnResponse,
    EndTxnResponse,
    InitProducerIdResponse,
    TxnOffsetCommitResponse,
)

from kafka import errors as Errors

from ...broker import protocol as sim
from ...broker.acls import IDEMPOTENT_WRITE, READ, TOPIC, TRANSACTIONAL_ID, WRITE, GROUP
from ..authorization import allowed_names, authorized, authorized_by_resource_type, cluster_authorized
from ...broker.group_coordinator import OFFSETS_TOPIC
from .common import _grouped, _reply, code
from .coordinators import _coordinator
from .offsets import commit_offsets, committed_offsets


def init_producer_id(gw, req) -> None:
    def answer(error, pid, epoch) -> None:
        _reply(
            gw,
            InitProducerIdResponse,
            throttle_time_ms=0,
            error_code=code(error),
            producer_id=pid if error is None else -1,
            producer_epoch=epoch if error is None else -1,
        )

    # KafkaApis.handleInitProducerIdRequest: WRITE on the transactional id; an idempotent producer
    # IDEMPOTENT_WRITE on the cluster or WRITE on some topic (KIP-679)
    if req.transactional_id is not None and not authorized(gw, WRITE, TRANSACTIONAL_ID, req.transactional_id):
        return answer(Errors.TransactionalIdAuthorizationFailedError, -1, -1)
    if req.transactional_id is None and not (
        cluster_authorized(gw, IDEMPOTENT_WRITE) or authorized_by_resource_type(gw, WRITE, TOPIC)
    ):
        return answer(Errors.ClusterAuthorizationFailedError, -1, -1)
    if req.transactional_id is None:
        gw.ask(
            sim.InitProducerIdRequest(gw.next_corr()),
            lambda resp: answer(resp.error, resp.producer_id, resp.producer_epoch),
        )
        return
    request = sim.InitTxnProducerIdRequest(
        transactional_id=req.transactional_id, transaction_timeout_ms=req.transaction_timeout_ms
    )
    _coordinator(
        gw,
        request,
        lambda e, r: answer(e, r["producer_id"] if r else -1, r["producer_epoch"] if r else -1),
    )


def add_partitions_to_txn(gw, req) -> None:
    partitions = [(t.name, p) for t in req.v3_and_below_topics for p in t.partitions]
    request = sim.AddPartitionsToTxnRequest(
        transactional_id=req.v3_and_below_transactional_id,
        producer_id=req.v3_and_below_producer_id,
        producer_epoch=req.v3_and_below_producer_epoch,
        partitions=[list(tp) for tp in partitions],
    )

    def added(error, result, errors=None) -> None:
        rows = [
            (t, {"partition_index": p, "partition_error_code": code((errors or {}).get((t, p), error))})
            for t, p in partitions
        ]
        _reply(
            gw,
            AddPartitionsToTxnResponse,
            throttle_time_ms=0,
            results_by_topic_v3_and_below=_grouped(rows, list_key="results_by_partition"),
        )

    # KafkaApis.handleAddPartitionsToTxnRequest: WRITE on the transactional id, then on every topic
    # (a refused topic fails its partitions, the others OPERATION_NOT_ATTEMPTED)
    if not authorized(gw, WRITE, TRANSACTIONAL_ID, request.transactional_id):
        return added(Errors.TransactionalIdAuthorizationFailedError, None)
    writable = allowed_names(gw, WRITE, TOPIC, {t for t, _ in partitions})
    if any(t not in writable for t, _ in partitions):
        refused = {(t, p): Errors.TopicAuthorizationFailedError for t, p in partitions if t not in writable}
        return added(Errors.OperationNotAttemptedError, None, refused)
    _coordinator(gw, request, added)


def add_offsets_to_txn(gw, req) -> None:
    """The group's offsets partition joins the transaction (one ``__consumer_offsets`` partition
    in the simulator)."""
    request = sim.AddPartitionsToTxnRequest(
        transactional_id=req.transactional_id,
        producer_id=req.producer_id,
        producer_epoch=req.producer_epoch,
        partitions=[[OFFSETS_TOPIC, 0]],
    )

    def answer(e, r) -> None:
        _reply(gw, AddOffsetsToTxnResponse, throttle_time_ms=0, error_code=code(e))

    if not authorized(gw, WRITE, TRANSACTIONAL_ID, req.transactional_id):
        return answer(Errors.TransactionalIdAuthorizationFailedError, None)
    if not authorized(gw, READ, GROUP, req.group_id):
        return answer(Errors.GroupAuthorizationFailedError, None)
    _coordinator(gw, request, answer)


def end_txn(gw, req) -> None:
    """v5 is transactions v2's (KIP-890): the coordinator bumps the epoch and answers it."""
    request = sim.EndTxnRequest(
        transactional_id=req.transactional_id,
        producer_id=req.producer_id,
        producer_epoch=req.producer_epoch,
        commit=bool(req.committed),
        transaction_version=2 if gw.version >= 5 else 1,
    )

    def answer(error, result) -> None:
        ids = result if error is None and result else {"producer_id": -1, "producer_epoch": -1}
        _reply(gw, EndTxnResponse, throttle_time_ms=0, error_code=code(error), **ids)

    if not authorized(gw, WRITE, TRANSACTIONAL_ID, req.transactional_id):
        return answer(Errors.TransactionalIdAuthorizationFailedError, None)
    _coordinator(gw, request, answer)


def txn_offset_commit(gw, req) -> None:
    def request_for(offsets: dict):
        return sim.TxnOffsetCommitRequest(
            group=req.group_id,
            member_id=req.member_id if gw.version >= 3 else "",
            generation=req.generation_id if gw.version >= 3 else -1,
            offsets=offsets,
            producer_id=req.producer_id,
            producer_epoch=req.producer_epoch,
            transactional_id=req.transactional_id,
            # v5 is transactions v2's (KIP-890): no AddOffsetsToTxn came first
            transaction_version=2 if gw.version >= 5 else 1,
        )

    # KafkaApis.handleTxnOffsetCommitRequest: WRITE on the transactional id first, then as OffsetCommit
    txn_ok = authorized(gw, WRITE, TRANSACTIONAL_ID, req.transactional_id)
    refused = None if txn_ok else Errors.TransactionalIdAuthorizationFailedError
    commit_offsets(gw, request_for, TxnOffsetCommitResponse, committed_offsets(req), req.group_id, refused)
