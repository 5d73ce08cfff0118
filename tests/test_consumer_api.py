"""The simulated KafkaConsumer's kafka-python API beyond poll/commit (issue 19): the offset
lookups, highwater, pause/resume, the seeks, subscribe's checks, unsubscribe - on the simulator
alone (fast). tests/real/test_consumer_api_differential.py compares the same calls with
kafka-python on a real Kafka; the values asserted here are the ones measured there."""

import inspect

import kafka
import pytest
from kafka import errors as Errors
from kafka.structs import OffsetAndTimestamp, TopicPartition

from course_lib.broker import Cluster
from course_lib.clients import KafkaConsumer, KafkaProducer

TOPIC = "api"
TP0, TP1 = TopicPartition(TOPIC, 0), TopicPartition(TOPIC, 1)


@pytest.fixture
def cluster():
    """Three brokers; five records in partition 0 with timestamps 1000..5000 (in that order),
    partition 1 empty."""
    c = Cluster(brokers=3, seed=7)
    c.create_topic(TOPIC, partitions=2)
    p = KafkaProducer(bootstrap_servers=c, acks="all")
    for i in range(5):
        p.send(TOPIC, value=f"v{i}".encode(), partition=0, timestamp_ms=1000 * (i + 1))
    p.flush()
    return c


def consumer(cluster, **config):
    config.setdefault("auto_offset_reset", "earliest")
    return KafkaConsumer(bootstrap_servers=cluster, **config)


def values(records: dict) -> list:
    return [r.value.decode() for rs in records.values() for r in rs]


def poll_all(c, polls=6) -> list:
    out = []
    for _ in range(polls):
        out += values(c.poll(timeout_ms=300))
    return out


# ---- the offset lookups ----------------------------------------------------------------------------
def test_lookups_need_no_assignment_and_move_no_position(cluster):
    c = consumer(cluster)
    assert c.beginning_offsets([TP0, TP1]) == {TP0: 0, TP1: 0}
    assert c.end_offsets([TP0, TP1]) == {TP0: 5, TP1: 0}
    assert c.end_offsets([]) == {}
    assert c.assignment() == set()
    c.assign([TP0])
    c.seek(TP0, 2)
    c.end_offsets([TP0])
    assert c.position(TP0) == 2


def test_offsets_for_times_finds_the_first_record_at_or_after_the_time(cluster):
    c = consumer(cluster)
    epoch = cluster.partition_state(TOPIC, 0)["leader_epoch"]
    assert c.offsets_for_times({TP0: 2500, TP1: 0}) == {TP0: OffsetAndTimestamp(2, 3000, epoch), TP1: None}
    assert c.offsets_for_times({TP0: 3000}) == {TP0: OffsetAndTimestamp(2, 3000, epoch)}
    assert c.offsets_for_times({TP0: 0})[TP0].offset == 0
    assert c.offsets_for_times({TP0: 5001}) == {TP0: None}
    assert c.offsets_for_times({}) == {}
    with pytest.raises(ValueError, match="cannot be negative"):
        c.offsets_for_times({TP0: -1})


def test_offsets_for_times_searches_in_offset_order_not_by_smallest_timestamp():
    """Timestamps need not grow with offsets (CreateTime is the producer's): Kafka answers with the
    first offset whose timestamp is >= t - measured on Kafka 4.3.1 with 5000, 1000, 3000."""
    cluster = Cluster(brokers=1, seed=1)
    cluster.create_topic("t", partitions=1, replication_factor=1, min_insync_replicas=1)
    p = KafkaProducer(bootstrap_servers=cluster)
    for ts in (5000, 1000, 3000):
        p.send("t", value=b"x", partition=0, timestamp_ms=ts)
        p.flush()
    c = consumer(cluster)
    tp = TopicPartition("t", 0)
    for target in (0, 1000, 2000, 4000, 5000):
        assert c.offsets_for_times({tp: target})[tp].offset == 0, target
    assert c.offsets_for_times({tp: 5001}) == {tp: None}


