"""Kafka's observations of the share-group differential's default sequences
(course_lib/wire/share_differential.py), one recording per client - confluent-kafka's in
tests/golden/share_differential_kafka.json, the Java client's in
tests/golden/share_differential_kafka_java.json - written by
tests/real/test_share_differential_real.py (``SHARE_DIFF_RECORD=1`` writes them anew), and the
comparison every side's test makes with its client's recording (the simulator's ShareConsumer is
confluent-kafka's)."""

from __future__ import annotations

import json
from pathlib import Path

from course_lib.wire.share_differential import SEQUENCES, ShareDifferential

GOLDEN = Path(__file__).parent / "golden"
#: client -> its recording of Kafka's observations
RECORDED = {
    "confluent-kafka": GOLDEN / "share_differential_kafka.json",
    "java": GOLDEN / "share_differential_kafka_java.json",
}


def kafka_observations(client: str = "confluent-kafka") -> dict[str, list[str]]:
    """seed -> what Kafka showed ``client``'s ShareConsumer, step by step."""
    return json.loads(RECORDED[client].read_text())


def unexplained(side, seeds=range(SEQUENCES)) -> list[str]:
    """The sequences where ``side`` saw other than Kafka with the same client, each with its seed
    and first difference."""
    return ShareDifferential(side).differences(seeds, kafka_observations(side.client))


def report(side, found: list[str]) -> str:
    return f"{side.name} differs from Kafka (rerun a seed with ShareDifferential(side).run(seed)):\n" + "\n".join(found)
