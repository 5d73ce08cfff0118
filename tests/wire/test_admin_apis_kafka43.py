"""The admin APIs a Kafka 4.3 admin client uses (issue 39), served from the simulated cluster's
state and answered as Kafka 4.3.1 answers them (tests/real/test_admin_apis_real.py, same probe):
DescribeLogDirs, DescribeQuorum, DescribeTopicPartitions (with paging), ListConfigResources,
ElectLeaders (preferred and unclean). With DescribeLogDirs v5 advertised, kafka-python infers
the broker as 4.3 (it inferred 4.2 before). Which voters and observers DescribeQuorum lists depends
on the deployment (combined or separate controllers), so the probe leaves them out."""

from course_lib.wire import WireCluster

from .admin_api_probes import (
    admin_api_answers,
    manual_assignment_answers,
    replica_log_dir_moves,
    topic_assignment_answers,
)

NOT_NEEDED = "Leader election not needed for topic partition."


def expected_answers(topic: str) -> dict:
    """What kafka-python's admin sees of a 2-partition, RF=3 topic with 5 records in partition 0."""
    return {
        "inferred version": (4, 3),
        "log dirs": {b: (1, [0], [(0, True, 0), (1, False, 0)]) for b in (1, 2, 3)},
        "quorum": {"topic": "__cluster_metadata", "error": None, "leader is a voter": True, "high watermark > 0": True},
        "topic partitions": [
            (topic, 0, 3576, [(p, True, [1, 2, 3], [1, 2, 3], None, None, []) for p in (0, 1)]),
            ("no-such-topic", 3, 3576, []),
            None,
        ],
        "paged": {"topic_name": topic, "partition_index": 1},
        "config resources": {"broker": ["1", "2", "3"], "broker_logger": ["1", "2", "3"], "topic": True},
        "preferred": [(topic, [(0, 84, NOT_NEEDED), (1, 84, NOT_NEEDED), (7, 3, f"No such partition as {topic}-7")])],
        "unclean": [(topic, [(0, 84, NOT_NEEDED)])],
    }


def test_admin_apis_answer_as_kafka(wire):
    wire.create_topic("adm", partitions=2, replication_factor=3)
    assert admin_api_answers(wire.bootstrap_servers, "adm") == expected_answers("adm")


def test_preferred_election_gives_leadership_back(no_leaks):
    """After a failover the preferred replica (the first) is back in the ISR but not leader:
    a preferred election hands it the partition, a second one is not needed."""
    from kafka import KafkaAdminClient

    with WireCluster(brokers=3, seed=1, broker_session_timeout_ms=3000) as wire:
        wire.create_topic("pref", replication_factor=3)
        preferred = wire.partition_info("pref")["replica_nodes"][0]
        wire.crash(preferred)
        assert wire.wait_until(lambda: wire.cluster.controller.partitions[("pref", 0)].leader != preferred)
        wire.restart(preferred)
        assert wire.wait_until(lambda: preferred in wire.cluster.controller.partitions[("pref", 0)].isr)
        admin = KafkaAdminClient(bootstrap_servers=wire.bootstrap_servers)
        try:
            first = admin.elect_leaders(0, {"pref": [0]}, raise_errors=False).replica_election_results
            second = admin.elect_leaders(0, {"pref": [0]}, raise_errors=False).replica_election_results
        finally:
            admin.close()
        assert [p.error_code for r in first for p in r.partition_result] == [0]
        assert wire.leader_of("pref") == preferred
        assert [p.error_code for r in second for p in r.partition_result] == [84]


def test_unclean_election_elects_a_replica_outside_the_isr(no_leaks):
    """min ISR 1, RF 2: the follower is paused out of the ISR, the leader dies - no leader.
    An unclean election (ElectLeaders type 1) makes the out-of-sync follower leader; the
    controller records it as unclean."""
    from kafka import KafkaAdminClient

    with WireCluster(brokers=3, seed=1, broker_session_timeout_ms=3000, replica_lag_time_max_ms=1000) as wire:
        wire.create_topic("unclean", replication_factor=2, min_insync_replicas=1)
        leader, follower = wire.partition_info("unclean")["replica_nodes"]
        wire.crash(follower)
        assert wire.wait_until(lambda: wire.cluster.controller.partitions[("unclean", 0)].isr == (leader,))
        wire.crash(leader)
        wire.restart(follower)
        assert wire.wait_until(lambda: wire.cluster.controller.partitions[("unclean", 0)].leader is None)
        admin = KafkaAdminClient(bootstrap_servers=wire.bootstrap_servers)
        try:
            result = admin.elect_leaders(1, {"unclean": [0]}, raise_errors=False).replica_election_results
        finally:
            admin.close()
        assert [p.error_code for r in result for p in r.partition_result] == [0]
        assert wire.leader_of("unclean") == follower
        assert wire.call(lambda: wire.cluster.controller.unclean_elections) == 1


