"""KIP-848's consumer group state machine (course_lib/broker/consumer_group.py), one transition
per test, each checked against what Kafka's group coordinator does - the method named in each
docstring is in apache/kafka group-coordinator/src/main/java/org/apache/kafka/coordinator/group/
(GroupMetadataManager.java, modern/consumer/CurrentAssignmentBuilder.java)."""

from __future__ import annotations

import pytest
from kafka import errors as Errors

from course_lib.broker import Cluster
from course_lib.broker.assignors import range_, uniform
from course_lib.broker.consumer_group import STABLE, UNRELEASED, UNREVOKED, ConsumerGroup, Heartbeat
from course_lib.broker.protocol import (
    ConsumerGroupDescribeRequest,
    ConsumerGroupHeartbeatRequest,
    JoinGroupRequest,
    OffsetCommitRequest,
)
from course_lib.clients import KafkaConsumer


def tps(assignment) -> set:
    return {(t, p) for t, ps in (assignment or {}).items() for p in ps}


def join(g, member, now=0, topics=("t",), assignor=None):
    return g.heartbeat(now, Heartbeat(member, 0, topics=topics, owned=(), assignor=assignor))


def test_a_join_bumps_the_group_epoch_and_gets_the_target_at_once():
    """consumerGroupHeartbeat: a new member changes the subscription -> groupEpoch + 1, target
    computed for that epoch; free partitions are assigned immediately (computeNextAssignment).
    A new group is at epoch 1 with an empty target (KAFKA-20268): the first join makes it 2."""
    g = ConsumerGroup("g", {"t": 3}.get)
    assert (g.group_epoch, g.assignment_epoch, g.state) == (1, 1, "Empty")
    a = join(g, "a")
    assert (a.error, a.member_epoch, g.group_epoch, g.assignment_epoch) == (None, 2, 2, 2)
    assert tps(a.assignment) == {("t", 0), ("t", 1), ("t", 2)}
    assert g.members["a"].state == STABLE and g.state == "Stable"


def test_a_second_member_waits_for_partitions_the_first_still_owns():
    """Pending partitions: a partition whose currentPartitionEpoch is not -1 is unreleased; the
    owner is asked to revoke (UNREVOKED_PARTITIONS, its epoch stays), the joiner gets it later."""
    g = ConsumerGroup("g", {"t": 4}.get)
    join(g, "a")
    b = join(g, "b", 1)
    assert (b.member_epoch, tps(b.assignment), g.members["b"].state) == (3, set(), UNRELEASED)
    a = g.heartbeat(2, Heartbeat("a", 2, owned=(("t", 0), ("t", 1), ("t", 2), ("t", 3))))
    assert a.member_epoch == 2 and g.members["a"].state == UNREVOKED
    assert tps(a.assignment) == {("t", 0), ("t", 1)}  # it keeps what it is not asked to give up
    assert tps(g.members["a"].revoking) == {("t", 2), ("t", 3)}
    # still owned: b gets nothing yet
    assert tps(g.heartbeat(3, Heartbeat("b", 3)).assignment) == set()
    a = g.heartbeat(4, Heartbeat("a", 2, owned=(("t", 0), ("t", 1))))
    assert (a.member_epoch, g.members["a"].state) == (3, STABLE)
    b = g.heartbeat(5, Heartbeat("b", 3))
    assert tps(b.assignment) == {("t", 2), ("t", 3)} and g.members["b"].state == STABLE


def test_a_member_that_does_not_report_its_partitions_still_owns_them():
    """ownsRevokedPartitions: ownedTopicPartitions null -> assume still owned; stay UNREVOKED."""
    g = ConsumerGroup("g", {"t": 2}.get)
    join(g, "a")
    join(g, "b", 1)
    g.heartbeat(2, Heartbeat("a", 2, owned=(("t", 0), ("t", 1))))
    g.heartbeat(3, Heartbeat("a", 2))
    assert g.members["a"].state == UNREVOKED


