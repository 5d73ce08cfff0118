"""KIP-848 experiments shared by the wire cluster's tests and Kafka 4.3.1's (tests/real): a
member with ``group.protocol=consumer`` joins a 4-partition topic, a second joins, the first
leaves - what each member owns at each step. Both clusters must give the same observations."""

from __future__ import annotations

import time
import uuid
from typing import Callable

#: what Kafka 4.3.1 and the wire cluster both give: all four, then two and two, then all four
EXPECTED = {"first": [0, 1, 2, 3], "split": [2, 2], "union": [0, 1, 2, 3], "after_leave": [0, 1, 2, 3]}


def _poll_until(consumers, owned: Callable, condition: Callable[[], bool], timeout_s: float) -> float:
    start = time.monotonic()
    while time.monotonic() - start < timeout_s:
        if condition():
            return time.monotonic() - start
        for c in consumers:
            c.poll(0.1)
    raise AssertionError(f"not within {timeout_s} s: {[owned(c) for c in consumers]}")


def join_split_leave(make_consumer: Callable, owned: Callable, topic: str, timeout_s: float = 60) -> dict:
    """``make_consumer()`` -> a consumer subscribed to ``topic``; ``owned(c)`` -> its sorted partitions."""
    a = make_consumer()
    b = None
    try:
        _poll_until([a], owned, lambda: owned(a) == [0, 1, 2, 3], timeout_s)
        first = owned(a)
        b = make_consumer()
        moved_s = _poll_until([a, b], owned, lambda: len(owned(a)) == 2 and len(owned(b)) == 2, timeout_s)
        split = [len(owned(a)), len(owned(b))]
        union = sorted(owned(a) + owned(b))
        a.close()
        a = None
        left_s = _poll_until([b], owned, lambda: owned(b) == [0, 1, 2, 3], timeout_s)
        return {
            "first": first,
            "split": split,
            "union": union,
            "after_leave": owned(b),
            "seconds": {"join_moved": moved_s, "leave_moved": left_s},
        }
    finally:
        if a is not None:
            a.close()
        if b is not None:
            b.close()


def librdkafka(servers: str, topic: str) -> dict:
    from confluent_kafka import Consumer

    group = f"kip848-rdkafka-{uuid.uuid4().hex[:8]}"

    def make():
        c = Consumer({"bootstrap.servers": servers, "group.id": group, "group.protocol": "consumer"})
        c.subscribe([topic])
        return c

    return join_split_leave(make, lambda c: sorted(p.partition for p in c.assignment()), topic)


def java(driver, servers: str, topic: str) -> dict:
    from course_lib.java_client import JavaConsumer

    group = f"kip848-java-{uuid.uuid4().hex[:8]}"

    def make():
        c = JavaConsumer(driver, {"bootstrap.servers": servers, "group.id": group, "group.protocol": "consumer"})
        c.subscribe([topic])
        return c

    return join_split_leave(make, lambda c: sorted(tp.partition for tp in c.assignment()), topic)
