"""The client differential, producer side: seeded sequences through the simulator's own
KafkaProducer and kafka-python 3.0.12's, on the same simulated brokers
(course_lib/experiments/differential.py): transactional calls in right and wrong orders, sends and
flushes under varied configurations (acks, idempotence, retries, in-flight, timeouts, linger),
with a leader crash, a lost ACK or a paused follower between calls and a close(timeout) at the
end; in half the seeds also partitions_for, bootstrap_connected, send_offsets_to_transaction, a
close with calls after it and a fault, anywhere and in any configuration (PRODUCER_EXTRAS). Compared: each call's outcome, each send future's, the final close's and the whole log as
read_uncommitted sees it; and every configuration setting's accepted and refused values
(course_lib/experiments/config_differential.py). A difference not listed with its reason fails with the
seed that shows it; ``python -m bench wire --sequences N`` runs thousands."""

import os

import pytest

from course_lib.experiments import config_differential, differential
from course_lib.experiments.differential import Difference, ProducerDifferential

SEQUENCES = int(os.environ.get("WIRE_DIFF_SEQUENCES", "60"))


@pytest.fixture(scope="module")
def shared_wire():
    wire = differential.wire_for_differential()
    yield wire
    wire.stop()


def unexplained(runner, seeds) -> list[str]:
    """The differences of ``seeds`` (a number: seeds 0 to it) not listed with a reason."""
    seeds = range(seeds) if isinstance(seeds, int) else seeds
    return [str(d) for seed in seeds for d in runner.run(seed) if not d.known]


def test_producer_call_sequences_with_faults_match_kafka_python(shared_wire, no_leaks):
    found = unexplained(ProducerDifferential(shared_wire), SEQUENCES)
    assert not found, "new client differences (rerun one with WIRE_DIFF_SEQUENCES):\n" + "\n".join(found)


def test_the_sequences_cover_every_configuration_fault_and_close():
    """What the generator draws in SEQUENCES seeds: each configuration, fault and close at least once."""
    drawn = {call for seed in range(SEQUENCES) for call in ProducerDifferential.calls(seed)}
    wanted = {f"config:{name}" for name in differential.PRODUCER_CONFIGS}
    wanted |= set(differential.FAULTS) | set(differential.CLOSES) | set(differential.TRANSACTIONAL_CALLS)
    assert wanted <= drawn, f"never drawn: {sorted(wanted - drawn)}"
    # and a transaction in the right order that aborts right after its sends (issue 38: once only
    # the named test below had it)
    assert any(differential.ends_in_an_unflushed_abort(ProducerDifferential.calls(s)) for s in range(SEQUENCES))


def test_the_sequences_draw_every_public_producer_call_anywhere():
    """Issue 38: partitions_for, bootstrap_connected and send_offsets_to_transaction, a close with
    calls after it and a fault in any configuration (a transactional one's too, between calls in
    any order) are drawn from a random of the seed's own: the sequence drawn before stays, as a
    subsequence, so a seed's old differences stay where they were."""
    drawn = [ProducerDifferential.calls(seed) for seed in range(SEQUENCES)]
    assert set(differential.PRODUCER_EXTRAS) - {"fault"} <= {c for calls in drawn for c in calls}
    assert any(calls.index(c) < len(calls) - 1 for calls in drawn for c in calls if c in differential.CLOSES)
    random_order = [
        calls for calls in drawn if calls[0].startswith("config:transactional") and calls[1] != "init_transactions"
    ]
    assert any(set(calls) & set(differential.TXN_FAULTS) for calls in random_order)
    for seed in range(SEQUENCES):
        extended = iter(ProducerDifferential.calls(seed))
        assert all(c in extended for c in ProducerDifferential.calls(seed, anywhere=False))  # a subsequence
        assert sum(c in differential.FAULTS + differential.TXN_FAULTS for c in ProducerDifferential.calls(seed)) <= 1


def test_configuration_validation_matches_kafka_python(shared_wire):
    found = config_differential.config_differences(shared_wire.bootstrap_servers)
    new = [f for f in found if f[:2] not in config_differential.KNOWN_CONFIG_DIFFERENCES]
    assert not new, "configuration outcomes that differ (kind, case, simulator, kafka-python):\n" + "\n".join(
        map(str, new)
    )
    # each listed difference is still one (a fix on either side removes it from the list)
    stale = set(config_differential.KNOWN_CONFIG_DIFFERENCES) - {f[:2] for f in found}
    assert not stale, f"listed configuration differences no longer found: {sorted(stale)}"


def test_a_difference_is_reported_with_its_seed_and_calls(monkeypatch):
    """The report a failure prints names the seed and the calls, and a listed difference is not
    reported (a fake entry shows both ways), by exact outcome, by pattern or by sequence."""
    d = Difference("producer", 7, ("config:idempotent", "send"), "send", "ok", "KafkaError")
    assert str(d) == ("producer seed 7: ['config:idempotent', 'send']: send: simulator ok, kafka-python KafkaError")
    assert not d.known
    monkeypatch.setitem(differential.KNOWN_PRODUCER_DIFFERENCES, ("send", "ok", "KafkaError"), "why")
    assert d.known
    acks0 = Difference("producer", 7, ("config:acks=0", "send"), "send #3's future", "ok offset -1", "ok offset 2")
    assert acks0.known
    assert not Difference("producer", 7, (), "send #3's future", "ok offset -1", "KafkaError").known
    crashed = Difference("producer", 7, ("config:retries=0", "crash_leader"), "send #1's future", "x", "y")
    assert crashed.known and not Difference("producer", 7, ("config:retries=0",), "send #1's future", "x", "y").known
    assert ProducerDifferential.calls(7) == ProducerDifferential.calls(7)


