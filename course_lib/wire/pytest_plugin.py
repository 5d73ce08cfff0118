"""A pytest plugin (entry point ``course_lib_wire``): a seeded simulated Kafka for any project's
tests, reached over TCP by any Kafka client.

    def test_my_app(wire_cluster):
        app = MyApp(bootstrap_servers=wire_cluster.bootstrap_servers)
        wire_cluster.create_topic("orders", partitions=3, min_insync_replicas=2)
        wire_cluster.nemesis.crash(1)          # the leader dies, clients fail over
        ...

The seed is ``--wire-seed`` (default 1) and is printed in the report of a failing test; the
cluster and its threads and sockets are gone after each test.
"""

from __future__ import annotations

import pytest

from .cluster import WireCluster


def pytest_addoption(parser) -> None:
    group = parser.getgroup("wire", "simulated Kafka over TCP (course_lib.wire)")
    group.addoption("--wire-seed", type=int, default=1, help="seed of the simulated cluster (default 1)")
    group.addoption("--wire-brokers", type=int, default=3, help="brokers of the simulated cluster (default 3)")


@pytest.fixture
def wire_cluster(request):
    """A started :class:`~course_lib.wire.WireCluster` (3 brokers, seed from ``--wire-seed``);
    ``.bootstrap_servers`` for clients, ``.nemesis`` for faults, ``.create_topic(...)``."""
    config = request.config
    seed = _option(config, "--wire-seed", 1)
    brokers = _option(config, "--wire-brokers", 3)
    wire = WireCluster(brokers=brokers, seed=seed, group_initial_rebalance_delay_ms=0).start()
    # captured output: pytest shows it with a failing test's report
    print(f"wire_cluster: seed={seed} bootstrap_servers={wire.bootstrap_servers} (rerun with --wire-seed={seed})")
    try:
        yield wire
    finally:
        wire.stop()


def _option(config, name: str, default: int) -> int:
    try:
        return config.getoption(name)
    except ValueError:  # the plugin was imported as a fixture, not registered: no options
        return default
