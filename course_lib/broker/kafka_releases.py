"""The Kafka releases the simulated cluster can model, and what differs between them.

A real cluster's behaviour depends on its release twice over: the feature levels a freshly
formatted cluster finalizes (``kafka-storage format`` takes them from the release's
``MetadataVersion.latestProduction``), and the configs the release knows. The simulator takes
the release as ``ClusterOptions(kafka_version=...)``: it sets the default feature levels (each
overridable, as ``kafka-features upgrade/downgrade`` does) and which configs exist. The
behaviour itself follows the feature levels, as a real broker's does: dead-letter queues for
share groups need ``share.version`` 2, not "4.4.0".

Sources: ``kafka-features describe`` on freshly formatted 3-node clusters of both releases
(FACTS.md, docs/kafka-4.4.0.md §1) and a dump of both releases' configs (docs/kafka-4.4.0.md).

Which release a ``ClusterOptions()`` models unless told is the lab's: :func:`lab_kafka_version`,
``$COURSE_KAFKA_VERSION`` or the course's default, both from :mod:`course_lib.clusters.releases` (the
one place they are written down, so the simulator, the Java client and the real brokers switch together).

>>> default_features("4.4.0")["share.version"], default_features("4.3.1")["share.version"]
(2, 1)
>>> lab_kafka_version({"COURSE_KAFKA_VERSION": "4.3.1"})
'4.3.1'
>>> check_kafka_version("4.2.0")
Traceback (most recent call last):
...
ValueError: kafka_version='4.2.0' is not a Kafka version this course measures; use one of 4.3.1, 4.4.0 (the default: 4.4.0)
"""

from __future__ import annotations

from course_lib.clusters.releases import KAFKA_VERSION as DEFAULT_KAFKA_VERSION
from course_lib.clusters.releases import SUPPORTED_KAFKA_VERSIONS, check_kafka_version
from course_lib.clusters.releases import kafka_version as lab_kafka_version

__all__ = [
    "ADDED_CONFIGS",
    "DEFAULT_KAFKA_VERSION",
    "DESCRIBED_BROKER_CONFIGS",
    "RELEASE_FEATURES",
    "SUPPORTED_RELEASE_FEATURES",
    "added_configs",
    "check_kafka_version",
    "default_features",
    "lab_kafka_version",
    "later_broker_configs",
]

#: release -> the features a freshly formatted cluster finalizes, by Kafka's names.
#: metadata.version 30 is 4.3-IV0, 33 is 4.4-IV2 (``MetadataVersion`` in kafka-server-common);
#: ``eligible.leader.replicas.version`` is ClusterOptions.eligible_leader_replicas_enable (1 on
#: both); ``kraft.version`` is the quorum's (0: a static quorum, as the lab's).
RELEASE_FEATURES = {
    "4.3.1": {
        "metadata.version": 30,
        "transaction.version": 2,
        "group.version": 1,
        "share.version": 1,
        "streams.version": 1,
    },
    "4.4.0": {
        "metadata.version": 33,
        "transaction.version": 2,
        "group.version": 1,
        "share.version": 2,
        "streams.version": 1,
    },
}
#: release -> feature -> (min, max) level its brokers support (ApiVersions' SupportedFeatures):
#: 4.4.0 adds share.version 2 (KIP-1191) and metadata versions 4.4-IV0..IV2
SUPPORTED_RELEASE_FEATURES = {
    "4.3.1": {
        "metadata.version": (7, 30),
        "kraft.version": (0, 1),
        "transaction.version": (0, 2),
        "group.version": (0, 1),
        "eligible.leader.replicas.version": (0, 1),
        "share.version": (0, 1),
        "streams.version": (0, 1),
    },
}
SUPPORTED_RELEASE_FEATURES["4.4.0"] = {
    **SUPPORTED_RELEASE_FEATURES["4.3.1"],
    "metadata.version": (7, 33),
    "share.version": (0, 2),
}

