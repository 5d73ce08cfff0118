"""The experiments of tests/wire/test_confluent_experiments.py with confluent-kafka on Kafka 4.3.1."""

import pytest

from tests.wire.client_probes import group_read_with_commits, transactions_with_markers
from tests.wire.test_confluent_experiments import TRANSACTIONS, check_group_read

pytestmark = pytest.mark.real_kafka


def test_group_read_with_commits_on_kafka(cluster):
    pytest.importorskip("confluent_kafka")
    topic = cluster.create_topic("read", partitions=3)
    check_group_read(group_read_with_commits(cluster.bootstrap_servers, topic))


def test_transactions_with_markers_on_kafka(cluster):
    pytest.importorskip("confluent_kafka")
    topic = cluster.create_topic("txns")
    assert transactions_with_markers(cluster.bootstrap_servers, topic) == TRANSACTIONS
