"""Share groups on the simulator, one state transition per test, each against the Kafka source
that defines it (``core/src/main/java/kafka/server/share/SharePartition.java``: ``RecordState``,
``InFlightState.tryUpdateState``, ``acquire``, ``acknowledge``, ``releaseAcquiredRecords``,
``AcquisitionLockTimerTask``; ``ShareGroupConfig`` / ``GroupConfig`` for the defaults).

Each test drives confluent-kafka-shaped :class:`ShareConsumer` s against a seeded cluster; a
failing one prints its seed."""

from __future__ import annotations

import warnings

import pytest

from course_lib.broker import Cluster
from course_lib.broker.share_config import DELIVERY_COUNT_LIMIT, RECORD_LOCK_DURATION_MS
from course_lib.clients import KafkaProducer
from course_lib.clients.share_consumer import AcknowledgeType, IllegalStateException, KafkaException, ShareConsumer
from course_lib.history import OpName

GROUP, TOPIC = "workers", "jobs"


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def setup(seed=1, records=4, partitions=1, reset="earliest", **group_configs):
    cluster = Cluster(3, seed=seed)
    cluster.create_topic(TOPIC, partitions=partitions, min_insync_replicas=2)
    cluster.alter_share_group_config(GROUP, {"share.auto.offset.reset": reset, **group_configs})
    produce(cluster, records)
    return cluster


def produce(cluster, n, start=0):
    producer = KafkaProducer(bootstrap_servers=cluster)
    for i in range(start, start + n):
        producer.send(TOPIC, f"m-{i}".encode(), partition=i % cluster.topic_config(TOPIC).partitions)
    producer.flush()
    producer.close()


def worker(cluster, mode="explicit", **extra):
    c = ShareConsumer({"bootstrap.servers": cluster, "group.id": GROUP, "share.acknowledgement.mode": mode, **extra})
    c.subscribe([TOPIC])
    return c


def values(messages):
    return [(m.value().decode(), m.delivery_count()) for m in messages]


def poll_until(consumer, predicate, cluster, within_ms=120_000):
    """Poll (acknowledging nothing) until ``predicate(messages)``; the messages of that poll."""
    deadline = cluster.now + within_ms
    while cluster.now < deadline:
        messages = consumer.poll(1)
        if messages and predicate(messages):
            return messages
        for m in messages:
            consumer.acknowledge(m, AcknowledgeType.ACCEPT)
    raise AssertionError(f"nothing matched within {within_ms} ms (seed {cluster.seed})")


def test_defaults_are_kafka_4_3s():
    """ShareGroupConfig: lock 30 s, delivery count limit 5; GroupConfig: share.auto.offset.reset latest."""
    from course_lib.broker.share_config import AUTO_OFFSET_RESET, PARTITION_MAX_RECORD_LOCKS, ShareGroupSettings

    assert (RECORD_LOCK_DURATION_MS, DELIVERY_COUNT_LIMIT, AUTO_OFFSET_RESET) == (30_000, 5, "latest")
    assert PARTITION_MAX_RECORD_LOCKS == 2000
    assert ShareGroupSettings.resolve(Cluster(1).options, None) == ShareGroupSettings()


def test_acquire_counts_a_delivery_and_locks_the_record_for_its_member():
    """acquire(): AVAILABLE -> ACQUIRED, delivery count + 1; an ACQUIRED record is not handed out again."""
    cluster = setup(records=2)
    a, b = worker(cluster), worker(cluster)
    got = a.poll(5)
    assert values(got) == [("m-0", 1), ("m-1", 1)], cluster.seed
    assert b.poll(2) == []  # both are a's until acknowledged or the lock runs out


def test_accept_is_final():
    """ACCEPT: ACQUIRED -> ACKNOWLEDGED, never delivered again (validateTransition refuses leaving it)."""
    cluster = setup(records=2)
    a, b = worker(cluster), worker(cluster)
    for m in a.poll(5):
        a.acknowledge(m, AcknowledgeType.ACCEPT)
    assert set(a.commit_sync().values()) == {None}
    cluster.run_for(RECORD_LOCK_DURATION_MS + 5_000)
    assert b.poll(2) == [] and a.poll(2) == []


def test_release_makes_it_available_again_with_a_higher_delivery_count():
    """RELEASE: ACQUIRED -> AVAILABLE; the next acquire counts delivery 2."""
    cluster = setup(records=1)
    a, b = worker(cluster), worker(cluster)
    (m,) = a.poll(5)
    a.acknowledge(m, AcknowledgeType.RELEASE)
    a.commit_sync()
    assert values(b.poll(5)) == [("m-0", 2)]


