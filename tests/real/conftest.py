"""One real 3-broker cluster per test process, shared by the tests of tests/real: starting Kafka
costs ~10 s. Its KRaft controller runs as a process of its own (``controllers=1``), so scenarios
that kill two brokers keep a working controller.

The cluster runs only while this process runs tests that use it: it starts for the first, and
stops when the next test this process runs is in another file and does not use it (started
again for the next that does). An idle cluster costs about an eighth of a core (its four JVMs'
heartbeats and timers), and ``make test``'s processes run tests/real files minutes apart.

Tests that damage the cluster (kill, pause) heal it before they return, as Jepsen does after a
nemesis. Without Java 17+ or Maven every real-Kafka test is skipped with the reason (``-ra``;
tests/conftest.py, for every ``real_kafka`` test of the suite).
"""

import subprocess
from pathlib import Path

import pytest

HERE = Path(__file__).parent


class _Running:
    """This process's cluster, if one runs."""

    cluster = None

    @classmethod
    def get(cls):
        if cls.cluster is None:
            from course_lib.real.cluster import LocalCluster

            c = LocalCluster(progress=False, controllers=1)
            c.start()
            cls.cluster = c
        return cls.cluster

    @classmethod
    def stop(cls) -> None:
        c, cls.cluster = cls.cluster, None
        if c is None:
            return
        c.stop()
        # the shared cluster must leave nothing behind either
        left = subprocess.run(["pgrep", "-f", c.tag], capture_output=True, text=True).stdout
        assert not left.strip(), f"JVMs of the shared cluster survived stop(): {left}"


def _uses_the_cluster(item) -> bool:
    return "cluster" in item.fixturenames and Path(item.path).is_relative_to(HERE)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item, nextitem):
    yield  # the test's fixtures are torn down, its module's too when the next test is elsewhere
    # only between files: a module keeps the cluster its fixtures were given
    if nextitem is not None and nextitem.path != item.path and not _uses_the_cluster(nextitem):
        _Running.stop()


@pytest.fixture(scope="session")
def _stops_the_cluster():
    yield
    _Running.stop()


@pytest.fixture(scope="module")
def cluster(_stops_the_cluster):
    """The running cluster (started if it is not)."""
    return _Running.get()


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
