"""Kafka's answers to the probe of tests/wire/test_transaction_states.py."""

import pytest

from tests.wire.test_transaction_states import TRANSACTION_STATES
from tests.wire.transaction_state_probes import transaction_states

pytestmark = pytest.mark.real_kafka


def test_transactions_are_described_and_listed_on_kafka(cluster, topic):
    assert transaction_states(cluster.bootstrap_servers, topic) == TRANSACTION_STATES