def test_read_committed_lookups_stop_at_the_last_stable_offset(cluster):
    p = KafkaProducer(bootstrap_servers=cluster, transactional_id="tx")
    p.init_transactions()
    p.begin_transaction()
    p.send(TOPIC, value=b"open", partition=1, timestamp_ms=1)
    p.flush()
    committed = consumer(cluster, isolation_level="read_committed")
    uncommitted = consumer(cluster)
    assert committed.end_offsets([TP1]) == {TP1: 0}
    assert uncommitted.end_offsets([TP1]) == {TP1: 1}
    assert committed.offsets_for_times({TP1: 0}) == {TP1: None}  # offset 0 is not below the LSO
    assert uncommitted.offsets_for_times({TP1: 0})[TP1].offset == 0
    p.commit_transaction()
    cluster.run_for(50)  # the markers are written after commit_transaction returns
    assert committed.end_offsets([TP1]) == {TP1: 2}  # the record and its COMMIT marker
    # the marker carries the (virtual) time it was written: a lookup past the data finds it
    marker = committed.offsets_for_times({TP1: 2})[TP1]
    assert marker.offset == 1 and 2 < marker.timestamp < cluster.now


def test_a_lookup_follows_the_leader_through_an_election(cluster):
    c = consumer(cluster)
    c.end_offsets([TP0])  # the consumer now knows the old leader
    old = cluster.leader_of(TOPIC, 0)
    cluster.crash(old)
    assert c.end_offsets([TP0]) == {TP0: 5}
    assert cluster.leader_of(TOPIC, 0) != old


def test_a_partition_without_a_leader_times_out_after_timeout_ms(cluster):
    c = consumer(cluster)
    start = cluster.now
    with pytest.raises(Errors.KafkaTimeoutError, match="1500 ms"):
        c.end_offsets([TopicPartition(TOPIC, 7)], timeout_ms=1500)
    assert 1500 <= cluster.now - start < 1500 + 200
    with pytest.raises(Errors.KafkaTimeoutError):
        c.offsets_for_times({TopicPartition("no-such-topic", 0): 0}, timeout_ms=500)


# ---- highwater, pause/resume ---------------------------------------------------------------------
def test_highwater_comes_with_fetches(cluster):
    c = consumer(cluster)
    with pytest.raises(Errors.IllegalStateError, match="not assigned"):
        c.highwater(TP0)
    with pytest.raises(TypeError, match="TopicPartition"):
        c.highwater((TOPIC, 0))
    c.assign([TP0, TP1])
    assert c.highwater(TP0) is None  # before any fetch
    assert poll_all(c) == [f"v{i}" for i in range(5)]
    assert c.highwater(TP0) == 5 and c.highwater(TP1) == 0
    assert c.metrics()["consumer-fetch-manager-metrics"]["records-lag-max"] == 0


def test_a_paused_partition_is_not_fetched_until_resumed(cluster):
    c = consumer(cluster)
    with pytest.raises(KeyError, match="not assigned"):  # kafka-python: KeyError, not IllegalStateError
        c.pause(TP0)
    with pytest.raises(TypeError):
        c.pause((TOPIC, 0))
    with pytest.raises(KeyError):
        c.resume(TP0)
    assert c.paused() == set()
    c.assign([TP0, TP1])
    c.pause(TP0)
    c.pause(TP0)
    assert c.paused() == {TP0}
    assert poll_all(c) == []
    assert c.highwater(TP0) is None  # nothing fetched while paused
    c.resume()  # no partitions: resumes nothing
    assert c.paused() == {TP0}
    c.resume(TP0)
    assert poll_all(c) == [f"v{i}" for i in range(5)]


def test_records_fetched_before_the_pause_come_after_the_resume(cluster):
    c = consumer(cluster, max_poll_records=2)
    c.assign([TP0])
    assert values(c.poll(timeout_ms=500)) == ["v0", "v1"]
    c.pause(TP0)
    assert c.poll(timeout_ms=500) == {}
    assert c.position(TP0) == 2
    c.resume(TP0)
    assert poll_all(c) == ["v2", "v3", "v4"]


