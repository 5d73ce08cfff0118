"""DescribeConfigs answers every config Kafka 4.3.1 answers (issue 39), with its source, type and
flags; topics take every Kafka topic config, validated as Kafka does, and describe it as set.
The wire cluster is given the two topic-level broker settings of the lab's Kafka
(min.insync.replicas=2, unclean.leader.election.enable=false in server.properties), so the
answers compare one to one with tests/real/test_describe_configs_real.py's."""

from kafka import KafkaAdminClient
from kafka.admin import NewTopic
from kafka.errors import InvalidConfigurationError

from course_lib.broker.topic_configs import catalogue
from course_lib.wire import WireCluster

from .admin_api_probes import described_configs

#: the topic's own settings (LocalCluster.create_topic sets min.insync.replicas on every topic)
SET_ON_TOPIC = {"retention.ms": "86400000", "min.insync.replicas": "2"}
LAB_TOPIC_DEFAULTS = {"min.insync.replicas": "2", "unclean.leader.election.enable": "false"}
#: (config, value) -> Kafka 4.3.1's error message for CreateTopics
BAD_TOPIC_CONFIGS = {
    ("retention.msec", "1"): "Unknown topic config name: retention.msec",
    ("retention.ms", "a day"): "Invalid value a day for configuration retention.ms: Not a number of type LONG",
    (
        "cleanup.policy",
        "forever",
    ): "Invalid value forever for configuration cleanup.policy: String must be one of: compact, delete",
}


def expected_topic(topic_configs: dict) -> dict:
    """Kafka's answer for a topic with ``topic_configs`` set, on the lab's brokers."""
    out = {}
    for name, spec in catalogue()["topic"].items():
        if name in topic_configs:
            value, source = topic_configs[name], "DYNAMIC_TOPIC_CONFIG"
        elif name in LAB_TOPIC_DEFAULTS:
            value, source = LAB_TOPIC_DEFAULTS[name], "STATIC_BROKER_CONFIG"
        else:
            value, source = spec["default"], "DEFAULT_CONFIG"
        out[name] = (value, source, False, spec["type"])
    return out


def test_describe_configs_answers_every_config(no_leaks):
    with WireCluster(brokers=3, seed=1, config=LAB_TOPIC_DEFAULTS) as wire:
        wire.create_topic("cfg", replication_factor=3, config=SET_ON_TOPIC)
        got = described_configs(wire.bootstrap_servers, "cfg")
    assert got["topic"] == expected_topic(SET_ON_TOPIC)
    assert got["broker"] == {
        name: (spec["read_only"], spec["sensitive"], spec["type"]) for name, spec in catalogue()["broker"].items()
    }
    assert got["advertised.listeners"] == "STATIC_BROKER_CONFIG"
    assert got["topic modified"] == sorted(SET_ON_TOPIC)  # kafka-python's filter: not static, not a default


def topic_config_errors(bootstrap: str) -> dict:
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    out = {}
    try:
        for (name, value), _ in BAD_TOPIC_CONFIGS.items():
            try:
                admin.create_topics([NewTopic(f"bad-{abs(hash(name)) % 10_000}", 1, 1, topic_configs={name: value})])
                out[(name, value)] = "created"
            except InvalidConfigurationError as exc:
                out[(name, value)] = next((m for m in BAD_TOPIC_CONFIGS.values() if m in str(exc)), str(exc))
    finally:
        admin.close()
    return out


def test_topic_configs_are_validated_as_kafka_does(wire):
    assert topic_config_errors(wire.bootstrap_servers) == BAD_TOPIC_CONFIGS


def test_altered_topic_configs_are_described_as_set(wire, caplog):
    from kafka.admin import ConfigResource, ConfigResourceType

    wire.create_topic("alt", replication_factor=3)
    admin = KafkaAdminClient(bootstrap_servers=wire.bootstrap_servers)
    try:
        admin.alter_configs(
            [ConfigResource(ConfigResourceType.TOPIC, "alt", configs={"retention.bytes": ("SET", "1024")})],
            incremental=True,
        )
        got = admin.describe_configs([ConfigResource(ConfigResourceType.TOPIC, "alt")])
    finally:
        admin.close()
    assert {k: v["value"] for k, v in got["topic"]["alt"].items()} == {"retention.bytes": "1024"}
