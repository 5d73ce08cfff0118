"""Kafka's broker configuration names for the simulated cluster's options.

A ``server.properties`` line is what someone who knows Kafka writes; :class:`.options.ClusterOptions`
spells the same setting with underscores. :func:`options_from_broker_config` turns the first
into the second (``WireCluster(config=...)``, ``python -m course_lib.wire --config k=v``), with
the value parsed and checked as Kafka's ``ConfigDef`` does for that setting's type.

>>> options_from_broker_config({"auto.create.topics.enable": "false", "num.partitions": "4"})
{'auto_create_topics_enable': False, 'num_partitions': 4}
>>> options_from_broker_config({"group.min.session.timeout.ms": 1000})
{'group_min_session_timeout_ms': 1000.0}
>>> options_from_broker_config({"num.partition": "4"})
Traceback (most recent call last):
...
ValueError: unknown broker config 'num.partition' (did you mean 'num.partitions'?); the simulated cluster takes ...
>>> options_from_broker_config({"num.partitions": "four"})
Traceback (most recent call last):
...
ValueError: Invalid value four for configuration num.partitions: Not a number of type INT
"""

from __future__ import annotations

import difflib
from dataclasses import fields
from typing import Mapping

from .kafka_releases import added_configs
from .options import ClusterOptions

#: ClusterOptions fields that are the simulator's own, not a Kafka broker config
NOT_KAFKA_CONFIGS = frozenset(
    {"kafka_version", "latency_ms", "jitter_ms", "features", "trace", "eligible_leader_replicas_enable"}
)


def broker_config_names() -> dict[str, str]:
    """Kafka's name -> ClusterOptions field, for every broker config the simulator models."""
    return {f.name.replace("_", "."): f.name for f in fields(ClusterOptions) if f.name not in NOT_KAFKA_CONFIGS}


def options_from_broker_config(config: Mapping[str, object]) -> dict:
    """``{"num.partitions": "4"}`` -> ``{"num_partitions": 4}`` (ClusterOptions keyword arguments);
    ValueError naming the setting for an unknown name or a value of the wrong type."""
    names = broker_config_names()
    types = {f.name: f.type for f in fields(ClusterOptions)}
    out: dict = {}
    for name, value in config.items():
        field = names.get(name)
        if field is None:
            close = difflib.get_close_matches(name, names, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise ValueError(
                f"unknown broker config {name!r}{hint}; the simulated cluster takes Kafka's names of the "
                f"settings it models: {', '.join(sorted(names))}"
            )
        out[field] = _parse(name, value, str(types[field]))
    return out


def _parse(name: str, value: object, kind: str):
    text = str(value).strip()
    if kind == "str":
        return text
    if kind == "bool":
        if isinstance(value, bool):
            return value
        if text.lower() not in ("true", "false"):
            raise ValueError(
                f"Invalid value {text} for configuration {name}: Expected value to be either true or false"
            )
        return text.lower() == "true"
    try:
        return int(text) if kind == "int" else float(text)
    except ValueError:
        raise ValueError(
            f"Invalid value {text} for configuration {name}: Not a number of type {'INT' if kind == 'int' else 'LONG'}"
        ) from None


def alter_cluster_default_configs(options: ClusterOptions, ops: list, validate_only: bool = False) -> tuple:
    """``kafka-configs --entity-type brokers --entity-default --alter``: SET or DELETE (0, 1) of the
    dynamic cluster-wide configs the simulator models - KIP-1191's dead-letter settings, which
    its release must know; ``(error name, message)`` or ``(None, None)``. Every broker shares
    ``options``, so the change holds cluster-wide at once.

    >>> options = ClusterOptions.from_kwargs(kafka_version="4.4.0")
    >>> alter_cluster_default_configs(options, [("errors.deadletterqueue.topic.name.prefix", 0, "poison.")])
    (None, None)
    >>> options.errors_deadletterqueue_topic_name_prefix
    'poison.'
    >>> alter_cluster_default_configs(options, [("num.partitions", 0, "3")])
    ('InvalidRequestError', "num.partitions is not a dynamic cluster config of the simulated brokers (they take ['errors.deadletterqueue.auto.create.topics.enable', 'errors.deadletterqueue.topic.name.prefix'])")
    """
    dynamic = added_configs(options.kafka_version, "broker")
    names, defaults = broker_config_names(), {f.name: f.default for f in fields(ClusterOptions)}
    types = {f.name: str(f.type) for f in fields(ClusterOptions)}
    changes = {}
    for name, op, value in ops:
        if name not in dynamic:
            return (
                "InvalidRequestError",
                f"{name} is not a dynamic cluster config of the simulated brokers (they take {sorted(dynamic)})",
            )
        field = names[name]
        try:
            changes[field] = defaults[field] if op == 1 else _parse(name, value, types[field])
        except ValueError as e:
            return "InvalidConfigurationError", str(e)
    if not validate_only:
        for field, value in changes.items():
            setattr(options, field, value)
    return None, None
