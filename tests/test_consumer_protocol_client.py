"""The simulated consumer with ``group_protocol="consumer"`` (KIP-848, course_lib/clients/
consumer_protocol.py): the Java client's config rules, the join/split/leave the Java client and
librdkafka show on both clusters (tests/consumer_protocol_support.py), incremental
reconciliation, fencing, a slow handler and a crash. Checked call by call against the Java
client in tests/java_client/test_consumer_protocol_differential.py."""

from __future__ import annotations

import pytest
from kafka import errors as Errors

from course_lib.broker import Cluster
from course_lib.clients import KafkaConsumer, KafkaProducer
from course_lib.clients.config import ConfigurationError
from course_lib.experiments.consumer_protocol_differential import coordinator
from tests import consumer_protocol_support as kip848

SEED = 7


def _cluster(**options) -> Cluster:
    cluster = Cluster(3, seed=SEED, group_initial_rebalance_delay_ms=0, **options)
    cluster.create_topic("t", partitions=4)
    producer = KafkaProducer(bootstrap_servers=cluster, acks="all")
    for i in range(20):
        producer.send("t", b"v", partition=i % 4)
    producer.flush()
    return cluster


def _member(cluster, **configs) -> KafkaConsumer:
    settings = dict(group_id="g", group_protocol="consumer", auto_offset_reset="earliest", enable_auto_commit=False)
    return KafkaConsumer("t", bootstrap_servers=cluster, **{**settings, **configs})


def _owned(c) -> list:
    return sorted(tp.partition for tp in c.assignment())


def _poll_until(cluster, consumers, condition, timeout_ms=60_000) -> dict:
    seen: dict = {}
    deadline = cluster.now + timeout_ms
    while not condition():
        assert cluster.now < deadline, f"seed {SEED}: not within {timeout_ms} ms: {[_owned(c) for c in consumers]}"
        for c in consumers:
            seen[c.node_id] = seen.get(c.node_id, 0) + sum(len(r) for r in c.poll(timeout_ms=100).values())
    return seen


@pytest.mark.parametrize(
    "settings, refused",
    [
        ({"session_timeout_ms": 10000}, "session_timeout_ms cannot be set"),
        ({"heartbeat_interval_ms": 1000}, "heartbeat_interval_ms cannot be set"),
        (
            {"partition_assignment_strategy": ("range",), "session_timeout_ms": 10000},
            "partition_assignment_strategy, session_timeout_ms cannot be set",
        ),
        ({"group_protocol": "classic", "group_remote_assignor": "range"}, "group_remote_assignor cannot be set"),
        ({"group_protocol": "bogus"}, "must be 'classic' or 'consumer'"),
    ],
)
def test_config_refused_as_the_java_client_refuses_it(settings, refused):
    """Measured on the Java client 4.3.1: ConfigException at construction, with or without a group."""
    cluster = Cluster(1, seed=SEED)
    with pytest.raises(ConfigurationError, match=refused):
        KafkaConsumer(bootstrap_servers=cluster, **{"group_protocol": "consumer", **settings})
    # what it accepts: any case, a remote assignor, the default settings
    KafkaConsumer(bootstrap_servers=cluster, group_id="g", group_protocol="CONSUMER", group_remote_assignor="range")


def test_join_split_leave_as_on_both_clusters():
    cluster = _cluster()
    a = _member(cluster)
    _poll_until(cluster, [a], lambda: _owned(a) == [0, 1, 2, 3])
    first = _owned(a)
    b = _member(cluster)
    moved_at = cluster.now
    # incremental: a keeps fetching 0 and 1 all along, and is never without them
    kept = []
    _poll_until(cluster, [a, b], lambda: kept.append(_owned(a)[:2] == [0, 1]) or len(_owned(b)) == 2)
    assert all(kept)
    split, union = [len(_owned(a)), len(_owned(b))], sorted(_owned(a) + _owned(b))
    moved_ms = cluster.now - moved_at
    a.close()  # a heartbeat with epoch -1: b gets everything without a session timeout
    left_at = cluster.now
    _poll_until(cluster, [b], lambda: _owned(b) == [0, 1, 2, 3])
    got = {"first": first, "split": split, "union": union, "after_leave": _owned(b)}
    assert got == kip848.EXPECTED
    assert moved_ms < 10_000 and cluster.now - left_at < 10_000, (moved_ms, cluster.now - left_at)
    # a new group is at epoch 1 (KAFKA-20268): 2 (a joins), 3 (b joins), 4 (a leaves)
    assert b.group_metadata().generation_id == 4


