"""The consumer side of the client differential: seeded sequences of assign/seek/poll/position/
commit/committed/end_offsets - and, in half the seeds, the rest of kafka-python's public consumer
API anywhere (subscribe, pause, highwater, commit_async, offsets_for_times...: CONSUMER_EXTRAS) -
through the simulator's KafkaConsumer and kafka-python's, on the same simulated brokers with the
same records - a plain topic, or one written in committed and aborted transactions read committed
or uncommitted (course_lib/experiments/differential.py). Each difference they found is pinned
below by its seed."""

import os

import pytest
from kafka import TopicPartition
from kafka.consumer.subscription_state import ConsumerRebalanceListener
from kafka.structs import OffsetAndMetadata

from course_lib.client_adapters.call_sequences import answer
from course_lib.experiments import differential
from course_lib.experiments.differential import ConsumerDifferential

from .test_client_differential import unexplained

SEQUENCES = int(os.environ.get("WIRE_DIFF_SEQUENCES", "80"))


@pytest.fixture(scope="module")
def runner():
    wire = differential.wire_for_differential()
    yield ConsumerDifferential(wire)
    wire.stop()


def test_consumer_call_sequences_match_kafka_python(runner):
    found = unexplained(runner, SEQUENCES)
    assert not found, "new client differences (rerun one with WIRE_DIFF_SEQUENCES):\n" + "\n".join(found)


def test_the_sequences_close_the_consumer_and_call_it_after():
    drawn = [ConsumerDifferential.calls(seed) for seed in range(SEQUENCES)]
    closes = {c for calls in drawn for c in calls if c in differential.CONSUMER_CLOSES}
    assert closes == set(differential.CONSUMER_CLOSES)
    assert any(calls[-1] not in differential.CONSUMER_CLOSES for calls in drawn if closes & set(calls))


def test_the_sequences_read_each_topic_under_each_isolation_level():
    drawn = {ConsumerDifferential.reads(seed) for seed in range(SEQUENCES)}
    assert drawn == set(differential.READS)


def test_the_transactional_topic_holds_markers_and_aborted_records(runner):
    """What the read_committed sequences read: on both clusters each partition ends after its
    transactions' records, one marker per transaction and a plain record."""
    assert runner.ends[differential.TXN_TOPIC] == 8
    from kafka import KafkaConsumer

    seen = {}
    for isolation in ("read_committed", "read_uncommitted"):
        consumer = KafkaConsumer(bootstrap_servers=runner.wire.bootstrap_servers, isolation_level=isolation)
        consumer.assign([TopicPartition(differential.TXN_TOPIC, 0)])
        consumer.seek_to_beginning()
        seen[isolation] = []
        for _ in range(100):  # 20 s at most: a position stuck before the end fails, not hangs
            if consumer.position(TopicPartition(differential.TXN_TOPIC, 0)) >= 8:
                break
            seen[isolation] += [r.offset for rs in consumer.poll(200).values() for r in rs]
        consumer.close()
    assert seen == {"read_committed": [0, 1, 5, 7], "read_uncommitted": [0, 1, 3, 5, 7]}


def test_a_closed_consumer_looks_up_missing_positions_over_its_closed_network(runner):
    """Found by the close(timeout) sequences (seed 4): kafka-python's position() first looks up
    every assigned partition without a position, and close() stopped its network loop, so it
    raises RuntimeError; with every position known it answers. The simulator answered both."""
    assert runner.run(4) == []  # ['assign_both', 'close_0', 'position_p0', 'commit']
    from course_lib.clients import KafkaConsumer

    def closed(*steps):
        consumer = KafkaConsumer(bootstrap_servers=runner.cluster, group_id="closed", enable_auto_commit=False)
        consumer.assign([differential.P0, differential.P1])
        for step in steps:
            step(consumer)
        consumer.close(timeout_ms=0)
        return consumer

    with pytest.raises(RuntimeError, match="closed"):
        closed(lambda c: c.seek(differential.P0, 2)).position(differential.P0)  # P1's is missing
    both = closed(lambda c: c.seek(differential.P0, 2), lambda c: c.seek(differential.P1, 1))
    assert both.position(differential.P0) == 2


