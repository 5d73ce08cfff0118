"""Record Kafka's configuration catalogue (every topic and broker config a broker describes, with
its default, type and flags) from a real broker, for the wire cluster's DescribeConfigs
(course_lib/broker/kafka_configs.json). Run again after a Kafka upgrade:

    python tools/kafka_config_catalogue.py      # starts a LocalCluster (needs Java + the jars)

It records the *oldest* release the course measures (``SUPPORTED_KAFKA_VERSIONS[0]``), whatever
the lab's default: later releases are that catalogue plus their additions
(``course_lib/broker/kafka_releases.py: ADDED_CONFIGS``).

The catalogue is Kafka's ``LogConfig``/``TopicConfig`` and ``KafkaConfig`` definitions as the
broker itself reports them (DescribeConfigs with synonyms: a config's default is its
DEFAULT_CONFIG synonym), which no hand-typed list keeps up with.
"""

from __future__ import annotations

import json
import sys
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "course_lib" / "broker" / "kafka_configs.json"


def _entries(described: dict) -> dict:
    out = {}
    for name, c in sorted(described.items()):
        defaults = [s["value"] for s in c.get("synonyms", []) if s["source"] in ("DEFAULT_CONFIG", 5)]
        default = defaults[0] if defaults else (c["value"] if c["config_source"] == "DEFAULT_CONFIG" else None)
        out[name] = {
            "default": default,
            "type": c["config_type"],
            "read_only": c["read_only"],
            "sensitive": c["is_sensitive"],
        }
    return out


def main() -> int:
    sys.path.insert(0, str(ROOT))
    from kafka import KafkaAdminClient
    from kafka.admin import ConfigResource, ConfigResourceType

    from course_lib.real.cluster import LocalCluster
    from course_lib.clusters.jars import SUPPORTED_KAFKA_VERSIONS

    version = SUPPORTED_KAFKA_VERSIONS[0]  # the base of kafka_releases.ADDED_CONFIGS
    cluster = LocalCluster(3, proxies=False, progress=False, kafka_version=version)
    cluster.start()
    try:
        topic = cluster.create_topic(f"catalogue-{uuid.uuid4().hex[:6]}")
        admin = KafkaAdminClient(bootstrap_servers=cluster.bootstrap_servers)
        try:
            resources = [ConfigResource(ConfigResourceType.TOPIC, topic), ConfigResource(ConfigResourceType.BROKER, 1)]
            got = admin.describe_configs(resources, include_synonyms=True, config_filter="all")
        finally:
            admin.close()
    finally:
        cluster.stop()
    catalogue = {
        "kafka_version": version,
        "topic": _entries(got["topic"][topic]),
        "broker": _entries(got["broker"]["1"]),
    }
    OUT.write_text(json.dumps(catalogue, indent=1, sort_keys=True) + "\n")
    print(f"{OUT}: {len(catalogue['topic'])} topic and {len(catalogue['broker'])} broker configs of Kafka {version}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
