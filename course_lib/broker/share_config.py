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
"""

from __future__ import annotations

import re
from dataclasses import dataclass

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
}
#: the group configs whose values are words, not numbers
WORD_CONFIGS = ("share.auto.offset.reset", "share.isolation.level")
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

    @classmethod
    def resolve(cls, options, group_configs: dict | None) -> "ShareGroupSettings":
        """The broker defaults (``options``: a ClusterOptions, or None for Kafka's) overridden
        by a group's configs."""
        base = {}
        if options is not None:
            base = {
                "record_lock_duration_ms": options.group_share_record_lock_duration_ms,
                "delivery_count_limit": options.group_share_delivery_count_limit,
                "partition_max_record_locks": options.group_share_partition_max_record_locks,
                "session_timeout_ms": options.group_share_session_timeout_ms,
                "heartbeat_interval_ms": options.group_share_heartbeat_interval_ms,
            }
        for name, value in (group_configs or {}).items():
            check_group_config(name, value)
            base[_GROUP_CONFIGS[name]] = value
        return cls(**base)


def check_group_config_name(name: str) -> None:
    if name not in _GROUP_CONFIGS:
        raise ValueError(f"unknown share group config {name!r}; known: {sorted(_GROUP_CONFIGS)}")


def check_group_config(name: str, value) -> None:
    """Kafka's bounds for a share group config; a clear error otherwise."""
    check_group_config_name(name)
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
    bounds = {
        "share.delivery.count.limit": (2, 10),
        "share.record.lock.duration.ms": (1000, 3_600_000),
        "share.partition.max.record.locks": (100, 10_000),
    }.get(name, (1, float("inf")))
    if not isinstance(value, (int, float)) or not bounds[0] <= value <= bounds[1]:
        raise ValueError(f"{name} must be a number in [{bounds[0]}, {bounds[1]}], got {value!r}")


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
