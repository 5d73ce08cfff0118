"""Kafka 4.3.1's answers that tests/wire/test_broker_configs.py expects from the wire cluster
(issue 39), with the same probes: topic auto-creation with the broker's defaults, the classic
group session-timeout bounds, offset commits to partitions that do not exist, committed offsets'
metadata and leader epoch."""

import pytest

from tests.wire.broker_config_probes import (
    auto_creation_answers,
    commit_to_unknown_partitions,
    committed_offset_roundtrip,
    join_session_timeout_codes,
)
from tests.wire.test_broker_configs import AUTO_CREATION, ROUNDTRIP, SESSION_TIMEOUTS, UNKNOWN_PARTITIONS

pytestmark = pytest.mark.real_kafka


def test_topics_are_auto_created_on_kafka(cluster):
    assert auto_creation_answers(cluster.bootstrap_servers) == AUTO_CREATION


def test_join_group_session_timeout_bounds_on_kafka(cluster):
    assert join_session_timeout_codes(cluster.bootstrap_servers) == SESSION_TIMEOUTS


def test_commits_to_unknown_partitions_are_refused_on_kafka(cluster):
    topic = cluster.create_topic("known")
    assert commit_to_unknown_partitions(cluster.bootstrap_servers, topic) == UNKNOWN_PARTITIONS


def test_committed_offsets_keep_metadata_and_leader_epoch_on_kafka(cluster):
    topic = cluster.create_topic("meta")
    assert committed_offset_roundtrip(cluster.bootstrap_servers, topic) == ROUNDTRIP
