"""A share group's configs (a GROUP config resource, KIP-932) described and changed through an
admin client - confluent-kafka's AdminClient or Java's Admin - as an operator does on Kafka
(``kafka-configs --entity-type groups``). The same steps on the wire cluster
(tests/wire/test_group_configs_wire.py, tests/java_client/test_group_configs_java_wire.py) and on
Kafka (tests/real/test_describe_configs_real.py); :func:`expected` is what Kafka 4.4.0 and 4.3.1
answered."""

from __future__ import annotations

import time
import uuid

from course_lib.broker.kafka_releases import added_configs
from course_lib.clusters.releases import kafka_version

#: the share group configs each step shows: (value, source, synonyms)
SHOWN = (
    "consumer.session.timeout.ms",
    "share.auto.offset.reset",
    "share.delivery.count.limit",
    "share.isolation.level",
    "share.record.lock.duration.ms",
)
#: (step, ops: [(name, value, op)]) in order, on one new group; a describe after each change
STEPS = (
    ("set", [("share.record.lock.duration.ms", "15000", "SET"), ("share.delivery.count.limit", "3", "SET")]),
    ("a consumer group's session", [("consumer.session.timeout.ms", "50000", "SET")]),
    ("out of range", [("share.delivery.count.limit", "11", "SET")]),
    ("a consumer group's heartbeat out of range", [("consumer.heartbeat.interval.ms", "1", "SET")]),
    ("below the lock's floor", [("share.record.lock.duration.ms", "10", "SET")]),
    ("no number", [("share.delivery.count.limit", "many", "SET")]),
    ("unknown name", [("share.no.such.config", "1", "SET")]),
    ("append to a number", [("share.delivery.count.limit", "3", "APPEND")]),
    ("delete", [("share.delivery.count.limit", None, "DELETE")]),
    ("delete an unknown name", [("share.no.such.config", None, "DELETE")]),
)
#: Kafka 4.4.0's group configs (``GroupConfig``), as DescribeConfigs lists them
NAMES_440 = (
    "consumer.assignment.interval.ms",
    "consumer.heartbeat.interval.ms",
    "consumer.session.timeout.ms",
    "errors.deadletterqueue.copy.record.enable",
    "errors.deadletterqueue.topic.name",
    "share.assignment.interval.ms",
    "share.auto.offset.reset",
    "share.delivery.count.limit",
    "share.heartbeat.interval.ms",
    "share.isolation.level",
    "share.partition.max.record.locks",
    "share.record.lock.duration.ms",
    "share.renew.acknowledge.enable",
    "share.session.timeout.ms",
    "streams.assignment.interval.ms",
    "streams.assignor.name",
    "streams.heartbeat.interval.ms",
    "streams.initial.rebalance.delay.ms",
    "streams.num.standby.replicas",
    "streams.rack.aware.assignment.tags",
    "streams.session.timeout.ms",
)


