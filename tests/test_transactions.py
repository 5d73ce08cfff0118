"""Transactions: coordinator, markers, LSO, read_committed, fencing, timeouts, wrong order."""

import pytest
from kafka import errors as Errors

from course_lib.broker import Cluster
from course_lib.clients import KafkaConsumer, KafkaProducer
from course_lib.experiments.scenarios import run_scenario

TOPIC = "t"


@pytest.fixture
def cluster():
    c = Cluster(3, seed=5, group_initial_rebalance_delay_ms=0)
    c.create_topic(TOPIC, partitions=2, min_insync_replicas=2)
    return c


def read(cluster, isolation_level):
    c = KafkaConsumer(bootstrap_servers=cluster, isolation_level=isolation_level, auto_offset_reset="earliest")
    c.assign([(TOPIC, 0), (TOPIC, 1)])
    out = []
    for _ in range(6):
        for records in c.poll(timeout_ms=200).values():
            out += [r.value.decode() for r in records]
    return sorted(out)


def test_a_transaction_spanning_partitions_is_all_or_nothing(cluster):
    p = KafkaProducer(bootstrap_servers=cluster, transactional_id="tx")
    p.init_transactions()
    p.begin_transaction()
    p.send(TOPIC, b"x0", partition=0)
    p.send(TOPIC, b"x1", partition=1)
    p.flush()
    assert read(cluster, "read_committed") == []  # open: below the LSO there is nothing
    assert read(cluster, "read_uncommitted") == ["x0", "x1"]
    p.commit_transaction()
    assert read(cluster, "read_committed") == ["x0", "x1"]


def test_aborted_records_stay_invisible_to_read_committed_and_markers_leave_gaps():
    committed = run_scenario("aborted_transaction", isolation_level="read_committed")
    uncommitted = run_scenario("aborted_transaction", isolation_level="read_uncommitted")
    assert [v for _, v in committed.notes["seen"]] == ["a-0", "a-1", "a-2", "c-0", "c-1", "c-2"]
    assert committed.result.found == set() and committed.result.valid
    assert uncommitted.result.found == {"aborted_read"} and uncommitted.result.valid
    offsets = [o for o, _ in committed.notes["seen"]]
    assert offsets == [0, 1, 2, 8, 9, 10]  # 3 = commit marker, 4-6 aborted, 7 = abort marker
    assert committed.notes["log_end_offset"] == 12


def test_the_last_stable_offset_stops_at_an_open_transaction(cluster):
    p = KafkaProducer(bootstrap_servers=cluster, transactional_id="tx")
    plain = KafkaProducer(bootstrap_servers=cluster)
    p.init_transactions()
    p.begin_transaction()
    p.send(TOPIC, b"open", partition=0)
    p.flush()
    plain.send(TOPIC, b"after", partition=0).get()
    leader = cluster.brokers[cluster.leader_of(TOPIC, 0)].partitions[(TOPIC, 0)]
    assert leader.readable_end(read_committed=False) == 2 and leader.readable_end(read_committed=True) == 0
    p.commit_transaction()
    cluster.run_for(50)
    assert leader.readable_end(read_committed=True) == 3


def test_a_zombie_is_fenced_and_its_transaction_aborted():
    r = run_scenario("zombie_fencing")
    assert r.notes["zombie_error"] == "ProducerFencedError"
    assert r.result.found == set() and r.result.valid, r.result.summary()
    assert any(op.f == "txn_abort" and "init_transactions" in op.value["reason"] for op in r.history)


def test_a_hung_transaction_is_aborted_after_its_timeout():
    r = run_scenario("transaction_timeout")
    assert r.notes["late_commit_error"] == "ProducerFencedError"
    assert r.notes["lso_while_open"] == 0
    assert any(op.f == "txn_abort" and "transaction_timeout_ms" in op.value["reason"] for op in r.history)
    assert r.result.valid and r.result.counts["undelivered"] == 3


def test_transactional_state_survives_a_coordinator_crash(cluster):
    p = KafkaProducer(bootstrap_servers=cluster, transactional_id="tx")
    p.init_transactions()
    coordinator = cluster.leader_of("__transaction_state")
    p.begin_transaction()
    p.send(TOPIC, b"a", partition=0)
    p.flush()
    cluster.crash(coordinator)
    p.commit_transaction()  # retried against the new coordinator, which replayed the log
    assert read(cluster, "read_committed") == ["a"]


