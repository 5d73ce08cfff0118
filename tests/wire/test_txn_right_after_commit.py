"""Right after a commit, while its markers are written, the transaction coordinator answers every
request of that transactional id CONCURRENT_TRANSACTIONS (Kafka's ``pendingTransitionInProgress``,
checked before the producer id and epoch: so a transactions-v2 producer that still names the
epoch the commit bumped is not fenced), and the same EndTxn again too (with transactions v1 after
its id and epoch). tests/real/test_txn_right_after_commit_real.py runs the same probe on Kafka."""

from .txn_timing_probes import right_after_commit

#: the answers Kafka 4.4.0 gives (tests/real/test_txn_right_after_commit_real.py); 51 is
#: CONCURRENT_TRANSACTIONS
RIGHT_AFTER_COMMIT = {
    "init": 0,
    **{
        f"v{version} {case}": answer
        for version in (4, 5)
        for case, answer in {
            "added": 0,
            "commit": 0,
            "then AddPartitionsToTxn": 51,
            "then the same commit": 51,
            "then InitProducerId": 51,
            "InitProducerId once written": 0,
        }.items()
    },
    "added at last": 0,
}


def test_requests_right_after_a_commit_wait_for_its_markers(wire):
    assert right_after_commit(wire) == RIGHT_AFTER_COMMIT