def test_pause_survives_a_reassignment_of_the_same_partition(cluster):
    c = consumer(cluster)
    c.assign([TP0, TP1])
    c.pause(TP1)
    c.assign([TP1])
    assert c.paused() == {TP1}


# ---- seeks ---------------------------------------------------------------------------------------
def test_seek_checks_in_kafka_pythons_order(cluster):
    c = consumer(cluster)
    with pytest.raises(ValueError, match="Unassigned partition"):
        c.seek(TP0, 1)
    with pytest.raises(ValueError, match="No partitions are currently assigned"):
        c.seek_to_end()
    with pytest.raises(ValueError, match="No partitions are currently assigned"):
        c.seek_to_beginning()
    with pytest.raises(ValueError, match="Unassigned partition"):
        c.seek_to_end(TP0)
    with pytest.raises(TypeError):
        c.seek_to_beginning((TOPIC, 0))
    c.assign([TP0])
    with pytest.raises(ValueError, match="int >= 0"):
        c.seek(TP0, -1)


def test_seek_to_end_and_beginning_are_looked_up_lazily(cluster):
    c = consumer(cluster)
    c.assign([TP0, TP1])
    c.seek_to_end()
    KafkaProducer(bootstrap_servers=cluster).send(TOPIC, value=b"v5", partition=0).get(timeout=5)
    assert c.position(TP0) == 6  # looked up now: the record sent after seek_to_end is skipped too
    assert c.position(TP1) == 0
    assert poll_all(c) == []
    c.seek_to_beginning(TP0)
    assert c.position(TP0) == 0
    assert poll_all(c) == [f"v{i}" for i in range(6)]


def test_commit_right_after_seek_to_beginning_commits_nothing(cluster):
    """kafka-python commits only partitions with a valid position (``all_consumed_offsets``); one
    awaiting its seek_to_beginning lookup has none until the next poll() or position()."""
    c = consumer(cluster, group_id="g-seek-commit", enable_auto_commit=False)
    c.assign([TP0, TP1])
    c.seek(TP1, 0)
    c.seek_to_beginning(TP0)
    c.commit()
    assert (c.committed(TP0), c.committed(TP1)) == (None, 0)


def test_a_position_looked_up_before_any_poll_is_not_committed(cluster):
    """kafka-python looks positions up only inside poll()/position(): a commit() before either
    commits nothing. The simulator looks them up as soon as the client runs (here inside
    committed() and end_offsets()) and keeps that timing, but commit() leaves such a position
    out until the next poll()/position() (client differential, seed 242 of 300)."""
    c = consumer(cluster, group_id="g-early", enable_auto_commit=False)
    c.assign([TP0, TP1])
    assert c.committed(TP0) is None
    c.end_offsets([TP0, TP1])
    assert c._partitions[TP0].position == 0  # found early: the case this checks
    c.commit()
    assert c.committed(TP0) is None
    assert c.position(TP0) == 0
    c.commit()
    assert (c.committed(TP0), c.committed(TP1)) == (0, 0)


def test_seek_to_end_wins_over_a_lookup_started_before_it(cluster):
    """committed() runs the client while the auto_offset_reset=earliest lookup of the assigned
    partitions is under way; its answer comes after seek_to_end() and must not be applied
    (kafka-python's ``_reset_offset_if_needed`` skips a reset no longer asked for). The
    simulator used to read from 0 here."""
    c = consumer(cluster, group_id="g-seek-end", enable_auto_commit=False)
    c.assign([TP0, TP1])
    assert c.committed(TP0) is None
    assert c._partitions[TP0].resetting  # the earliest lookup is in flight: the case this checks
    c.seek_to_end()
    assert poll_all(c) == []
    assert (c.position(TP0), c.position(TP1)) == (5, 0)


