"""The simulator mechanisms behind the wire's admin APIs (issue 30) change what the simulator
does, not only what it reports: a min.insync.replicas raised by IncrementalAlterConfigs is what
the leader holds acks=all to, unclean.leader.election.enable what the controller may elect, and
partitions added by CreatePartitions are led and replicated."""

from course_lib.broker import Cluster
from course_lib.broker.partition_creation import create_partitions_request
from course_lib.broker.topic_config_changes import DELETE, SET, alter_topic_configs_request
from course_lib.broker.topic_requests import create_topic_request


def _leader(cluster, tp):
    return next(p for b in cluster.brokers.values() if b.alive and (p := b.partitions.get(tp)) and p.is_leader)


def test_a_raised_min_isr_is_what_the_leader_holds_acks_all_to():
    cluster = Cluster(brokers=3, seed=7)
    assert create_topic_request(cluster, "t", 1, 3, {"min.insync.replicas": "2"}) == (None, None)
    cluster.run_for(2_000)
    follower = next(b for b in _leader(cluster, ("t", 0)).isr if b != _leader(cluster, ("t", 0)).broker.broker_id)
    cluster.crash(follower)
    cluster.run_for(cluster.options.replica_lag_time_max_ms + 5_000)  # the ISR shrinks to 2
    leader = _leader(cluster, ("t", 0))
    assert len(leader.isr) == 2 and not leader.under_min_isr
    assert alter_topic_configs_request(cluster, "t", [("min.insync.replicas", SET, "3")]) == (None, None)
    cluster.run_for(1_000)  # the config record reaches the brokers
    assert leader.under_min_isr, "min.insync.replicas=3 with 2 in sync: acks=all is refused"
    assert alter_topic_configs_request(cluster, "t", [("min.insync.replicas", DELETE, None)]) == (None, None)
    cluster.run_for(1_000)
    assert leader.config.min_insync_replicas == cluster.options.min_insync_replicas


def _elected_after_the_leader_dies(unclean: bool):
    """RF 2: the follower falls out of the ISR (crashed, then back), the leader dies. Who leads?"""
    cluster = Cluster(brokers=2, seed=7)
    create_topic_request(cluster, "t", 1, 2, {"min.insync.replicas": "1"})
    cluster.run_for(2_000)
    leader = _leader(cluster, ("t", 0)).broker.broker_id
    follower = next(b for b in cluster.brokers if b != leader)
    cluster.crash(follower)
    cluster.run_for(cluster.options.replica_lag_time_max_ms + 5_000)
    assert cluster.controller.partitions[("t", 0)].isr == (leader,)
    if unclean:
        ops = [("unclean.leader.election.enable", SET, "true")]
        assert alter_topic_configs_request(cluster, "t", ops) == (None, None)
    cluster.crash(leader)
    cluster.run_for(20_000)
    cluster.restart(follower)
    cluster.run_for(20_000)
    return cluster.controller.partitions[("t", 0)].leader, follower


def test_unclean_election_follows_the_altered_config():
    leader, _ = _elected_after_the_leader_dies(unclean=False)
    assert leader is None, "unclean.leader.election.enable=false (the default): no out-of-sync leader"
    leader, follower = _elected_after_the_leader_dies(unclean=True)
    assert leader == follower, "altered to true: the out-of-sync replica is elected"


def test_new_partitions_are_led_and_replicated_on_every_replica():
    cluster = Cluster(brokers=3, seed=7)
    create_topic_request(cluster, "t", 1, 2, {})
    cluster.run_for(1_000)
    assert create_partitions_request(cluster, "t", 4) == (None, None)
    cluster.run_for(2_000)
    for p in range(4):
        state = cluster.controller.partitions[("t", p)]
        assert state.leader is not None and len(state.replicas) == 2
        for b in state.replicas:
            assert ("t", p) in cluster.brokers[b].partitions
    # an assignment naming a broker twice is refused and changes nothing
    error, _ = create_partitions_request(cluster, "t", 5, [[1, 1]])
    assert error.__name__ == "InvalidReplicationAssignmentError"
    assert cluster.controller.configs["t"].partitions == 4
