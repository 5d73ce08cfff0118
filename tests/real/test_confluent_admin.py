"""The admin APIs of tests/wire/test_admin_apis.py with confluent-kafka's AdminClient on Kafka 4.3.1:
the same outcomes as on the wire cluster."""

import pytest

from tests.wire import test_admin_apis as expected
from tests.wire.client_probes import (
    alter_configs_outcome,
    create_partitions_outcome,
    delete_groups_outcome,
    delete_records_outcome,
    describe_cluster_outcome,
)

pytestmark = pytest.mark.real_kafka
pytest.importorskip("confluent_kafka", reason="pip install -e '.[clients]'")


def test_create_partitions_on_kafka(cluster):
    topic = cluster.create_topic("grow")
    assert create_partitions_outcome(cluster.bootstrap_servers, topic, "no-such-topic") == expected.CREATE_PARTITIONS


def test_delete_records_on_kafka(cluster):
    topic = cluster.create_topic("trim")
    assert delete_records_outcome(cluster.bootstrap_servers, topic) == expected.DELETE_RECORDS


def test_delete_groups_on_kafka(cluster):
    topic = cluster.create_topic("groups")
    assert delete_groups_outcome(cluster.bootstrap_servers, topic) == expected.DELETE_GROUPS


def test_incremental_alter_configs_on_kafka(cluster):
    topic = cluster.create_topic("configs")
    assert alter_configs_outcome(cluster.bootstrap_servers, topic, "no-such-topic") == expected.ALTER_CONFIGS


def test_describe_cluster_on_kafka(cluster):
    assert describe_cluster_outcome(cluster.bootstrap_servers) == expected.DESCRIBE_CLUSTER
