"""IncrementalAlterConfigs of a topic as Kafka's controller applies it
(``ConfigurationControlManager.incrementalAlterConfigs``): SET or DELETE (back to the broker
default) of any topic config Kafka knows, APPEND and SUBTRACT of a LIST one, validated as Kafka does (:mod:`.topic_configs`); the
simulator acts on ``min.insync.replicas`` (what acks=all needs) and
``unclean.leader.election.enable`` (what the controller may elect) and keeps the others to
describe them. The new configuration
reaches every broker with the next metadata update, as a ConfigRecord does.

>>> from course_lib.broker import Cluster
>>> from course_lib.broker.topic_requests import create_topic_request
>>> cluster = Cluster(brokers=3, seed=1)
>>> create_topic_request(cluster, "orders", 1, 3, {})
(None, None)
>>> alter_topic_configs_request(cluster, "orders", [("min.insync.replicas", SET, "3")])
(None, None)
>>> cluster.controller.configs["orders"].min_insync_replicas
3
>>> alter_topic_configs_request(cluster, "orders", [("min.insync.replicas", DELETE, None)])
(None, None)
>>> cluster.controller.configs["orders"].min_insync_replicas == cluster.options.min_insync_replicas
True
>>> alter_topic_configs_request(cluster, "orders", [("min.insync.replicas", SET, "0")])[0].__name__
'InvalidConfigurationError'
"""

from __future__ import annotations

import dataclasses

from kafka import errors as Errors

from .topic_configs import catalogue, note_not_modelled, validate_topic_configs
from .topic_requests import UNKNOWN_TOPIC_MESSAGE

#: IncrementalAlterConfigs' operations (AlterConfigOp.OpType)
SET, DELETE, APPEND, SUBTRACT = 0, 1, 2, 3
#: the topic settings the simulator honours -> TopicConfig field
HONOURED = {
    "min.insync.replicas": "min_insync_replicas",
    "unclean.leader.election.enable": "unclean_leader_election_enable",
}


def alter_topic_configs_request(cluster, topic: str, ops: list, validate_only: bool = False):
    """Apply ``[(name, operation, value)]`` to ``topic``; ``(error class or None, message)``."""
    controller, defaults = cluster.controller, cluster.options
    config = controller.configs.get(topic)
    if config is None:
        return Errors.UnknownTopicOrPartitionError, UNKNOWN_TOPIC_MESSAGE
    changes: dict = {}
    overrides = dict(config.overrides)
    specs = catalogue(cluster.options.kafka_version)["topic"]
    for name, operation, value in ops:
        if name not in specs:
            return Errors.InvalidConfigurationError, f"Unknown topic config name: {name}"
        if operation in (APPEND, SUBTRACT):
            if specs[name]["type"] != "LIST":
                return Errors.InvalidConfigurationError, (
                    f"Can't {('APPEND', 'SUBTRACT')[operation - 2]} to key {name} because its type is not LIST."
                )
            # Kafka edits the list as set on the topic, else the config's own default (not the
            # broker's setting: ConfigurationControlManager.getParts), and then SETs the result
            value, operation = _edited_list(overrides.get(name, specs[name]["default"]), operation, str(value)), SET
        if operation == SET:
            invalid = validate_topic_configs({name: value}, cluster.options.kafka_version)
            if invalid is not None:
                return invalid
            overrides[name] = str(value)
        elif operation == DELETE:
            overrides.pop(name, None)
        if name not in HONOURED:
            if operation in (SET, DELETE):
                if operation == SET:
                    note_not_modelled(name)
                continue
        if operation == DELETE:
            value = getattr(defaults, HONOURED[name])
        elif operation != SET:
            return Errors.InvalidRequestError, f"unknown config operation {operation}"
        try:
            changes[HONOURED[name]] = _parse(name, value)
        except ValueError as exc:
            return Errors.InvalidConfigurationError, str(exc)
    if validate_only:
        return None, None
    controller.configs[topic] = dataclasses.replace(config, **changes, overrides=tuple(sorted(overrides.items())))
    cluster.record("controller", "alter_topic_configs", {"topic": topic, **changes})
    controller._broadcast([(t, p) for t, p in sorted(controller.partitions) if t == topic])
    return None, None


def _edited_list(current: str | None, operation: int, value: str) -> str:
    """A LIST config's value after APPEND (each new part once, at the end) or SUBTRACT of the
    comma-separated ``value``."""
    parts = [part for part in (current or "").split(",") if part]
    for part in value.split(","):
        if operation == APPEND and part not in parts:
            parts.append(part)
        elif operation == SUBTRACT and part in parts:
            parts.remove(part)
    return ",".join(parts)


def _parse(name: str, value):
    if name == "min.insync.replicas":
        number = int(value)
        if number < 1:
            raise ValueError(f"Invalid value {value} for configuration min.insync.replicas: Value must be at least 1")
        return number
    text = str(value).lower()
    if text not in ("true", "false"):
        raise ValueError(f"Invalid value {value} for configuration {name}: Expected value to be either true or false")
    return text == "true"
