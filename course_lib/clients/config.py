"""Client configuration of the simulated clients, with kafka-python's names, defaults and rules.

The producer's (and the errors both raise) live in the neutral :mod:`course_lib.client_config`,
which the checker reads too; the consumer's are here.

>>> resolve_consumer_config(auto_offset_reset="earliest")["isolation_level"]
'read_uncommitted'
"""

from __future__ import annotations

from ..client_config import (
    PRODUCER_DEFAULTS,
    ConfigurationError,
    IdempotenceDisabledWarning,
    check_ms,
    resolve_producer_config,
    unknown_key_error,
)

__all__ = [
    "PRODUCER_DEFAULTS",
    "CONSUMER_DEFAULTS",
    "ConfigurationError",
    "IdempotenceDisabledWarning",
    "check_ms",
    "resolve_producer_config",
    "resolve_consumer_config",
    "unknown_key_error",
]


# ---- consumer ------------------------------------------------------------------------------------
def _consumer_defaults() -> dict:
    from kafka.consumer.group import KafkaConsumer as _KafkaPythonConsumer

    defaults = dict(_KafkaPythonConsumer.DEFAULT_CONFIG)
    defaults.update(bootstrap_servers=None, request_timeout_ms=30000)
    # the Java client's group.protocol and group.remote.assignor (kafka-python has neither): the
    # simulated consumer can join a consumer group (KIP-848) as the Java client 4.3.1 does
    defaults.update(group_protocol="classic", group_remote_assignor=None)
    return defaults


CONSUMER_DEFAULTS = _consumer_defaults()
_OLD_OFFSET_RESETS = {"smallest": "earliest", "largest": "latest"}
#: what the Java client 4.3.1 refuses with group.protocol=consumer (ConsumerConfig's
#: CONSUMER_PROTOCOL_UNSUPPORTED_CONFIGS, in its order): the coordinator assigns partitions and
#: sets the session timeout and heartbeat interval (group.consumer.* broker settings)
CONSUMER_PROTOCOL_UNSUPPORTED = ("partition_assignment_strategy", "heartbeat_interval_ms", "session_timeout_ms")


def resolve_consumer_config(**user) -> dict:
    """kafka-python's consumer defaults (``auto_offset_reset='latest'``, auto-commit every 5 s,
    ``read_uncommitted``) + the user's settings, validated."""
    for key in user:
        if key not in CONSUMER_DEFAULTS:
            raise unknown_key_error("consumer", key, CONSUMER_DEFAULTS)
    config = {**CONSUMER_DEFAULTS, **user}
    # kafka-python still takes the old names (with a log line)
    config["auto_offset_reset"] = _OLD_OFFSET_RESETS.get(config["auto_offset_reset"], config["auto_offset_reset"])
    choices = {
        "auto_offset_reset": ("earliest", "latest", "none"),
        "isolation_level": ("read_uncommitted", "read_committed"),
    }
    for key, allowed in choices.items():
        if config[key] not in allowed:
            raise ConfigurationError(f"{key} must be one of {allowed}, got {config[key]!r}")
    _check_group_protocol(config, user)
    for key in (
        "auto_commit_interval_ms",
        "session_timeout_ms",
        "heartbeat_interval_ms",
        "fetch_max_wait_ms",
        "request_timeout_ms",
        "retry_backoff_ms",
    ):
        check_ms(config, key, minimum=0 if key == "fetch_max_wait_ms" else 1)
    if (
        isinstance(config["max_poll_records"], bool)
        or not isinstance(config["max_poll_records"], int)
        or config["max_poll_records"] < 1
    ):
        raise ConfigurationError(f"max_poll_records must be a positive integer, got {config['max_poll_records']!r}")
    if not isinstance(config["enable_auto_commit"], bool):
        raise ConfigurationError(f"enable_auto_commit must be True or False, got {config['enable_auto_commit']!r}")
    if not config["fetch_max_wait_ms"] < config["request_timeout_ms"] < config["connections_max_idle_ms"]:
        # kafka-python's rule: a fetch may wait fetch_max_wait_ms on the broker, so a shorter
        # request timeout would fail every empty fetch
        raise ConfigurationError(
            f"connections_max_idle_ms ({config['connections_max_idle_ms']}) must be larger than "
            f"request_timeout_ms ({config['request_timeout_ms']}) which must be larger than "
            f"fetch_max_wait_ms ({config['fetch_max_wait_ms']})"
        )
    if config["heartbeat_interval_ms"] >= config["session_timeout_ms"]:
        raise ConfigurationError("heartbeat_interval_ms must be lower than session_timeout_ms (Kafka suggests a third)")
    group = config["group_id"]
    if group is not None and (not isinstance(group, str) or not group):
        raise ConfigurationError(f"group_id must be a non-empty string or None, got {group!r}")
    if group is None and config["group_instance_id"] is not None:
        raise ConfigurationError("group_instance_id requires group_id (static membership is a group's)")
    if group is None and config["enable_auto_commit"]:
        config["enable_auto_commit"] = False  # kafka-python: "group_id is None: disabling auto-commit"
    return config


def _check_group_protocol(config: dict, user: dict) -> None:
    """The Java client's rules (measured on 4.3.1: ConfigException at construction, group_id or
    not): ``group_protocol`` is ``classic`` or ``consumer`` (any case); with ``consumer`` the
    settings the coordinator now owns must not be set; with ``classic`` no
    ``group_remote_assignor``.

    >>> resolve_consumer_config(group_protocol="consumer", session_timeout_ms=10000)
    Traceback (most recent call last):
    ...
    course_lib.client_config.ConfigurationError: session_timeout_ms cannot be set when group_protocol='consumer': the group coordinator sets the session timeout and heartbeat interval (group.consumer.session.timeout.ms, group.consumer.heartbeat.interval.ms) and assigns the partitions (group_remote_assignor picks its assignor). Remove it, or use group_protocol='classic'.
    """
    protocol = config["group_protocol"]
    if not isinstance(protocol, str) or protocol.lower() not in ("classic", "consumer"):
        raise ConfigurationError(f"group_protocol must be 'classic' or 'consumer' (any case), got {protocol!r}")
    config["group_protocol"] = protocol = protocol.lower()
    if protocol == "consumer":
        refused = [k for k in CONSUMER_PROTOCOL_UNSUPPORTED if user.get(k) not in (None, "")]
        if refused:
            raise ConfigurationError(
                f"{', '.join(refused)} cannot be set when group_protocol='consumer': the group coordinator sets the "
                "session timeout and heartbeat interval (group.consumer.session.timeout.ms, "
                "group.consumer.heartbeat.interval.ms) and assigns the partitions (group_remote_assignor picks its "
                "assignor). Remove it, or use group_protocol='classic'."
            )
    elif config["group_remote_assignor"] not in (None, ""):
        raise ConfigurationError(
            "group_remote_assignor cannot be set when group_protocol='classic': it names the coordinator's "
            "assignor of a consumer group (KIP-848). Set group_protocol='consumer', or remove it."
        )
    assignor = config["group_remote_assignor"]
    if assignor is not None and not isinstance(assignor, str):
        raise ConfigurationError(f"group_remote_assignor must be an assignor's name (str) or None, got {assignor!r}")