@pytest.mark.parametrize(
    "epoch, owned, error",
    [(5, None, Errors.FencedMemberEpochError), (0, (("t", 0),), None), (0, (("t", 1),), Errors.FencedMemberEpochError)],
)
def test_member_epoch_fencing(epoch, owned, error):
    """throwIfConsumerGroupMemberEpochIsInvalid: an epoch ahead is fenced; the previous epoch is
    accepted while the owned partitions are a subset of the assignment (a lost answer)."""
    g = ConsumerGroup("g", {"t": 2}.get)
    join(g, "a")
    join(g, "b", 1)
    g.heartbeat(2, Heartbeat("a", 2, owned=(("t", 0), ("t", 1))))
    g.heartbeat(3, Heartbeat("a", 2, owned=(("t", 0),)))  # a revoked: now epoch 3, previous 2
    assert (g.members["a"].member_epoch, g.members["a"].previous_epoch) == (3, 2)
    answer = g.heartbeat(4, Heartbeat("a", epoch + 2 if epoch else 2, owned=owned))
    assert answer.error is error


def test_unknown_member_and_leave():
    """An unknown member id with epoch > 0: UNKNOWN_MEMBER_ID; epoch -1 leaves, the group epoch
    grows and the others get the partitions (consumerGroupLeave)."""
    g = ConsumerGroup("g", {"t": 2}.get)
    assert g.heartbeat(0, Heartbeat("x", 3)).error is Errors.UnknownMemberIdError
    join(g, "a")
    join(g, "b", 1)
    g.heartbeat(2, Heartbeat("a", 2, owned=()))
    epoch = g.group_epoch
    left = g.heartbeat(3, Heartbeat("a", -1))
    assert (left.error, left.member_epoch, g.group_epoch) == (None, -1, epoch + 1)
    b = g.heartbeat(4, Heartbeat("b", 3, owned=(("t", 1),)))
    assert tps(b.assignment) == {("t", 0), ("t", 1)} and b.member_epoch == epoch + 1


def test_session_timeout_and_rebalance_timeout_fence_in_virtual_time():
    """scheduleConsumerGroupSessionTimeout / scheduleConsumerGroupRebalanceTimeout."""
    g = ConsumerGroup("g", {"t": 2}.get, session_timeout_ms=45_000)
    join(g, "a")
    join(g, "b", 1_000)
    assert g.expire(44_999) == []
    assert g.expire(45_000) == ["a"]
    g = ConsumerGroup("g", {"t": 2}.get)
    join(g, "a")
    g.heartbeat(0, Heartbeat("a", 2, rebalance_timeout_ms=10_000))
    join(g, "b", 1)
    g.heartbeat(2, Heartbeat("a", 2, owned=(("t", 0), ("t", 1))))  # must revoke one now
    assert g.members["a"].state == UNREVOKED and g.next_deadline() == 10_002
    g.heartbeat(5_000, Heartbeat("b", 3))
    assert g.expire(10_002) == ["a"]


