"""The controller: fencing, clean election from the ISR, epochs, offline partitions, unclean
election."""

import pytest

from course_lib.broker import Cluster

TOPIC = "t"  # the topic the `cluster` fixture in conftest.py creates


def test_a_dead_leader_is_replaced_by_an_isr_member_with_a_higher_epoch(cluster):
    assert cluster.leader_of(TOPIC) == 1
    cluster.crash(1)
    cluster.run_for(2900)
    assert cluster.leader_of(TOPIC) == 1  # the session has not expired yet
    cluster.run_for(700)
    state = cluster.partition_state(TOPIC)
    assert (state["leader"], state["leader_epoch"], state["isr"]) == (2, 1, [2, 3])
    elect = [op.value for op in cluster.history if op.f == "elect"]
    assert elect[-1]["unclean"] is False and "fenced" in elect[-1]["reason"]


def test_without_a_live_isr_member_the_partition_goes_offline():
    c = Cluster(
        3, seed=1, broker_session_timeout_ms=3000, broker_heartbeat_interval_ms=500, replica_lag_time_max_ms=2000
    )
    c.create_topic(TOPIC, replication_factor=3, min_insync_replicas=1)
    c.crash(2)
    c.crash(3)
    c.run_for(5000)
    assert c.partition_state(TOPIC)["isr"] == [1]
    c.crash(1)
    c.restart(2)
    c.run_for(5000)
    assert c.leader_of(TOPIC) is None  # 2 is alive but out of sync: no clean candidate
    with pytest.raises(RuntimeError, match="offline"):
        c.committed_records(TOPIC)
    c.restart(1)
    c.run_for(2000)
    assert c.leader_of(TOPIC) == 1


def test_unclean_election_picks_an_out_of_sync_replica():
    c = Cluster(
        3, seed=1, broker_session_timeout_ms=3000, broker_heartbeat_interval_ms=500, replica_lag_time_max_ms=2000
    )
    c.create_topic(TOPIC, replication_factor=3, min_insync_replicas=1, unclean_leader_election_enable=True)
    c.crash(2)
    c.crash(3)
    c.run_for(5000)
    c.crash(1)
    c.restart(3)
    c.run_for(5000)
    state = c.partition_state(TOPIC)
    assert state["leader"] == 3 and state["isr"] == [3]
    assert [op.value["unclean"] for op in c.history if op.f == "elect"][-1] is True


def test_a_restarted_broker_is_fenced_and_rejoins_as_follower(cluster):
    cluster.crash(1)
    cluster.restart(1)  # before its session expired: a new incarnation
    cluster.run_for(1000)
    state = cluster.partition_state(TOPIC)
    assert state["leader"] == 2 and state["leader_epoch"] == 1
    assert cluster.run_until(lambda: cluster.partition_state(TOPIC)["isr"] == [1, 2, 3], 10_000)


def test_an_isolated_broker_misses_decisions_and_catches_up_after_healing(cluster):
    cluster.isolate(2)
    cluster.crash(1)
    cluster.run_for(3600)  # 2 is fenced too (no heartbeats reach the controller): 3 leads
    assert cluster.leader_of(TOPIC) == 3
    cluster.heal()
    cluster.restart(1)
    assert cluster.run_until(lambda: cluster.partition_state(TOPIC)["isr"] == [1, 2, 3], 20_000)
    assert {r["role"] for b, r in cluster.partition_state(TOPIC)["replicas"].items() if b != 3} == {"follower"}


def test_bad_topic_and_broker_arguments_say_what_to_do(cluster):
    with pytest.raises(ValueError, match="create_topic"):
        cluster.leader_of("nope")
    with pytest.raises(ValueError, match="brokers are"):
        cluster.crash(9)
    with pytest.raises(ValueError, match="already exists"):
        cluster.create_topic(TOPIC)
    with pytest.raises(ValueError, match="unknown cluster option"):
        Cluster(3, replica_lag_time_max=5)
