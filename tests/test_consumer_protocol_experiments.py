"""How the KIP-848 experiments (course_lib/experiments/consumer_protocol_experiments.py) start a group when a
new topic reaches Kafka's group coordinator after the first member joined: members scripted here,
so that both cases run in milliseconds and on purpose."""

from __future__ import annotations

from course_lib.experiments import consumer_protocol_experiments as kip848
from course_lib.client_adapters.members import GroupMember


class Scripted(GroupMember):
    """A member whose epoch and partitions follow ``steps`` [(epoch, owned)], one step a poll."""

    def __init__(self, steps: list, log: list, group: str, name: str):
        self.steps, self.log, self.group, self.name = list(steps), log, group, name
        self.step = self.steps.pop(0)

    def _poll(self, timeout_s: float) -> int:
        if self.steps:
            self.step = self.steps.pop(0)
        return 0

    def owned(self) -> list:
        return self.step[1]

    def epoch(self):
        return self.step[0]

    def close(self) -> None:
        self.log.append(("closed", self.group, self.name))


ALL, HALF = [0, 1, 2, 3], [0, 1]
#: the topic reached the coordinator late: a empty at 2, then everything at 3
LATE = [(0, []), (2, []), (2, []), (3, ALL)]
#: as it should: a owns everything at its first epoch
ON_TIME = [(0, []), (2, ALL)]


def _groups(a_steps_per_group: list) -> tuple[kip848.GroupMembers, list]:
    log: list = []
    groups: list = []

    def member(group: str, name: str) -> GroupMember:
        if group not in groups:
            groups.append(group)
        if name == "a":
            return Scripted(a_steps_per_group[groups.index(group)] + [(3, HALF)] * 5, log, group, name)
        return Scripted([(3, HALF)], log, group, name)

    return kip848.GroupMembers(member, "scripted"), log


def test_a_topic_late_at_the_coordinator_starts_a_new_group():
    make, log = _groups([LATE, ON_TIME])
    a, b, split, alone = kip848._join_then_split(make, timeout_s=5)
    assert alone == 2 and split == [2, 2]
    assert log[0][0::2] == ("closed", "a") and a.group != log[0][1] and b.group == a.group == make.group


def test_a_topic_on_time_keeps_the_first_group():
    make, log = _groups([ON_TIME])
    a, _, _, alone = kip848._join_then_split(make, timeout_s=5)
    assert alone == 2 and log == [] and a.group == make.group


def test_a_topic_always_late_gives_up_after_the_attempts_and_reports_what_it_saw():
    make, log = _groups([LATE] * kip848.GROUP_ATTEMPTS)
    a, _, _, alone = kip848._join_then_split(make, timeout_s=5)
    assert alone == 3 and len(log) == kip848.GROUP_ATTEMPTS - 1


def test_members_made_without_a_group_maker_are_never_moved():
    """The simulator's members (a plain function): its coordinator has no lag to start over for."""
    log: list = []
    a, _, _, alone = kip848._join_then_split(
        lambda name: Scripted((LATE if name == "a" else []) + [(3, HALF)] * 5, log, "g", name), timeout_s=5
    )
    assert alone == 3 and log == []
