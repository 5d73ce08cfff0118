"""Every knob of the simulated cluster in one flat, documented object.

Names are Kafka's broker settings with dots turned into underscores and the unit last; the
defaults are Kafka 4.x's own, so what a learner sees matches a real cluster's timing.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields

from .acls import STANDARD_AUTHORIZER
from .kafka_releases import (
    RELEASE_FEATURES,
    SUPPORTED_RELEASE_FEATURES,
    added_configs,
    check_kafka_version,
    lab_kafka_version,
    later_broker_configs,
)

#: the broker features a freshly formatted Kafka 4.3.1 cluster finalizes (``kafka-features
#: describe``; ``Feature.defaultLevel(MetadataVersion.LATEST_PRODUCTION)`` in
#: kafka-server-common 4.3.1): metadata.version 30 is 4.3-IV0. (``eligible.leader.replicas.version``
#: is :attr:`ClusterOptions.eligible_leader_replicas_enable`; ``kraft.version`` is the quorum's.)
#: Other releases: :mod:`.kafka_releases`.
KAFKA_4_3_FEATURES = RELEASE_FEATURES["4.3.1"]
#: ... and Kafka 4.4.0's: share.version 2 (KIP-1191 dead-letter queues), metadata.version 4.4-IV2
KAFKA_4_4_FEATURES = RELEASE_FEATURES["4.4.0"]


@dataclass
class ClusterOptions:
    #: the Kafka release modelled (:mod:`.kafka_releases`): its default feature levels and the
    #: configs it knows; "4.4.0" finalizes share.version 2 (dead-letter queues for share groups).
    #: Default: the lab's release, ``$COURSE_KAFKA_VERSION`` or the course's default, read when
    #: the options are made (as the real cluster and the Java client read it)
    kafka_version: str = field(default_factory=lab_kafka_version)
    #: followers out of touch this long leave the ISR (Kafka default 30 s)
    replica_lag_time_max_ms: float = 30000
    #: a follower's fetch waits at most this long at the leader when there is no new data
    replica_fetch_wait_max_ms: float = 500
    #: pause before a follower retries after a fetch error
    replica_fetch_backoff_ms: float = 1000
    #: a follower gives up on an unanswered fetch after wait + this
    replica_socket_timeout_ms: float = 30000
    #: brokers heartbeat to the controller this often
    broker_heartbeat_interval_ms: float = 2000
    #: the controller fences a broker it has not heard from for this long
    broker_session_timeout_ms: float = 9000
    #: a leader retries an unanswered ISR change after this long
    alter_partition_timeout_ms: float = 5000
    #: one-way network latency between any two nodes, plus up to jitter_ms
    latency_ms: float = 1.0
    jitter_ms: float = 0.5
    #: a new consumer group waits this long for more members before its first assignment
    group_initial_rebalance_delay_ms: float = 3000
    #: consumer groups (KIP-848): a member silent this long is fenced; members heartbeat this often
    group_consumer_session_timeout_ms: float = 45000
    group_consumer_heartbeat_interval_ms: float = 5000
    #: KIP-1263's assignment batching (Kafka 4.3 ``group.consumer.assignment.interval.ms``): a
    #: consumer group computes a new target assignment only at a heartbeat at least this long after
    #: its last one; 0: at every change. Kafka 4.3.1's default, 1000: a member joining 0.1 s after
    #: another waits for a heartbeat (5.3 s measured, tests/real/test_consumer_group_protocol.py)
    group_consumer_assignment_interval_ms: float = 1000
    #: committed offsets of a group left without members expire after this long (Kafka: 7 days)
    offsets_retention_minutes: float = 10080
    #: how often the transaction coordinator aborts transactions older than their timeout
    transaction_abort_timed_out_transaction_cleanup_interval_ms: float = 10000
    #: classic groups (``GroupCoordinatorService.joinGroup``): a JoinGroup whose session.timeout.ms
    #: lies outside these bounds gets INVALID_SESSION_TIMEOUT (Kafka's defaults: 6 s, 30 min)
    group_min_session_timeout_ms: float = 6000
    group_max_session_timeout_ms: float = 1800000
    #: a Metadata request naming an unknown topic creates it (``AutoTopicCreationManager``), with
    #: num.partitions and default.replication.factor, when the client allows it (Kafka: true)
    auto_create_topics_enable: bool = True
    #: partitions of a topic created without a count (auto-created, or CreateTopics with -1)
    num_partitions: int = 1
    #: topic defaults (overridable per topic); the replication factor is capped at the number of
    #: brokers (Kafka's default is 1; the course's labs run 3 brokers and want RF=3)
    default_replication_factor: int = 3
    min_insync_replicas: int = 1
    unclean_leader_election_enable: bool = False
    #: KIP-966 Eligible Leader Replicas: on in Kafka >= 4.1 clusters (feature
    #: ``eligible.leader.replicas.version=1``); False gives the pre-4.1 election rules
    eligible_leader_replicas_enable: bool = True
    #: finalized broker features by Kafka's names (``kafka-storage format --feature NAME=LEVEL``,
    #: ``kafka-features upgrade/downgrade``), advertised in ApiVersions so each client negotiates
    #: what it negotiates with Kafka: ``{"transaction.version": 1}`` keeps every client on
    #: transactions v1 (KIP-890 off), ``{"group.version": 0}`` refuses the consumer group
    #: protocol (KIP-848). Features not named keep the release's levels (``kafka_version``).
    features: dict = field(default_factory=dict)
    #: share groups (KIP-932), Kafka 4.3's broker defaults (``ShareGroupConfig``); a group may
    #: override them with group configs (``cluster.alter_share_group_config``)
    group_share_record_lock_duration_ms: float = 30000
    group_share_delivery_count_limit: int = 5
    group_share_partition_max_record_locks: int = 2000
    group_share_session_timeout_ms: float = 45000
    group_share_heartbeat_interval_ms: float = 5000
    #: KIP-1191 (Kafka 4.4, cluster-wide dynamic configs): a share group's dead-letter topic that
    #: does not exist is created on its first dead letter; its name must start with the prefix
    errors_deadletterqueue_auto_create_topics_enable: bool = False
    errors_deadletterqueue_topic_name_prefix: str = "dlq."
    #: ACLs (:mod:`.acls`): ``org.apache.kafka.metadata.authorizer.StandardAuthorizer`` switches
    #: authorization on (Kafka's default, "", leaves it off: every client may do everything and
    #: the ACL APIs answer SECURITY_DISABLED); ``super.users`` (``User:a;User:b``) may do
    #: everything; a resource without any ACL allows everyone only with
    #: ``allow.everyone.if.no.acl.found`` (the StandardAuthorizer's settings, by Kafka's names)
    authorizer_class_name: str = ""
    super_users: str = ""
    allow_everyone_if_no_acl_found: bool = False
    #: record every message on the wire for the space-time diagram (costs memory)
    trace: bool = False

    @classmethod
    def from_kwargs(cls, **kwargs) -> "ClusterOptions":
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(kwargs) - known)
        if unknown:
            raise ValueError(f"unknown cluster option(s) {unknown}; known options: {sorted(known)}")
        options = cls(**kwargs)
        check_kafka_version(options.kafka_version)
        for f in fields(cls):  # a broker config of a later release (KIP-1191's on 4.3.1)
            name = f.name.replace("_", ".")
            if name in later_broker_configs(options.kafka_version) and getattr(options, f.name) != f.default:
                has = [release for release in SUPPORTED_RELEASE_FEATURES if name in added_configs(release, "broker")]
                raise ValueError(
                    f"Kafka {options.kafka_version} has no broker config {name} (Kafka {', '.join(has)} has)"
                )
        if options.authorizer_class_name not in ("", STANDARD_AUTHORIZER):
            raise ValueError(
                f"authorizer.class.name {options.authorizer_class_name!r}: the simulated cluster models KRaft's "
                f'{STANDARD_AUTHORIZER} (or none: "")'
            )
        if not isinstance(options.errors_deadletterqueue_topic_name_prefix, str):
            raise ValueError(
                "errors_deadletterqueue_topic_name_prefix must be a string, got "
                f"{options.errors_deadletterqueue_topic_name_prefix!r}"
            )
        for f in fields(cls):
            value = getattr(options, f.name)
            if f.name.endswith("_ms") and (not isinstance(value, (int, float)) or value < 0):
                raise ValueError(f"{f.name} must be a number >= 0 (milliseconds), got {value!r}")
        if not isinstance(options.offsets_retention_minutes, (int, float)) or options.offsets_retention_minutes <= 0:
            raise ValueError(
                f"offsets_retention_minutes must be a number > 0, got {options.offsets_retention_minutes!r}"
            )
        if options.min_insync_replicas < 1 or options.default_replication_factor < 1 or options.num_partitions < 1:
            raise ValueError("min_insync_replicas, default_replication_factor and num_partitions must be >= 1")
        if options.group_min_session_timeout_ms > options.group_max_session_timeout_ms:
            raise ValueError(
                f"group_min_session_timeout_ms ({options.group_min_session_timeout_ms:g}) must not exceed "
                f"group_max_session_timeout_ms ({options.group_max_session_timeout_ms:g})"
            )
        supported = options.supported_features()
        unknown_features = sorted(set(options.features) - (set(supported) - {"eligible.leader.replicas.version"}))
        if unknown_features:
            raise ValueError(
                f"unknown feature(s) {unknown_features}; known: {sorted(RELEASE_FEATURES[options.kafka_version])}"
                " (eligible.leader.replicas.version is the option eligible_leader_replicas_enable)"
            )
        for name, level in options.features.items():
            lo, hi = supported[name]
            if not isinstance(level, int) or not (lo if name == "metadata.version" else 0) <= level <= hi:
                raise ValueError(f"feature {name} must be a level from {lo} to {hi}, got {level!r}")
        return options

    def supported_features(self) -> dict:
        """feature -> (min, max) level the modelled release's brokers support."""
        return SUPPORTED_RELEASE_FEATURES[self.kafka_version]

    def finalized_features(self) -> dict:
        """feature -> finalized level, as ApiVersions reports them (levels of 0 are not finalized).

        >>> ClusterOptions().finalized_features()["transaction.version"]
        2
        >>> ClusterOptions.from_kwargs(features={"transaction.version": 1}).finalized_features()["transaction.version"]
        1
        >>> ClusterOptions.from_kwargs(kafka_version="4.4.0").finalized_features()["share.version"]
        2
        """
        levels = {
            **RELEASE_FEATURES[self.kafka_version],
            "eligible.leader.replicas.version": int(self.eligible_leader_replicas_enable),
            **self.features,
        }
        return {name: level for name, level in sorted(levels.items()) if level > 0}

    @property
    def transaction_version(self) -> int:
        """The finalized ``transaction.version``: 2 lets a client that speaks it run KIP-890."""
        return self.finalized_features().get("transaction.version", 0)

    @property
    def share_version(self) -> int:
        """The finalized ``share.version``: 1 enables share groups (KIP-932; Kafka 4.2+ default), 2
        their dead-letter queues (KIP-1191; Kafka 4.4's default)."""
        return self.finalized_features().get("share.version", 0)

    @property
    def group_version(self) -> int:
        """The finalized ``group.version``: 1 enables the consumer group protocol (KIP-848)."""
        return self.finalized_features().get("group.version", 0)
