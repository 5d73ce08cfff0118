"""Kafka's answers to the probe of tests/wire/test_transaction_states.py."""

import pytest

from tests.wire.test_java_clients import _java_or_skip
from tests.wire.test_transaction_states import JAVA_ONGOING, TRANSACTION_STATES
from tests.wire.transaction_state_probes import transaction_states

pytestmark = pytest.mark.real_kafka


def test_transactions_are_described_and_listed_on_kafka(cluster, topic):
    assert transaction_states(cluster.bootstrap_servers, topic) == TRANSACTION_STATES


def test_java_admin_describes_and_lists_transactions_on_kafka(cluster, topic):
    from course_lib.java_client import DriverProcess, JavaAdmin

    _java_or_skip()
    with DriverProcess() as driver:
        java = JavaAdmin(driver, {"bootstrap.servers": cluster.bootstrap_servers})
        try:
            got = transaction_states(cluster.bootstrap_servers, topic, java)
        finally:
            java.close(timeout=5)
    assert got == {**TRANSACTION_STATES, "java, ongoing": JAVA_ONGOING}