def test_reject_archives_it_at_once():
    """REJECT: ACQUIRED -> ARCHIVED whatever the delivery count; the broker notes why."""
    cluster = setup(records=1)
    a, b = worker(cluster), worker(cluster)
    (m,) = a.poll(5)
    a.acknowledge(m, AcknowledgeType.REJECT)
    a.commit_sync()
    assert b.poll(2) == [] and a.poll(2) == []
    archived = [op.value for op in cluster.history if op.f == "share_archived"]
    assert archived and archived[0]["rejected"] == [m.offset()]


def test_an_expired_lock_hands_the_record_to_another_member():
    """AcquisitionLockTimerTask: after group.share.record.lock.duration.ms the record is AVAILABLE
    (a machine that is gone: no connection closes)."""
    cluster = setup(records=1)
    a, b = worker(cluster), worker(cluster)
    (m,) = a.poll(5)
    acquired = cluster.now
    a.crash(host=True)
    again = poll_until(b, lambda ms: True, cluster)
    assert values(again) == [("m-0", 2)]
    waited = cluster.now - acquired
    assert RECORD_LOCK_DURATION_MS <= waited <= RECORD_LOCK_DURATION_MS + 2_000, (waited, cluster.seed)


@pytest.mark.parametrize("seed", range(5))
def test_a_killed_process_gives_its_records_back_when_its_connections_close(seed):
    """A SIGKILLed consumer's operating system closes its connections; the broker ends its share
    session and releases what it held (measured on Kafka 4.3.1: within a second, whatever the
    lock), each delivery counted."""
    cluster = setup(records=4, seed=seed)
    a, b = worker(cluster), worker(cluster)
    held = poll_until(a, lambda ms: True, cluster)
    t = cluster.now
    a.crash()
    again = []
    while len(again) < len(held):
        again += b.poll(0.1)
        assert cluster.now - t < 1_000, (values(again), cluster.seed)
    assert values(again) == [(v, 2) for v, _ in values(held)]
    released = [op.value for op in cluster.history if op.f == "share_released_on_disconnect"]
    assert len(released) == 1, released


def test_a_shorter_group_lock_duration_expires_sooner():
    cluster = setup(records=1, **{"share.record.lock.duration.ms": 5_000})
    a, b = worker(cluster), worker(cluster)
    a.poll(5)
    t = cluster.now
    a.crash(host=True)
    poll_until(b, lambda ms: True, cluster)
    assert 5_000 <= cluster.now - t <= 7_000


@pytest.mark.parametrize("limit", [DELIVERY_COUNT_LIMIT, 2])
def test_the_delivery_count_limit_archives_a_poison_record(limit):
    """tryUpdateState: a release with deliveryCount >= limit goes to ARCHIVED, not AVAILABLE."""
    cluster = setup(records=1, **{"share.delivery.count.limit": limit})
    a = worker(cluster)
    counts = []
    for _ in range(3 * limit):
        for m in a.poll(1):
            counts.append(m.delivery_count())
            a.acknowledge(m, AcknowledgeType.RELEASE)
        a.commit_sync()
    assert counts == list(range(1, limit + 1)), cluster.seed
    archived = [op.value for op in cluster.history if op.f == "share_archived"]
    assert archived[-1]["delivery_limit"] == [0]


def test_renew_keeps_the_record_past_its_first_lock():
    """RENEW (KIP-1222): a new lock, no new delivery; nobody else gets it meanwhile. As with the
    Java client 4.3.1, the renewed record comes back from the next poll() (same delivery count),
    and cannot be acknowledged before."""
    cluster = setup(records=1, **{"share.record.lock.duration.ms": 5_000})
    a, b = worker(cluster), worker(cluster)
    (m,) = a.poll(5)
    for _ in range(3):  # a handler three times slower than the lock, renewing as it goes
        cluster.run_for(4_000)
        a.acknowledge(m, AcknowledgeType.RENEW)
        assert set(a.commit_sync().values()) == {None}
        with pytest.raises(IllegalStateException, match="not in flight"):
            a.acknowledge(m, AcknowledgeType.ACCEPT)
        assert a.poll(1) == [m] and m.delivery_count() == 1
        assert b.poll(0.5) == []
    a.acknowledge(m, AcknowledgeType.ACCEPT)
    assert set(a.commit_sync().values()) == {None}
    cluster.run_for(10_000)
    assert b.poll(1) == []