def test_a_static_member_away_keeps_its_partitions_and_a_replacement_takes_them_back():
    """getOrMaybeSubscribeStaticConsumerGroupMember / consumerGroupStaticMemberGroupLeave /
    replaceMember: epoch -2 keeps the member and its partitions (no group epoch bump, nobody else
    gets them); a join with its instance id replaces it - same partitions, the target's epoch,
    still no bump; the replaced id is fenced; a second live member with the id is refused; the
    session timeout finally removes an absent one."""
    g = ConsumerGroup("g", {"t": 4}.get, session_timeout_ms=45_000)

    def static_join(member, instance, now):
        return g.heartbeat(now, Heartbeat(member, 0, topics=("t",), owned=(), instance_id=instance))

    static_join("a", "i-a", 0)
    static_join("b", "i-b", 1)
    g.heartbeat(2, Heartbeat("a", 2, owned=tuple(("t", p) for p in range(4)), instance_id="i-a"))
    g.heartbeat(3, Heartbeat("a", 2, owned=(("t", 0), ("t", 1)), instance_id="i-a"))
    b = g.heartbeat(4, Heartbeat("b", 3, owned=(), instance_id="i-b"))
    assert tps(b.assignment) == {("t", 2), ("t", 3)} and b.member_epoch == 3
    epoch = g.group_epoch

    away = g.heartbeat(5, Heartbeat("b", -2, instance_id="i-b"))
    assert (away.error, away.member_epoch, g.group_epoch) == (None, -2, epoch)
    assert g.members["b"].member_epoch == -2 and g.state == "Reconciling"
    assert g.owners[("t", 2)] == "b"  # not free for a
    assert g.heartbeat(6, Heartbeat("a", 3, owned=(("t", 0), ("t", 1)), instance_id="i-a")).assignment is None

    back = static_join("b2", "i-b", 10_000)
    assert (back.error, back.member_epoch, g.group_epoch) == (None, 3, epoch)
    assert tps(back.assignment) == {("t", 2), ("t", 3)} and "b" not in g.members
    assert g.heartbeat(10_001, Heartbeat("b", 3, instance_id="i-b")).error is Errors.FencedInstanceIdError
    assert static_join("b3", "i-b", 10_002).error is Errors.UnreleasedInstanceIdError
    assert g.describe()["members"][1]["instance_id"] == "i-b"

    # away for longer than the session timeout: removed, and the group rebalances
    g.heartbeat(20_000, Heartbeat("b2", -2, instance_id="i-b"))
    g.heartbeat(40_000, Heartbeat("a", 3, owned=(("t", 0), ("t", 1)), instance_id="i-a"))
    assert g.expire(20_000 + 45_000) == ["b2"] and g.group_epoch == epoch + 1
    assert g.heartbeat(70_000, Heartbeat("b2", 0, topics=("t",), owned=(), instance_id="i-b")).error is None


def test_offset_commits_are_checked_against_the_member_epoch():
    """ConsumerGroup.validateOffsetCommit: STALE_MEMBER_EPOCH for another epoch, epoch < 0 only
    while the group is empty."""
    g = ConsumerGroup("g", {"t": 1}.get)
    assert g.validate_commit("", -1) is None
    join(g, "a")
    assert g.validate_commit("a", 2) is None
    assert g.validate_commit("a", 1) is Errors.StaleMemberEpochError
    assert g.validate_commit("", -1) is Errors.UnknownMemberIdError


def test_assignment_batching_holds_a_new_target_back_for_the_interval():
    """KIP-1263 (Kafka 4.3, group.consumer.assignment.interval.ms): a target is computed only at a
    heartbeat at least the interval after the last one; meanwhile the group epoch moves on (state
    Assigning) and a joining member reconciles towards the last target, where it has nothing, at
    that target's epoch (measured on Kafka 4.3.1: tests/real/test_consumer_group_protocol.py)."""
    g = ConsumerGroup("g", {"t": 2}.get, assignment_interval_ms=1000)
    a = join(g, "a", 0)
    assert (a.member_epoch, tps(a.assignment)) == (2, {("t", 0), ("t", 1)})  # the first: at once
    b = join(g, "b", 10)
    assert (g.group_epoch, g.assignment_epoch, g.state) == (3, 2, "Assigning")
    assert (b.member_epoch, tps(b.assignment)) == (2, set())
    g.heartbeat(999, Heartbeat("b", 2))
    assert g.assignment_epoch == 2  # not yet: no timer either, only a heartbeat computes it
    a = g.heartbeat(1000, Heartbeat("a", 2, owned=(("t", 0), ("t", 1))))
    assert g.assignment_epoch == 3 and (a.member_epoch, g.members["a"].state) == (2, UNREVOKED)


def test_uniform_is_sticky_and_range_is_by_member_order():
    members = {m: ("t",) for m in "abc"}
    current = {"a": {"t": frozenset({0, 1, 2})}, "b": {"t": frozenset({3, 4, 5})}}
    out = uniform(members, {"t": 6}, current)
    assert all(len(out[m]["t"]) == 2 for m in "abc")
    assert out["a"]["t"] <= current["a"]["t"] and out["b"]["t"] <= current["b"]["t"]
    assert range_(members, {"t": 6}, current) == {m: {"t": frozenset({2 * i, 2 * i + 1})} for i, m in enumerate("abc")}
    # different subscriptions: a topic only goes to its subscribers
    mixed = uniform({"a": ("t",), "b": ("t", "u")}, {"t": 2, "u": 2}, {})
    assert tps(mixed["b"]) >= {("u", 0), ("u", 1)}


