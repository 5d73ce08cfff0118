"""The simulated KafkaConsumer: groups, committed offsets, positions, auto-commit, rebalances,
and bad input - with kafka-python's names and error types."""

import pytest
from kafka import errors as Errors
from kafka.structs import OffsetAndMetadata, TopicPartition

from course_lib.clients import ConfigurationError, KafkaConsumer

TOPIC = "in"


@pytest.fixture
def cluster(consumer_cluster):
    return consumer_cluster


def consumer(cluster, **config):
    config.setdefault("auto_offset_reset", "earliest")
    config.setdefault("session_timeout_ms", 6000)
    config.setdefault("heartbeat_interval_ms", 2000)
    return KafkaConsumer(bootstrap_servers=cluster, **config)


def drain(c, polls=10):
    out = []
    for _ in range(polls):
        for records in c.poll(timeout_ms=300).values():
            out += [r.value.decode() for r in records]
    return out


def test_a_group_member_reads_everything_and_commits_the_next_offset(cluster):
    c = consumer(cluster, group_id="g", enable_auto_commit=False)
    c.subscribe([TOPIC])
    assert sorted(drain(c)) == sorted(f"m-{i}" for i in range(10))
    assert c.assignment() == {TopicPartition(TOPIC, 0), TopicPartition(TOPIC, 1)}
    c.commit()
    assert c.committed(TopicPartition(TOPIC, 0)) == 5  # the NEXT offset to read
    assert c.position(TopicPartition(TOPIC, 1)) == 5


def test_a_restarted_member_resumes_at_the_committed_offset(cluster):
    first = consumer(cluster, group_id="g", enable_auto_commit=False)
    first.subscribe([TOPIC])
    while not first.assignment() or first.positions.get((TOPIC, 0)) is None:
        first.poll(timeout_ms=100, max_records=1)
    first.poll(timeout_ms=300, max_records=3)
    first.commit({TopicPartition(TOPIC, 0): OffsetAndMetadata(2, "", -1)})
    first.close()
    second = consumer(cluster, group_id="g", enable_auto_commit=False)
    second.subscribe([TOPIC])
    got = drain(second)
    assert "m-0" not in got and "m-2" not in got and "m-4" in got  # partition 0 resumed at offset 2


def test_committed_offsets_survive_a_coordinator_crash(cluster):
    c = consumer(cluster, group_id="g", enable_auto_commit=False)
    c.subscribe([TOPIC])
    drain(c)
    c.commit()
    coordinator = cluster.leader_of("__consumer_offsets")
    cluster.crash(coordinator)
    cluster.run_for(12_000)
    assert cluster.leader_of("__consumer_offsets") != coordinator
    assert c.committed(TopicPartition(TOPIC, 0)) == 5


def test_two_members_split_partitions_and_a_crash_moves_them(cluster):
    a = consumer(cluster, group_id="g", enable_auto_commit=False, client_id="a")
    b = consumer(cluster, group_id="g", enable_auto_commit=False, client_id="b")
    a.subscribe([TOPIC])
    b.subscribe([TOPIC])
    for _ in range(20):
        a.poll(timeout_ms=100)
        b.poll(timeout_ms=100)
    assert len(a.assignment()) == 1 and len(b.assignment()) == 1
    b.crash()
    for _ in range(100):
        a.poll(timeout_ms=200)
        if len(a.assignment()) == 2:
            break
    assert len(a.assignment()) == 2
    removed = [op.value for op in cluster.history if op.f == "member_removed"]
    assert removed and "no heartbeat" in removed[0]["reason"]


def test_a_commit_during_a_rebalance_works_and_one_after_it_fails(cluster):
    a = consumer(cluster, group_id="g", enable_auto_commit=False, client_id="a", max_poll_interval_ms=5000)
    a.subscribe([TOPIC])
    drain(a, 5)
    b = consumer(cluster, group_id="g", enable_auto_commit=False, client_id="b", max_poll_interval_ms=5000)
    b.subscribe([TOPIC])
    b.poll(timeout_ms=100)
    cluster.run_for(2000)  # a's heartbeat learns of the rebalance, which waits for a to rejoin
    a.commit()  # Kafka accepts the current generation's commit while the group prepares a rebalance
    assert a.committed(TopicPartition(TOPIC, 0)) == 5
    for _ in range(40):  # a stays in its handler past the rebalance timeout: the group goes on without it
        b.poll(timeout_ms=100)
    with pytest.raises(Errors.CommitFailedError):
        a.commit()