def test_an_acknowledgement_after_the_lock_expired_is_refused():
    """acknowledge() of a record the member no longer holds: INVALID_RECORD_STATE, nothing changes."""
    cluster = setup(records=1, **{"share.record.lock.duration.ms": 5_000})
    a, b = worker(cluster), worker(cluster)
    (m,) = a.poll(5)
    cluster.run_for(6_000)
    poll_until(b, lambda ms: True, cluster)  # b holds it now
    a.acknowledge(m, AcknowledgeType.ACCEPT)
    (result,) = a.commit_sync().values()
    assert isinstance(result, KafkaException) and result.args[0].name() == "INVALID_RECORD_STATE"
    failed = [op for op in cluster.history if op.f == OpName.SHARE_ACK and op.type == "fail"]
    assert failed


def test_latest_is_the_default_start():
    """share.auto.offset.reset=latest: what was written before the share-partition existed is skipped."""
    cluster = Cluster(3, seed=2)
    cluster.create_topic(TOPIC, min_insync_replicas=2)
    produce(cluster, 3)
    a = worker(cluster, mode="implicit")
    assert a.poll(2) == []
    produce(cluster, 2, start=3)
    assert [m.value() for m in poll_until(a, lambda ms: True, cluster, 5_000)] == [b"m-3", b"m-4"]


def test_implicit_mode_accepts_on_the_next_poll_and_explicit_mode_insists():
    cluster = setup(records=2)
    implicit = worker(cluster, mode="implicit")
    implicit.poll(5)
    with pytest.raises(IllegalStateException, match="explicit"):
        implicit.acknowledge(_fake_message(), AcknowledgeType.ACCEPT)
    implicit.poll(1)  # accepts both
    acks = [op for op in cluster.history if op.f == OpName.SHARE_ACK and op.type == "ok"]
    assert sum(len(op.value) for op in acks) == 2 and all(k == "accept" for op in acks for _, _, k in op.value)
    explicit = worker(cluster)
    produce(cluster, 1, start=2)
    poll_until(explicit, lambda ms: True, cluster)
    with pytest.raises(IllegalStateException, match="not acknowledged"):
        explicit.poll(1)


def _fake_message():
    from course_lib.broker.protocol import Record
    from course_lib.clients.share_consumer import Message

    return Message(TOPIC, 0, 0, Record(None, b"x", 0), 1)


def test_more_workers_than_partitions_all_get_work():
    """The share group assignor gives every member a partition; partitions are shared."""
    cluster = setup(records=0, partitions=2)
    workers = [worker(cluster) for _ in range(5)]
    cluster.run_for(6_000)  # a heartbeat round: everyone hears the last assignment
    assert all(w.assignment() for w in workers)
    assert {tp.partition for w in workers for tp in w.assignment()} == {0, 1}


def test_close_releases_what_the_member_holds_at_once():
    """releaseAcquiredRecords(memberId) on session close: no wait for the lock. The delivery
    counted (acquire incremented it; a release does not undo it), so the next one is delivery 2."""
    cluster = setup(records=1)
    a, b = worker(cluster), worker(cluster)
    a.poll(5)
    t = cluster.now
    a.close()
    got = poll_until(b, lambda ms: True, cluster)
    assert values(got) == [("m-0", 2)] and cluster.now - t < 5_000, cluster.seed


def test_a_leader_failover_keeps_what_was_acknowledged():
    """A new leader reads the share coordinator's state (maybeInitialize): acknowledged and
    archived records stay so; a released record keeps its persisted delivery count."""
    cluster = setup(records=3)
    a = worker(cluster)
    first, second, third = a.poll(5)
    a.acknowledge(first, AcknowledgeType.ACCEPT)
    a.acknowledge(second, AcknowledgeType.REJECT)
    a.acknowledge(third, AcknowledgeType.RELEASE)
    a.commit_sync()
    old = cluster.leader_of(TOPIC)
    cluster.crash(old)
    cluster.run_for(12_000)
    assert cluster.leader_of(TOPIC) != old
    got = poll_until(a, lambda ms: True, cluster)
    assert values(got) == [("m-2", 2)], cluster.seed


def test_a_record_held_at_a_failover_comes_back_with_its_persisted_count():
    """Acquisitions are not persisted: the new leader hands the record out again, counting from
    what was last written (nothing: delivery 1 again)."""
    cluster = setup(records=1)
    a = worker(cluster)
    (m,) = a.poll(5)
    cluster.crash(cluster.leader_of(TOPIC))
    cluster.run_for(12_000)
    b = worker(cluster)
    got = poll_until(b, lambda ms: True, cluster)
    assert values(got) == [("m-0", 1)], cluster.seed


