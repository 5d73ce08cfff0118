"""Kafka's observations of the share-group differential's default sequences
(course_lib/wire/share_differential.py), recorded in tests/golden/share_differential_kafka.json by
tests/real/test_share_differential_real.py (``SHARE_DIFF_RECORD=1`` writes it anew), and the
comparison every side's test makes with them."""

from __future__ import annotations

import json
from pathlib import Path

from course_lib.wire.share_differential import SEQUENCES, ShareDifferential

RECORDED = Path(__file__).parent / "golden" / "share_differential_kafka.json"


def kafka_observations() -> dict[str, list[str]]:
    """seed -> what the lab's Kafka (recorded on 4.4.0) with confluent-kafka showed, step by step."""
    return json.loads(RECORDED.read_text())


def unexplained(side, seeds=range(SEQUENCES)) -> list[str]:
    """The sequences where ``side`` saw other than Kafka, each with its seed and first difference."""
    return ShareDifferential(side).differences(seeds, kafka_observations())


def report(side, found: list[str]) -> str:
    return f"{side.name} differs from Kafka (rerun a seed with ShareDifferential(side).run(seed)):\n" + "\n".join(found)
