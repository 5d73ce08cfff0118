"""Share group settings, with Kafka 4.3's names, defaults and bounds.

Broker settings (``group.share.*``, in :class:`.options.ClusterOptions` with dots as
underscores) are the defaults; a share group may override some with a *group config*
(``kafka-configs --entity-type groups``; here ``cluster.alter_share_group_config``), named
without the ``group.`` prefix. Sources: ``ShareGroupConfig`` and ``GroupConfig`` in Kafka's
group-coordinator module.

>>> ShareGroupSettings.resolve(None, {"share.delivery.count.limit": 3}).delivery_count_limit
3
>>> ShareGroupSettings.resolve(None, {"share.auto.offset.reset": "oldest"})
Traceback (most recent call last):
...
ValueError: share.auto.offset.reset must be one of ['earliest', 'latest', 'by_duration:<ISO-8601 duration>'], got 'oldest'

A consumer group (KIP-848) may override its session timeout and heartbeat interval the same way
(:data:`CONSUMER_GROUP_CONFIGS`); every group's configs live together, as in Kafka's
``GroupConfigManager``.

Kafka 4.4 adds a share group's dead-letter queue (KIP-1191, :mod:`.dead_letter_queue`): on an
older release its configs are unknown, as they are to a 4.3.1 broker.

>>> check_group_config("errors.deadletterqueue.topic.name", "dlq.jobs", "4.3.1")
Traceback (most recent call last):
...
ValueError: Unknown group config name: errors.deadletterqueue.topic.name
>>> check_group_config("errors.deadletterqueue.topic.name", "__jobs", "4.4.0")
Traceback (most recent call last):
...
ValueError: errors.deadletterqueue.topic.name: DLQ topic name must not start with '__'
>>> parse_group_config("errors.deadletterqueue.copy.record.enable", "yes")
Traceback (most recent call last):
...
ValueError: Invalid value yes for configuration errors.deadletterqueue.copy.record.enable: Expected value to be either true or false
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .kafka_releases import added_configs, lab_kafka_version

#: group.share.record.lock.duration.ms: how long a consumer holds acquired records (30 s)
RECORD_LOCK_DURATION_MS = 30_000
#: group.share.delivery.count.limit: deliveries before a record is archived (5, bounds 2..10)
DELIVERY_COUNT_LIMIT = 5
#: group.share.partition.max.record.locks: records acquired at once per share-partition (2000 in 4.3)
PARTITION_MAX_RECORD_LOCKS = 2000
#: group.share.session.timeout.ms: a member silent this long is removed (45 s)
SESSION_TIMEOUT_MS = 45_000
#: group.share.heartbeat.interval.ms: how often members heartbeat (5 s)
HEARTBEAT_INTERVAL_MS = 5_000
#: share.auto.offset.reset (group config): where a new share group starts - *latest*
AUTO_OFFSET_RESET = "latest"

#: group config name -> (attribute, check)
_GROUP_CONFIGS = {
    "share.record.lock.duration.ms": "record_lock_duration_ms",
    "share.delivery.count.limit": "delivery_count_limit",
    "share.partition.max.record.locks": "partition_max_record_locks",
    "share.session.timeout.ms": "session_timeout_ms",
    "share.heartbeat.interval.ms": "heartbeat_interval_ms",
    "share.auto.offset.reset": "auto_offset_reset",
    "share.isolation.level": "isolation_level",
    # KIP-1191 (Kafka 4.4): the group's dead-letter topic ("": none) and whether a dead letter
    # carries the source record's key and value
    "errors.deadletterqueue.topic.name": "dlq_topic_name",
    "errors.deadletterqueue.copy.record.enable": "dlq_copy_record_enable",
}
#: a consumer group's (KIP-848) group configs -> the ClusterOptions field of the broker default
#: they override (read at each heartbeat, as GroupMetadataManager does)
CONSUMER_GROUP_CONFIGS = {
    "consumer.session.timeout.ms": "group_consumer_session_timeout_ms",
    "consumer.heartbeat.interval.ms": "group_consumer_heartbeat_interval_ms",
}
#: the group configs whose values are words, not numbers
WORD_CONFIGS = ("share.auto.offset.reset", "share.isolation.level", "errors.deadletterqueue.topic.name")
#: the group configs that are true or false
BOOLEAN_CONFIGS = ("errors.deadletterqueue.copy.record.enable",)
#: share.isolation.level (group config): read_uncommitted (the default) hands out records up to
#: the high watermark; read_committed up to the last stable offset, archiving aborted ones
ISOLATION_LEVELS = ("read_uncommitted", "read_committed")


@dataclass(frozen=True)
class ShareGroupSettings:
    record_lock_duration_ms: float = RECORD_LOCK_DURATION_MS
    delivery_count_limit: int = DELIVERY_COUNT_LIMIT
    partition_max_record_locks: int = PARTITION_MAX_RECORD_LOCKS
    session_timeout_ms: float = SESSION_TIMEOUT_MS
    heartbeat_interval_ms: float = HEARTBEAT_INTERVAL_MS
    auto_offset_reset: str = AUTO_OFFSET_RESET
    isolation_level: str = ISOLATION_LEVELS[0]
    dlq_topic_name: str = ""
    dlq_copy_record_enable: bool = False

    @classmethod
    def resolve(cls, options, group_configs: dict | None) -> "ShareGroupSettings":
        """The broker defaults (``options``: a ClusterOptions, or None for Kafka's) overridden
        by a group's configs."""
        base: dict = {}
        version = lab_kafka_version() if options is None else options.kafka_version
        if options is not None:
            base = {
                "record_lock_duration_ms": options.group_share_record_lock_duration_ms,
                "delivery_count_limit": options.group_share_delivery_count_limit,
                "partition_max_record_locks": options.group_share_partition_max_record_locks,
                "session_timeout_ms": options.group_share_session_timeout_ms,
                "heartbeat_interval_ms": options.group_share_heartbeat_interval_ms,
            }
        for name, value in (group_configs or {}).items():
            check_group_config(name, value, version)
            if name in _GROUP_CONFIGS:  # not a consumer group's
                base[_GROUP_CONFIGS[name]] = value
        return cls(**base)


def consumer_group_setting(options, group_configs: dict | None, name: str) -> float:
    """A consumer group's ``name`` (of :data:`CONSUMER_GROUP_CONFIGS`): its own, else the brokers'.

    >>> from course_lib.broker.options import ClusterOptions
    >>> consumer_group_setting(ClusterOptions(), {"consumer.session.timeout.ms": 50_000}, "consumer.session.timeout.ms")
    50000
    >>> consumer_group_setting(ClusterOptions(), None, "consumer.heartbeat.interval.ms")
    5000
    """
    return (group_configs or {}).get(name, getattr(options, CONSUMER_GROUP_CONFIGS[name]))


def check_group_config_name(name: str, kafka_version: str | None = None) -> None:
    """Kafka's refusal (``GroupConfig.validateNames``) of a name the release (default: the lab's)
    does not know."""
    kafka_version = kafka_version or lab_kafka_version()
    later = {n for n in _GROUP_CONFIGS if n.startswith("errors.")} - set(added_configs(kafka_version, "group"))
    if (name not in _GROUP_CONFIGS and name not in CONSUMER_GROUP_CONFIGS) or name in later:
        raise ValueError(f"Unknown group config name: {name}")


def parse_group_config(name: str, text):
    """A group config's value as it comes over the wire (a string) -> the value it stands for."""
    if name in WORD_CONFIGS:
        return text
    if name in BOOLEAN_CONFIGS:
        if str(text).strip().lower() not in ("true", "false"):
            raise ValueError(
                f"Invalid value {text} for configuration {name}: Expected value to be either true or false"
            )
        return str(text).strip().lower() == "true"
    try:
        return int(text or "")
    except ValueError:  # ConfigDef.parseType's words
        raise ValueError(f"Invalid value {text} for configuration {name}: Not a number of type INT") from None


def check_group_config(name: str, value, kafka_version: str | None = None) -> None:
    """Kafka's bounds for a share group config; a clear error otherwise."""
    check_group_config_name(name, kafka_version)
    if name == "errors.deadletterqueue.topic.name":
        if not isinstance(value, str):
            raise ValueError(f"{name} must be a topic name (a string), got {value!r}")
        if value.startswith("__"):  # the internal topics' namespace (GroupConfig's validator)
            raise ValueError(f"{name}: DLQ topic name must not start with '__'")
        return
    if name in BOOLEAN_CONFIGS:
        if not isinstance(value, bool):
            raise ValueError(
                f"Invalid value {value} for configuration {name}: Expected value to be either true or false"
            )
        return
    if name == "share.isolation.level":
        if value not in ISOLATION_LEVELS:
            raise ValueError(f"share.isolation.level must be one of {list(ISOLATION_LEVELS)}, got {value!r}")
        return
    if name == "share.auto.offset.reset":
        if value not in ("earliest", "latest") and by_duration_ms(value) is None:
            raise ValueError(
                f"share.auto.offset.reset must be one of ['earliest', 'latest', 'by_duration:<ISO-8601 duration>'], "
                f"got {value!r}"
            )
        return
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        raise ValueError(f"Invalid value {value} for configuration {name}: Not a number of type INT")
    if name == "share.record.lock.duration.ms" and value < LOCK_DURATION_FLOOR_MS:
        raise ValueError(
            f"Invalid value {value} for configuration {name}: Value must be at least {LOCK_DURATION_FLOOR_MS}"
        )
    low, high = _BOUNDS.get(name, (1, float("inf")))
    if not low <= value <= high:
        raise ValueError(_out_of_range(name, low, high, value, kafka_version or lab_kafka_version()))


#: ``GroupConfig``'s own floor of a group's lock (its ConfigDef's ``atLeast``), under the broker's
LOCK_DURATION_FLOOR_MS = 1000
#: a group config's bounds: the brokers' group.share.min.* and group.share.max.* (Kafka's
#: defaults, but the lab's lock floor of 1 s: course_lib/clusters/lab.py)
_BOUNDS = {
    "share.delivery.count.limit": (2, 10),
    "share.record.lock.duration.ms": (LOCK_DURATION_FLOOR_MS, 60_000),
    "share.partition.max.record.locks": (100, 4_000),
    "consumer.session.timeout.ms": (45_000, 60_000),
    "consumer.heartbeat.interval.ms": (5_000, 15_000),
}


def _out_of_range(name: str, low, high, value, kafka_version: str) -> str:
    """``GroupConfig.validateValues``' refusal, in the release's words (measured on 4.3.1 and
    4.4.0): 4.4.0 gives the range, 4.3.1 the broker config it breaks.

    >>> _out_of_range("share.delivery.count.limit", 2, 10, 11, "4.4.0")
    'share.delivery.count.limit must be in the range 2 to 10 inclusive.'
    >>> _out_of_range("share.delivery.count.limit", 2, 10, 11, "4.3.1")
    'share.delivery.count.limit must be less than or equal to group.share.max.delivery.count.limit'
    """
    if kafka_version != "4.3.1":
        return f"{name} must be in the range {_number(low)} to {_number(high)} inclusive."
    kind, rest = name.split(".", 1)
    if value < low:
        return f"{name} must be greater than or equal to group.{kind}.min.{rest}"
    return f"{name} must be less than or equal to group.{kind}.max.{rest}"


def _number(bound) -> str:
    return str(int(bound)) if bound != float("inf") else "2147483647"


_DURATION = re.compile(r"P(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?)?", re.IGNORECASE)


def by_duration_ms(value) -> float | None:
    """The window of ``share.auto.offset.reset`` = ``by_duration:<duration>`` (KIP-1106; Java's
    ``Duration.parse``: days, hours, minutes, seconds), in ms; None for any other value. A new
    share group starts at the first record of the last that many ms.

    >>> by_duration_ms("by_duration:PT1H"), by_duration_ms("by_duration:P1DT0.5S"), by_duration_ms("latest")
    (3600000.0, 86400500.0, None)
    >>> by_duration_ms("by_duration:PT"), by_duration_ms("by_duration:-PT1H")
    (None, None)
    """
    if not isinstance(value, str) or not value.startswith("by_duration:"):
        return None
    text = value[len("by_duration:") :]
    match = _DURATION.fullmatch(text)
    if match is None or text.upper() in ("P", "PT") or text.upper().endswith("T"):
        return None
    days, hours, minutes, seconds = (float(g) if g else 0.0 for g in match.groups())
    return ((days * 24 + hours) * 60 + minutes) * 60_000 + seconds * 1000