def test_a_lost_acknowledge_answer_leaves_the_outcome_unknown_but_applied():
    cluster = setup(records=1)
    a, b = worker(cluster), worker(cluster)
    (m,) = a.poll(5)
    cluster.lose_next_share_ack(a.node_id)
    a.acknowledge(m, AcknowledgeType.ACCEPT)
    (result,) = a.commit_sync().values()
    assert isinstance(result, KafkaException)
    info = [op for op in cluster.history if op.f == OpName.SHARE_ACK and op.type == "info"]
    assert info
    cluster.run_for(RECORD_LOCK_DURATION_MS + 5_000)
    assert b.poll(1) == []  # the ACCEPT was applied: never delivered again


def test_a_write_from_an_older_leader_epoch_is_fenced():
    """The share coordinator refuses state from a deposed leader (FENCED_LEADER_EPOCH)."""
    from kafka import errors as Errors

    from course_lib.broker.protocol import ShareGroupStateResponse, WriteShareGroupStateRequest

    cluster = setup(records=1)
    a = worker(cluster)
    a.poll(5)
    cluster.run_for(1_000)  # the share-partition's first state write is replicated
    state_leader = cluster.leader_of("__share_group_state")
    coordinator = cluster.brokers[state_leader].share_state
    sent = []
    cluster.brokers[state_leader].send = lambda dst, msg: sent.append(msg)  # type: ignore[method-assign]
    coordinator.handle("broker-9", WriteShareGroupStateRequest(5, GROUP, (TOPIC, 0), -1, 0, ()))
    assert sent == [ShareGroupStateResponse(5, Errors.FencedLeaderEpochError)]


def test_no_share_group_no_share_state():
    """A run without share groups creates no __share_group_state and schedules nothing for them."""
    cluster = Cluster(3, seed=1)
    cluster.create_topic(TOPIC)
    cluster.run_for(5_000)
    assert "__share_group_state" not in cluster.controller.configs
    assert all(not b.shares.partitions and not b.share_groups.groups for b in cluster.brokers.values())


def test_a_group_coordinator_failover_keeps_members_and_their_records():
    """Membership is in memory: after the coordinator moves the members rejoin with the member
    ids they generated (KIP-848/932), so what they hold stays theirs and their ACCEPTs count."""
    cluster = setup(records=2)
    a = worker(cluster)
    (first, second) = a.poll(5)
    cluster.crash(cluster.leader_of("__consumer_offsets"))
    cluster.run_for(12_000)
    a.acknowledge(first, AcknowledgeType.ACCEPT)
    a.acknowledge(second, AcknowledgeType.ACCEPT)
    assert set(a.commit_sync().values()) == {None}
    cluster.run_for(10_000)  # heartbeats find the new coordinator
    assert a.assignment() == [("jobs", 0)]
    joins = [op for op in cluster.history if op.f == "share_assignment" and a.member_id in op.value["assignment"]]
    assert len({op.process for op in joins}) == 2, "the member rejoined at the new coordinator"


def test_a_silent_member_is_removed_after_the_session_timeout():
    """group.share.session.timeout.ms (45 s): a frozen member leaves the assignment."""
    from course_lib.broker.share_config import SESSION_TIMEOUT_MS

    cluster = setup(records=0, partitions=1)
    a, b = worker(cluster), worker(cluster)
    a.freeze()
    t = cluster.now
    cluster.run_for(SESSION_TIMEOUT_MS + 6_000)
    removed = [op for op in cluster.history if op.f == "member_removed" and op.value["member"] == a.member_id]
    assert removed and "no heartbeat" in removed[0].value["reason"]
    assert SESSION_TIMEOUT_MS <= removed[0].time_ms - t <= SESSION_TIMEOUT_MS + 6_000
    assert b.assignment() == [("jobs", 0)]


