"""Kafka 4's transactions: seeded experiments where transactions v1 and v2 (KIP-890) differ.

The entry points for a lesson (notebooks/06_transactions, "Kafka 4's transactions"): each takes
``transaction_version`` (1: kafka-python's protocol, which it keeps on any cluster; 2: the Java
client 4.x's on a Kafka 4 cluster, whose ``transaction.version`` is 2) and a ``seed``, runs the
simulator, and returns a :class:`~course_lib.judge.result.Result` whose ``numbers`` are what it
measured - the same seed gives the same result.

- :func:`epochs_per_transaction`: a producer runs a few transactions; under v1 its epoch stays
  what ``init_transactions()`` gave it, under v2 every commit or abort bumps it (EndTxn v5
  answers the new epoch), and the producer sends no AddPartitionsToTxn (the partition leaders
  add the partitions by the produce request).
- :func:`late_write`: a produce request of transaction 1 reaches its partition only after
  transaction 1 ended (held up in the network longer than the producer waited for it). Under v1
  it carries the producer's current epoch, so the broker takes it: with the partition already in
  transaction 2 it is committed *as part of transaction 2* (``next_transaction=True``); with no
  transaction to close it, it leaves a *hanging* transaction that holds the last stable offset
  back (``read_committed`` consumers see nothing written after it). Under v2 the epoch was bumped
  when transaction 1 ended, and the partition leader refuses it (``InvalidProducerEpoch``).

  (A Kafka 4.3.1 broker also *verifies* v1 transactional writes with the coordinator - KIP-890
  part 1, ``transaction.partition.verification.enable`` - which refuses the hanging case for v1
  too, but not the late write into the next transaction. The simulator's v1 does not model that
  verification, so its v1 hanging case is a pre-3.6 broker's.)

>>> epochs_per_transaction(2, seed=1).epochs
(0, 1, 2, 3)
>>> epochs_per_transaction(1, seed=1).epochs
(0, 0, 0, 0)
>>> late_write(1, seed=1).late_write_error, late_write(2, seed=1).late_write_error
(None, 'InvalidProducerEpochError')
"""

from __future__ import annotations

from ..broker import Cluster
from ..broker.protocol import ProduceRequest, Record, RecordBatch
from ..broker.txn_coordinator import markers_written
from ..clients import KafkaConsumer, KafkaProducer
from ..judge.result import Result
from .registry import experiment, measured

TOPIC = "payments"
TRANSACTIONAL_ID = "payments-tx"


def _cluster(seed: int, transaction_version: int) -> Cluster:
    cluster = Cluster(3, seed=seed, group_initial_rebalance_delay_ms=0, trace=True)
    cluster.create_topic(TOPIC, partitions=2, min_insync_replicas=2)
    return cluster


def _producer(cluster: Cluster, transaction_version: int) -> KafkaProducer:
    p = KafkaProducer(
        bootstrap_servers=cluster, transactional_id=TRANSACTIONAL_ID, transaction_version=transaction_version
    )
    p.init_transactions()
    return p


def _read_committed(cluster: Cluster, partitions=(0, 1)) -> tuple:
    consumer = KafkaConsumer(bootstrap_servers=cluster, isolation_level="read_committed", auto_offset_reset="earliest")
    consumer.assign([(TOPIC, p) for p in partitions])
    seen = []
    for _ in range(5):
        for records in consumer.poll(timeout_ms=200).values():
            seen += [(r.partition, r.offset, r.value.decode()) for r in records]
    consumer.close()
    return tuple(value for _, _, value in sorted(seen))


