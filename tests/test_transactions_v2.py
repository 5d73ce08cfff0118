"""Transactions v2 (KIP-890) in the simulator: the epoch bump at every transaction's end, the
partitions added by the produce request, the strict epoch checks, and what v2 closes (a late write
of a finished transaction landing in the next one; a hanging transaction) - next to v1, which
stays as it was (kafka-python's protocol; tests/test_golden.py)."""

import pytest
from kafka import errors as Errors

from course_lib.broker import Cluster
from course_lib.broker.protocol import EndTxnRequest
from course_lib.clients import KafkaProducer
from course_lib.client_config import ConfigurationError
from course_lib.experiments.transaction_versions import epochs_per_transaction, late_write


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_v2_bumps_the_epoch_at_every_transactions_end_and_adds_no_partitions_itself(seed):
    v1, v2 = epochs_per_transaction(1, seed), epochs_per_transaction(2, seed)
    assert v1.epochs == (0, 0, 0, 0) and v2.epochs == (0, 1, 2, 3), (seed, v1, v2)
    assert v1.add_partitions_sent_by_producer > 0 and v2.add_partitions_sent_by_producer == 0, seed
    assert v1.read_committed == v2.read_committed == ("t0-a", "t2-a", "t0-b", "t2-b"), seed


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_late_write_lands_in_the_next_transaction_under_v1_only(seed):
    v1, v2 = late_write(1, seed, next_transaction=True), late_write(2, seed, next_transaction=True)
    assert v1.late_write_error is None and v1.numbers["landed_in_next_transaction"], (seed, v1)
    assert v2.late_write_error == "InvalidProducerEpochError" and not v2.numbers["landed_in_next_transaction"], (
        seed,
        v2,
    )


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_late_write_hangs_a_transaction_under_v1_only(seed):
    v1, v2 = late_write(1, seed, next_transaction=False), late_write(2, seed, next_transaction=False)
    assert v1.numbers["hanging"] and v1.read_committed == ("t1-a",), (seed, v1)
    assert not v2.numbers["hanging"] and v2.late_write_error == "InvalidProducerEpochError", (seed, v2)


def cluster(**features):
    c = Cluster(3, seed=3, group_initial_rebalance_delay_ms=0, features=features)
    c.create_topic("t", partitions=1, min_insync_replicas=2)
    return c


def test_v2_falls_back_to_v1_on_a_cluster_that_finalizes_transaction_version_1():
    c = cluster(**{"transaction.version": 1})
    p = KafkaProducer(bootstrap_servers=c, transactional_id="x", transaction_version=2)
    p.init_transactions()
    for _ in range(2):
        p.begin_transaction()
        p.send("t", b"v")
        p.commit_transaction()
    assert p.producer_epoch == 0


def test_a_zombie_under_v2_is_fenced_by_a_new_instance():
    c = cluster()
    old = KafkaProducer(bootstrap_servers=c, transactional_id="x", transaction_version=2)
    old.init_transactions()
    old.begin_transaction()
    old.send("t", b"zombie").get(timeout=30)
    new = KafkaProducer(bootstrap_servers=c, transactional_id="x", transaction_version=2)
    new.init_transactions()
    with pytest.raises(Errors.ProducerFencedError):
        old.commit_transaction()


def end_txn(c, producer, epoch, commit=True):
    return producer._call_coordinator(
        EndTxnRequest(
            transactional_id="x",
            producer_id=producer.producer_id,
            producer_epoch=epoch,
            commit=commit,
            transaction_version=2,
        ),
        30_000,
    )


def test_end_txn_v5_checks_the_epoch_strictly_and_answers_its_own_retry():
    c = cluster()
    p = KafkaProducer(bootstrap_servers=c, transactional_id="x", transaction_version=2)
    p.init_transactions()
    p.begin_transaction()
    p.send("t", b"v").get(timeout=30)
    first = end_txn(c, p, 0)
    assert first == {"producer_id": p.producer_id, "producer_epoch": 1}
    assert end_txn(c, p, 0) == first  # a retry (its epoch is the one before the bump)
    with pytest.raises(Errors.InvalidTxnStateError):
        end_txn(c, p, 1)  # nothing ongoing under the new epoch: nothing to commit
    assert end_txn(c, p, 1, commit=False) == {"producer_id": p.producer_id, "producer_epoch": 2}  # v2 abort bumps
    with pytest.raises(Errors.ProducerFencedError):
        end_txn(c, p, 0, commit=False)  # two epochs old: fenced


def test_transaction_version_must_be_1_or_2():
    with pytest.raises(ConfigurationError, match="transaction_version must be 1"):
        KafkaProducer(bootstrap_servers=cluster(), transaction_version=3)