def test_an_assignor_kafka_does_not_have_is_refused():
    g = ConsumerGroup("g", {"t": 1}.get)
    assert join(g, "a", assignor="sticky").error is Errors.UnsupportedAssignorError
    assert join(g, "a", assignor="range").error is None and g.assignor_name() == "range"


# ---- through the simulated cluster's coordinator ---------------------------------------------
@pytest.fixture
def cluster():
    c = Cluster(brokers=3, seed=1, group_initial_rebalance_delay_ms=0)
    c.create_topic("t", partitions=4)
    return c


def test_heartbeats_reach_the_coordinator_and_describe_answers(cluster):
    client = KafkaConsumer(bootstrap_servers=cluster)
    a = client._call_coordinator(
        ConsumerGroupHeartbeatRequest(group="g", member_id="a", member_epoch=0, topics=("t",), owned=())
    )
    assert a.member_epoch == 2 and tps(a.assignment) == {("t", p) for p in range(4)}
    described = client._call_coordinator(ConsumerGroupDescribeRequest(group="g"))
    assert described["state"] == "Stable" and described["members"][0]["member_epoch"] == 2
    # classic and consumer groups side by side: one id is one kind
    with pytest.raises(Errors.InconsistentGroupProtocolError):
        client._call_coordinator(
            JoinGroupRequest(group="g", member_id="", client_id="c", topics=["t"], session_timeout_ms=10_000)
        )
    with pytest.raises(Errors.StaleMemberEpochError):
        client._call_coordinator(OffsetCommitRequest(group="g", member_id="a", generation=1, offsets={("t", 0): 1}))
    client._call_coordinator(OffsetCommitRequest(group="g", member_id="a", generation=2, offsets={("t", 0): 1}))
    # a group the coordinator does not know: GROUP_ID_NOT_FOUND, as Kafka (a failover cannot lose
    # one: groups are restored from __consumer_offsets - see consumer_group_requests)
    with pytest.raises(Errors.GroupIdNotFoundError):
        client._call_coordinator(ConsumerGroupHeartbeatRequest(group="other", member_id="a", member_epoch=3))
    # a classic group with members is not a consumer group
    classic = client._call_coordinator(
        JoinGroupRequest(group="classic", member_id="", client_id="c", topics=["t"], session_timeout_ms=10_000)
    )
    assert classic["generation"] == 1
    with pytest.raises(Errors.GroupIdNotFoundError):
        client._call_coordinator(
            ConsumerGroupHeartbeatRequest(group="classic", member_id="x", member_epoch=0, topics=("t",))
        )
    # a silent member is fenced after the session timeout, in virtual time
    cluster.run_for(46_000)
    with pytest.raises(Errors.UnknownMemberIdError):
        client._call_coordinator(ConsumerGroupHeartbeatRequest(group="g", member_id="a", member_epoch=2))
    client.close()


def test_group_version_0_refuses_the_protocol():
    c = Cluster(brokers=1, seed=1, features={"group.version": 0})
    c.create_topic("t", partitions=1)
    client = KafkaConsumer(bootstrap_servers=c)
    with pytest.raises(Errors.UnsupportedVersionError):
        client._call_coordinator(ConsumerGroupHeartbeatRequest(group="g", member_id="a", member_epoch=0, topics=("t",)))
    client.close()


