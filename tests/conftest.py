"""Tiny fixtures shared by the simulator tests."""

import warnings

import pytest

from course_lib.broker import Cluster
from course_lib.clients import KafkaProducer

TOPIC = "t"

# sample submissions for the autograder's tests (broken JSON, infinite loops): graded by
# tests/test_grading.py in their own processes, never run by nbval
collect_ignore_glob = ["grading_samples/*"]


@pytest.fixture
def cluster():
    """3 brokers, one RF=3 partition, min.insync.replicas=2, lab-friendly failover timing."""
    c = Cluster(
        brokers=3,
        seed=7,
        broker_session_timeout_ms=3000,
        broker_heartbeat_interval_ms=500,
        replica_lag_time_max_ms=2000,
    )
    c.create_topic(TOPIC, partitions=1, replication_factor=3, min_insync_replicas=2)
    return c


@pytest.fixture
def consumer_cluster():
    """3 brokers, topic ``in`` (RF=3, 2 partitions), 10 records m-0..m-9 alternating partitions."""
    c = Cluster(3, seed=3, group_initial_rebalance_delay_ms=0)
    c.create_topic("in", partitions=2, min_insync_replicas=2)
    producer = KafkaProducer(bootstrap_servers=c)
    for i in range(10):
        producer.send("in", f"m-{i}".encode(), partition=i % 2)
    producer.flush()
    return c


@pytest.fixture
def make_producer(cluster):
    def make(**config):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return KafkaProducer(bootstrap_servers=cluster, **config)

    return make


@pytest.fixture(scope="module")
def browser():
    """Debian's Chromium under Playwright, one per test module (tests/browser_support.py)."""
    from playwright.sync_api import sync_playwright

    from tests.browser_support import launch_chromium

    with sync_playwright() as p:
        b = launch_chromium(p)
        try:
            yield b
        finally:
            b.close()
