"""Provisioning on an authenticated LocalCluster: a learner may use their prefix, not another's."""

import pytest

from course_lib.real.security import ClusterAuth, client_kwargs
from course_lib.workshop.provision import provision
from course_lib.workshop.roster import parse_roster

pytestmark = pytest.mark.real_kafka
PASSWORDS = {"ann": "ann-secret", "bob": "bob-secret"}


@pytest.fixture(scope="module")
def cluster():
    from course_lib.real.cluster import LocalCluster

    with LocalCluster(brokers=1, progress=False, auth=ClusterAuth(admin_password="pw")) as c:
        admin = c.admin()
        learners = parse_roster("ann\nbob\n")
        provision(admin, learners, PASSWORDS)
        provision(admin, learners, PASSWORDS)  # twice: nothing changes, nothing fails
        admin.close()
        c.create_topic("ann.orders")
        c.create_topic("bob.orders")
        yield c


def _send(cluster, user, topic):
    from kafka import KafkaProducer

    p = KafkaProducer(
        bootstrap_servers=cluster.bootstrap_servers, max_block_ms=8000, **client_kwargs(user, PASSWORDS[user])
    )
    try:
        return p.send(topic, b"x").get(timeout=10)
    finally:
        p.close(timeout=2)


def test_command_provisions_and_writes_connection_files(cluster, tmp_path, monkeypatch):
    from course_lib.workshop.__main__ import main

    (tmp_path / "roster.txt").write_text("cat\n")
    monkeypatch.setenv("KAFKA_INSTRUCTOR_PASSWORD", "pw")
    args = [str(tmp_path / "roster.txt"), "--bootstrap", cluster.bootstrap_servers, "--out", str(tmp_path / "out")]
    assert main(args) == 0
    env = dict(line.split("=", 1) for line in (tmp_path / "out" / "cat.env").read_text().split())
    assert main(args) == 0  # a second run keeps the learner's password
    assert (tmp_path / "out" / "cat.env").read_text().count(env["KAFKA_SASL_PASSWORD"]) == 1
    PASSWORDS["cat"] = env["KAFKA_SASL_PASSWORD"]
    assert _send(cluster, "cat", "cat.orders").offset >= 0  # auto-created under own prefix


def test_learner_writes_own_prefix(cluster):
    assert _send(cluster, "ann", "ann.orders").offset >= 0


def test_learner_cannot_write_another_learners_topic(cluster):
    from kafka.errors import TopicAuthorizationFailedError

    with pytest.raises(TopicAuthorizationFailedError):
        _send(cluster, "ann", "bob.orders")