#: AlterReplicaLogDirs: to the replica's own directory NONE, to one the broker lacks LOG_DIR_NOT_FOUND
LOG_DIR_MOVES = {"same dir": 0, "no such dir": 57}


def test_replica_log_dir_moves_answer_as_kafka(wire):
    wire.create_topic("ard", replication_factor=3)
    assert replica_log_dir_moves(wire.bootstrap_servers, "ard") == LOG_DIR_MOVES


def test_log_dirs_describe_the_coordinators_topics_too(wire):
    """__consumer_offsets holds the simulator's own records (not Kafka's binary ones): describing
    its replicas must not fail the request (it did: the answer never came, RequestTimedOut)."""
    from kafka import KafkaAdminClient, KafkaConsumer, TopicPartition
    from kafka.structs import OffsetAndMetadata

    wire.create_topic("logged", replication_factor=3)
    consumer = KafkaConsumer(bootstrap_servers=wire.bootstrap_servers, group_id="g", enable_auto_commit=False)
    admin = KafkaAdminClient(bootstrap_servers=wire.bootstrap_servers)
    try:
        consumer.commit({TopicPartition("logged", 0): OffsetAndMetadata(1, "", -1)})
        sizes = {
            (t["name"], p["partition_index"]): p["partition_size"]
            for result in admin.describe_log_dirs()
            for d in result["log_dirs"]
            for t in d["topics"]
            for p in t["partitions"]
        }
    finally:
        consumer.close()
        admin.close()
    assert sizes[("__consumer_offsets", 0)] > 0 and sizes[("logged", 0)] == 0


#: what Kafka 4.4.0's controller says of manual assignments (ReplicationControlManager.createPartitions
#: and validateManualPartitionAssignment); the suite's test_create_partitions asks for broker 0
MANUAL_ASSIGNMENTS = {
    "unknown broker": (39, "The manual partition assignment includes broker 0, but no such broker is registered."),
    "repeated broker": (39, "The manual partition assignment includes the broker 1 more than once."),
    "fewer replicas": (
        39,
        "The manual partition assignment includes a partition with 2 replica(s), but this is not consistent "
        "with previous partitions, which have 3 replica(s).",
    ),
    "empty": (39, "The manual partition assignment includes an empty replica list."),
    "too few assignments": (39, "Attempted to add 3 additional partition(s), but only 1 assignment(s) were specified."),
    "second assignment bad": (39, "The manual partition assignment includes the broker 3 more than once."),
    "valid": (0, None),
}


def test_manual_partition_assignments_answer_as_kafka(wire):
    wire.create_topic("man", replication_factor=3)
    assert manual_assignment_answers(wire.bootstrap_servers, "man") == MANUAL_ASSIGNMENTS


#: what Kafka 4.4.0's controller says of a new topic's manual assignments
#: (ReplicationControlManager.createTopic): the replicas as given, the first one leading
TOPIC_ASSIGNMENTS = {
    "unknown broker": (
        39,
        "The manual partition assignment includes broker 4, but no such broker is registered.",
        -1,
        -1,
    ),
    "repeated broker": (39, "The manual partition assignment includes the broker 1 more than once.", -1, -1),
    "empty": (39, "The manual partition assignment includes an empty replica list.", -1, -1),
    "mixed sizes": (
        39,
        "The manual partition assignment includes a partition with 2 replica(s), but this is not consistent "
        "with previous partitions, which have 3 replica(s).",
        -1,
        -1,
    ),
    "gap": (39, "partitions should be a consecutive 0-based integer sequence", -1, -1),
    "partitions given": (
        42,
        "A manual partition assignment was specified, but numPartitions was not set to -1.",
        -1,
        -1,
    ),
    "replication factor given": (
        42,
        "A manual partition assignment was specified, but replication factor was not set to -1.",
        -1,
        -1,
    ),
    "valid": (0, None, 3, 2),
    "valid described": [(0, 3, [3, 1], [3, 1]), (1, 2, [2, 3], [2, 3]), (2, 1, [1, 2], [1, 2])],
}


def test_topic_manual_assignments_answer_as_kafka(wire):
    assert topic_assignment_answers(wire.bootstrap_servers, "asg") == TOPIC_ASSIGNMENTS
