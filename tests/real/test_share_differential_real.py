"""The share-group differential on Kafka with confluent-kafka's ShareConsumer: Kafka still shows
what tests/golden/share_differential_kafka.json recorded, sequence by sequence - the recording
the simulator and the wire cluster are held to without a Kafka. ``SHARE_DIFF_RECORD=1`` writes
the recording anew from this run (after a change of the sequences, or of Kafka's release)."""

from __future__ import annotations

import json
import os

import pytest

from course_lib.wire.share_differential import SEQUENCES, ConfluentShare, ShareDifferential
from tests.share_differential_support import RECORDED, report, unexplained

pytestmark = pytest.mark.real_kafka


def test_kafka_shows_what_was_recorded(cluster):
    side = ConfluentShare(cluster, "Kafka")
    try:
        if os.environ.get("SHARE_DIFF_RECORD"):
            runner = ShareDifferential(side)
            RECORDED.write_text(json.dumps({str(s): runner.run(s) for s in range(SEQUENCES)}, indent=1) + "\n")
        found = unexplained(side)
    finally:
        side.close()
    assert not found, report(side, found)
