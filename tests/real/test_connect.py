"""An existing cluster shared by many learners: names are namespaced, local-only faults refuse."""

import pytest
from kafka import KafkaProducer

from course_lib.real.connect import NeedsLocalCluster, connect, learner_prefix
from real.helpers import read_all


def test_prefix_comes_from_argument_then_env(monkeypatch):
    monkeypatch.setenv("COURSE_LEARNER_PREFIX", "bob")
    assert learner_prefix() == "bob"
    assert learner_prefix("alice smith") == "alice-smith"


def test_connect_without_address_explains(monkeypatch):
    monkeypatch.delenv("KAFKA_BOOTSTRAP_SERVERS", raising=False)
    with pytest.raises(ValueError, match="KAFKA_BOOTSTRAP_SERVERS"):
        connect()


def test_connect_reads_env(monkeypatch):
    monkeypatch.setenv("KAFKA_BOOTSTRAP_SERVERS", "kafka.example:9092")
    k = connect(prefix="alice")
    assert k.bootstrap_servers == "kafka.example:9092"
    assert k.topic("orders") == "alice.orders"
    assert k.group_id("billing") == "alice.billing"
    assert k.transactional_id("tx") == "alice.tx"


@pytest.mark.parametrize("fault", ["crash", "pause", "restart"])
def test_local_only_faults_say_so(fault):
    k = connect("kafka.example:9092", prefix="alice")
    with pytest.raises(NeedsLocalCluster, match="LocalCluster"):
        getattr(k, fault)(1)


def test_without_the_learner_proxy_no_message_can_be_lost(monkeypatch):
    k = connect("kafka.example:9092", prefix="alice", fault_proxy=False)
    assert "proxy_url" not in k.client_config()
    with pytest.raises(NeedsLocalCluster):
        k.proxy()
    monkeypatch.setenv("KAFKA_SECURITY_PROTOCOL", "SASL_SSL")  # TLS hides the messages from the proxy
    k = connect("kafka.example:9093", prefix="alice", username="alice", password="pw")
    assert "proxy_url" not in k.client_config() and k.client_config()["security_protocol"] == "SASL_SSL"
    with pytest.raises(NeedsLocalCluster, match="TLS"):
        k.lose_next_ack("alice.t")


@pytest.mark.real_kafka
def test_two_learners_share_a_cluster_without_seeing_each_other(cluster):
    alice = connect(cluster.bootstrap_servers, prefix="alice")
    bob = connect(cluster.bootstrap_servers, prefix="bob")
    ta, tb = alice.create_topic("orders"), bob.create_topic("orders")
    assert (ta, tb) == ("alice.orders", "bob.orders")
    assert alice.isr_of(ta) and alice.leader_of(ta) in (1, 2, 3)
    p = KafkaProducer(bootstrap_servers=alice.bootstrap_servers)
    try:
        p.send(ta, b"from-alice").get(timeout=30)
    finally:
        p.close(timeout=5)
    assert [r.value for r in read_all(cluster.bootstrap_servers, ta)] == [b"from-alice"]
    assert read_all(cluster.bootstrap_servers, tb, timeout_ms=1000) == []