@pytest.mark.parametrize("seed", range(3))
def test_isolation_levels_hand_out_what_kafka_does(seed):
    """``share.isolation.level``: read_uncommitted hands out an aborted transaction's records too;
    read_committed archives them and stops at the last stable offset until the open transaction
    commits - tests/share_protocol_support.isolation_probe's sequence, with what Kafka 4.3.1 gave."""
    from tests.share_protocol_support import ISOLATION_EXPECTED

    cluster = Cluster(3, seed=seed)
    cluster.create_topic("iso", partitions=1)
    consumers = {}
    for level in ISOLATION_EXPECTED:
        cluster.alter_share_group_config(level, {"share.auto.offset.reset": "earliest", "share.isolation.level": level})
        consumers[level] = ShareConsumer({"bootstrap.servers": cluster, "group.id": level})
        consumers[level].subscribe(["iso"])
    txn, plain = (
        KafkaProducer(bootstrap_servers=cluster, transactional_id="iso"),
        KafkaProducer(bootstrap_servers=cluster),
    )
    txn.init_transactions()
    for values, commit in ((["a1", "a2"], False), (["c1", "c2"], True)):
        txn.begin_transaction()
        for v in values:
            txn.send("iso", v.encode(), partition=0)
        txn.flush()  # written, then ended: an abort drops what was never sent
        txn.commit_transaction() if commit else txn.abort_transaction()
    plain.send("iso", b"p1", partition=0).get()
    txn.begin_transaction()
    txn.send("iso", b"o1", partition=0)
    txn.flush()
    plain.send("iso", b"p2", partition=0).get()

    def drain() -> dict:
        got: dict = {level: [] for level in consumers}
        for _ in range(100):  # 10 s of the simulated clock: two heartbeat intervals
            for level, c in consumers.items():
                got[level] += [(m.value().decode(), m.delivery_count()) for m in c.poll(0.05)]
        return got

    while_open = drain()
    txn.commit_transaction()
    after = drain()
    got = {
        level: {"while_open": [v for v, _ in while_open[level]], "after_commit": [v for v, _ in after[level]]}
        for level in consumers
    }
    assert got == ISOLATION_EXPECTED, cluster.seed
    assert {n for w in (while_open, after) for ms in w.values() for _, n in ms} == {1}
    aborted = [op.value["offsets"] for op in cluster.history if op.f == "share_aborted_archived"]
    assert aborted == [[0, 1]], aborted


def test_by_duration_starts_a_new_group_within_the_window():
    """share.auto.offset.reset = by_duration:PT1H: the first record stamped within the last hour."""
    cluster = Cluster(3, seed=1)
    cluster.create_topic("dur", partitions=1)
    producer = KafkaProducer(bootstrap_servers=cluster)
    now = cluster.now
    for value, ago in (("old-1", 7_200_000), ("old-2", 7_200_000), ("new-1", 600_000), ("new-2", 600_000)):
        producer.send("dur", value.encode(), partition=0, timestamp_ms=now - ago)
    producer.flush()
    cluster.alter_share_group_config("d", {"share.auto.offset.reset": "by_duration:PT1H"})
    c = ShareConsumer({"bootstrap.servers": cluster, "group.id": "d"})
    c.subscribe(["dur"])
    got: list = []
    for _ in range(100):
        got += [m.value().decode() for m in c.poll(0.1)]
    assert got == ["new-1", "new-2"]
    with pytest.raises(ValueError, match="by_duration"):
        cluster.alter_share_group_config("d", {"share.auto.offset.reset": "by_duration:1h"})


@pytest.mark.parametrize("seed", range(3))
def test_a_stuck_record_caps_the_span_in_flight(seed):
    """``share.partition.max.record.locks`` caps the span from the start offset to the last record
    in flight (SharePartition.numInFlightRecords), not the records acquired: with offset 0 stuck,
    the other worker gets offsets 1 to 99 of 150 (Kafka 4.3.1: tests/share_protocol_support.py's
    record_locks_probe); once 0 is accepted, the rest."""
    from tests.share_protocol_support import RECORD_LOCKS, RECORD_LOCKS_EXPECTED

    cluster = setup(seed=seed, records=0, **{"share.partition.max.record.locks": RECORD_LOCKS})
    producer = KafkaProducer(bootstrap_servers=cluster)
    for i in range(150):
        producer.send(TOPIC, f"m-{i}".encode(), partition=0).get()  # one batch each
    stuck, fast = worker(cluster, **{"max.poll.records": 1}), worker(cluster, **{"max.poll.records": 50})
    (m,) = poll_until(stuck, lambda ms: True, cluster)
    got: list = []
    for _ in range(100):
        batch = fast.poll(0.1)
        for x in batch:
            got.append(x.offset())
            fast.acknowledge(x, AcknowledgeType.ACCEPT)
    seen = {"held": [m.offset()], "got": len(got), "first": min(got), "last": max(got)}
    assert seen == RECORD_LOCKS_EXPECTED, (seen, cluster.seed)
    stuck.acknowledge(m, AcknowledgeType.ACCEPT)
    stuck.commit_sync()
    for _ in range(100):
        for x in fast.poll(0.1):
            got.append(x.offset())
            fast.acknowledge(x, AcknowledgeType.ACCEPT)
    assert sorted(got) == list(range(1, 150)), cluster.seed
