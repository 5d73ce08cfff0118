"""One real 3-broker cluster per test session: starting Kafka costs ~10 s, so tests share it.
Its KRaft controller runs as a process of its own (``controllers=1``), so scenarios that kill
two brokers keep a working controller.

Tests that damage the cluster (kill, pause) heal it before they return, as Jepsen does after a
nemesis. Without Java 17+ or Maven every real-Kafka test is skipped with the reason (``-ra``;
tests/conftest.py, for every ``real_kafka`` test of the suite).
"""

import subprocess

import pytest


@pytest.fixture(scope="session")
def cluster():
    from course_lib.real.cluster import LocalCluster

    c = LocalCluster(progress=False, controllers=1)
    c.start()
    try:
        yield c
    finally:
        c.stop()
        # The session cluster must leave nothing behind either.
        left = subprocess.run(["pgrep", "-f", c.tag], capture_output=True, text=True).stdout
        assert not left.strip(), f"JVMs of the session cluster survived stop(): {left}"


@pytest.fixture
def healthy(cluster):
    """The shared cluster with every broker running again after the test."""
    yield cluster
    cluster.revive()


_topic_counter = [0]


@pytest.fixture
def topic(cluster, request):
    """A fresh RF=3, min.insync.replicas=2 topic with one partition, named after the test."""
    _topic_counter[0] += 1
    name = f"t{_topic_counter[0]}-{request.node.name[:40]}".replace("[", "-").replace("]", "")
    cluster.create_topic(name)
    return name