def test_a_committed_offset_does_not_override_a_pending_seek_to_end(cluster):
    """The committed-offset lookup is for partitions *missing* a position; one awaiting
    seek_to_end() is not (kafka-python's ``missing_fetch_positions``)."""
    first = consumer(cluster, group_id="g-committed", enable_auto_commit=False)
    first.assign([TP0])
    first.commit({TP0: 1})
    c = consumer(cluster, group_id="g-committed", enable_auto_commit=False)
    c.assign([TP0])
    c.seek_to_end()
    assert c.committed(TP0) == 1
    assert (poll_all(c), c.position(TP0)) == ([], 5)


def test_seek_to_end_under_read_committed_is_the_last_stable_offset(cluster):
    p = KafkaProducer(bootstrap_servers=cluster, transactional_id="tx")
    p.init_transactions()
    p.begin_transaction()
    p.send(TOPIC, value=b"open", partition=0)
    p.flush()
    c = consumer(cluster, isolation_level="read_committed")
    c.assign([TP0])
    c.seek_to_end(TP0)
    assert c.position(TP0) == 5  # the open transaction's record at 5 holds the LSO back


def test_the_position_passes_a_trailing_marker_with_the_records_before_it(cluster):
    """Measured with kafka-python on Kafka 4.3.1: the poll that returns a transaction's last
    records moves the position past its COMMIT marker when the marker came in the same fetch
    (records of the same log segment - with timestamps from 1970 Kafka rolls a segment at each
    append, and the marker comes a fetch later)."""
    p = KafkaProducer(bootstrap_servers=cluster, transactional_id="tx")
    p.init_transactions()
    p.begin_transaction()
    for i in range(3):
        p.send(TOPIC, value=f"t{i}".encode(), partition=1)
    p.commit_transaction()
    cluster.run_for(50)
    c = consumer(cluster, isolation_level="read_committed")
    c.assign([TP1])
    got = []
    while len(got) < 3:
        got += values(c.poll(timeout_ms=300))
    assert c.position(TP1) == 4 and c.highwater(TP1) == 4


# ---- subscribe / unsubscribe / poll's checks -----------------------------------------------------
def test_subscribe_checks_in_kafka_pythons_order(cluster):
    c = consumer(cluster, group_id="g")
    with pytest.raises(TypeError, match=r"subscribe\(\['api'\]\)"):
        c.subscribe(TOPIC)
    with pytest.raises(ValueError, match="topics or pattern"):
        c.subscribe()
    with pytest.raises(Errors.IllegalStateError):
        c.subscribe([TOPIC], pattern="a.*")
    assert c.subscription() is None
    c.subscribe([TOPIC])
    assert c.subscription() == {TOPIC}
    with pytest.raises(Errors.IllegalStateError):
        c.assign([TP0])


def test_a_pattern_subscription_joins_with_the_matching_topics(cluster):
    cluster.create_topic("apx", partitions=1)
    cluster.create_topic("other", partitions=1)
    c = consumer(cluster, group_id="g", enable_auto_commit=False)
    c.subscribe(pattern="^ap")
    assert c.subscription() == {"api", "apx"}
    assert poll_all(c, polls=20) == [f"v{i}" for i in range(5)]  # the first join waits 3 s
    assert c.assignment() == {TP0, TP1, TopicPartition("apx", 0)}


def test_unsubscribe_leaves_the_group_and_allows_assign(cluster):
    first = consumer(cluster, group_id="g", enable_auto_commit=False)
    second = consumer(cluster, group_id="g", enable_auto_commit=False)
    first.subscribe([TOPIC])
    second.subscribe([TOPIC])
    for _ in range(20):
        first.poll(timeout_ms=100)
        second.poll(timeout_ms=100)
    assert len(first.assignment()) == len(second.assignment()) == 1
    first.commit()
    first.unsubscribe()
    assert first.subscription() is None and first.assignment() == set()
    for _ in range(60):
        second.poll(timeout_ms=100)
    assert second.assignment() == {TP0, TP1}  # the LeaveGroup rebalanced the group at once
    first.assign([TP0])
    assert first.position(TP0) in (0, 5)  # the committed offset, or earliest without one