@experiment("transaction version", "producer")
def epochs_per_transaction(transaction_version: int = 2, seed: int = 0, transactions: int = 3) -> Result:
    """``transactions`` transactions (every second one aborted), each writing both partitions."""
    cluster = _cluster(seed, transaction_version)
    p = _producer(cluster, transaction_version)
    epochs = [p.producer_epoch]
    for i in range(transactions):
        p.begin_transaction()
        p.send(TOPIC, f"t{i}-a".encode(), partition=0)
        p.send(TOPIC, f"t{i}-b".encode(), partition=1)
        p.flush()  # written before it ends: an abort drops what was never sent (kafka-python's too)
        p.abort_transaction() if i % 2 else p.commit_transaction()
        epochs.append(p.producer_epoch)
    trace = cluster.network.trace or []
    added = sum(1 for e in trace if e.src == p.node_id and e.label.startswith("add_partitions"))
    numbers = {
        # the producer's epoch after init_transactions() and after each transaction
        "epochs": tuple(epochs),
        # AddPartitionsToTxn requests the producer itself sent (v2: none)
        "add_partitions_sent_by_producer": added,
        # what a read_committed consumer reads
        "read_committed": _read_committed(cluster),
    }
    settings = {"transaction_version": transaction_version, "transactions": transactions}
    return measured(epochs_per_transaction, numbers, seed=seed, settings=settings)


class _HeldUpRequest:
    """The network node that delivers the held-up produce request of transaction 1."""

    def __init__(self, cluster: Cluster):
        self.node_id, self.alive, self.answer = "held-up-request", True, None
        cluster.network.add(self)

    def receive(self, src: str, msg) -> None:
        self.answer = msg

    def on_disconnect(self, peer: str) -> None:
        pass


@experiment("transaction version", "producer")
def late_write(transaction_version: int = 2, seed: int = 0, next_transaction: bool = True) -> Result:
    """Transaction 1 writes ``t1-a`` and commits; a request of it carrying ``t1-late`` (the
    producer's id, its epoch during transaction 1 and its next sequence number) reaches the leader
    of partition 0 after that - with partition 0 already in transaction 2 if ``next_transaction``
    (which then writes ``t2-a`` to partition 1 and commits), else once transaction 1's markers are
    written."""
    cluster = _cluster(seed, transaction_version)
    p = _producer(cluster, transaction_version)
    tp = (TOPIC, 0)
    p.begin_transaction()
    p.send(TOPIC, b"t1-a", partition=0).get(timeout=30)
    late = RecordBatch(
        [Record(None, b"t1-late", cluster.now)], p.producer_id, p.producer_epoch, p._next_sequence.get(tp, 0), True
    )
    p.commit_transaction()
    if next_transaction:
        p.begin_transaction()
        if transaction_version < 2:
            p._add_to_transaction([tp])  # v1: what the producer does before its first write there
        else:
            p.send(TOPIC, b"t2-first", partition=0).get(timeout=30)  # v2: the write adds it
    # it arrives once the commit is written through: while its markers are still being written
    # the coordinator answers the leader's check CONCURRENT_TRANSACTIONS (the producer would get
    # the retriable NOT_ENOUGH_REPLICAS and send it again), which is not what this compares
    cluster.run_until(lambda: markers_written(cluster), 30_000)
    node = _HeldUpRequest(cluster)
    leader = cluster.leader_of(TOPIC, 0)
    request = ProduceRequest(1, -1, 30_000, {tp: late}, TRANSACTIONAL_ID, transaction_version)
    cluster.network.send(node.node_id, f"broker-{leader}", request)
    cluster.run_until(lambda: node.answer is not None, 30_000)
    result = node.answer.results[tp] if node.answer is not None else None
    if next_transaction:
        p.send(TOPIC, b"t2-a", partition=1)
        p.commit_transaction()
    cluster.run_for(1_000)
    view = cluster.inspect(TOPIC, 0)  # the leader's last stable offset and log end, read-only
    assert view.leader is not None and view.lso is not None, "the partition lost its leader"
    error = None if result is None or result.error is None else result.error.__name__
    read, leo = _read_committed(cluster), view.replica(view.leader).leo
    numbers = {
        # the broker's answer to the late write (None: appended)
        "late_write_error": error,
        # what a read_committed consumer reads at the end, in offset order
        "read_committed": read,
        # the partition's last stable offset and log end offset at the end: LSO < LEO with every
        # transaction ended is a hanging transaction
        "last_stable_offset": view.lso,
        "log_end_offset": leo,
        "hanging": view.lso < leo,
        "landed_in_next_transaction": "t1-late" in read,
    }
    settings = {"transaction_version": transaction_version, "next_transaction": next_transaction}
    return measured(late_write, numbers, seed=seed, settings=settings)
