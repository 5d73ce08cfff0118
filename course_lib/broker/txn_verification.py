"""Transactions v2 (KIP-890): a partition joins the transaction by the produce request itself.

A transactions-v2 producer (Produce v12+: the Java client 4.x on a cluster whose
``transaction.version`` is 2) sends no AddPartitionsToTxn. The partition leader, before it
appends the first transactional batch of a transaction, asks the transaction coordinator to add
the partition (AddPartitionsToTxn v5 from broker to coordinator: Kafka's
``AddPartitionsToTxnManager`` and ``ReplicaManager``'s verification guard). The coordinator
refuses a stale epoch, so a write that arrives after its transaction ended (the epoch was bumped
by EndTxn v5) is refused instead of landing in the next transaction, and a write for a
transaction the coordinator does not know cannot leave a *hanging* transaction at the partition.

Answers as Kafka's broker maps them for the producer: ``PRODUCER_FENCED`` becomes
``INVALID_PRODUCER_EPOCH``; a coordinator that is busy or away (``CONCURRENT_TRANSACTIONS``,
``NOT_COORDINATOR``, ``COORDINATOR_NOT_AVAILABLE``, no answer) becomes the retriable
``NOT_ENOUGH_REPLICAS``.

Taught in notebooks/06_transactions ("Kafka 4's transactions").
"""

from __future__ import annotations

from kafka import errors as Errors

from .protocol import AddPartitionsToTxnRequest, CoordinatorResponse, PartitionResult, ProduceRequest, node_name
from .txn_coordinator import TXN_TOPIC

#: the coordinator's error -> what the producer is answered
_FOR_THE_PRODUCER = {
    Errors.ProducerFencedError: Errors.InvalidProducerEpochError,
    Errors.ConcurrentTransactionsError: Errors.NotEnoughReplicasError,
    Errors.NotCoordinatorError: Errors.NotEnoughReplicasError,
    Errors.CoordinatorNotAvailableError: Errors.NotEnoughReplicasError,
}


class TxnVerifier:
    """One per broker: the produce requests waiting for the coordinator's word."""

    def __init__(self, broker):
        self.broker = broker
        self._corr = 0
        self._waiting: dict[int, tuple] = {}  # corr -> (incarnation, then(error))

    def needed(self, partition, batch) -> bool:
        """Whether ``batch`` opens its transaction at ``partition`` (its first write there)."""
        if not batch.is_transactional or batch.producer_id < 0 or batch.control is not None:
            return False
        entry = partition.producers.entries.get(batch.producer_id)
        ongoing = batch.producer_id in partition.txn.ongoing
        return not (ongoing and entry is not None and entry.epoch == batch.producer_epoch)

    def add_then(self, transactional_id, producer_id: int, producer_epoch: int, tps, timeout_ms: float, then) -> None:
        """Ask the coordinator to add ``tps`` to the transaction; ``then(error)`` after, the
        error as the producer is answered it."""
        state = self.broker.metadata.get((TXN_TOPIC, 0))
        if transactional_id is None:
            return then(Errors.InvalidTxnStateError)
        if state is None or state.leader is None:
            return then(Errors.NotEnoughReplicasError)
        self._corr += 1
        corr = self._corr
        self._waiting[corr] = (self.broker.incarnation, then)
        ask = AddPartitionsToTxnRequest(
            corr=corr,
            transactional_id=transactional_id,
            producer_id=producer_id,
            producer_epoch=producer_epoch,
            partitions=[list(tp) for tp in tps],
            transaction_version=2,
        )
        self.broker.send(node_name(state.leader), ask)
        self.broker.schedule_timer(timeout_ms, self._no_answer, corr)

    def _no_answer(self, corr: int) -> None:
        waiting = self._waiting.pop(corr, None)
        if waiting is not None:
            waiting[1](Errors.NotEnoughReplicasError)

    def on_response(self, resp: CoordinatorResponse) -> None:
        waiting = self._waiting.pop(resp.corr, None)
        if waiting is None or waiting[0] != self.broker.incarnation:
            return
        waiting[1](_FOR_THE_PRODUCER.get(resp.error, resp.error))


def produce_v2(broker, req: ProduceRequest, append, refuse) -> None:
    """Append ``req``'s batches (``append(tp, batch)``), those that open their transaction at
    their partition only once the coordinator added them (else ``refuse(tp, error)``)."""
    opening = []
    for tp, batch in req.batches.items():
        partition = broker.partitions.get(tp)
        if partition is not None and partition.is_leader and broker.verifier.needed(partition, batch):
            opening.append(tp)
        else:
            append(tp, batch)
    if not opening:
        return

    def added(error) -> None:
        for tp in opening:
            if error is None:
                append(tp, req.batches[tp])
            else:
                refuse(tp, PartitionResult(error))

    first = req.batches[opening[0]]
    broker.verifier.add_then(
        req.transactional_id, first.producer_id, first.producer_epoch, opening, req.timeout_ms, added
    )
