"""Kafka 4.3.1's answers to the reassignment requests of tests/wire/test_partition_reassignments.py."""

import pytest

from tests.wire.admin_api_probes import reassignment_answers
from tests.wire.test_partition_reassignments import REASSIGNMENT_ANSWERS

pytestmark = pytest.mark.real_kafka


def test_reassignment_answers_on_kafka(cluster):
    topic = cluster.create_topic("re")
    assert reassignment_answers(cluster.bootstrap_servers, topic) == REASSIGNMENT_ANSWERS