def test_auto_commit_commits_what_poll_returned_on_the_interval_and_on_close(cluster):
    c = consumer(cluster, group_id="g", enable_auto_commit=True, auto_commit_interval_ms=1000)
    c.subscribe([TOPIC])
    drain(c, 3)
    commits = [op for op in cluster.history if op.f == "commit"]
    cluster.run_for(1100)
    c.poll(timeout_ms=10)
    cluster.run_for(50)
    assert len([op for op in cluster.history if op.f == "commit" and op.type == "ok"]) > len(commits)
    c.close()
    assert cluster.history[-1].f in ("commit", "member_removed", "rebalance") or any(
        op.f == "commit" for op in cluster.history[-6:]
    )


def test_seek_and_manual_assignment_without_a_group(cluster):
    c = consumer(cluster)
    c.assign([TopicPartition(TOPIC, 1)])
    assert drain(c) == [f"m-{i}" for i in range(1, 10, 2)]
    c.seek(TopicPartition(TOPIC, 1), 3)
    assert drain(c) == ["m-7", "m-9"]


def test_latest_offset_reset_skips_existing_records(cluster):
    c = consumer(cluster, auto_offset_reset="latest")
    c.assign([TopicPartition(TOPIC, 0)])
    assert drain(c, 3) == []


def test_bad_input_gets_kafka_python_errors(cluster):
    with pytest.raises(ConfigurationError, match="isolation_level must be one of"):
        KafkaConsumer(bootstrap_servers=cluster, isolation_level="committed")
    with pytest.raises(ConfigurationError, match="did you mean 'auto_offset_reset'"):
        KafkaConsumer(bootstrap_servers=cluster, auto_offset_rest="earliest")
    with pytest.raises(ConfigurationError, match="heartbeat_interval_ms"):
        KafkaConsumer(bootstrap_servers=cluster, session_timeout_ms=1000, heartbeat_interval_ms=2000)
    no_group = consumer(cluster)
    with pytest.warns(UserWarning, match="without group_id"):  # kafka-python accepts it and never joins
        no_group.subscribe([TOPIC])
    assert no_group.poll(timeout_ms=1000) == {}
    with pytest.raises(Errors.IllegalStateError, match="group_id"):
        no_group.commit()
    grouped = consumer(cluster, group_id="g", enable_auto_commit=False)
    grouped.subscribe([TOPIC])
    drain(grouped, 3)
    with pytest.raises(Errors.IllegalStateError, match="choose one way"):
        grouped.assign([TopicPartition(TOPIC, 0)])
    with pytest.raises(Errors.IllegalStateError, match="not assigned"):
        grouped.commit({TopicPartition("other", 0): OffsetAndMetadata(1, "", -1)})
    with pytest.raises(ValueError, match="NEXT offset"):
        grouped.commit({TopicPartition(TOPIC, 0): OffsetAndMetadata(-3, "", -1)})
    with pytest.raises(ValueError, match="Unassigned partition"):  # kafka-python's class
        grouped.seek(TopicPartition("other", 0), 1)
    grouped.close()
    with pytest.raises(Errors.IllegalStateError, match="closed"):
        grouped.poll()


def test_polls_and_commits_are_in_the_history(cluster):
    c = consumer(cluster, group_id="g", enable_auto_commit=False)
    c.subscribe([TOPIC])
    drain(c, 5)
    c.commit()
    kinds = {op.f for op in cluster.history if op.process == c.node_id}
    assert {"poll", "commit", "assigned"} <= kinds


def test_an_unknown_group_has_no_committed_offsets(cluster):
    c = consumer(cluster, group_id="nobody-ever-joined")
    assert c.committed(TopicPartition(TOPIC, 0)) is None


def test_a_commit_with_nothing_assigned_returns_without_a_request(cluster):
    """kafka-python 3.0.12 returns from commit() when there is nothing to commit, even mid-join."""
    c = consumer(cluster, group_id="g", enable_auto_commit=False)
    c.subscribe([TOPIC])  # subscribed, not joined yet: no partition, no generation
    commits_before = [op for op in cluster.history.ops if op.f == "commit"]
    c.commit()
    assert [op for op in cluster.history.ops if op.f == "commit"] == commits_before
    drain(c)
    c.commit()  # now assigned: a real commit
    assert c.committed(TopicPartition(TOPIC, 0)) == 5
