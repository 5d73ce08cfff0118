"""Kafka's answers to the admin APIs of issue 39, with the probes and the expectations of
tests/wire/test_admin_apis_kafka43.py (kafka-python's admin) and
tests/java_client/test_admin_apis_wire.py (Java's Admin, in one driver process for the module)."""

import pytest

from tests.wire.admin_api_probes import (
    admin_api_answers,
    manual_assignment_answers,
    replica_log_dir_moves,
    topic_assignment_answers,
)
from tests.java_client.test_admin_apis_wire import (
    JAVA_MANUAL_PARTITIONS,
    JAVA_TOPIC_ASSIGNMENTS,
    check_configs,
    java_answers,
)
from tests.wire.java_admin_api_probes import (
    java_admin_answers,
    java_config_answers,
    java_manual_partitions,
    java_topic_assignments,
)
from tests.wire.test_describe_configs import SET_ON_TOPIC
from tests.wire.test_admin_apis_kafka43 import LOG_DIR_MOVES, MANUAL_ASSIGNMENTS, TOPIC_ASSIGNMENTS, expected_answers

pytestmark = pytest.mark.real_kafka


def test_admin_apis_answer_on_kafka(cluster):
    topic = cluster.create_topic("adm", partitions=2)
    assert admin_api_answers(cluster.bootstrap_servers, topic) == expected_answers(topic)


def test_replica_log_dir_moves_on_kafka(cluster):
    topic = cluster.create_topic("ard")
    assert replica_log_dir_moves(cluster.bootstrap_servers, topic) == LOG_DIR_MOVES


def test_manual_partition_assignments_on_kafka(cluster):
    topic = cluster.create_topic("man", replication_factor=3)
    assert manual_assignment_answers(cluster.bootstrap_servers, topic) == MANUAL_ASSIGNMENTS


def test_topic_manual_assignments_on_kafka(cluster):
    assert topic_assignment_answers(cluster.bootstrap_servers, "asg") == TOPIC_ASSIGNMENTS


@pytest.fixture(scope="module")
def java(cluster):
    """A Java Admin on the session's cluster, in the module's one driver process."""
    from course_lib.java_client import JavaAdmin
    from tests.java_client import support

    for driver in support.module_driver():
        admin = JavaAdmin(driver, {"bootstrap.servers": cluster.bootstrap_servers})
        yield admin
        admin.close(timeout=5)


def test_java_admin_apis_answer_on_kafka(java, cluster):
    topic = cluster.create_topic("jadm", partitions=2)
    assert java_admin_answers(java, cluster.bootstrap_servers, topic) == java_answers(topic)


def test_java_manual_assignments_on_kafka(java, cluster):
    topic = cluster.create_topic("jman", replication_factor=3)
    assert java_manual_partitions(java, topic) == JAVA_MANUAL_PARTITIONS
    assert java_topic_assignments(java, "jasg") == JAVA_TOPIC_ASSIGNMENTS


def test_java_describes_and_changes_configs_on_kafka(java, cluster):
    topic = cluster.create_topic("jcfg", config=SET_ON_TOPIC)
    check_configs(java_config_answers(java, cluster.bootstrap_servers, topic))


def test_java_describes_and_changes_group_configs_on_kafka(java):
    """tests/java_client/test_admin_apis_wire.py's GROUP twin, measured here."""
    from tests.wire.group_config_probes import JavaGroupConfigs, expected, group_config_answers, without_synonyms

    assert group_config_answers(JavaGroupConfigs(java)) == without_synonyms(expected())
