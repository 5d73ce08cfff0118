"""Kafka 4.3.1's DescribeConfigs and topic config validation: the expectations of
tests/wire/test_describe_configs.py, measured with the same probes on the lab's cluster."""

import pytest

from tests.wire.admin_api_probes import CONFIG_CHANGES, config_change_answers, described_configs
from tests.wire.test_describe_configs import (
    BAD_TOPIC_CONFIGS,
    SET_ON_TOPIC,
    config_changes_as,
    expected_topic,
    topic_config_errors,
)

pytestmark = pytest.mark.real_kafka


def test_describe_configs_answers_every_config_on_kafka(cluster):
    from course_lib.broker.topic_configs import catalogue

    topic = cluster.create_topic("cfg", config=SET_ON_TOPIC)
    got = described_configs(cluster.bootstrap_servers, topic)
    assert got["topic"] == expected_topic(SET_ON_TOPIC)
    assert got["broker"] == {
        name: (spec["read_only"], spec["sensitive"], spec["type"]) for name, spec in catalogue()["broker"].items()
    }
    assert got["advertised.listeners"] == "STATIC_BROKER_CONFIG"
    assert got["topic modified"] == sorted(SET_ON_TOPIC)  # kafka-python's filter: not static, not a default


def test_topic_configs_are_validated_on_kafka(cluster):
    assert topic_config_errors(cluster.bootstrap_servers) == BAD_TOPIC_CONFIGS


def test_topic_configs_change_op_by_op_on_kafka(cluster):
    topic = cluster.create_topic("ops", config=SET_ON_TOPIC)
    got = config_change_answers(cluster.bootstrap_servers, topic, CONFIG_CHANGES)
    assert got == config_changes_as(lambda message: (40, message))


def test_group_configs_described_and_changed_on_kafka(cluster):
    """tests/wire/test_group_configs_wire.py's expectations, measured here (GROUP resources)."""
    from tests.wire.group_config_probes import (
        EMPTY_NAME,
        ConfluentGroupConfigs,
        empty_group_name_answer,
        expected,
        group_config_answers,
    )

    assert group_config_answers(ConfluentGroupConfigs(cluster.bootstrap_servers)) == expected()
    assert empty_group_name_answer(cluster.bootstrap_servers) == EMPTY_NAME