def test_a_last_abort_marker_alone_is_known_after_an_unflushed_abort_and_nothing_else_is():
    calls = ("config:transactional, long linger", "init_transactions", "begin_transaction", "send", "abort_transaction")
    written = ((0, b"v0", ""), (1, "COMMIT marker"))
    marker = (*written, (2, "ABORT marker"))

    def log_difference(calls, simulated, real):
        return Difference("producer", 1, calls, "read_uncommitted log", repr(simulated), repr(real), (simulated, real))

    assert log_difference(calls, written, marker).known
    assert log_difference((*calls, "close_0"), marker, written).known
    assert not log_difference(calls, written, (*written, (2, b"v1", "aborted"))).known
    flushed = (*calls[:-1], "flush", "abort_transaction")
    assert not log_difference(flushed, written, marker).known
    # a fault or a question between the sends and the abort sends nothing (seed 346)
    crashed = (*calls[:-1], "crash_leader", "bootstrap_connected", "abort_transaction")
    assert log_difference(crashed, (), ((0, "ABORT marker"),)).known
    offsets_after = (*calls, "send_offsets_to_transaction")  # seed 682: refused, writes nothing
    assert log_difference(offsets_after, (), ((0, "ABORT marker"),)).known


def _faulted_transaction_seeds() -> list[int]:
    """The first seed of each (fault, how the transaction ends) pair among the transactional
    sequences with a fault inside (about one seed in 22), and seed 668 (a crash after a commit)."""
    first: dict[tuple[str, str], int] = {}
    for seed in range(2000):
        calls = ProducerDifferential.calls(seed, anywhere=False)
        fault = next((c for c in calls if c in differential.TXN_FAULTS), None)
        if calls[0] == "config:transactional" and fault:
            end = next(c for c in calls if c in ("commit_transaction", "abort_transaction"))
            first.setdefault((fault, end), seed)
    return sorted({*first.values(), 668})


def test_faults_inside_transactions_match_kafka_python(shared_wire, no_leaks):
    """A lost produce request, a lost ACK or a killed leader between begin_transaction(), the
    sends, the flush and the commit or abort (each sequence on a wire cluster seeded as the
    simulated one: the same leaders, the same coordinator)."""
    seeds = _faulted_transaction_seeds()
    drawn = {c for seed in seeds for c in ProducerDifferential.calls(seed, anywhere=False)}
    assert set(differential.TXN_FAULTS) | {"commit_transaction", "abort_transaction"} <= drawn
    runner = ProducerDifferential(shared_wire)
    found = [str(d) for seed in seeds for d in runner.run(seed, runner.calls(seed, anywhere=False)) if not d.known]
    assert not found, "new client differences:\n" + "\n".join(found)


def test_an_abort_right_after_the_sends_matches_kafka_python(shared_wire, no_leaks):
    """begin, sends, abort - nothing flushed (the sends held by linger_ms on both sides):
    kafka-python fails the batches it never drained with TransactionAbortedError and writes none
    of their records (RecordAccumulator.abort_undrained_batches, as Java's abortUndrainedBatches);
    the simulated producer once sent them, then aborted. With a flush between, both write the
    records and the ABORT marker. With nothing sent, whether an ABORT marker is written is a race
    in kafka-python itself: send() puts the partition in ``_new_partitions_in_transaction``, its
    sender thread's next loop sends AddPartitionsToTxn (``next_request_handler``) - then EndTxn
    writes a marker - but ``begin_abort`` clears partitions not yet sent. Alone the sender wins
    (a marker); in a busy suite the abort often does (none), which is the simulator's order:
    its sender adds a partition when it drains a batch. So the marker alone may differ."""
    config = "config:transactional, long linger"
    nothing_flushed = (config, "init_transactions", "begin_transaction", "send", "send", "abort_transaction")
    flushed = (config, "init_transactions", "begin_transaction", "send", "flush", "abort_transaction")
    differential = ProducerDifferential(shared_wire)
    assert differential.run(901, flushed) == []
    # every call and every future agrees; the log may differ by the marker alone, no record in it
    for d in differential.run(900, nothing_flushed):
        assert d.call == "read_uncommitted log" and "b'v" not in d.simulated + d.real, d


def test_transaction_calls_after_close_are_not_made_on_either_side(shared_wire, no_leaks):
    """Found by seed 120 (begin, send, close(5), send, commit): kafka-python 3.0.12's close() leaves
    the open transaction open (Sender.run drains and stops; Java aborts it) and commit_transaction()
    then waits on the stopped sender without a timeout - forever. Not called on either side
    (BLOCKS_AFTER_CLOSE); the simulated producer raises KafkaTimeoutError after max_block_ms."""
    calls = ProducerDifferential.calls(120)
    closed = calls.index("close_5")
    assert "commit_transaction" in calls[closed:]
    runner = ProducerDifferential(shared_wire)
    assert runner.run(120) == []
    from kafka.errors import KafkaTimeoutError

    from course_lib.broker import Cluster
    from course_lib.clients import KafkaProducer

    cluster = Cluster(3, seed=1)
    cluster.create_topic("t")
    producer = KafkaProducer(bootstrap_servers=cluster, **ProducerDifferential.config(120, "transactional"))
    producer.init_transactions()
    producer.begin_transaction()
    producer.send("t", b"v")
    producer.close(timeout=5)
    with pytest.raises(KafkaTimeoutError):
        producer.commit_transaction()