def test_poll_checks_its_arguments_before_the_closed_state(cluster):
    c = consumer(cluster)
    with pytest.raises(ValueError, match="negative"):
        c.poll(timeout_ms=-1)
    with pytest.raises(TypeError):
        c.poll(max_records=1.5)
    with pytest.raises(ValueError, match="positive"):
        c.poll(max_records=0)
    c.close()
    with pytest.raises(ValueError):  # still the argument first, as in kafka-python
        c.poll(timeout_ms=-1)
    with pytest.raises(Errors.IllegalStateError, match="closed"):
        c.poll()
    assert list(c) == []  # iterating a closed consumer stops at once


def test_context_managers_close_the_clients(cluster):
    with consumer(cluster) as c:
        c.assign([TP0])
    with KafkaProducer(bootstrap_servers=cluster) as p:
        p.send(TOPIC, value=b"x", partition=1)
    assert c._closed and p._closed
    with pytest.raises(ValueError, match="Invalid timeout"):
        KafkaProducer(bootstrap_servers=cluster).close(timeout=-1)


def test_partitions_for_topic_of_an_unknown_topic_is_empty(cluster):
    c = consumer(cluster)
    assert c.partitions_for_topic(TOPIC) == {0, 1}
    assert c.partitions_for_topic("nope") == set()


# ---- the whole public API ------------------------------------------------------------------------
#: kafka-python's public names the simulator leaves out on purpose, and why
NOT_SIMULATED = {
    "DEFAULT_CONFIG": "configuration is validated by course_lib.clients.config (same defaults)",
    "DEFAULT_SESSION_TIMEOUT_MS_PRE_KIP_735": "a constant for brokers older than 3.0",
    "DEPRECATED_CONFIGS": "configuration is validated by course_lib.clients.config",
    "max_usable_produce_magic": "the simulator writes v2 batches only",
}


@pytest.mark.parametrize(("real", "sim"), [(kafka.KafkaConsumer, KafkaConsumer), (kafka.KafkaProducer, KafkaProducer)])
def test_every_public_method_of_kafka_python_exists_with_its_signature(real, sim):
    missing, different = [], []
    for name in sorted(n for n in dir(real) if not n.startswith("_") or n in ("__enter__", "__exit__")):
        if name in NOT_SIMULATED:
            continue
        if not hasattr(sim, name):
            missing.append(name)
            continue
        ours, theirs = getattr(sim, name), getattr(real, name)
        if callable(theirs) and not isinstance(theirs, type):
            want = [(p.name, p.default) for p in inspect.signature(theirs).parameters.values()]
            got = [(p.name, p.default) for p in inspect.signature(ours).parameters.values()]
            if name != "__exit__" and got != want:
                different.append((name, want, got))
    assert not missing, f"{sim.__name__} lacks kafka-python's {missing}"
    assert not different, f"signatures differ from kafka-python's: {different}"


def test_a_closed_consumer_refuses_what_needs_a_broker(cluster):
    """Measured on Kafka 4.3.1: kafka-python's network loop is gone after close()."""
    c = consumer(cluster, group_id="g", enable_auto_commit=False)
    c.assign([TP0])
    assert c.position(TP0) == 0
    c.close()
    for call in (lambda: c.end_offsets([TP0]), lambda: c.committed(TP0), c.commit, c.topics):
        with pytest.raises(RuntimeError, match="closed"):
            call()
    assert c.position(TP0) == 0 and c.assignment() == {TP0}  # answered from memory


def test_bootstrap_waits_for_the_metadata(cluster):
    c = consumer(cluster)
    c.bootstrap(timeout_ms=5000)
    assert c._leaders_by_tp[(TOPIC, 0)][0] == cluster.leader_of(TOPIC, 0)
    assert c.bootstrap_connected() is False  # as measured with kafka-python


def test_commit_after_close_raises_even_with_nothing_to_commit(cluster):
    """kafka-python enters its closed network loop before it looks at the offsets (measured on
    Kafka 4.3.1 by tests/real/test_consumer_api_differential.py: RuntimeError)."""
    c = consumer(cluster, group_id="g-closed")
    c.assign([TopicPartition(TOPIC, 0)])
    c.close()
    with pytest.raises(RuntimeError, match="closed"):
        c.commit()
