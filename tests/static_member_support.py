"""A static member (``group.instance.id``) of a consumer group (KIP-848) bounces: the experiment the
wire cluster (tests/java_client/test_consumer_group_protocol_wire.py) and Kafka 4.3.1
(tests/real/test_consumer_group_protocol.py) run with the Java client, with the same expected
observations.

Members a and b (instance ids ``i-a``, ``i-b``) split four partitions; b closes - a static
member's close is a heartbeat with epoch -2, "away, back soon" - and a new consumer, b2, joins
with b's instance id. Kafka gives b2 b's partitions at the group's current epoch, with no
rebalance: the group epoch never moves, a never owns more than its two partitions. (A dynamic
b's leave would have bumped the group epoch and handed b's partitions to a.)"""

from __future__ import annotations

from typing import Callable

from tests.consumer_protocol_support import GroupMembers, _join_then_split, _until, member

#: the Java members' epochs (groupMetadata().generationId), the same on both clusters: a alone 2,
#: b's join 3, and 3 for everyone after b's bounce
STATIC_EXPECTED = {
    "split": [2, 2],
    "b2_has_bs_partitions": True,
    "a_most": 2,
    "epochs": {"a_alone": 2, "a_split": 3, "b_split": 3, "b2": 3, "a_after": 3},
}


def static_bounce(make: Callable, timeout_s: float = 60) -> dict:
    """``make(name)`` -> a subscribed member with instance id ``i-<name's first letter>``."""
    a, b, split, alone = _join_then_split(make, timeout_s)
    b2 = None
    try:
        b_partitions = b.owned()
        epochs = {"a_alone": alone, "a_split": a.epoch(), "b_split": b.epoch()}
        b.close()
        b2 = make("b2")
        most = [len(a.owned())]

        def back() -> bool:
            most.append(len(a.owned()))
            return b2.owned() == b_partitions

        _until([a, b2], back, timeout_s, "b2 takes b's partitions")
        epochs |= {"b2": b2.epoch(), "a_after": a.epoch()}
        return {"split": split, "b2_has_bs_partitions": True, "a_most": max(most), "epochs": epochs}
    finally:
        for m in (a, b, b2):
            if m is not None:
                m.close()


def _instance(name: str) -> dict:
    return {"group.instance.id": f"i-{name[0]}"}


def java_static_members(servers: str, topic: str) -> GroupMembers:
    return GroupMembers(lambda group, name: member("java", servers, group, [topic], **_instance(name)), "static-java")


def sim_static_members(cluster, topic: str) -> Callable:
    return lambda name: member("simulator", cluster, "static-sim", [topic], **_instance(name))
