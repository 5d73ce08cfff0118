"""KIP-848 on Kafka 4.3.1 (the session's LocalCluster): the experiments the wire cluster runs in
tests/wire/test_consumer_group_protocol.py (librdkafka) and
tests/java_client/test_consumer_group_protocol_wire.py (Java), with the same expected
observations (tests/consumer_protocol_support.py)."""

from __future__ import annotations

import uuid

import pytest

from tests import consumer_protocol_support as kip848
from tests.java_client import support

pytestmark = pytest.mark.real_kafka


@pytest.fixture(scope="module")
def driver():
    yield from support.module_driver()


def _topic(cluster) -> str:
    return cluster.create_topic(f"kip848-{uuid.uuid4().hex[:8]}", partitions=4)


@pytest.mark.timeout(240)
def test_librdkafka_join_split_leave(cluster):
    got = kip848.librdkafka(cluster.bootstrap_servers, _topic(cluster))
    print("kafka 4.3.1 librdkafka:", got.pop("seconds"))
    assert got == kip848.EXPECTED


@pytest.mark.timeout(240)
def test_java_join_split_leave(driver, cluster):
    got = kip848.java(driver, cluster.bootstrap_servers, _topic(cluster))
    print("kafka 4.3.1 java:", got.pop("seconds"))
    assert got == kip848.EXPECTED
