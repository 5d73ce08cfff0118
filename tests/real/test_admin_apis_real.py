"""Kafka 4.3.1's answers to the admin APIs of issue 39, with the probe and the expectation of
tests/wire/test_admin_apis_kafka43.py."""

import pytest

from tests.wire.admin_api_probes import (
    admin_api_answers,
    manual_assignment_answers,
    replica_log_dir_moves,
    topic_assignment_answers,
)
from tests.wire.test_admin_apis_kafka43 import LOG_DIR_MOVES, MANUAL_ASSIGNMENTS, TOPIC_ASSIGNMENTS, expected_answers

pytestmark = pytest.mark.real_kafka


def test_admin_apis_answer_on_kafka(cluster):
    topic = cluster.create_topic("adm", partitions=2)
    assert admin_api_answers(cluster.bootstrap_servers, topic) == expected_answers(topic)


def test_replica_log_dir_moves_on_kafka(cluster):
    topic = cluster.create_topic("ard")
    assert replica_log_dir_moves(cluster.bootstrap_servers, topic) == LOG_DIR_MOVES


def test_manual_partition_assignments_on_kafka(cluster):
    topic = cluster.create_topic("man", replication_factor=3)
    assert manual_assignment_answers(cluster.bootstrap_servers, topic) == MANUAL_ASSIGNMENTS


def test_topic_manual_assignments_on_kafka(cluster):
    assert topic_assignment_answers(cluster.bootstrap_servers, "asg") == TOPIC_ASSIGNMENTS
