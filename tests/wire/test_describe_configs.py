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

from .admin_api_probes import CONFIG_CHANGES, config_change_answers, described_configs

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


_D, _T = "DEFAULT_CONFIG", "DYNAMIC_TOPIC_CONFIG"
_DEFAULT_RETENTION, _COMPACT = {"retention.ms": ("604800000", _D)}, {"cleanup.policy": ("compact", _T)}
#: Kafka 4.4.0's answers to CONFIG_CHANGES, one case after the other, on a topic set as SET_ON_TOPIC:
#: the refusal's message (INVALID_CONFIG each) or None, then retention.ms' and cleanup.policy's
#: (value, source) as DescribeConfigs tells them; APPEND/SUBTRACT edit the topic's list, or the
#: config's own default (ConfigurationControlManager.getParts), and the validator names the bad part
CONFIG_CHANGE_OUTCOMES = {
    "set": (None, {"retention.ms": ("1000", _T), "cleanup.policy": ("delete", _D)}),
    "append": (None, {"retention.ms": ("1000", _T), "cleanup.policy": ("delete,compact", _T)}),
    "subtract": (None, {"retention.ms": ("1000", _T), **_COMPACT}),
    "delete": (None, {**_DEFAULT_RETENTION, **_COMPACT}),
    "unknown config": ("Unknown topic config name: retention.msec", {**_DEFAULT_RETENTION, **_COMPACT}),
    "bad value": (
        "Invalid value a day for configuration retention.ms: Not a number of type LONG",
        {**_DEFAULT_RETENTION, **_COMPACT},
    ),
    "append a part it has": (None, {**_DEFAULT_RETENTION, "cleanup.policy": ("compact,delete", _T)}),
    "append to a non-list": (
        "Can't APPEND to key retention.ms because its type is not LIST.",
        {**_DEFAULT_RETENTION, "cleanup.policy": ("compact,delete", _T)},
    ),
    "append a bad part": (
        "Invalid value forever for configuration cleanup.policy: String must be one of: compact, delete",
        {**_DEFAULT_RETENTION, "cleanup.policy": ("compact,delete", _T)},
    ),
}


def config_changes_as(refused) -> dict:
    """CONFIG_CHANGE_OUTCOMES with each refusal as a client reports it (``refused(message)``)."""
    return {
        case: (None if message is None else refused(message), values)
        for case, (message, values) in CONFIG_CHANGE_OUTCOMES.items()
    }


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


def test_topic_configs_change_op_by_op_as_kafka(no_leaks):
    """SET, DELETE, APPEND and SUBTRACT (kafka-python: alter_configs(incremental=True)), refused as
    Kafka refuses them (INVALID_CONFIG = 40); tests/real/test_describe_configs_real.py's twin."""
    with WireCluster(brokers=3, seed=1, config=LAB_TOPIC_DEFAULTS) as wire:
        wire.create_topic("ops", replication_factor=3, config=SET_ON_TOPIC)
        got = config_change_answers(wire.bootstrap_servers, "ops", CONFIG_CHANGES)
    assert got == config_changes_as(lambda message: (40, message))