def test_auto_commit_before_revoking_means_no_record_read_twice():
    cluster = _cluster()
    a = _member(cluster, enable_auto_commit=True)
    seen_a = _poll_until(cluster, [a], lambda: all(p == 5 for p in a.positions.values()) and len(a.positions) == 4)
    b = _member(cluster, enable_auto_commit=True)
    seen = _poll_until(cluster, [a, b], lambda: len(_owned(b)) == 2 and all(p == 5 for p in b.positions.values()))
    assert sum(seen_a.values()) == 20 and seen.get(b.node_id, 0) == 0, (seen_a, seen)


def test_a_lost_group_fences_the_member_which_rejoins_at_epoch_0():
    cluster = _cluster()
    a = _member(cluster)
    _poll_until(cluster, [a], lambda: _owned(a) == [0, 1, 2, 3])
    a.commit()
    victim = coordinator(cluster, "g").broker.broker_id
    cluster.crash(victim)
    cluster.run_for(100)
    cluster.restart(victim)
    # the new coordinator does not know the group: UNKNOWN_MEMBER_ID, partitions lost, a new join
    _poll_until(cluster, [a], lambda: coordinator(cluster, "g") is not None and _owned(a) == [0, 1, 2, 3])
    assert a.group_metadata().generation_id == 2
    assert coordinator(cluster, "g").consumer_groups["g"].group_epoch == 2


def test_slow_handler_leaves_and_rejoins_at_the_next_poll():
    cluster = _cluster()
    a = _member(cluster, max_poll_interval_ms=10_000)
    b = _member(cluster, max_poll_interval_ms=10_000)
    _poll_until(cluster, [a, b], lambda: len(_owned(a)) == 2 and len(_owned(b)) == 2)
    epoch = b.group_metadata().generation_id
    # a's handler takes 15 s: past max_poll_interval_ms it leaves (epoch -1), b gets everything
    _poll_until(cluster, [b], lambda: _owned(b) == [0, 1, 2, 3], timeout_ms=30_000)
    # it left (epoch -1 on the wire), but group_metadata() keeps its last epoch as Java's does
    assert a._generation == -1 and a.group_metadata().generation_id == epoch
    # as the Java client's poll timer: it leaves the moment max_poll_interval_ms has passed, not
    # at its next heartbeat
    left = [op.evidence["reason"] for op in cluster.history if op.f == "left_group" and op.process == a.node_id]
    assert left == ["no poll() for 10000 ms > max_poll_interval_ms=10000"], left
    with pytest.raises(Errors.CommitFailedError):
        a.commit({tp: 1 for tp in a.assignment()} or None)
    _poll_until(cluster, [a, b], lambda: len(_owned(a)) == 2 and len(_owned(b)) == 2)
    assert b.group_metadata().generation_id == epoch + 2  # a left, a came back


def test_a_crashed_member_is_removed_after_the_session_timeout():
    cluster = _cluster(group_consumer_session_timeout_ms=6000)
    a, b = _member(cluster), _member(cluster)
    _poll_until(cluster, [a, b], lambda: len(_owned(a)) == 2 and len(_owned(b)) == 2)
    a.crash()
    crashed_at = cluster.now
    _poll_until(cluster, [b], lambda: _owned(b) == [0, 1, 2, 3])
    # removed 6 s after its last heartbeat (sent up to one 5 s interval before the crash); b hears
    # of it at its next heartbeat (up to one interval later)
    assert 1000 <= cluster.now - crashed_at <= 6000 + 5000 + 500, cluster.now - crashed_at


def test_a_cluster_without_the_protocol_fails_the_poll():
    cluster = _cluster(features={"group.version": 0})
    a = _member(cluster)
    with pytest.raises(Errors.UnsupportedVersionError):
        for _ in range(50):
            a.poll(timeout_ms=100)


