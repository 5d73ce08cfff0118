"""A real 3-broker KRaft cluster: ready, replicated, and able to survive a leader crash."""

import time

import pytest
from kafka import KafkaProducer
from kafka.admin import ConfigResource, ConfigResourceType

from real.helpers import read_all

pytestmark = pytest.mark.real_kafka


def test_cluster_has_three_live_brokers(cluster):
    assert cluster.live_broker_ids() == [1, 2, 3]
    assert len(cluster.bootstrap_servers.split(",")) == 3
    for node in cluster.nodes.values():
        assert node.log_path.exists() and "Kafka Server started" in node.log_path.read_text()


def test_the_kraft_controller_is_a_process_of_its_own(cluster):
    """So two dead brokers do not take the controller quorum with them (the fidelity table's
    not_enough_replicas and unclean_election kill two)."""
    (controller,) = cluster.controllers.values()
    assert "process.roles=controller\n" in controller.config_path.read_text() and controller.running()
    for node in cluster.nodes.values():
        assert "process.roles=broker\n" in node.config_path.read_text()
    assert controller.pid in cluster.jvm_pids()
    # how long the start took is measured, not asserted: `python -m bench real` prints it
    assert set(cluster.timings_s) >= {"jars", "format", "start"}, cluster.timings_s


def test_new_topic_has_rf3_and_min_isr_2(cluster, topic):
    info = cluster.partition_info(topic, 0)
    assert sorted(info["replica_nodes"]) == [1, 2, 3]
    assert cluster.isr_of(topic, 0) == [1, 2, 3]
    admin = cluster.admin()
    try:
        # {resource_type: {resource_name: {config_key: {config data}}}} in kafka-python 3.0
        res = admin.describe_configs([ConfigResource(ConfigResourceType.TOPIC, topic)])
    finally:
        admin.close()
    (by_name,) = res.values()
    entry = by_name[topic]["min.insync.replicas"]
    assert (entry["value"] if isinstance(entry, dict) else entry) == "2"


def test_killed_leader_is_replaced_and_produce_works(healthy, topic):
    cluster = healthy
    old = cluster.leader_of(topic, 0)
    cluster.crash(old)
    new = cluster.wait_for_leader(topic, 0, not_in=(old,))
    assert new != old and new in (1, 2, 3)
    p = KafkaProducer(bootstrap_servers=cluster.bootstrap_servers, acks="all", request_timeout_ms=10000)
    try:
        md = p.send(topic, b"after-failover", partition=0).get(timeout=60)
    finally:
        p.close(timeout=5)
    assert md.offset >= 0
    assert [r.value for r in read_all(cluster.bootstrap_servers, topic)][-1] == b"after-failover"
    cluster.restart(old)
    assert old in cluster.live_broker_ids()


def test_paused_follower_stays_in_isr_until_fenced(healthy, topic):
    """SIGSTOP freezes a follower without closing its sockets: it stays in the ISR for a while.

    In KRaft it leaves the ISR when the controller fences it (no heartbeats for
    broker.session.timeout.ms = 3 s here), which comes before replica.lag.time.max.ms (10 s).
    """
    cluster = healthy
    leader = cluster.leader_of(topic, 0)
    controller = cluster.controller_id()
    # Pausing the active controller would also stall metadata; pause a plain follower.
    followers = [b for b in (1, 2, 3) if b != leader]
    follower = next((b for b in followers if b != controller), followers[0])
    isr_before = cluster.isr_of(topic, 0)
    t0 = time.monotonic()
    cluster.pause(follower)
    try:
        isr = cluster.isr_of(topic, 0)
        # Only meaningful if the read came back before the 3 s fencing: on a loaded machine the
        # admin read itself (which may first try the paused broker) can take longer.
        read_in_time = time.monotonic() - t0 < 2.0
        assert follower in isr or not read_in_time, (
            f"a just-paused follower must still be in the ISR (ISR before "
            f"{isr_before}, {time.monotonic() - t0:.1f} s after pausing {isr})"
        )
        # A write with acks=1 lands on the leader only, so the follower starts to lag.
        p = KafkaProducer(bootstrap_servers=cluster.live_bootstrap_servers(), acks=1, enable_idempotence=False)
        try:
            p.send(topic, b"lagging", partition=0).get(timeout=30)
        finally:
            p.close(timeout=5)
        assert _wait_until(lambda: follower not in cluster.isr_of(topic, 0), 60), (
            "the paused follower was never removed from the ISR"
        )
        fenced = f"Fencing broker {follower} at epoch"
        others = [n for n in (*cluster.nodes, *cluster.controllers) if n != follower]  # the controller's log
        assert any(fenced in cluster.broker_log(n, None) for n in others), (
            "expected the controller to fence the paused broker (session timeout)"
        )
    finally:
        cluster.resume(follower)
    assert _wait_until(lambda: follower in cluster.isr_of(topic, 0), 60), "the resumed follower never rejoined the ISR"


def _wait_until(cond, timeout_s: float) -> bool:
    import time

    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if cond():
            return True
        time.sleep(0.2)
    return False
