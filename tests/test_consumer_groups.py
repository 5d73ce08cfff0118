"""Consumer-group liveness in the simulator, as kafka-python 3.0.12 and Kafka's classic group
coordinator do it: max_poll_interval_ms (a slow handler leaves the group, its commit fails, the
next poll rejoins), the rebalance timeout, the rebalance listener and static membership."""

import pytest
from kafka import ConsumerRebalanceListener
from kafka import errors as Errors
from kafka.structs import TopicPartition

from course_lib.broker import Cluster
from course_lib.clients import KafkaConsumer, KafkaProducer

TOPIC = "in"
ALL = {TopicPartition(TOPIC, 0), TopicPartition(TOPIC, 1)}


@pytest.fixture
def cluster(consumer_cluster):
    return consumer_cluster


def member(cluster, name, **config):
    config = {
        "group_id": "g",
        "client_id": name,
        "auto_offset_reset": "earliest",
        "enable_auto_commit": False,
        "session_timeout_ms": 6000,
        "heartbeat_interval_ms": 1000,
        "max_poll_interval_ms": 4000,
        **config,
    }
    return KafkaConsumer(bootstrap_servers=cluster, **config)


def settle(*consumers, rounds=30):
    for _ in range(rounds):
        for c in consumers:
            c.poll(timeout_ms=100)


def busy(cluster, ms, *pollers):
    """Simulated time passes (a member is in its handler) while ``pollers`` keep polling."""
    end = cluster.sim.now + ms
    while cluster.sim.now < end:
        if pollers:
            settle(*pollers, rounds=1)
        else:
            cluster.run_for(min(100, end - cluster.sim.now))


def test_a_handler_slower_than_max_poll_interval_is_thrown_out_and_its_commit_fails(cluster):
    slow, other = member(cluster, "slow"), member(cluster, "other")
    slow.subscribe([TOPIC])
    other.subscribe([TOPIC])
    settle(slow, other)
    assert len(slow.assignment()) == 1
    busy(cluster, 3500, other)  # the handler is busy, but still within 4000 ms: nothing happens
    slow.commit()
    busy(cluster, 5500, other)  # now past max_poll_interval_ms: the heartbeat thread leaves the group
    left = [op for op in cluster.history if op.f == "left_group"]
    assert [op.process for op in left] == ["slow"] and "max_poll_interval_ms=4000" in left[0].evidence["reason"]
    with pytest.raises(Errors.CommitFailedError, match="not part of an active group"):
        slow.commit()
    assert [op.type for op in cluster.history if op.f == "commit" and op.process == "slow"][-1] == "fail"
    settle(other, rounds=10)
    assert other.assignment() == ALL  # the other member took over: it reads the slow one's records again
    settle(slow, other)  # the next poll rejoins
    assert len(slow.assignment()) == 1 and len(other.assignment()) == 1
    slow.commit()


def test_a_long_poll_is_not_a_slow_handler(cluster):
    c = member(cluster, "c")
    c.subscribe([TOPIC])
    c.poll(timeout_ms=9000)  # inside poll() the consumer is alive, however long it waits
    assert not [op for op in cluster.history if op.f == "left_group"]


def test_a_rebalance_waits_the_rebalance_timeout_not_the_session_timeout(cluster):
    slow = member(cluster, "slow", max_poll_interval_ms=20_000)
    slow.subscribe([TOPIC])
    settle(slow)
    late = member(cluster, "late", max_poll_interval_ms=20_000)
    late.subscribe([TOPIC])
    late.poll(timeout_ms=100)  # asks to join: the group rebalances and waits for `slow`
    busy(cluster, 12_000, late)  # two session timeouts while `slow` is in its handler (heartbeats go on)
    assert not [op for op in cluster.history if op.f == "member_removed"]
    assert not late.assignment()  # everyone waits: a rebalance stops the whole group
    slow.poll(timeout_ms=100)  # it rejoins within its poll interval: nobody was thrown out
    settle(slow, late)
    assert len(slow.assignment()) == 1 and len(late.assignment()) == 1
    assert not [op for op in cluster.history if op.f in ("member_removed", "left_group")]


def test_a_member_missing_the_rebalance_timeout_is_removed(cluster):
    busy = member(cluster, "busy", max_poll_interval_ms=8000, session_timeout_ms=30_000)
    busy.subscribe([TOPIC])
    settle(busy)
    late = member(cluster, "late", max_poll_interval_ms=8000, session_timeout_ms=30_000)
    late.subscribe([TOPIC])
    late.poll(timeout_ms=100)
    start = cluster.sim.now
    while late.assignment() != ALL:
        late.poll(timeout_ms=200)
        assert cluster.sim.now - start < 12_000
    assert cluster.sim.now - start >= 7000  # it waited (about) the 8000 ms rebalance timeout


