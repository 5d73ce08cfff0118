"""kafka-python's producer configuration: names, defaults and rules - checked loudly.

Neutral ground: the simulated clients (:mod:`course_lib.clients.config`) and the checker (which
must know what a configuration allows without depending on any backend's client) both use it.

The simulator accepts exactly the keys ``kafka.KafkaProducer`` accepts (read from kafka-python
itself, so the two cannot drift), with kafka-python 3's defaults: ``acks='all'``,
``enable_idempotence=True``, unbounded ``retries``. It also applies kafka-python's quiet rule:
asking for ``acks=0``/``1``, ``retries=0`` or more than 5 requests in flight while leaving
idempotence at its default *switches idempotence off with a warning* - the course makes that
visible; asking for both explicitly is an error.

>>> resolve_producer_config(acks=1, enable_idempotence=False)["acks"]
1
>>> resolve_producer_config(ack=1)  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
course_lib.client_config.ConfigurationError: unknown producer config 'ack' - did you mean 'acks'? ...

Taught in notebooks/02_acks_and_durability and notebooks/04_idempotent_producer.
"""

from __future__ import annotations

import difflib
import math
import numbers
import warnings

from kafka.errors import KafkaConfigurationError
from kafka.producer.kafka import KafkaProducer as _KafkaPythonProducer

PRODUCER_DEFAULTS = dict(_KafkaPythonProducer.DEFAULT_CONFIG)
PRODUCER_DEFAULTS.update(bootstrap_servers=None, partitioner=None, kafka_client=None)
#: not kafka-python's: the transaction protocol the simulated producer speaks. 1 (the default) is
#: kafka-python's, which keeps transactions v1 on any cluster; 2 is the Java client 4.x's on a
#: cluster whose ``transaction.version`` is 2 (KIP-890: partitions join by the produce request,
#: the epoch is bumped at every transaction's end). On a cluster finalizing 1, 2 falls back to 1.
PRODUCER_DEFAULTS["transaction_version"] = 1

_ACKS = {0: 0, 1: 1, -1: -1, "all": -1, "0": 0, "1": 1, "-1": -1}
COMPRESSION_TYPES = (None, "gzip", "snappy", "lz4", "zstd")
_NON_NEGATIVE_MS = (
    "retry_backoff_ms",
    "request_timeout_ms",
    "delivery_timeout_ms",
    "linger_ms",
    "transaction_timeout_ms",
    "max_block_ms",
    "metadata_max_age_ms",
)


class ConfigurationError(KafkaConfigurationError, ValueError):
    """A producer/consumer configuration that kafka-python (or Kafka) would not accept.

    It is both kafka-python's ``KafkaConfigurationError`` and a ``ValueError``, so code written
    for either keeps working.
    """

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else self.__class__.__name__


class IdempotenceDisabledWarning(UserWarning):
    """kafka-python switched idempotence off because another setting conflicts with it."""


def unknown_key_error(kind: str, key: str, known) -> ConfigurationError:
    close = difflib.get_close_matches(key, known, n=1)
    hint = f" - did you mean {close[0]!r}?" if close else ""
    return ConfigurationError(
        f"unknown {kind} config {key!r}{hint} Config names are kafka-python's (underscores, "
        f"e.g. 'enable_idempotence' for enable.idempotence); see help(KafkaProducer)."
    )


def check_ms(config: dict, key: str, minimum: float = 0) -> None:
    value = config[key]
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or value < minimum:
        raise ConfigurationError(f"{key} must be a number of milliseconds >= {minimum}, got {value!r}")


def resolve_producer_config(**user) -> dict:
    """kafka-python's defaults + the user's settings, validated; idempotence resolved."""
    for key in user:
        if key not in PRODUCER_DEFAULTS:
            raise unknown_key_error("producer", key, PRODUCER_DEFAULTS)
    config = {**PRODUCER_DEFAULTS, **user}
    # kafka-python checks the codec name right after the keys (a ValueError), before any other rule
    if config["compression_type"] not in COMPRESSION_TYPES:
        raise ConfigurationError(
            f"compression_type must be one of {COMPRESSION_TYPES}, got {config['compression_type']!r}"
        )

    acks = config["acks"]
    if isinstance(acks, bool) or acks not in _ACKS:
        raise ConfigurationError(f"acks must be 0, 1 or 'all' (-1), got {acks!r}")
    config["acks"] = _ACKS[acks]
    retries = config["retries"]
    if (
        isinstance(retries, bool)
        or not isinstance(retries, numbers.Real)
        or retries < 0
        or (retries != math.inf and retries != int(float(retries)))
    ):
        raise ConfigurationError(f"retries must be a whole number >= 0 or float('inf'), got {retries!r}")
    for key in _NON_NEGATIVE_MS:
        check_ms(config, key)
    check_ms(config, "delivery_timeout_ms", minimum=1)
    for key in ("max_in_flight_requests_per_connection", "batch_size"):
        value = config[key]
        if isinstance(value, bool) or not isinstance(value, int) or value < (1 if key.startswith("max") else 0):
            raise ConfigurationError(f"{key} must be a positive integer, got {value!r}")
    if not isinstance(config["enable_idempotence"], bool):
        raise ConfigurationError(f"enable_idempotence must be True or False, got {config['enable_idempotence']!r}")
    if config["transaction_version"] not in (1, 2) or isinstance(config["transaction_version"], bool):
        raise ConfigurationError(
            f"transaction_version must be 1 (kafka-python's) or 2 (KIP-890, the Java client 4.x's), "
            f"got {config['transaction_version']!r}"
        )
    tid = config["transactional_id"]
    if tid is not None and (not isinstance(tid, str) or not tid):
        raise ConfigurationError(f"transactional_id must be a non-empty string or None, got {tid!r}")
    if (
        "delivery_timeout_ms" in user
        and config["delivery_timeout_ms"] < config["linger_ms"] + config["request_timeout_ms"]
    ):
        raise ConfigurationError(
            f"delivery_timeout_ms ({config['delivery_timeout_ms']}) must be >= linger_ms + "
            f"request_timeout_ms ({config['linger_ms']} + {config['request_timeout_ms']}): it bounds "
            f"the whole attempt, including at least one full request"
        )

    # kafka-python 3's idempotence rules (KIP-679).
    explicit = "enable_idempotence" in user
    if explicit and not config["enable_idempotence"] and tid is not None:
        raise ConfigurationError("transactional_id needs enable_idempotence=True (or leave it unset)")
    if tid is not None:
        config["enable_idempotence"] = explicit = True
    if config["enable_idempotence"]:
        conflicts = []
        if "acks" in user and config["acks"] != -1:
            conflicts.append(f"acks={user['acks']!r}")
        if "retries" in user and config["retries"] == 0:
            conflicts.append("retries=0")
        if "max_in_flight_requests_per_connection" in user and config["max_in_flight_requests_per_connection"] > 5:
            conflicts.append(f"max_in_flight_requests_per_connection={config['max_in_flight_requests_per_connection']}")
        if conflicts:
            if explicit:
                raise ConfigurationError(
                    f"enable_idempotence=True is incompatible with {', '.join(conflicts)}: the idempotent "
                    f"producer needs acks='all', retries > 0 and at most 5 requests in flight. Drop "
                    f"those settings, or pass enable_idempotence=False."
                )
            warnings.warn(
                f"idempotence disabled because {', '.join(conflicts)} conflicts with it (kafka-python "
                f"does the same, with only a log line). Pass enable_idempotence=False to make it explicit.",
                IdempotenceDisabledWarning,
                stacklevel=3,
            )
            config["enable_idempotence"] = False
    return config
