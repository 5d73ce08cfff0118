"""Kafka's topic and broker configs as a broker takes and describes them.

The catalogue (``kafka_configs.json``: every config Kafka 4.3.1 describes for a topic and for a
broker, with its default, type and flags) is recorded from a real broker by
``tools/kafka_config_catalogue.py``. A topic takes every topic config Kafka knows, validated as
Kafka's ``ConfigDef`` parses it (the type, and the ranges ``LogConfig`` declares for the common
ones); the simulator acts on ``min.insync.replicas`` and ``unclean.leader.election.enable`` and
keeps the others as set, to describe them - saying once in the log that they are not modelled.

>>> validate_topic_configs({"retention.ms": "86400000", "cleanup.policy": "compact"})
>>> validate_topic_configs({"retention.ms": "a day"})[1]
'Invalid value a day for configuration retention.ms: Not a number of type LONG'
>>> validate_topic_configs({"retention.msec": "1"})[1]
'Unknown topic config name: retention.msec'
>>> validate_topic_configs({"cleanup.policy": "delete,forever"})[1]
'Invalid value forever for configuration cleanup.policy: String must be one of: compact, delete'
"""

from __future__ import annotations

import functools
import json
import logging
from importlib import resources

from kafka import errors as Errors

from .kafka_releases import DESCRIBED_BROKER_CONFIGS, added_configs, lab_kafka_version

log = logging.getLogger("course_lib.broker")

#: the topic configs the simulator acts on -> TopicConfig field
MODELLED = {
    "min.insync.replicas": "min_insync_replicas",
    "unclean.leader.election.enable": "unclean_leader_election_enable",
}
#: DescribeConfigs' config sources (ConfigSource) and types (ConfigType)
TOPIC_CONFIG, STATIC_BROKER_CONFIG, DEFAULT_CONFIG = 1, 4, 5
CONFIG_TYPES = {
    "BOOLEAN": 1,
    "STRING": 2,
    "INT": 3,
    "SHORT": 4,
    "LONG": 5,
    "DOUBLE": 6,
    "LIST": 7,
    "CLASS": 8,
    "PASSWORD": 9,
}
#: the ranges and choices LogConfig (and TopicConfig's docs) declare for the configs most often
#: set; the others are checked by type only
_AT_LEAST = {
    "retention.ms": -1,
    "retention.bytes": None,
    "segment.bytes": 1024 * 1024,
    "segment.ms": 1,
    "min.insync.replicas": 1,
    "max.message.bytes": 0,
    "delete.retention.ms": 0,
    "min.compaction.lag.ms": 0,
    "max.compaction.lag.ms": 1,
    "message.timestamp.after.max.ms": 0,
    "message.timestamp.before.max.ms": 0,
}
_ONE_OF = {
    "cleanup.policy": ("compact", "delete"),
    "compression.type": ("uncompressed", "zstd", "lz4", "snappy", "gzip", "producer"),
    "message.timestamp.type": ("CreateTime", "LogAppendTime"),
}
_INT_RANGE = (-(2**31), 2**31 - 1)
_LONG_RANGE = (-(2**63), 2**63 - 1)


def catalogue(kafka_version: str | None = None) -> dict:
    """``{"topic": {name: {default, type, read_only, sensitive}}, "broker": {...}, "kafka_version"}``:
    the recorded 4.3.1 catalogue plus what ``kafka_version`` (default: the lab's) added
    (:mod:`.kafka_releases`).

    >>> "errors.deadletterqueue.group.enable" in catalogue("4.4.0")["topic"], "errors.deadletterqueue.group.enable" in catalogue("4.3.1")["topic"]
    (True, False)
    """
    return _catalogue(kafka_version or lab_kafka_version())


@functools.cache
def _catalogue(kafka_version: str) -> dict:
    recorded = json.loads(resources.files("course_lib.broker").joinpath("kafka_configs.json").read_text())
    for kind in ("topic", "broker"):
        for name, (default, kind_of_value) in added_configs(kafka_version, kind).items():
            # KIP-1191's broker configs are dynamic cluster-wide ones: not read-only
            recorded[kind][name] = {"default": default, "type": kind_of_value, "read_only": False, "sensitive": False}
    for name, (described, kind_of_value, read_only) in DESCRIBED_BROKER_CONFIGS[kafka_version].items():
        recorded["broker"][name] = {
            "default": described,
            "type": kind_of_value,
            "read_only": read_only,
            "sensitive": False,
        }
    recorded["kafka_version"] = kafka_version
    return recorded


