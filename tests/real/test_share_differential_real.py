"""The share-group differential on Kafka, with each client's ShareConsumer (confluent-kafka's,
and the Java client's through confluent-kafka's API): Kafka still shows what that client's
recording (tests/share_differential_support.py) says, sequence by sequence - the recordings the
simulator and the wire cluster are held to without a Kafka. ``SHARE_DIFF_RECORD=1`` writes them
anew from this run (after a change of the sequences, or of Kafka's release)."""

from __future__ import annotations

import json
import os

import pytest

from course_lib.wire.share_differential import SEQUENCES, ConfluentShare, JavaShare, ShareDifferential
from tests.share_differential_support import RECORDED, report, unexplained

pytestmark = pytest.mark.real_kafka


@pytest.mark.parametrize("make", [ConfluentShare, JavaShare], ids=["confluent-kafka", "java"])
def test_kafka_shows_what_was_recorded(cluster, make):
    side = make(cluster, f"Kafka with {make.client}")
    try:
        if os.environ.get("SHARE_DIFF_RECORD"):
            runner = ShareDifferential(side)
            observed = {str(s): runner.run(s) for s in range(SEQUENCES)}
            RECORDED[side.client].write_text(json.dumps(observed, indent=1) + "\n")
        found = unexplained(side)
    finally:
        side.close()
    assert not found, report(side, found)
