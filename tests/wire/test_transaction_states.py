"""DescribeTransactions and ListTransactions (``kafka-transactions describe``/``list``) answered
from the transaction coordinator as Kafka answers them: the same probe runs on Kafka in
tests/real/test_transaction_states_real.py, against the same expectation."""

from .transaction_state_probes import transaction_states

#: (state, epoch, timeout ms, started, partitions) per DescribeTransactions; (error codes, unknown
#: state filters, listed ids and states) per ListTransactions to every broker
TRANSACTION_STATES = {
    "initialized": ("Empty", 0, 45000, False, []),
    "ongoing": ("Ongoing", 0, 45000, True, [0]),
    "listed, ongoing": ([0], [], [("a", "Ongoing")]),
    "listed by state": ([0], ["Bogus"], [("a", "Ongoing")]),
    "listed by another state": ([0], [], []),
    "listed by pattern": ([0], [], [("a", "Ongoing")]),
    "listed by a pattern it does not match": ([0], [], []),  # the whole id must match
    "listed, started over an hour ago": ([0], [], []),
    "bad pattern": ([128], [], []),  # INVALID_REGULAR_EXPRESSION
    "committed": ("CompleteCommit", 0, 45000, True, []),
    "listed, committed": ([0], [], [("a", "CompleteCommit")]),
    "unknown id": ("TransactionalIdNotFoundError",),
}
#: ... and what Java's Admin shows while the transaction is ongoing
JAVA_ONGOING = {
    "described": ("Ongoing", 0, 45000, True, [0]),
    "unknown id": "TransactionalIdNotFoundException",
    "listed": [("a", "Ongoing")],
}


def test_transactions_are_described_and_listed_as_kafka_does(wire):
    wire.create_topic("ts", replication_factor=3)
    assert transaction_states(wire.bootstrap_servers, "ts") == TRANSACTION_STATES


def test_java_admin_describes_and_lists_transactions(wire):
    from course_lib.java_client import DriverProcess, JavaAdmin

    from .test_java_clients import _java_or_skip

    _java_or_skip()
    wire.create_topic("ts", replication_factor=3)
    with DriverProcess() as driver:
        java = JavaAdmin(driver, {"bootstrap.servers": wire.bootstrap_servers})
        try:
            got = transaction_states(wire.bootstrap_servers, "ts", java)
        finally:
            java.close(timeout=5)
    assert got == {**TRANSACTION_STATES, "java, ongoing": JAVA_ONGOING}
