"""The admin APIs librdkafka's AdminClient calls (issue 30): CreatePartitions, DeleteRecords,
DeleteGroups, IncrementalAlterConfigs and DescribeCluster on the wire cluster, backed by the
simulator's own mechanisms. tests/real/test_confluent_admin.py runs the same probes on Kafka
4.3.1 and asserts the same outcomes (the constants here)."""

import pytest

from .client_probes import (
    alter_configs_outcome,
    create_partitions_outcome,
    delete_groups_outcome,
    delete_records_outcome,
    describe_cluster_outcome,
)

pytest.importorskip("confluent_kafka")

CREATE_PARTITIONS = {
    "grow to 3": 0,
    "partitions": [0, 1, 2],
    "replicas": [3, 3, 3],
    "all led": True,
    "shrink to 2": 37,  # INVALID_PARTITIONS
    "same count": 37,
    "unknown topic": 3,  # UNKNOWN_TOPIC_OR_PARTITION
    "validate only": 0,
    "after validate only": 3,
    "produce to partition 2": True,
}
DELETE_RECORDS = {
    "low watermark": 4,
    "earliest": 4,
    "read from the beginning": [f"r{i}" for i in range(4, 10)],
    "past the high watermark": 1,  # OFFSET_OUT_OF_RANGE
}
DELETE_GROUPS = {
    "with a member": 68,  # NON_EMPTY_GROUP
    "after it left": 0,
    "again": 69,  # GROUP_ID_NOT_FOUND
    "committed after deletion": -1001,  # OFFSET_INVALID: nothing committed
}
ALTER_CONFIGS = {
    "set min isr 3": 0,
    "min isr": "3",
    "set unclean true": 0,
    "unclean": "true",
    "validate only min isr 1": 0,
    "min isr after validate only": "3",
    "min isr 0": 40,  # INVALID_CONFIG
    "unclean maybe": 40,
    "unknown topic": 3,
    "delete min isr": 0,
    "deleted is the broker default": True,
}
DESCRIBE_CLUSTER = {"brokers": 3, "has a cluster id": True, "controller is a broker": True}


@pytest.fixture
def wire2(no_leaks):
    """3 brokers with min.insync.replicas=2 and RF 3 as the lab's cluster."""
    from course_lib.wire import WireCluster

    w = WireCluster(brokers=3, seed=1, group_initial_rebalance_delay_ms=0, min_insync_replicas=2).start()
    try:
        yield w
    finally:
        w.stop()


def test_create_partitions(wire2):
    wire2.create_topic("grow", replication_factor=3)
    assert create_partitions_outcome(wire2.bootstrap_servers, "grow", "no-such-topic") == CREATE_PARTITIONS


def test_delete_records(wire2):
    wire2.create_topic("trim", replication_factor=3)
    assert delete_records_outcome(wire2.bootstrap_servers, "trim") == DELETE_RECORDS


def test_delete_groups(wire2):
    wire2.create_topic("groups", replication_factor=3)
    assert delete_groups_outcome(wire2.bootstrap_servers, "groups") == DELETE_GROUPS


def test_incremental_alter_configs(wire2):
    wire2.create_topic("configs", replication_factor=3)
    assert alter_configs_outcome(wire2.bootstrap_servers, "configs", "no-such-topic") == ALTER_CONFIGS


def test_describe_cluster(wire2):
    assert describe_cluster_outcome(wire2.bootstrap_servers) == DESCRIBE_CLUSTER


def test_kafka_python_describe_cluster_at_every_version(wire2):
    """kafka-python's admin client asks DescribeCluster at the newest version both know; every
    advertised version encodes and decodes (a raw request per version)."""
    from kafka import KafkaAdminClient
    from kafka.protocol.admin import DescribeClusterRequest, DescribeClusterResponse

    from .client_probes import connect

    admin = KafkaAdminClient(bootstrap_servers=wire2.bootstrap_servers)
    try:
        assert len(admin.describe_cluster()["brokers"]) == 3
    finally:
        admin.close()
    host, port = wire2.bootstrap_servers.split(",")[0].rsplit(":", 1)
    raw = connect(host, int(port))
    try:
        for version in (0, 1, 2):
            frame = raw.request(DescribeClusterRequest(include_cluster_authorized_operations=False), version)
            answer = DescribeClusterResponse.decode(frame, version=version, header=True)
            assert answer.error_code == 0 and len(answer.brokers) == 3, (version, answer)
    finally:
        raw.close()
