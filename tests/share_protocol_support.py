"""Share group experiments (KIP-932) shared by the wire cluster's tests and the Java client's:
workers share one partition, acknowledge each record explicitly (ACCEPT, RELEASE, REJECT), a
stalled worker's lock times out, and a record released every time reaches the delivery count
limit and is archived. Every cluster must give :data:`EXPECTED`.

The share group is set up first (``share.auto.offset.reset=earliest``, a lock of
:data:`LOCK_MS`, a limit of :data:`DELIVERY_LIMIT`), then :data:`RECORDS` records are written.
"""

from __future__ import annotations

import time
import uuid

RECORDS = 24
LOCK_MS = 2000
DELIVERY_LIMIT = 3
#: what a worker does with each value (every other value: ACCEPT)
POISON, REJECTED, RELEASED_ONCE = b"poison", b"reject", b"release-once"
SPECIAL = {10: POISON, 12: REJECTED, 14: RELEASED_ONCE}
#: records the stalled worker takes and never acknowledges (its max.poll.records)
STALLED_TAKES = 4

EXPECTED = {
    "accepted": RECORDS - 2,  # all but the rejected and the poison record
    "accepted_twice": 0,
    "poison_deliveries": DELIVERY_LIMIT,  # then archived
    "reject_deliveries": 1,  # archived at once
    "release_once_deliveries": 2,
    "stalled_taken": STALLED_TAKES,
    "stalled_redelivered_count": [2] * STALLED_TAKES,  # after the lock ran out, delivery count 2
    "several_workers": True,
}

GROUP_CONFIGS = {
    "share.auto.offset.reset": "earliest",
    "share.record.lock.duration.ms": LOCK_MS,
    "share.delivery.count.limit": DELIVERY_LIMIT,
}


def configure_with_admin(servers: str, group: str) -> None:
    """:data:`GROUP_CONFIGS` as an operator sets them on Kafka (``kafka-configs --entity-type
    groups``: IncrementalAlterConfigs of a GROUP resource), with confluent-kafka's admin client."""
    from confluent_kafka.admin import AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource, ResourceType

    entries = [
        ConfigEntry(name, str(value), incremental_operation=AlterConfigOpType.SET)
        for name, value in GROUP_CONFIGS.items()
    ]
    resource = ConfigResource(ResourceType.GROUP, group, incremental_configs=entries)
    admin = AdminClient({"bootstrap.servers": servers})  # kept: its futures fail once it is gone
    for future in admin.incremental_alter_configs([resource]).values():
        future.result(30)


def values() -> list[bytes]:
    """The records' values. Written one batch each: Kafka hands out whole batches (a fetch's
    MaxRecords "can be exceeded for alignment of batch boundaries"), so 24 records in one batch
    all go to the first fetch; the simulator acquires record by record."""
    return [SPECIAL.get(i, b"r%d" % i) for i in range(RECORDS)]


def new_group() -> str:
    return f"share-{uuid.uuid4().hex[:8]}"


def run(make, produce, timeout_s: float = 60, during=None) -> dict:
    """``make(max_records)`` -> a worker: ``poll(seconds)`` -> ``[(offset, value, delivery count,
    record)]``, ``acknowledge(record, "accept" | "release" | "reject")``, ``commit()``, ``close()``.
    One worker takes records and stalls; three others work (see the module's docstring).
    ``during()``, if given, runs once the work is done, all four still members; its answer is
    ``["during"]``."""
    stalled = make(STALLED_TAKES)
    workers = [make(3) for _ in range(3)]
    try:
        produce()
        start = time.monotonic()
        taken: list = []
        while not taken:
            assert time.monotonic() - start < timeout_s, "the stalled worker got nothing"
            taken = [offset for offset, *_ in stalled.poll(0.2)]
        log: list = []  # (worker, offset, value, delivery count)

        def work_once() -> None:
            for i, c in enumerate(workers):
                got = c.poll(0.1)
                for offset, value, count, record in got:
                    log.append((i, offset, value, count))
                    c.acknowledge(record, decide(value, count))
                if got:
                    c.commit()

        def done() -> bool:
            return observed(log, taken)["accepted"] >= EXPECTED["accepted"] and any(
                v == POISON and n == DELIVERY_LIMIT for _, _, v, n in log
            )

        while not done():
            assert time.monotonic() - start < timeout_s, f"not within {timeout_s} s: {observed(log, taken)}"
            work_once()
        seen_during = during() if during is not None else None
        # a lock's time more: nothing else may come (archived records stay archived)
        settle = time.monotonic() + LOCK_MS / 1000
        while time.monotonic() < settle:
            work_once()
        out = observed(log, taken)
        out["seconds"] = round(time.monotonic() - start, 1)
        if during is not None:
            out["during"] = seen_during
        return out
    finally:
        for c in [stalled, *workers]:
            c.close()


