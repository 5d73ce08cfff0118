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
ValueError: share.auto.offset.reset must be one of ['earliest', 'latest'], got 'oldest'
"""

from __future__ import annotations

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
}


@dataclass(frozen=True)
class ShareGroupSettings:
    record_lock_duration_ms: float = RECORD_LOCK_DURATION_MS
    delivery_count_limit: int = DELIVERY_COUNT_LIMIT
    partition_max_record_locks: int = PARTITION_MAX_RECORD_LOCKS
    session_timeout_ms: float = SESSION_TIMEOUT_MS
    heartbeat_interval_ms: float = HEARTBEAT_INTERVAL_MS
    auto_offset_reset: str = AUTO_OFFSET_RESET

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


def check_group_config(name: str, value) -> None:
    """Kafka's bounds for a share group config; a clear error otherwise."""
    if name not in _GROUP_CONFIGS:
        raise ValueError(f"unknown share group config {name!r}; known: {sorted(_GROUP_CONFIGS)}")
    if name == "share.auto.offset.reset":
        if value not in ("earliest", "latest"):
            raise ValueError(f"share.auto.offset.reset must be one of ['earliest', 'latest'], got {value!r}")
        return
    bounds = {
        "share.delivery.count.limit": (2, 10),
        "share.record.lock.duration.ms": (1000, 3_600_000),
        "share.partition.max.record.locks": (100, 10_000),
    }.get(name, (1, float("inf")))
    if not isinstance(value, (int, float)) or not bounds[0] <= value <= bounds[1]:
        raise ValueError(f"{name} must be a number in [{bounds[0]}, {bounds[1]}], got {value!r}")