class Recorder(ConsumerRebalanceListener):
    def __init__(self, consumer):
        self.consumer, self.calls = consumer, []

    def on_partitions_revoked(self, revoked):
        self.calls.append(("revoked", sorted(tp.partition for tp in revoked)))
        if revoked:
            self.consumer.commit()  # still a member: committing on revocation works

    def on_partitions_assigned(self, assigned):
        self.calls.append(("assigned", sorted(tp.partition for tp in assigned)))

    def on_partitions_lost(self, lost):
        self.calls.append(("lost", sorted(tp.partition for tp in lost)))


def test_the_listener_commits_on_revocation_and_hears_lost_after_an_eviction(cluster):
    a = member(cluster, "a")
    listener = Recorder(a)
    a.subscribe([TOPIC], listener=listener)
    settle(a)
    assert listener.calls == [("assigned", [0, 1])]
    b = member(cluster, "b")
    b.subscribe([TOPIC])
    b.poll(timeout_ms=100)
    busy(cluster, 1500, b)  # a's heartbeat learns of the rebalance
    settle(a, b)
    assert listener.calls[1:] == [("revoked", [0, 1]), ("assigned", [0])]
    assert a.committed(TopicPartition(TOPIC, 0)) == 5 and a.committed(TopicPartition(TOPIC, 1)) == 5
    busy(cluster, 6000, b)  # too slow: thrown out, the partition is lost, not revoked
    settle(a, b)
    assert listener.calls[3:] == [("lost", [0]), ("assigned", [0])]


def test_a_listener_must_be_a_consumer_rebalance_listener(cluster):
    with pytest.raises(TypeError, match="ConsumerRebalanceListener"):
        member(cluster, "a").subscribe([TOPIC], listener=object())


def test_a_static_member_restarting_within_the_session_timeout_keeps_its_partitions(cluster):
    a = member(cluster, "a", group_instance_id="worker-a")
    b = member(cluster, "b", group_instance_id="worker-b")
    a.subscribe([TOPIC])
    b.subscribe([TOPIC])
    settle(a, b)
    before = a.assignment()
    generation = a.group_metadata().generation_id
    a.close()  # no LeaveGroup for a static member
    busy(cluster, 2000, b)
    again = member(cluster, "a2", group_instance_id="worker-a")
    again.subscribe([TOPIC])
    settle(again, b)
    assert again.assignment() == before and again.group_metadata().generation_id == generation
    assert not [
        op
        for op in cluster.history
        if op.f == "member_removed" or (op.f == "rebalance" and op.value["generation"] > generation)
    ]
    replaced = [op.value for op in cluster.history if op.f == "static_member_replaced"]
    assert replaced and replaced[0]["instance"] == "worker-a"


def test_a_dynamic_member_restarting_causes_a_rebalance(cluster):
    a, b = member(cluster, "a"), member(cluster, "b")
    a.subscribe([TOPIC])
    b.subscribe([TOPIC])
    settle(a, b)
    generation = b.group_metadata().generation_id
    a.close()  # LeaveGroup: b gets everything at once
    settle(b)
    assert b.assignment() == ALL and b.group_metadata().generation_id > generation


def test_committed_offsets_of_an_empty_group_expire_after_offsets_retention():
    cluster = Cluster(3, seed=3, group_initial_rebalance_delay_ms=0, offsets_retention_minutes=1)
    cluster.create_topic(TOPIC, partitions=2, min_insync_replicas=2)
    producer = KafkaProducer(bootstrap_servers=cluster)
    for i in range(10):
        producer.send(TOPIC, f"m-{i}".encode(), partition=i % 2)
    producer.flush()
    a = member(cluster, "a")
    a.subscribe([TOPIC])
    settle(a)
    a.commit()
    a.close()
    cluster.run_for(30_000)  # empty for half the retention: the offsets are still there
    b = member(cluster, "b", auto_offset_reset="latest")
    assert b.committed(TopicPartition(TOPIC, 0)) == 5
    b.close()
    cluster.run_for(61_000)
    c = member(cluster, "c")
    assert c.committed(TopicPartition(TOPIC, 0)) is None  # expired: a returning member starts by auto_offset_reset
    expired = [op.value for op in cluster.history if op.f == "offsets_expired"]
    assert expired and expired[0]["partitions"] == [[TOPIC, 0], [TOPIC, 1]]


def test_offsets_retention_must_be_positive():
    with pytest.raises(ValueError, match="offsets_retention_minutes"):
        Cluster(1, offsets_retention_minutes=0)


def test_a_static_member_past_its_poll_interval_fails_its_commit_and_gets_its_partition_back(cluster):
    a = member(cluster, "a", group_instance_id="worker-a")
    b = member(cluster, "b", group_instance_id="worker-b")
    a.subscribe([TOPIC])
    b.subscribe([TOPIC])
    settle(a, b)
    before, generation = a.assignment(), b.group_metadata().generation_id
    busy(cluster, 5500, b)  # a is past max_poll_interval_ms=4000 but within the 6000 ms session
    assert not [op for op in cluster.history if op.f == "member_removed"]  # no LeaveGroup for a static member
    with pytest.raises(Errors.CommitFailedError):
        a.commit()
    settle(a, b)
    assert a.assignment() == before and b.group_metadata().generation_id == generation