def expected(version: str | None = None) -> dict:
    """What Kafka ``version`` (default: the lab's) answers to :func:`group_config_answers`."""
    version = version or kafka_version()
    default = "DEFAULT_CONFIG"
    defaults = {
        "consumer.session.timeout.ms": ("45000", default, [("group.consumer.session.timeout.ms", "45000", default)]),
        "share.auto.offset.reset": ("latest", default, [("share.auto.offset.reset", "latest", default)]),
        "share.delivery.count.limit": ("5", default, [("group.share.delivery.count.limit", "5", default)]),
        "share.isolation.level": (
            "read_uncommitted",
            default,
            [("share.isolation.level", "read_uncommitted", default)],
        ),
        "share.record.lock.duration.ms": (
            "30000",
            default,
            [("group.share.record.lock.duration.ms", "30000", default)],
        ),
    }
    configured = {
        **defaults,
        "share.delivery.count.limit": (
            "3",
            "GROUP_CONFIG",
            [("share.delivery.count.limit", "3", "GROUP_CONFIG"), *defaults["share.delivery.count.limit"][2]],
        ),
        "share.record.lock.duration.ms": (
            "15000",
            "GROUP_CONFIG",
            [("share.record.lock.duration.ms", "15000", "GROUP_CONFIG"), *defaults["share.record.lock.duration.ms"][2]],
        ),
    }
    out_of_range, heartbeat_out_of_range = {
        "4.3.1": (
            "share.delivery.count.limit must be less than or equal to group.share.max.delivery.count.limit",
            "consumer.heartbeat.interval.ms must be greater than or equal to group.consumer.min.heartbeat.interval.ms",
        ),
        "4.4.0": (
            "share.delivery.count.limit must be in the range 2 to 10 inclusive.",
            "consumer.heartbeat.interval.ms must be in the range 5000 to 15000 inclusive.",
        ),
    }[version]
    with_session = {
        **configured,
        "consumer.session.timeout.ms": (
            "50000",
            "GROUP_CONFIG",
            [("consumer.session.timeout.ms", "50000", "GROUP_CONFIG"), *defaults["consumer.session.timeout.ms"][2]],
        ),
    }
    deleted = {**with_session, "share.delivery.count.limit": defaults["share.delivery.count.limit"]}
    return {
        "names": sorted(set(NAMES_440) - set(added_configs("4.4.0", "group")) | set(added_configs(version, "group"))),
        "unconfigured": defaults,
        "set": ("ok", configured),
        "a consumer group's session": ("ok", with_session),
        "out of range": ("INVALID_CONFIG", out_of_range),
        "a consumer group's heartbeat out of range": ("INVALID_CONFIG", heartbeat_out_of_range),
        "below the lock's floor": (
            "INVALID_CONFIG",
            "Invalid value 10 for configuration share.record.lock.duration.ms: Value must be at least 1000",
        ),
        "no number": (
            "INVALID_CONFIG",
            "Invalid value many for configuration share.delivery.count.limit: Not a number of type INT",
        ),
        "unknown name": ("INVALID_CONFIG", "Unknown group config name: share.no.such.config"),
        "append to a number": (
            "INVALID_CONFIG",
            "Can't APPEND to key share.delivery.count.limit because its type is not LIST.",
        ),
        "delete": ("ok", deleted),
        "delete an unknown name": ("ok", deleted),
    }


def group_config_answers(client) -> dict:
    """:data:`STEPS` on a new share group through ``client`` (:class:`ConfluentGroupConfigs` or
    :class:`JavaGroupConfigs`): the names described, the shown configs before, then each step's
    outcome ("ok" or (error, message)) with what is described once the change is visible (a
    broker applies it with its next metadata on Kafka; the describe may reach any broker)."""
    group = f"cfg-{uuid.uuid4().hex[:8]}"
    before = client.describe(group)
    answers: dict = {"names": sorted(before), "unconfigured": _shown(before)}
    for step, ops in STEPS:
        outcome = client.alter(group, ops)
        if outcome != "ok":
            answers[step] = outcome
            continue
        answers[step] = ("ok", _shown(_described_once(client, group, ops)))
    return answers


def _described_once(client, group: str, ops: list, timeout_s: float = 30) -> dict:
    """What ``client`` describes of ``group`` once it shows ``ops`` applied."""
    deadline = time.monotonic() + timeout_s
    while True:
        now = client.describe(group)
        if all(name not in now or (now[name][1] == "GROUP_CONFIG") == (op == "SET") for name, _v, op in ops):
            return now
        assert time.monotonic() < deadline, f"{group} does not describe {ops}"
        time.sleep(0.05)


def _shown(described: dict) -> dict:
    return {name: described[name] for name in SHOWN}


