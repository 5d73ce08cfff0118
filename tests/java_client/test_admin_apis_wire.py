"""The admin APIs of issue 39 through the Java client's Admin (Kafka 4.4.0's kafka-clients) on the
wire cluster, answered as Kafka answers them: tests/real/test_admin_apis_real.py runs the same
probes (tests/wire/java_admin_api_probes.py) on a LocalCluster with these expectations - the Java
twins of kafka-python's (tests/wire/test_admin_apis_kafka43.py, test_describe_configs.py)."""

import pytest
from kafka.protocol.api_key import ApiKey

from course_lib.broker.topic_configs import catalogue
from course_lib.java_client import JavaAdmin
from course_lib.wire import WireCluster
from tests.wire.java_admin_api_probes import (
    java_admin_answers,
    java_config_answers,
    java_manual_partitions,
    java_topic_assignments,
)
from tests.wire.conftest import record_versions
from tests.wire.test_admin_apis_kafka43 import MANUAL_ASSIGNMENTS, NOT_NEEDED, TOPIC_ASSIGNMENTS
from tests.wire.test_describe_configs import LAB_TOPIC_DEFAULTS, SET_ON_TOPIC, config_changes_as, expected_topic

_NOT_NEEDED = ("ElectionNotNeededException", NOT_NEEDED)


def java_answers(topic: str) -> dict:
    """What Java's Admin sees of a 2-partition, RF=3 topic with 5 records in partition 0."""
    return {
        "log dirs": {b: (1, [None], [(0, True, 0, False), (1, False, 0, False)]) for b in (1, 2, 3)},
        "log dir moves": {"same dir": None, "no such dir": "LogDirNotFoundException"},
        "quorum": {"leader is a voter": True, "high watermark > 0": True},
        "topics": {
            topic: [(p, True, [1, 2, 3], [1, 2, 3]) for p in (0, 1)],
            "no-such-topic": "UnknownTopicOrPartitionException",
        },
        "config resources": {"BROKER": ["1", "2", "3"], "BROKER_LOGGER": ["1", "2", "3"], "TOPIC": True},
        "preferred": {
            0: _NOT_NEEDED,
            1: _NOT_NEEDED,
            7: ("UnknownTopicOrPartitionException", f"No such partition as {topic}-7"),
        },
        "unclean": {0: _NOT_NEEDED},
        "reassignments": {
            "same": None,
            "unknown broker": "InvalidReplicaAssignmentException",
            "cancel": "NoReassignmentInProgressException",
            "list": {},
        },
    }


def _as_java(answer: tuple):
    """kafka-python's (error code, message) as Java's (exception, message): both 39s here."""
    code, message = answer[:2]
    return None if code == 0 else ({39: "InvalidReplicaAssignmentException"}[code], message)


#: MANUAL_ASSIGNMENTS as Java's createPartitions reports them
JAVA_MANUAL_PARTITIONS = {case: _as_java(answer) for case, answer in MANUAL_ASSIGNMENTS.items()}
#: TOPIC_ASSIGNMENTS' cases Java can express (assignments without a count), as its createTopics reports them
JAVA_TOPIC_ASSIGNMENTS = {
    case: answer if case.endswith(" described") else _as_java(answer)
    for case, answer in TOPIC_ASSIGNMENTS.items()
    if case not in ("partitions given", "replication factor given")
}
JAVA_CONFIG_CHANGES = config_changes_as(lambda message: ("InvalidConfigurationException", message))


def check_configs(got: dict) -> None:
    """java_config_answers' answer on a topic created with SET_ON_TOPIC on the lab's brokers."""
    assert got.pop("topic") == expected_topic(SET_ON_TOPIC)
    assert got.pop("broker") == {
        name: (spec["read_only"], spec["sensitive"], spec["type"]) for name, spec in catalogue()["broker"].items()
    }
    assert got.pop("validate only") is None
    assert got == JAVA_CONFIG_CHANGES


@pytest.fixture
def lab_wire():
    """The wire cluster with the lab's topic-level broker settings (as tests/wire/test_describe_configs.py)."""
    with WireCluster(brokers=3, seed=1, config=LAB_TOPIC_DEFAULTS) as wire:
        yield wire


@pytest.fixture
def java(driver, lab_wire):
    admin = JavaAdmin(driver, {"bootstrap.servers": lab_wire.bootstrap_servers})
    yield admin
    admin.close(timeout=5)


#: the APIs each probe must reach the wire cluster by (Java's describeTopics by name: DescribeTopicPartitions)
PROBED_APIS = {
    "answers": {
        ApiKey.DescribeLogDirs,
        ApiKey.AlterReplicaLogDirs,
        ApiKey.DescribeQuorum,
        ApiKey.DescribeTopicPartitions,
        ApiKey.ListConfigResources,
        ApiKey.ElectLeaders,
        ApiKey.AlterPartitionReassignments,
        ApiKey.ListPartitionReassignments,
    },
    "assignments": {ApiKey.CreatePartitions, ApiKey.CreateTopics},
    "configs": {ApiKey.DescribeConfigs, ApiKey.IncrementalAlterConfigs},
}


def test_java_admin_apis_answer_as_kafka(java, lab_wire, monkeypatch):
    lab_wire.create_topic("jadm", partitions=2, replication_factor=3)
    seen = record_versions(monkeypatch)
    assert java_admin_answers(java, lab_wire.bootstrap_servers, "jadm") == java_answers("jadm")
    assert PROBED_APIS["answers"] <= set(seen)


def test_java_manual_assignments_answer_as_kafka(java, lab_wire, monkeypatch):
    lab_wire.create_topic("jman", replication_factor=3)
    seen = record_versions(monkeypatch)
    assert java_manual_partitions(java, "jman") == JAVA_MANUAL_PARTITIONS
    assert java_topic_assignments(java, "jasg") == JAVA_TOPIC_ASSIGNMENTS
    assert PROBED_APIS["assignments"] <= set(seen)


def test_java_describes_and_changes_configs_as_kafka(java, lab_wire, monkeypatch):
    lab_wire.create_topic("jcfg", replication_factor=3, config=SET_ON_TOPIC)
    seen = record_versions(monkeypatch)
    check_configs(java_config_answers(java, lab_wire.bootstrap_servers, "jcfg"))
    assert PROBED_APIS["configs"] <= set(seen)


def test_java_describes_and_changes_group_configs_as_kafka(java):
    """A share group's configs through Java's Admin (ConfigResource.Type.GROUP), as on Kafka
    (tests/real/test_admin_apis_real.py; tests/wire/group_config_probes.py)."""
    from tests.wire.group_config_probes import JavaGroupConfigs, expected, group_config_answers, without_synonyms

    assert group_config_answers(JavaGroupConfigs(java)) == without_synonyms(expected())
