"""A consumer group's coordinator dies (KIP-848): the experiment the simulator (simulated consumer,
virtual time), the wire cluster and Kafka 4.3.1 (both with the Java client) run alike.

Members a and b split four partitions; the broker coordinating their group is killed; both keep
polling for two heartbeat intervals (Kafka's ``group.consumer.heartbeat.interval.ms``, 5 s: by
then each has heartbeated to the new coordinator). Kafka's new coordinator replays the group from
``__consumer_offsets``: nobody is fenced, nothing moves, the epochs stay (measured on Kafka 4.3.1:
3 and 3 before and after, the coordinator moving from broker 3 to broker 1). A coordinator that
kept groups in memory only would answer UNKNOWN_MEMBER_ID: both rejoin, partitions move."""

from __future__ import annotations

from typing import Callable

from tests.consumer_protocol_support import GroupMembers, _join_then_split, member

#: the same on every cluster
FAILOVER_EXPECTED = {"split": [2, 2], "epochs": [3, 3], "epochs_after": [3, 3], "changes": []}
#: two heartbeat intervals of polling, in rounds of one 100 ms poll per member
ROUNDS = 50


def coordinator_failover(make: Callable, crash_coordinator: Callable[[], None], timeout_s: float = 60) -> dict:
    """``make(name)`` -> a subscribed member; ``crash_coordinator()`` kills the group's coordinator."""
    a, b, split, _ = _join_then_split(make, timeout_s)
    try:
        owned, epochs = (a.owned(), b.owned()), [a.epoch(), b.epoch()]
        crash_coordinator()
        changes = []
        for _ in range(ROUNDS):
            for m in (a, b):
                m.poll()
            if (a.owned(), b.owned()) != owned:
                changes.append((a.owned(), b.owned()))
        return {"split": split, "epochs": epochs, "epochs_after": [a.epoch(), b.epoch()], "changes": changes}
    finally:
        a.close()
        b.close()


def java_members(servers: str, topic: str) -> GroupMembers:
    """``make(name)``: a Java member of ``make.group``"""
    return GroupMembers(lambda group, name: member("java", servers, group, [topic]), "failover-java")


def sim_members(cluster, topic: str) -> Callable:
    return lambda name: member("simulator", cluster, "failover-sim", [topic])


def sim_coordinator(cluster, group: str) -> int:
    """The broker coordinating ``group`` on a simulated cluster."""
    return next(b.broker_id for b in cluster.brokers.values() if b.alive and b.groups.partition() is not None)


def kafka_coordinator(servers: str, group: str) -> int:
    """The id of the broker coordinating ``group`` on a real cluster (its admin's answer)."""
    from confluent_kafka.admin import AdminClient

    admin = AdminClient({"bootstrap.servers": servers})
    return admin.describe_consumer_groups([group])[group].result(30).coordinator.id