#: configs a release added over 4.3.1 (whose catalogue, kafka_configs.json, is recorded from a
#: broker), by kind -> name -> (default, ConfigDef type); 4.4.0: KIP-1191's dead-letter queues
ADDED_CONFIGS: dict[str, dict[str, dict[str, tuple[str, str]]]] = {
    "4.3.1": {},
    "4.4.0": {
        "group": {
            "errors.deadletterqueue.topic.name": ("", "STRING"),
            "errors.deadletterqueue.copy.record.enable": ("false", "BOOLEAN"),
            # KIP-1071's group configs Kafka 4.4.0 describes (4.3.1 does not); their defaults are
            # the brokers' group.streams.* (course_lib/broker/group_configs.py)
            "streams.assignor.name": ("sticky", "STRING"),
            "streams.rack.aware.assignment.tags": ("", "LIST"),
        },
        "broker": {
            "errors.deadletterqueue.auto.create.topics.enable": ("false", "BOOLEAN"),
            "errors.deadletterqueue.topic.name.prefix": ("dlq.", "STRING"),
        },
        "topic": {
            "errors.deadletterqueue.group.enable": ("false", "BOOLEAN"),
            # described by Kafka 4.4.0's DescribeConfigs (tests/real/test_describe_configs_real.py)
            "max.decompressed.message.bytes": ("2147483639", "INT"),
            "remote.copy.lag.bytes": ("-1", "LONG"),
            "remote.copy.lag.ms": ("0", "LONG"),
        },
    },
}
#: release -> broker configs it describes (name -> default, type, read-only) that the simulated
#: brokers only describe - no ClusterOptions field, not dynamic: measured with DescribeConfigs on a
#: Kafka 4.4.0 broker (tests/real/test_describe_configs_real.py)
DESCRIBED_BROKER_CONFIGS: dict[str, dict[str, tuple[str | None, str, bool]]] = {
    "4.3.1": {},
    "4.4.0": {
        "group.streams.assignors": ("sticky", "LIST", True),
        "group.streams.rack.aware.assignment.tags": ("", "LIST", True),
        "group.streams.topology.description.plugin.class": (None, "CLASS", True),
        "log.remote.copy.lag.bytes": ("-1", "LONG", False),
        "log.remote.copy.lag.ms": ("0", "LONG", False),
        "max.decompressed.message.bytes": ("2147483639", "INT", False),
        "sasl.oauthbearer.allow.unverified.audience": ("false", "BOOLEAN", True),
        "sasl.oauthbearer.allow.unverified.issuer": ("false", "BOOLEAN", True),
    },
}


# the simulator models every release the course measures, and no other (an explicit check, not an
# assert: ``python -O`` must not drop it)
if not tuple(RELEASE_FEATURES) == tuple(SUPPORTED_RELEASE_FEATURES) == tuple(ADDED_CONFIGS) == SUPPORTED_KAFKA_VERSIONS:
    raise ImportError(
        f"course_lib/broker/kafka_releases.py models {sorted(RELEASE_FEATURES)}, the course measures "
        f"{SUPPORTED_KAFKA_VERSIONS} (course_lib/clusters/jars.py): model each, or measure fewer"
    )


def default_features(version: str) -> dict:
    """The feature levels ``version`` finalizes on a freshly formatted cluster."""
    return dict(RELEASE_FEATURES[check_kafka_version(version)])


def added_configs(version: str, kind: str) -> dict[str, tuple[str, str]]:
    """The ``kind`` ("group", "broker", "topic") configs ``version`` has and 4.3.1 lacks."""
    return ADDED_CONFIGS[check_kafka_version(version)].get(kind, {})


def later_broker_configs(version: str) -> set[str]:
    """Broker configs another release added that ``version`` lacks."""
    return {name for release in ADDED_CONFIGS for name in added_configs(release, "broker")} - set(
        added_configs(version, "broker")
    )
