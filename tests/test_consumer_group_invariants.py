"""1,000 seeded schedules of KIP-848 consumer group members - joins, heartbeats with lost
answers, slow revocations, leaves, crashes, subscription changes, topics growing, time passing
past session and rebalance timeouts, static members away (epoch -2) and replaced - with the invariants of
course_lib/broker/consumer_group_invariants.py checked after every event, plus the clients'
side: a live member processes only partitions the coordinator counts as its own, so no two
live members process one partition."""

from __future__ import annotations

import random

import pytest
from kafka import errors as Errors

from course_lib.broker.consumer_group import ConsumerGroup, Heartbeat
from course_lib.broker.consumer_group_invariants import ConsumerGroupInvariants
from course_lib.broker.invariants import InvariantViolation

SCHEDULES = 1000


class ModelMember:
    """What a KIP-848 client does: report owned partitions, take new ones at once, give up
    revoked ones when its handler lets it (a separate, later event), rejoin when fenced."""

    def __init__(self, name: str, topics: tuple, static: bool = False):
        self.name, self.topics, self.incarnation = name, topics, 0
        self.instance_id = name if static else None
        self.crashed = False
        self._reset()

    def _reset(self) -> None:
        self.incarnation += 1
        self.member_id = f"{self.name}.{self.incarnation}"
        self.epoch, self.owned, self.assigned = 0, set(), set()

    def heartbeat(self, g: ConsumerGroup, now: float, lose_answer: bool) -> None:
        hb = Heartbeat(
            self.member_id,
            self.epoch,
            topics=self.topics if self.epoch == 0 else None,
            owned=tuple(sorted(self.owned)),
            rebalance_timeout_ms=30_000,
            instance_id=self.instance_id,
        )
        answer = g.heartbeat(now, hb)
        if answer.error in (Errors.FencedMemberEpochError, Errors.UnknownMemberIdError):
            return self._reset()  # onPartitionsLost, rejoin with epoch 0
        if answer.error in (Errors.UnreleasedInstanceIdError, Errors.FencedInstanceIdError):
            self.crashed = True  # fatal in the Java client: the application stops
            return
        assert answer.error is None, answer.error
        if lose_answer:
            return
        self.epoch = answer.member_epoch
        if answer.assignment is not None:
            self.assigned = {(t, p) for t, ps in answer.assignment.items() for p in ps}
            self.owned |= self.assigned  # new partitions are usable at once

    def revoke(self) -> None:
        self.owned &= self.assigned

    def leave(self, g: ConsumerGroup, now: float, away: bool) -> None:
        """``away``: a static member's temporary leave (-2); its next incarnation replaces it."""
        if self.epoch > 0:
            epoch = -2 if away and self.instance_id is not None else -1
            g.heartbeat(now, Heartbeat(self.member_id, epoch, instance_id=self.instance_id))
        self._reset()


def run_schedule(seed: int) -> int:
    rng = random.Random(seed)
    topics = {"t": rng.randint(1, 6), "u": rng.randint(1, 4)}
    g = ConsumerGroup("g", topics.get, session_timeout_ms=45_000)
    checker = ConsumerGroupInvariants()
    members = [
        ModelMember(f"m{i}", rng.choice([("t",), ("t", "u")]), static=rng.random() < 0.4)
        for i in range(rng.randint(1, 5))
    ]
    now = 0.0
    for _ in range(rng.randint(20, 120)):
        m = rng.choice(members)
        action = rng.choices(
            ["heartbeat", "revoke", "leave", "crash", "tick", "subscribe", "grow"], [10, 5, 1, 1, 3, 1, 1]
        )[0]
        if action == "tick":
            now += rng.choice([100, 5_000, 20_000, 50_000])
            g.expire(now)
        elif m.crashed:
            continue
        elif action == "heartbeat":
            m.heartbeat(g, now, lose_answer=rng.random() < 0.1)
        elif action == "revoke":
            m.revoke()
        elif action == "leave":
            m.leave(g, now, away=rng.random() < 0.7)
        elif action == "crash":
            m.crashed = True
        elif action == "subscribe":
            m.topics = rng.choice([("t",), ("u",), ("t", "u")])
            if m.epoch > 0:
                owned = tuple(sorted(m.owned))
                g.heartbeat(
                    now, Heartbeat(m.member_id, m.epoch, topics=m.topics, owned=owned, instance_id=m.instance_id)
                )
        elif action == "grow":
            topics["t"] += 1
        checker.check_group(g)
        processing: dict = {}
        for other in members:
            if other.crashed or other.member_id not in g.members:
                continue
            mine = g.members[other.member_id].owned()
            assert other.owned <= mine, f"seed={seed}: {other.member_id} processes {other.owned - mine} not its own"
            for tp in other.owned:
                assert tp not in processing, f"seed={seed}: {tp} processed by {processing[tp]} and {other.member_id}"
                processing[tp] = other.member_id
    return checker.checks


def test_the_schedules_have_static_members_away_and_replaced(monkeypatch):
    """The schedules reach the static paths (not just have the flag): some -2 leave is followed by
    a replacement under a new member id."""
    replaced: list = []
    original = ConsumerGroup._replace
    monkeypatch.setattr(ConsumerGroup, "_replace", lambda g, *a: replaced.append(a) or original(g, *a))
    for seed in range(100):
        run_schedule(seed)
    assert len(replaced) > 10, len(replaced)


def test_invariants_hold_over_seeded_schedules_with_crashes():
    checks = 0
    for seed in range(SCHEDULES):
        try:
            checks += run_schedule(seed)
        except (AssertionError, InvariantViolation) as failure:
            raise AssertionError(f"schedule seed={seed}: {failure}") from failure
    assert checks > SCHEDULES * 20


def test_the_checker_catches_a_partition_with_two_owners():
    g = ConsumerGroup("g", {"t": 2}.get)
    g.heartbeat(0, Heartbeat("a", 0, topics=("t",), owned=()))
    g.heartbeat(0, Heartbeat("b", 0, topics=("t",), owned=()))
    g.members["b"].assigned = {"t": frozenset({0})}  # break it by hand
    with pytest.raises(InvariantViolation, match="single_owner"):
        ConsumerGroupInvariants().check_group(g)


def test_the_checker_catches_an_epoch_going_back():
    g = ConsumerGroup("g", {"t": 2}.get)
    g.heartbeat(0, Heartbeat("a", 0, topics=("t",), owned=()))
    checker = ConsumerGroupInvariants()
    checker.check_group(g)
    g.members["a"].member_epoch = 0
    with pytest.raises(InvariantViolation, match="member_epoch_grows"):
        checker.check_group(g)