def test_the_sequences_draw_every_public_consumer_call_anywhere():
    """Issue 38: the rest of kafka-python's consumer API (CONSUMER_EXTRAS) is drawn too, before
    the first assign() as well as after a close(), and a fault after the first read, each from a
    random of the seed's own: the calls the first menu drew stay as they were."""
    drawn = [ConsumerDifferential.calls(seed) for seed in range(SEQUENCES)]
    assert set(differential.CONSUMER_EXTRAS) <= {c for calls in drawn for c in calls}
    assert any(calls[0] in differential.CONSUMER_EXTRAS for calls in drawn)
    for seed in range(SEQUENCES):
        extended = iter(ConsumerDifferential.calls(seed))
        assert all(c in extended for c in ConsumerDifferential.calls(seed, anywhere=False))  # a subsequence
    # a fault between two calls after the first read, each kind, in the seeds make test runs
    faulted = [calls for calls in drawn if set(calls) & set(differential.CONSUMER_FAULTS)]
    assert {c for calls in faulted for c in calls} >= set(differential.CONSUMER_FAULTS)
    assert all(
        calls.index("read") < calls.index(f) for calls in faulted for f in differential.CONSUMER_FAULTS if f in calls
    )
    before = ("assign_both", "close_5", "seek_p0_2", "read", "end_offsets", "commit", "seek_to_end", "end_offsets")
    assert ConsumerDifferential.calls(3, anywhere=False) == before  # as main drew it


def _simulated(runner, topic="t", **config):
    from course_lib.clients import KafkaConsumer

    config = {"group_id": "pinned", "enable_auto_commit": False, "auto_offset_reset": "earliest", **config}
    return KafkaConsumer(**{"bootstrap_servers": runner.cluster, **config})


def test_a_closed_consumer_answers_what_it_knows_and_raises_for_what_needs_its_network(runner):
    """Found by the any-order sequences (seeds 3, 39, 44, 201): after close(), kafka-python's
    partitions_for_topic() of a topic its metadata lacks, commit_async(), unsubscribe() and an
    assign() of a topic it did not track all run its stopped network loop: RuntimeError
    (KafkaConsumer.partitions_for_topic, ConsumerCoordinator.commit_offsets_async,
    BaseCoordinator.maybe_leave_group, ClusterMetadata.set_topics); the simulator answered."""
    assert [runner.run(seed) for seed in (3, 39, 44, 201)] == [[], [], [], []]
    consumer = _simulated(runner)
    consumer.close()
    for call in (
        lambda: consumer.partitions_for_topic("t"),
        consumer.commit_async,
        consumer.unsubscribe,
        lambda: consumer.assign([differential.P0]),
    ):
        with pytest.raises(RuntimeError, match="closed"):
            call()
    assert consumer.assignment() == {differential.P0}  # assign() raised after assigning
    consumer.assign([differential.P0, differential.P1])  # a topic it tracks: no network needed


def test_close_revokes_a_subscribed_consumers_partitions(runner):
    """Found by seed 21 (subscribe, read, close, seek_to_beginning): kafka-python's close() revokes
    a subscribed consumer's partitions and empties its assignment before it leaves the group
    (ConsumerCoordinator._on_close_prepare_async): seek_to_beginning() then raises ValueError."""
    assert runner.run(21) == []
    consumer, heard = _simulated(runner, group_id="pinned-close"), []

    class Listener(ConsumerRebalanceListener):
        def on_partitions_revoked(self, revoked):
            heard.append(("revoked", sorted(revoked)))

        def on_partitions_assigned(self, assigned):
            heard.append(("assigned", sorted(assigned)))

    consumer.subscribe(["t"], listener=Listener())
    while not consumer.assignment():
        consumer.poll(100)
    consumer.close()
    assert consumer.assignment() == set()
    assert heard[-1] == ("revoked", [differential.P0, differential.P1])
    with pytest.raises(ValueError):
        consumer.seek_to_beginning()


def test_an_offset_committed_before_the_first_poll_is_where_it_reads(runner):
    """Found by seeds 174 and 240 (assign, commit offset 3, read): kafka-python looks a position
    up only in poll() or position(), so it starts at the offset just committed; the simulator's
    lookup went before the commit (``_Partition.early``) and read from 0."""
    assert runner.run(174) == [] and runner.run(240) == []
    consumer = _simulated(runner, group_id="pinned-early")
    consumer.assign([differential.P0])
    consumer.commit({differential.P0: OffsetAndMetadata(3, "", -1)})
    assert consumer.position(differential.P0) == 3
    consumer.close()


def test_a_difference_after_subscribe_before_a_poll_is_known_as_the_background_join(runner):
    """Found by seed 173 (subscribe, committed(), end_offsets(), seek_to_end(p1)): kafka-python
    3.0.12 joins its group only in poll(), so seek_to_end(p1) raises ValueError (unassigned); the
    simulator's first join went on in the background of committed(). Known (KNOWN_BACKGROUND_JOIN):
    only until the next poll."""
    (found,) = runner.run(173)
    assert (found.call, found.simulated, found.real) == ("seek_to_end_p1", "ok", "ValueError") and found.known
    calls = ("tx read_committed", "subscribe", "committed_p0", "seek_to_end_p1")
    difference = differential.Difference("consumer", 1, calls, "seek_to_end_p1", "ok", "ValueError", at=3)
    assert difference.known
    polled = ("tx read_committed", "subscribe", "read", "seek_to_end_p1")
    assert not differential.Difference("consumer", 1, polled, "seek_to_end_p1", "ok", "ValueError", at=3).known