def test_lesson_05b_side_by_side_the_others_stop_only_on_a_classic_group():
    """notebooks/05b's "the consumer protocol" section: the slow handler on both kinds of group.
    The classic group's rebalances stop fast, and slow is thrown out again and again. On the
    consumer group (Kafka's 1 s assignment interval) fast joins first and takes both partitions;
    slow's share is computed only at a heartbeat at least an interval later, fast revokes it, and
    slow gets it only with its own next heartbeat - after fast has processed everything."""
    from course_lib.application.consumer_groups import protocols_side_by_side
    from course_lib.explain.lesson05b import _consumer_group_story, _thrown_out

    runs = protocols_side_by_side(seed=1)
    classic, consumer = runs["classic"], runs["consumer"]
    assert classic.stopped_ms("fast") > 0 and consumer.stopped_ms("fast") == 0
    assert len(_thrown_out(classic, "slow")) >= 2 and classic.duplicates() > 0
    options = consumer.backend.cluster.cluster.options
    story = _consumer_group_story(consumer)
    assert (story["first"], story["second"], story["moved"]) == ("fast", "slow", [1]), story
    assert story["computed"] - story["joined"] >= options.group_consumer_assignment_interval_ms
    assert story["computed"] <= story["gave_up"] < story["got"]  # revoked before it is assigned
    assert story["got"] - story["joined"] > options.group_consumer_heartbeat_interval_ms  # two heartbeats
    assert consumer.apps["fast"].handled == len(consumer.sent) and consumer.apps["slow"].handled == 0
    assert not _thrown_out(consumer, "slow") and consumer.duplicates() == 0
    assert not consumer.never_processed() and not classic.never_processed()


def test_without_assignment_batching_slow_gets_its_partition_at_once_and_is_thrown_out():
    """The contrast that shows the interval is the cause: at 0 ms (every change computes a target,
    the simulator's default before issue 31) slow's join makes fast give up partition 1 at once,
    before it read it; slow gets it one heartbeat later, runs its handler, is thrown out and its
    records are processed twice - as on the classic group."""
    from course_lib.application.consumer_groups import protocols_side_by_side
    from course_lib.explain.lesson05b import _consumer_group_story, _thrown_out

    consumer = protocols_side_by_side(seed=1, group_consumer_assignment_interval_ms=0)["consumer"]
    heartbeat = consumer.backend.cluster.cluster.options.group_consumer_heartbeat_interval_ms
    story = _consumer_group_story(consumer)
    assert story["computed"] == story["joined"] and story["gave_up"] - story["joined"] < heartbeat, story
    assert consumer.stopped_ms("fast") == 0 and consumer.waited_ms("slow") < 2 * heartbeat
    assert len(_thrown_out(consumer, "slow")) >= 2 and consumer.duplicates() > 0


def test_the_simulator_s_group_member_joins_with_the_id_it_is_given_and_shows_its_state():
    """The GroupMember contract as the consumer-protocol differential uses it: the simulator's
    member takes the id it is given (the Java twin's), ``state()`` says id, epoch, partitions and
    positions at once as the coordinator sees them, ``commit()`` commits the positions, and
    ``kill()`` is a crash (no leave: the coordinator keeps the member until its session ends)."""
    from course_lib.client_adapters import group_member
    from course_lib.experiments.consumer_protocol_differential import group_view

    cluster = _cluster()
    config = {
        "bootstrap.servers": cluster,
        "group.id": "g",
        "group.protocol": "consumer",
        "auto.offset.reset": "earliest",
        "enable.auto.commit": False,
    }
    member = group_member("simulator", config, ["t"], member_id="the-java-twin-s-id")
    deadline = cluster.now + 60_000
    while member.state().positions != {p: 5 for p in range(4)}:
        assert cluster.now < deadline, member.state()
        member.poll(0.05)
    state, view = member.state(), group_view(cluster, "g", "t")
    assert state.member_id == "the-java-twin-s-id" and state.owned == [0, 1, 2, 3]
    assert view["members"] == {"the-java-twin-s-id": (state.epoch, [0, 1, 2, 3])}
    assert member.seen == 20 and view["committed"] == {}
    member.commit()
    assert group_view(cluster, "g", "t")["committed"] == {p: 5 for p in range(4)}
    member.kill()
    cluster.run_for(1000)
    assert "the-java-twin-s-id" in group_view(cluster, "g", "t")["members"], "a crash sends no leave"