def test_methods_in_the_wrong_order_raise_what_kafka_python_raises(cluster):
    """kafka-python 3.0.12: IllegalStateError without a transactional_id and from send() outside a
    transaction; a plain KafkaError ("Invalid transition ...") from begin/commit/abort in the wrong
    state and from send_offsets_to_transaction() outside a transaction. The class is checked exactly:
    IllegalStateError is a KafkaError subclass, and which one comes decides an ``except``."""
    plain = KafkaProducer(bootstrap_servers=cluster)
    with pytest.raises(Errors.IllegalStateError, match="transactional_id") as info:
        plain.begin_transaction()
    assert type(info.value) is Errors.IllegalStateError
    p = KafkaProducer(bootstrap_servers=cluster, transactional_id="tx")
    wrong_order = [
        (p.begin_transaction, "from state UNINITIALIZED to state IN_TRANSACTION"),
        (p.commit_transaction, "from state UNINITIALIZED to state COMMITTING_TRANSACTION"),
        (p.abort_transaction, "from state UNINITIALIZED to state ABORTING_TRANSACTION"),
    ]
    for method, message in wrong_order:
        with pytest.raises(Errors.KafkaError, match=message) as info:
            method()
        assert type(info.value) is Errors.KafkaError, method
    with pytest.raises(Errors.IllegalStateError, match="init_transactions") as info:
        p.send(TOPIC, b"x")
    assert type(info.value) is Errors.IllegalStateError
    p.init_transactions()
    with pytest.raises(Errors.IllegalStateError, match="begin_transaction") as info:
        p.send(TOPIC, b"x")
    assert type(info.value) is Errors.IllegalStateError
    with pytest.raises(Errors.KafkaError, match="from state READY to state COMMITTING_TRANSACTION") as info:
        p.commit_transaction()
    assert type(info.value) is Errors.KafkaError
    with pytest.raises(Errors.KafkaError, match="not in an active transaction") as info:
        p.send_offsets_to_transaction({}, "group")
    assert type(info.value) is Errors.KafkaError
    p.begin_transaction()
    with pytest.raises(Errors.KafkaError, match="from state IN_TRANSACTION to state IN_TRANSACTION") as info:
        p.begin_transaction()
    assert type(info.value) is Errors.KafkaError
    with pytest.raises(TypeError, match="group_metadata"):
        p.send_offsets_to_transaction({}, 42)
    p.abort_transaction()
    assert p.transaction_state == "READY"


def test_a_second_init_transactions_returns_at_once(cluster):
    """kafka-python keeps the first init_transactions() result and only waits on it again: the
    producer id, epoch and state stay as they are, in any state."""
    p = KafkaProducer(bootstrap_servers=cluster, transactional_id="tx")
    p.init_transactions()
    first = (p.producer_id, p.producer_epoch)
    p.init_transactions()
    assert (p.producer_id, p.producer_epoch, p.transaction_state) == (*first, "READY")
    p.begin_transaction()
    p.send(TOPIC, b"a", partition=0)
    p.init_transactions()  # not even a new epoch mid-transaction
    assert (p.producer_id, p.producer_epoch, p.transaction_state) == (*first, "IN_TRANSACTION")
    p.commit_transaction()
    assert read(cluster, "read_committed") == ["a"]


def test_offsets_for_an_unknown_group_generation_are_refused(cluster):
    from kafka.structs import ConsumerGroupMetadata

    p = KafkaProducer(bootstrap_servers=cluster, transactional_id="tx")
    p.init_transactions()
    p.begin_transaction()
    stale = ConsumerGroupMetadata("no-such-group", 7, "ghost-1")
    with pytest.raises(Errors.CommitFailedError, match="abort the transaction"):
        p.send_offsets_to_transaction({(TOPIC, 0): 3}, stale)
    with pytest.raises(Errors.KafkaError, match="must be aborted"):
        p.commit_transaction()
    p.abort_transaction()
