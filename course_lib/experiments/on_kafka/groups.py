"""Consumer-group experiments on the real cluster, with kafka-python 3.0.12 - the real-Kafka half
of notebooks/05b_consumer_groups. Each returns plain numbers the notebook prints next to the
simulator's.

(The slow handler runs through the backend: ``course_lib.application.consumer_groups.slow_handler(kafka)``.)

- :func:`restart_rebalances` - a member restarts: how many new generations (rebalances) did the
  group go through, with and without ``group_instance_id``;
- :func:`deleted_before_read` - records deleted (what retention does) while the group was
  stopped: the committed offset is out of range, ``auto_offset_reset`` jumps over the gap.

Taught in notebooks/05b_consumer_groups.
"""

from __future__ import annotations

import itertools
import time

from kafka import KafkaConsumer, KafkaProducer, TopicPartition

from ...client_adapters import group_member
from ...client_adapters.recorded import translate
from ...real.admin_client import AdminClient
from ...clusters.parts import client_config
from ...client_adapters.joining import before_first_join

_names = itertools.count(1)


def _topic(kafka, stem: str, partitions: int) -> str:
    name = f"groups-{stem}-{next(_names)}-{int(time.time())}"
    kafka.create_topic(name, partitions=partitions)
    return name


def _state(member) -> tuple[list[int], int]:
    """A member's (partitions, generation), read until two reads agree: its thread replaces both
    at once, and could between the two calls. (A kafka-python member's generation is never None:
    -1 until it is in a stable group.)"""
    while True:
        now = (member.owned(), member.epoch())
        if now == (member.owned(), member.epoch()):
            return now


def _wait_settled(members, timeout_s: float = 60, partitions_each: int = 1) -> int:
    """Wait until every member holds ``partitions_each`` partitions in the same generation; return it."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        for m in members:
            m.poll()  # raises what a member's thread died of
        states = [_state(m) for m in members]
        if all(len(p) == partitions_each for p, _ in states) and len({g for _, g in states}) == 1 and states[0][1] >= 0:
            return states[0][1]
        time.sleep(0.1)
    raise RuntimeError(
        f"the group did not settle with {partitions_each} partition(s) per member in {timeout_s:.0f} s: "
        f"{[_state(m) for m in members]}"
    )


def _wait_coordinator_stable(kafka, group: str, members: int, timeout_s: float = 60) -> None:
    """Wait until the group coordinator describes ``group`` as Stable with ``members`` members."""
    admin = AdminClient(**client_config(kafka))
    try:
        deadline, seen = time.monotonic() + timeout_s, None
        while time.monotonic() < deadline:
            described = admin.describe_groups([group])[group]
            seen = (described["group_state"], len(described["members"]))
            if seen == ("Stable", members):
                return
            time.sleep(0.1)
        raise RuntimeError(
            f"the coordinator did not describe {group} as Stable with {members} members in {timeout_s:.0f} s: "
            f"last state {seen[0] if seen else None!r} with {seen[1] if seen else 0} members"
        )
    finally:
        admin.close()


def restart_rebalances(kafka, static: bool, down_s: float = 3.0) -> dict:
    """Members a and b share a 2-partition topic; a closes and comes back ``down_s`` later.
    Returns the generations before and after, and whether a got the same partition back."""
    topic = _topic(kafka, "static" if static else "dynamic", 2)
    group = f"{topic}-group"

    def member(name):
        config = {
            **translate(client_config(kafka), {}),
            "group.id": group,
            "client.id": name,
            "enable.auto.commit": False,
            "session.timeout.ms": 10_000,
            "heartbeat.interval.ms": 1000,
        }
        if static:
            config["group.instance.id"] = f"{group}-{name}"
        return group_member("kafka-python", config, [topic])

    a, b = member("a"), member("b")
    a2 = None
    try:
        before = _wait_settled([a, b])
        partition = a.owned()
        a.close()
        time.sleep(down_s)
        if not static:
            # a dynamic member's close() leaves the group: b takes both partitions in a rebalance of
            # its own, which on a loaded machine can outlast down_s - let it finish, so the rejoin
            # is a second rebalance and not merged into the first
            _wait_settled([b], partitions_each=2)
        a2 = member("a")
        _wait_settled([a2, b])
        # the members may agree on a generation the coordinator is already leaving: its own word
        # that no rebalance is under way, then the generation both members hold
        _wait_coordinator_stable(kafka, group, members=2)
        after = _wait_settled([a2, b])
        return {"generation_before": before, "generation_after": after, "same_partition": a2.owned() == partition}
    finally:
        for m in (a, a2, b):
            if m is not None:
                m.close()


def deleted_before_read(kafka, reset: str = "earliest") -> dict:
    """10 records; the group processes 4 and commits, then stops. Records below offset 8 are
    deleted (``delete_records``: what retention does to old segments). The group comes back:
    which records does it get?"""
    topic = _topic(kafka, "retention", 1)
    group = f"{topic}-group"
    tp = TopicPartition(topic, 0)
    producer = KafkaProducer(**client_config(kafka))
    for i in range(10):
        producer.send(topic, f"msg-{i}".encode(), partition=0)
    producer.flush()
    producer.close()

    def consumer():
        c = KafkaConsumer(
            **client_config(kafka),
            group_id=group,
            enable_auto_commit=False,
            auto_offset_reset=reset,
            max_poll_records=4,
        )
        c.subscribe([topic])
        before_first_join(c)
        return c

    first = consumer()
    processed: list[str] = []
    deadline = time.monotonic() + 60
    while not processed and time.monotonic() < deadline:
        for records in first.poll(timeout_ms=500).values():
            processed += [r.value.decode() for r in records]
    first.commit()
    first.close()
    admin = AdminClient(**client_config(kafka))
    try:
        admin.delete_records({tp: 8})
    finally:
        admin.close()
    second = consumer()
    later: list[str] = []
    try:
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline and len(later) < 2:
            for records in second.poll(timeout_ms=500).values():
                later += [r.value.decode() for r in records]
    finally:
        second.close()
    never = [f"msg-{i}" for i in range(10) if f"msg-{i}" not in processed + later]
    return {"committed_before": len(processed), "read_after": later, "never_processed": never}
