"""Kafka's answers to the probe of tests/wire/test_txn_right_after_commit.py."""

import pytest

from tests.wire.test_txn_right_after_commit import RIGHT_AFTER_COMMIT
from tests.wire.txn_timing_probes import right_after_commit

pytestmark = pytest.mark.real_kafka


def test_requests_right_after_a_commit_wait_for_its_markers_on_kafka(healthy):
    assert right_after_commit(healthy) == RIGHT_AFTER_COMMIT
