"""The share-group differential on Kafka with each wall-clock client's share consumer
(confluent-kafka's, the Java client's: the ``share_client`` fixture): Kafka still shows what
tests/golden/share_differential_kafka_<client>.json recorded, sequence by sequence - the
recordings the simulator and the wire cluster are held to without a Kafka.
``SHARE_DIFF_RECORD=1`` writes the recording anew from this run (after a change of the
sequences, or of Kafka's release) and checks every sequence; otherwise Kafka is sampled: the few
sequences that between them take every kind of step (``ShareDifferential.covering``), all of them
with ``SHARE_DIFF_ALL=1``. The simulator and the wire cluster are held to every recorded one."""

from __future__ import annotations

import json
import os

import pytest

from course_lib.experiments.share_differential import SEQUENCES, ClientShare, ShareDifferential
from tests.share_differential_support import recording, report, seen_twice, unexplained

pytestmark = pytest.mark.real_kafka


@pytest.fixture
def stops_java_driver():
    yield
    from course_lib.client_adapters.for_java import stop_driver

    stop_driver()


@pytest.mark.timeout(900)
def test_kafka_shows_what_was_recorded(cluster, share_client, stops_java_driver):
    side = ClientShare(cluster, share_client, f"Kafka with {share_client}")
    try:
        if os.environ.get("SHARE_DIFF_RECORD"):
            runner = ShareDifferential(side)
            observed = {str(s): runner.run(s) for s in range(SEQUENCES)}
            recording(share_client).write_text(json.dumps(observed, indent=1) + "\n")
        every = os.environ.get("SHARE_DIFF_RECORD") or os.environ.get("SHARE_DIFF_ALL")
        seeds = range(SEQUENCES) if every else ShareDifferential.covering(range(SEQUENCES))
        found = [line for seed in seeds for line in seen_twice(lambda s: unexplained(side, [s]), seed)]
    finally:
        side.close()
    assert not found, report(side.name, found)