def test_highwater_is_known_once_a_poll_took_a_fetch_in(runner):
    """Found by seed 378 (assign, seek, position, ... highwater(p0), never a poll): kafka-python
    sets a partition's highwater when poll() parses a fetch answer (Fetcher._parse_fetched_data):
    None before any poll. The simulator fetches as soon as a position is known and showed the
    answer's high watermark at once."""
    assert runner.run(378) == []
    consumer = _simulated(runner, group_id="pinned-highwater")
    consumer.assign([differential.P0])
    consumer.seek(differential.P0, 2)
    consumer.committed(differential.P0)  # runs the simulated clock: a fetch is answered
    assert consumer.highwater(differential.P0) is None
    consumer.poll(1000)
    assert consumer.highwater(differential.P0) == differential.RECORDS
    consumer.close()


def test_position_waits_for_every_partitions_lookup(runner):
    """Found by seed 107 (assign both, seek_to_end, position(p0), commit, ... committed(p1)):
    kafka-python's position() waits for its whole lookup - every assigned partition awaiting its
    committed offset or a reset (KafkaConsumer.position, Fetcher.reset_offsets_if_needed) - so the
    commit() after it commits p1 too; the simulator's returned at p0's answer and committed p0 alone."""
    assert runner.run(107) == []
    consumer = _simulated(runner, group_id="pinned-position")
    consumer.assign([differential.P0, differential.P1])
    consumer.seek_to_end()
    consumer.position(differential.P0)
    assert consumer.position(differential.P1) == differential.RECORDS  # known, with no further lookup
    consumer.commit()
    assert consumer.committed(differential.P1) == differential.RECORDS
    consumer.close()


def test_a_position_answered_inside_a_poll_is_the_polls(runner):
    """Found by seed 320 (assign, pause p0, committed(p0), a poll, close, position(p0)): a lookup
    the simulator sent before the poll (``_Partition.early``) and that was answered inside it is a
    position kafka-python's poll would have looked up itself (KafkaConsumer._update_fetch_positions,
    paused or not); the simulator kept it early, so position() after close() went to the stopped
    network: RuntimeError where kafka-python answered 0. Replayed on a simulated cluster set up as
    the differential's (the answer's timing is that cluster's)."""
    assert runner.run(320) == []
    from course_lib.broker import Cluster
    from course_lib.clients import KafkaProducer

    cluster = Cluster(3, seed=1, group_initial_rebalance_delay_ms=0)
    for topic in ("t", differential.TXN_TOPIC):
        cluster.create_topic(topic, partitions=2, min_insync_replicas=2)
    plain = KafkaProducer(bootstrap_servers=cluster, acks="all")
    for i in range(differential.RECORDS * 2):
        plain.send("t", b"m%d" % i, partition=i % 2)
    plain.flush()
    transactional = KafkaProducer(bootstrap_servers=cluster, transactional_id="differential")
    differential._write_transactions(transactional, plain, differential.TXN_TOPIC)
    calls = ConsumerDifferential.calls(320)
    assert ConsumerDifferential.reads(320)[0] == "t"
    consumer = _simulated(runner, group_id="g320", bootstrap_servers=cluster)
    actions = differential._consumer_actions("t", differential.RECORDS)
    for name in calls[: calls.index("position_p0")]:
        answer(name, lambda: actions[name](consumer))
    assert consumer.position(differential.P0) == 0


def test_committed_right_after_commit_async_sees_the_commit(runner):
    """Found by seed 854 (a read, commit_async(), committed(p0)): Kafka's SocketServer reads a
    connection's next request only once the one in progress is answered, so the OffsetFetch behind
    the OffsetCommit sees the commit (kafka-python: 6, over the wire gateway, which handles one
    request at a time); the simulated group coordinator answered it while the commit was still
    being written (GroupCoordinator.handle now holds it)."""
    assert runner.run(854) == []
    consumer = _simulated(runner, group_id="pinned-async")
    consumer.assign([differential.P0])
    consumer.seek(differential.P0, 4)
    consumer.committed(differential.P0)  # the coordinator is known: the commit goes out at once
    consumer.commit_async()
    assert consumer.committed(differential.P0) == 4
    consumer.close()