def validate_topic_configs(configs: dict, kafka_version: str | None = None):
    """None, or ``(InvalidConfigurationError, Kafka's message)`` for the first bad config."""
    known = catalogue(kafka_version)["topic"]
    for name, value in configs.items():
        if name not in known:
            return Errors.InvalidConfigurationError, f"Unknown topic config name: {name}"
        kind = known[name]["type"]
        # a LIST's validator (ConfigDef.ValidList) checks each element: its message names the bad one
        parts = [v.strip() for v in str(value).split(",")] if kind == "LIST" and value is not None else [value]
        for part in parts:
            problem = _problem(name, "" if part is None else str(part).strip(), kind)
            if problem:
                return Errors.InvalidConfigurationError, f"Invalid value {part} for configuration {name}: {problem}"
    return None


def _problem(name: str, text: str, kind: str) -> str | None:
    if kind in ("INT", "LONG", "SHORT"):
        try:
            number = int(text)
        except ValueError:
            return f"Not a number of type {kind}"
        lo, hi = _LONG_RANGE if kind == "LONG" else _INT_RANGE
        if not lo <= number <= hi:
            return f"Not a number of type {kind}"
        least = _AT_LEAST.get(name)
        if least is not None and number < least:
            return f"Value must be at least {least}"
    elif kind == "DOUBLE":
        try:
            ratio = float(text)
        except ValueError:
            return "Not a number of type DOUBLE"
        if name == "min.cleanable.dirty.ratio" and not 0 <= ratio <= 1:
            return "Value must be no more than 1" if ratio > 1 else "Value must be at least 0"
    elif kind == "BOOLEAN":
        if text.lower() not in ("true", "false"):
            return "Expected value to be either true or false"
    if name in _ONE_OF:
        choices = _ONE_OF[name]
        if text not in choices:
            return f"String must be one of: {', '.join(choices)}"
    return None


#: topic configs a broker reads elsewhere: a share group's dead-letter writer (KIP-1191)
READ_BY_DEAD_LETTER_WRITER = frozenset({"errors.deadletterqueue.group.enable"})


@functools.cache
def note_not_modelled(name: str) -> None:
    """Say once per config that it is kept and described but does not act."""
    if name in READ_BY_DEAD_LETTER_WRITER:
        return
    log.warning(
        "topic config %s is stored and described as Kafka does, but the simulator does not model it",
        name,
    )


def describe_topic(config, options, given: frozenset | set = frozenset()) -> list[dict]:
    """DescribeConfigs rows of a topic: its own settings (TOPIC_CONFIG), the broker's where the
    cluster sets one the simulator models - given by name (``given``) or other than Kafka's
    default - (STATIC_BROKER_CONFIG), else Kafka's defaults."""
    own = dict(config.overrides)
    broker_values = {
        "min.insync.replicas": str(options.min_insync_replicas),
        "unclean.leader.election.enable": str(options.unclean_leader_election_enable).lower(),
    }
    rows = []
    for name, spec in sorted(catalogue(options.kafka_version)["topic"].items()):
        if name in own:
            value, source = own[name], TOPIC_CONFIG
        elif name in broker_values and (broker_values[name] != spec["default"] or name in given):
            value, source = broker_values[name], STATIC_BROKER_CONFIG
        else:
            value, source = spec["default"], DEFAULT_CONFIG
        rows.append(_row(name, value, source, spec))
    return rows


def describe_broker(static: dict, kafka_version: str | None = None) -> list[dict]:
    """DescribeConfigs rows of a broker: ``static`` (Kafka name -> value set for this broker:
    server.properties' STATIC_BROKER_CONFIG) over Kafka's defaults."""
    rows = []
    for name, spec in sorted(catalogue(kafka_version)["broker"].items()):
        if name in static:
            rows.append(_row(name, static[name], STATIC_BROKER_CONFIG, spec))
        else:
            rows.append(_row(name, spec["default"], DEFAULT_CONFIG, spec))
    return rows


def _row(name: str, value, source: int, spec: dict) -> dict:
    return {
        "name": name,
        "value": None if spec["sensitive"] else value,
        "read_only": spec["read_only"],
        "config_source": source,
        "is_default": source == DEFAULT_CONFIG,
        "is_sensitive": spec["sensitive"],
        "config_type": CONFIG_TYPES.get(spec["type"], 0),
    }