def librdkafka(servers: str, topic: str, group: str, produce) -> dict:
    """confluent-kafka's ShareConsumer (``share.acknowledgement.mode=explicit``)."""
    from confluent_kafka import AcknowledgeType, ShareConsumer

    kinds = {"accept": AcknowledgeType.ACCEPT, "release": AcknowledgeType.RELEASE, "reject": AcknowledgeType.REJECT}

    class Worker:
        def __init__(self, max_records: int):
            self.c = ShareConsumer(
                {
                    "bootstrap.servers": servers,
                    "group.id": group,
                    "share.acknowledgement.mode": "explicit",
                    "max.poll.records": str(max_records),
                }
            )
            self.c.subscribe([topic])

        def poll(self, seconds):
            return [(m.offset(), m.value(), m.delivery_count(), m) for m in self.c.poll(seconds) if m.error() is None]

        def acknowledge(self, m, kind):
            self.c.acknowledge(m, kinds[kind])

        def commit(self):
            self.c.commit_sync()

        def close(self):
            self.c.close()

    return run(Worker, produce)


def librdkafka_produce(servers: str, topic: str) -> None:
    """:func:`values` with confluent-kafka's Producer, one batch each."""
    from confluent_kafka import Producer

    p = Producer({"bootstrap.servers": servers})
    for v in values():
        p.produce(topic, value=v)
        assert p.flush(30) == 0


def java_produce(driver, servers: str, topic: str) -> None:
    """:func:`values` with the Java client's KafkaProducer, one batch each."""
    from course_lib.java_client import JavaProducer

    p = JavaProducer(driver, {"bootstrap.servers": servers})
    try:
        for v in values():
            p.send(topic, value=v)
            p.flush(30)
    finally:
        p.close(10)


#: what ``Admin.describeShareGroups`` shows while the four workers are members: one partition
#: shared by all four
DESCRIBED = {"state": "Stable", "members": 4, "partitions": [[0]] * 4}


def java_describe(driver, servers: str, group: str) -> dict:
    """The Java admin client's ``describeShareGroups`` (ShareGroupDescribe), summed up as :data:`DESCRIBED`."""
    from course_lib.java_client import JavaAdmin

    admin = JavaAdmin(driver, {"bootstrap.servers": servers})
    try:
        d = admin.describe_share_groups([group])[group]
    finally:
        admin.close(10)
    assert isinstance(d, dict), d
    return {
        "state": d["state"],
        "members": len(d["members"]),
        "partitions": sorted(sorted(tp["partition"] for tp in m["assignment"]) for m in d["members"]),
    }


def java(driver, servers: str, topic: str, group: str, produce, during=None) -> dict:
    """The Java client's KafkaShareConsumer (``share.acknowledgement.mode=explicit``)."""
    from course_lib.java_client import JavaShareConsumer

    class Worker:
        def __init__(self, max_records: int):
            self.c = JavaShareConsumer(
                driver,
                {
                    "bootstrap.servers": servers,
                    "group.id": group,
                    "share.acknowledgement.mode": "explicit",
                    "max.poll.records": max_records,
                },
            )
            self.c.subscribe([topic])

        def poll(self, seconds):
            return [(r.offset, r.value, r.delivery_count, r) for r in self.c.poll(seconds)]

        def acknowledge(self, r, kind):
            self.c.acknowledge(r, kind.upper())

        def commit(self):
            errors = {tp: e for tp, e in self.c.commit_sync(10).items() if e}
            assert not errors, errors

        def close(self):
            self.c.close(10)

    return run(Worker, produce, during=during)


def decide(value: bytes, delivery_count: int) -> str:
    if value == POISON:
        return "release"
    if value == REJECTED:
        return "reject"
    if value == RELEASED_ONCE and delivery_count == 1:
        return "release"
    return "accept"


def observed(log: list, taken: list) -> dict:
    """The counts of :data:`EXPECTED` from ``(worker, offset, value, delivery count)`` rows."""
    accepted: dict = {}
    for _, offset, value, count in log:
        if decide(value, count) == "accept":
            accepted[offset] = accepted.get(offset, 0) + 1
    return {
        "accepted": len(accepted),
        "accepted_twice": sum(1 for n in accepted.values() if n > 1),
        "poison_deliveries": sum(1 for _, _, v, _ in log if v == POISON),
        "reject_deliveries": sum(1 for _, _, v, _ in log if v == REJECTED),
        "release_once_deliveries": sum(1 for _, _, v, _ in log if v == RELEASED_ONCE),
        "stalled_taken": len(taken),
        "stalled_redelivered_count": sorted(c for _, o, _, c in log if o in taken),
        "several_workers": len({w for w, *_ in log}) > 1,
    }


def wire_setup(wire) -> tuple[str, str]:
    """A one-partition topic and a new share group with :data:`GROUP_CONFIGS` on a WireCluster."""
    topic = wire.create_topic("work", partitions=1)
    group = new_group()
    wire.call(lambda: wire.cluster.alter_share_group_config(group, GROUP_CONFIGS))
    return topic, group


def librdkafka_run(servers: str, topic: str, group: str) -> dict:
    """:func:`librdkafka` with :func:`librdkafka_produce`."""
    return librdkafka(servers, topic, group, lambda: librdkafka_produce(servers, topic))


def java_run(driver, servers: str, topic: str, group: str) -> dict:
    """:func:`java` with :func:`java_produce`; ``["during"]`` is :func:`java_describe`'s summary."""
    return java(
        driver,
        servers,
        topic,
        group,
        lambda: java_produce(driver, servers, topic),
        during=lambda: java_describe(driver, servers, group),
    )
