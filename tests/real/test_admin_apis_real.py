"""Kafka 4.3.1's answers to the admin APIs of issue 39, with the probe and the expectation of
tests/wire/test_admin_apis_issue39.py."""

import pytest

from tests.wire.admin_api_probes import admin_api_answers
from tests.wire.test_admin_apis_issue39 import expected_answers

pytestmark = pytest.mark.real_kafka


def test_admin_apis_answer_on_kafka(cluster):
    topic = cluster.create_topic("adm", partitions=2)
    assert admin_api_answers(cluster.bootstrap_servers, topic) == expected_answers(topic)
