"""A group's configs as DescribeConfigs answers them for a GROUP resource (KIP-848, KIP-932):
every group config the release knows, a group's own setting (GROUP_CONFIG) else the broker
setting it stands for (``group.`` + its name, or the group config's own default).

Kafka's ``ConfigHelper`` (GROUP) over ``GroupConfig.fromProps``: a group that was never configured
- or never existed - answers every config, each at its default; only an empty name is refused.
Measured on Kafka 4.4.0 and 4.3.1 (tests/real/test_describe_configs_real.py).

>>> from course_lib.broker.options import ClusterOptions
>>> rows = {r["name"]: r for r in described_group(ClusterOptions(kafka_version="4.4.0"), {"share.delivery.count.limit": 3})}
>>> rows["share.delivery.count.limit"]["value"], rows["share.delivery.count.limit"]["synonyms"]
('3', [('share.delivery.count.limit', '3', 8), ('group.share.delivery.count.limit', '5', 5)])
>>> rows["share.record.lock.duration.ms"]["value"], rows["share.record.lock.duration.ms"]["synonyms"]
('30000', [('group.share.record.lock.duration.ms', '30000', 5)])
>>> "errors.deadletterqueue.topic.name" in rows, "errors.deadletterqueue.topic.name" in group_config_names("4.3.1")
(True, False)
"""

from __future__ import annotations

from .broker_config import broker_config_names
from .kafka_releases import added_configs
from .topic_configs import CONFIG_TYPES, DEFAULT_CONFIG, STATIC_BROKER_CONFIG, catalogue

#: ConfigSource of a group's own setting
GROUP_CONFIG = 8
#: Kafka 4.3.1's group configs (``GroupConfig``) -> (the broker config behind it, or None;
#: its default when none is; its ConfigDef type)
_GROUP_CONFIGS_431 = {
    "consumer.assignment.interval.ms": ("group.consumer.assignment.interval.ms", None, "INT"),
    "consumer.heartbeat.interval.ms": ("group.consumer.heartbeat.interval.ms", None, "INT"),
    "consumer.session.timeout.ms": ("group.consumer.session.timeout.ms", None, "INT"),
    "share.assignment.interval.ms": ("group.share.assignment.interval.ms", None, "INT"),
    "share.auto.offset.reset": (None, "latest", "STRING"),
    "share.delivery.count.limit": ("group.share.delivery.count.limit", None, "INT"),
    "share.heartbeat.interval.ms": ("group.share.heartbeat.interval.ms", None, "INT"),
    "share.isolation.level": (None, "read_uncommitted", "STRING"),
    "share.partition.max.record.locks": ("group.share.partition.max.record.locks", None, "INT"),
    "share.record.lock.duration.ms": ("group.share.record.lock.duration.ms", None, "INT"),
    "share.renew.acknowledge.enable": (None, "true", "BOOLEAN"),
    "share.session.timeout.ms": ("group.share.session.timeout.ms", None, "INT"),
    "streams.assignment.interval.ms": ("group.streams.assignment.interval.ms", None, "INT"),
    "streams.heartbeat.interval.ms": ("group.streams.heartbeat.interval.ms", None, "INT"),
    "streams.initial.rebalance.delay.ms": ("group.streams.initial.rebalance.delay.ms", None, "INT"),
    "streams.num.standby.replicas": ("group.streams.num.standby.replicas", None, "INT"),
    "streams.session.timeout.ms": ("group.streams.session.timeout.ms", None, "INT"),
}
#: group configs a later release added whose default is a broker config's (4.4.0's measured
#: synonyms); the others are group-only (:func:`.kafka_releases.added_configs`)
_ADDED_SYNONYMS = {
    "streams.assignor.name": "group.streams.assignors",
    "streams.rack.aware.assignment.tags": "group.streams.rack.aware.assignment.tags",
}


def group_config_names(kafka_version: str) -> dict:
    """The group configs ``kafka_version`` describes -> (broker synonym or None, default, type)."""
    names = dict(_GROUP_CONFIGS_431)
    for name, (default, kind) in added_configs(kafka_version, "group").items():
        names[name] = (_ADDED_SYNONYMS.get(name), default, kind)
    return names


def described_group(options, group_configs: dict, given: frozenset | set = frozenset()) -> list[dict]:
    """DescribeConfigs rows (with their synonyms: (name, value, source)) of a group whose own
    configs are ``group_configs`` (typed, as the simulator keeps them) on a cluster of ``options``;
    a broker setting the cluster was given (``given``, or other than Kafka's default) is
    STATIC_BROKER_CONFIG, as :func:`.topic_configs.describe_topic` says."""
    brokers = catalogue(options.kafka_version)["broker"]
    fields = broker_config_names()
    rows = []
    for name, (synonym, default, kind) in sorted(group_config_names(options.kafka_version).items()):
        if synonym is None:
            under = (name, default, DEFAULT_CONFIG)
        else:
            spec = brokers[synonym]
            value = text(getattr(options, fields[synonym])) if synonym in fields else spec["default"]
            static = value != spec["default"] or synonym in given
            under = (synonym, value, STATIC_BROKER_CONFIG if static else DEFAULT_CONFIG)
        synonyms = [under]
        if name in group_configs:
            synonyms.insert(0, (name, text(group_configs[name]), GROUP_CONFIG))
        top = synonyms[0]
        rows.append(
            {
                "name": name,
                "value": top[1],
                "read_only": False,
                "config_source": top[2],
                "is_default": top[2] == DEFAULT_CONFIG,
                "is_sensitive": False,
                "config_type": CONFIG_TYPES[kind],
                "synonyms": synonyms,
            }
        )
    return rows


def text(value) -> str:
    """A config value as Kafka writes it (``ConfigDef.convertToString``): true, 5000, latest."""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)