class ConfluentGroupConfigs:
    """The steps' two calls with confluent-kafka's AdminClient (ResourceType.GROUP)."""

    def __init__(self, servers: str):
        from confluent_kafka.admin import AdminClient

        self.admin = AdminClient({"bootstrap.servers": servers})

    def describe(self, group: str) -> dict:
        from confluent_kafka.admin import ConfigResource, ConfigSource, ResourceType

        (future,) = self.admin.describe_configs([ConfigResource(ResourceType.GROUP, group)]).values()
        return {
            name: (
                e.value,
                ConfigSource(e.source).name,
                [(s.name, s.value, ConfigSource(s.source).name) for s in e.synonyms.values()],
            )
            for name, e in future.result(30).items()
        }

    def alter(self, group: str, ops: list):
        from confluent_kafka import KafkaException
        from confluent_kafka.admin import AlterConfigOpType, ConfigEntry, ConfigResource, ResourceType

        entries = [ConfigEntry(n, v, incremental_operation=AlterConfigOpType[op]) for n, v, op in ops]
        resource = ConfigResource(ResourceType.GROUP, group, incremental_configs=entries)
        (future,) = self.admin.incremental_alter_configs([resource]).values()
        try:
            future.result(30)
        except KafkaException as e:
            return e.args[0].name(), e.args[0].str()
        return "ok"


#: Java's names (``ConfigEntry.ConfigSource``) -> Kafka's protocol names (``DescribeConfigsResponse.ConfigSource``)
JAVA_SOURCES = {"DYNAMIC_GROUP_CONFIG": "GROUP_CONFIG"}
#: Java's exception classes -> Kafka's error names
JAVA_ERRORS = {"InvalidConfigurationException": "INVALID_CONFIG", "InvalidRequestException": "INVALID_REQUEST"}


class JavaGroupConfigs:
    """The steps' two calls with Java's Admin (``ConfigResource.Type.GROUP``); its describeConfigs
    gives no synonyms (the driver leaves them out): each config's value and source only."""

    def __init__(self, java):
        self.java = java

    def describe(self, group: str) -> dict:
        got = self.java.describe_configs([("GROUP", group)])[("GROUP", group)]
        if isinstance(got, Exception):
            raise got
        return {name: (c["value"], JAVA_SOURCES.get(c["source"], c["source"])) for name, c in got.items()}

    def alter(self, group: str, ops: list):
        failure = self.java.incremental_alter_configs({("GROUP", group): ops})[("GROUP", group)]
        if failure is None:
            return "ok"
        return JAVA_ERRORS.get(failure.name, failure.name), failure.message


def without_synonyms(answers: dict) -> dict:
    """``answers`` as Java's Admin gives them: each shown config's (value, source)."""

    def strip(shown: dict) -> dict:
        return {name: (value, source) for name, (value, source, *_synonyms) in shown.items()}

    out = dict(answers)
    out["unconfigured"] = strip(answers["unconfigured"])
    for step, answer in answers.items():
        if isinstance(answer, tuple) and answer[0] == "ok":
            out[step] = ("ok", strip(answer[1]))
    return out


#: DescribeConfigs of a GROUP named "" (confluent-kafka and Java refuse it before sending):
#: (error code, message) - ConfigHelper's INVALID_REQUEST
EMPTY_NAME = (42, "Group name must not be empty")


def empty_group_name_answer(servers: str) -> tuple:
    """DescribeConfigs of a GROUP resource named "", sent by kafka-python as a raw request."""
    from kafka import KafkaAdminClient
    from kafka.protocol.admin import DescribeConfigsRequest

    admin = KafkaAdminClient(bootstrap_servers=servers)
    try:
        resource = DescribeConfigsRequest.DescribeConfigsResource(
            resource_type=32, resource_name="", configuration_keys=None
        )
        request = DescribeConfigsRequest(
            version=4, resources=[resource], include_synonyms=False, include_documentation=False
        )
        broker = min(b.node_id for b in admin._manager.cluster.brokers())
        (result,) = admin._manager.run(admin._manager.send, request, broker).results
        return result.error_code, result.error_message
    finally:
        admin.close()
