"""Fault schedules: one name per fault, one start function per kind, and a seed that always
means the same schedule."""

import random

import pytest

from course_lib.broker import Cluster
from course_lib.history import Nemesis
from course_lib.broker.schedules import apply_schedule
from course_lib.nemesis import FAULT_KINDS, Fault, FaultKind, fault_kind, random_schedule

#: drawn before the kinds were an enum (and lose_next_ack was spelled lose_ack): the draws, in
#: their order, are what a seed means - notebooks quote trials by seed
SEED_7 = [
    "t=232.9 ms: pause broker 1 for 1300.5 ms",
    "t=453.6 ms: pause broker 2 for 424.6 ms",
    "t=1862 ms: pause broker 3 for 2906 ms",
    "t=2090.9 ms: lose_next_request",
    "t=2703.4 ms: crash_leader_after_ack for 2369.5 ms",
    "t=2885.5 ms: crash broker 2 for 388.4 ms",
    "t=3254.7 ms: lose_next_request",
    "t=4080.6 ms: shrink_isr_then_crash_leader for 886.8 ms",
    "t=4106.4 ms: crash_leader for 557.7 ms",
    "t=4548.5 ms: crash broker 1 for 342.5 ms",
    "t=4737.2 ms: crash_leader for 2596.4 ms",
    "t=4739.3 ms: lose_next_ack",
]


def test_a_seed_draws_the_schedule_it_always_drew():
    schedule = random_schedule(random.Random(7), 5000, [1, 2, 3], faults=12)
    assert [str(f) for f in schedule] == SEED_7


def test_faults_that_are_nemesis_operations_carry_their_name():
    shared = {k for k in FaultKind if k in {v for n, v in vars(Nemesis).items() if n.isupper()}}
    assert shared == {FaultKind.CRASH, FaultKind.PAUSE, FaultKind.ISOLATE, FaultKind.LOSE_NEXT_ACK,
                      FaultKind.LOSE_NEXT_REQUEST}  # fmt: skip
    assert FaultKind.LOSE_NEXT_ACK == Nemesis.LOSE_NEXT_ACK == "lose_next_ack"


def test_a_fault_has_one_name_and_unknown_kinds_are_refused_naming_the_known_ones():
    schedule = random_schedule(
        random.Random(1), 1000, [1, 2, 3], kinds=("lose_next_ack", "lose_next_request"), faults=6
    )
    assert {f.kind for f in schedule} <= {FaultKind.LOSE_NEXT_ACK, FaultKind.LOSE_NEXT_REQUEST}
    with pytest.raises(ValueError, match="unknown fault kind 'lose_ack'; kinds are .*'lose_next_ack'"):
        random_schedule(random.Random(1), 1000, [1, 2, 3], kinds=("lose_ack",))  # an earlier spelling
    with pytest.raises(ValueError, match="unknown fault kind 'crash_everything'; kinds are .*'lose_next_ack'"):
        random_schedule(random.Random(1), 1000, [1, 2, 3], kinds=("crash_everything",))
    with pytest.raises(ValueError, match="unknown fault kind"):
        fault_kind("")


@pytest.mark.parametrize("kind", FAULT_KINDS)
def test_every_kind_starts_on_a_cluster_and_the_cluster_heals(kind):
    cluster = Cluster(brokers=3, seed=2)
    cluster.create_topic("t", replication_factor=3, min_insync_replicas=2)
    apply_schedule(cluster, [Fault(10.0, kind, 2, 500.0)], "t", client_id="producer-1")
    cluster.run_for(20)
    nemesis = [op.f for op in cluster.history if op.process == "nemesis"]
    expected = {
        FaultKind.CRASH: ["crash"],
        FaultKind.CRASH_LEADER: ["crash"],
        FaultKind.CRASH_LEADER_AFTER_ACK: [],  # armed: waits for the leader's next ACK
        FaultKind.PAUSE: ["pause"],
        FaultKind.ISOLATE: ["isolate"],
        FaultKind.SLOW_LINK: [],  # a delay on links, not an operation of its own
        FaultKind.LOSE_NEXT_ACK: ["lose_next_ack"],
        FaultKind.LOSE_NEXT_REQUEST: ["lose_next_request"],
        FaultKind.SHRINK_ISR_THEN_CRASH_LEADER: ["crash", "crash"],  # both followers first
    }[kind]
    assert nemesis == expected, kind
    assert cluster.heal_all(), f"{kind}: the cluster did not settle after healing (seed 2)"


def test_a_targeted_fault_without_a_target_is_refused_saying_what_to_pass():
    cluster = Cluster(brokers=3, seed=2)
    cluster.create_topic("t")
    apply_schedule(cluster, [Fault(10.0, FaultKind.PAUSE, None, 500.0)], "t")
    with pytest.raises(ValueError, match="a pause fault needs a target broker"):
        cluster.run_for(20)