def test_invariants_hold_on_the_cluster_through_a_coordinator_crash():
    """ConsumerGroupInvariants as a simulator observer (checked after every event): three members
    heartbeat through the network, revoke what they are told to, and the coordinator crashes -
    the members rejoin on the new one (the simulator keeps groups in memory)."""
    from course_lib.broker.consumer_group_invariants import ConsumerGroupInvariants

    cluster = Cluster(brokers=3, seed=4, group_initial_rebalance_delay_ms=0)
    cluster.create_topic("t", partitions=6)
    checker = ConsumerGroupInvariants.attach(cluster)
    client = KafkaConsumer(bootstrap_servers=cluster)
    members = {m: {"epoch": 0, "owned": set(), "assigned": set()} for m in ("a", "b", "c")}
    crashed = None
    for round_ in range(12):
        if round_ == 6:
            crashed = next(b.broker_id for b in cluster.brokers.values() if b.groups.consumer_groups)
            cluster.crash(crashed)
        for name, m in members.items():
            m["owned"] &= m["assigned"] or m["owned"]  # revoke what the last answer took away
            request = ConsumerGroupHeartbeatRequest(
                group="g",
                member_id=name,
                member_epoch=m["epoch"],
                topics=("t",) if m["epoch"] == 0 else None,
                owned=tuple(sorted(m["owned"])),
            )
            try:
                answer = client._call_coordinator(request)
            except (Errors.UnknownMemberIdError, Errors.FencedMemberEpochError):
                m.update(epoch=0, owned=set(), assigned=set())
                continue
            m["epoch"] = answer.member_epoch
            if answer.assignment is not None:
                m["assigned"] = tps(answer.assignment)
                m["owned"] |= m["assigned"]
        cluster.run_for(1_000)
    client.close()
    assert crashed is not None and checker.checks > 100
    owned = [p for m in members.values() for p in m["owned"]]
    assert sorted(owned) == [("t", p) for p in range(6)], members
    assert all(len(m["owned"]) == 2 for m in members.values())


def test_the_simulated_consumer_bounces_as_a_static_member_as_java_does_on_kafka(cluster):
    """tests/static_member_support.py's experiment, which the Java client runs on the wire cluster
    and on Kafka 4.3.1, with the simulated consumer in virtual time: the same observations."""
    from tests import static_member_support as static

    cluster.create_topic("static", partitions=4, replication_factor=3)
    assert static.static_bounce(static.sim_static_members(cluster, "static")) == static.STATIC_EXPECTED


def test_a_coordinator_failover_moves_nothing_as_on_kafka(cluster):
    """tests/coordinator_failover_support.py with the simulated consumer: the new coordinator
    restores the group from __consumer_offsets, as Kafka 4.3.1 does (the wire cluster and Kafka
    run the same with the Java client)."""
    from tests import coordinator_failover_support as failover

    cluster.create_topic("failover", partitions=4, replication_factor=3)
    crashed = []

    def crash():
        crashed.append(failover.sim_coordinator(cluster, "failover-sim"))
        cluster.crash(crashed[0])

    got = failover.coordinator_failover(failover.sim_members(cluster, "failover"), crash)
    assert got == failover.FAILOVER_EXPECTED
    assert failover.sim_coordinator(cluster, "failover-sim") != crashed[0]


def test_a_groups_own_configs_set_its_heartbeat_and_session(cluster):
    """GroupMetadataManager reads consumer.heartbeat.interval.ms and consumer.session.timeout.ms
    from the group's configs (``kafka-configs --entity-type groups``) at each heartbeat, over the
    brokers' group.consumer.* (before, the group kept the brokers' and the name was refused)."""
    client = KafkaConsumer(bootstrap_servers=cluster)

    def heartbeat(epoch: int):
        request = ConsumerGroupHeartbeatRequest(group="g", member_id="a", member_epoch=epoch, topics=("t",), owned=())
        return client._call_coordinator(request)

    first = heartbeat(0)
    cluster.alter_share_group_config(
        "g", {"consumer.heartbeat.interval.ms": 6000, "consumer.session.timeout.ms": 50_000}
    )
    then = heartbeat(first.member_epoch)
    (group,) = [b.groups.consumer_groups["g"] for b in cluster.brokers.values() if "g" in b.groups.consumer_groups]
    assert (first.heartbeat_interval_ms, then.heartbeat_interval_ms) == (5000, 6000)
    assert group.session_timeout_ms == 50_000
