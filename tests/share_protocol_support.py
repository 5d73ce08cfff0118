"""Share group experiments (KIP-932) shared by the simulator's, the wire cluster's and Kafka
4.3.1's tests: workers share one partition, acknowledge each record explicitly (ACCEPT, RELEASE,
REJECT), a stalled worker's lock times out, and a record released every time reaches the
delivery count limit and is archived. Every cluster must give :data:`EXPECTED`.

The share group is set up first (``share.auto.offset.reset=earliest``, a lock of
:data:`LOCK_MS`, a limit of :data:`DELIVERY_LIMIT`), then :data:`RECORDS` records are written in
producer batches of :data:`BATCH`. Kafka hands out whole record batches: the stalled worker asks
for :data:`STALLED_ASKS` records and gets the whole first batch, the poison record and a
release-once record with it - so the working consumers see each of them once less than the
delivery count limit would suggest (Kafka 4.3.1 measured it; ``SharePartition.acquire``).
"""

from __future__ import annotations

import time
import uuid

RECORDS = 24
#: records per producer batch: the stalled worker's fetch is rounded up to the first one
BATCH = 6
LOCK_MS = 2000
DELIVERY_LIMIT = 3
#: what a worker does with each value (every other value: ACCEPT)
POISON, REJECTED, RELEASED_ONCE = b"poison", b"reject", b"release-once"
#: offsets 4 and 5 are in the first batch but past the stalled worker's max.poll.records
SPECIAL = {4: RELEASED_ONCE, 5: POISON, 12: REJECTED, 14: RELEASED_ONCE}
#: the stalled worker's max.poll.records: it takes records and never acknowledges them
STALLED_ASKS = 4

EXPECTED = {
    "accepted": RECORDS - 2,  # all but the rejected and the poison record
    "accepted_twice": 0,
    # its first delivery went to the stalled worker, in the first batch; the workers get the
    # other two (the last one alone), then it is archived
    "poison_deliveries": DELIVERY_LIMIT - 1,
    "reject_deliveries": 1,  # archived at once
    # per release-once record: the one in the stalled batch is accepted on its first delivery to
    # a worker (its second), the other is released once, then accepted
    "release_once_deliveries": [1, 2],
    # the stalled worker held the whole first batch; after its lock ran out the workers got each
    # of its records with delivery count 2
    "stalled_held": BATCH,
    "several_workers": True,
    # what the stalled worker's one poll() returned: the whole batch, past its max.poll.records -
    # confluent-kafka 2.16.1 and the Java client 4.3.1 alike (share.acquire.mode batch_optimized:
    # a poll "may exceed max.poll.records to align with batch boundaries")
    "stalled_returned": BATCH,
}

GROUP_CONFIGS = {
    "share.auto.offset.reset": "earliest",
    "share.record.lock.duration.ms": LOCK_MS,
    "share.delivery.count.limit": DELIVERY_LIMIT,
    # a member gets its partitions at its next heartbeat (the first one once they are
    # initialized): every second, not every 5 s (the lab lowers Kafka's floor)
    "share.heartbeat.interval.ms": 1000,
}


def configure_with_admin(servers: str, group: str, configs: dict = GROUP_CONFIGS) -> None:
    """``configs`` as an operator sets them on Kafka (``kafka-configs --entity-type groups``:
    IncrementalAlterConfigs of a GROUP resource), with confluent-kafka's admin client."""
    from confluent_kafka.admin import AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource, ResourceType

    entries = [
        ConfigEntry(name, str(value), incremental_operation=AlterConfigOpType.SET) for name, value in configs.items()
    ]
    resource = ConfigResource(ResourceType.GROUP, group, incremental_configs=entries)
    admin = AdminClient({"bootstrap.servers": servers})  # kept: its futures fail once it is gone
    for future in admin.incremental_alter_configs([resource]).values():
        future.result(30)


def values() -> list[bytes]:
    """The records' values, :data:`BATCH` to a producer batch."""
    return [SPECIAL.get(i, b"r%d" % i) for i in range(RECORDS)]


def batches() -> list[list[bytes]]:
    v = values()
    return [v[i : i + BATCH] for i in range(0, RECORDS, BATCH)]


def new_group() -> str:
    return f"share-{uuid.uuid4().hex[:8]}"


def run(make, produce, timeout_s: float = 60, during=None, clock=time.monotonic) -> dict:
    """``make(max_records)`` -> a worker: ``poll(seconds)`` -> ``[(offset, value, delivery count,
    record)]``, ``acknowledge(record, "accept" | "release" | "reject")``, ``commit()``, ``close()``.
    One worker takes records and stalls; three others work (see the module's docstring).
    ``during()``, if given, runs once the work is done, all four still members; its answer is
    ``["during"]``. ``clock()``: seconds (the simulator's virtual clock for simulated workers)."""
    stalled = make(STALLED_ASKS)
    workers = [make(3) for _ in range(3)]
    try:
        produce()
        start = clock()
        taken: list = []
        while not taken:
            assert clock() - start < timeout_s, "the stalled worker got nothing"
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
            assert clock() - start < timeout_s, f"not within {timeout_s} s: {observed(log, taken)}"
            work_once()
        seen_during = during() if during is not None else None
        # a lock's time more: nothing else may come (archived records stay archived)
        settle = clock() + LOCK_MS / 1000
        while clock() < settle:
            work_once()
        out = observed(log, taken)
        out["seconds"] = round(clock() - start, 1)
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


#: long enough that only flush() sends a batch: each holds the records produced since the last
LINGER_MS = 5_000


def librdkafka_produce(servers: str, topic: str) -> None:
    """:func:`batches` with confluent-kafka's Producer: one flush (one producer batch) each."""
    from confluent_kafka import Producer

    p = Producer({"bootstrap.servers": servers, "linger.ms": LINGER_MS})
    for batch in batches():
        for v in batch:
            p.produce(topic, value=v)
        assert p.flush(30) == 0


def java_produce(driver, servers: str, topic: str) -> None:
    """:func:`batches` with the Java client's KafkaProducer: one flush (one producer batch) each."""
    from course_lib.java_client import JavaProducer

    p = JavaProducer(driver, {"bootstrap.servers": servers, "linger.ms": LINGER_MS})
    try:
        for batch in batches():
            for v in batch:
                p.send(topic, value=v)
            p.flush(30)
    finally:
        p.close(10)


def simulator_run(seed: int = 0) -> dict:
    """The experiment on the simulator itself, seeded, in virtual time: the simulated
    ShareConsumer (confluent-kafka's names), batches written by the simulated producer."""
    from course_lib.broker import Cluster
    from course_lib.clients import KafkaProducer
    from course_lib.clients.share_consumer import AcknowledgeType, ShareConsumer

    cluster = Cluster(3, seed=seed)
    topic, group = "work", new_group()
    cluster.create_topic(topic, partitions=1, min_insync_replicas=2)
    cluster.alter_share_group_config(group, GROUP_CONFIGS)
    kinds = {"accept": AcknowledgeType.ACCEPT, "release": AcknowledgeType.RELEASE, "reject": AcknowledgeType.REJECT}

    class Worker:
        def __init__(self, max_records: int):
            self.c = ShareConsumer(
                {
                    "bootstrap.servers": cluster,
                    "group.id": group,
                    "share.acknowledgement.mode": "explicit",
                    "max.poll.records": max_records,
                }
            )
            self.c.subscribe([topic])

        def poll(self, seconds):
            return [(m.offset(), m.value(), m.delivery_count(), m) for m in self.c.poll(seconds)]

        def acknowledge(self, m, kind):
            self.c.acknowledge(m, kinds[kind])

        def commit(self):
            assert set(self.c.commit_sync().values()) <= {None}

        def close(self):
            self.c.close()

    def produce() -> None:
        p = KafkaProducer(bootstrap_servers=cluster)
        for batch in batches():
            for v in batch:
                p.send(topic, v)
            p.flush()
        p.close()

    return run(Worker, produce, clock=lambda: cluster.now / 1000)


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


#: the throttling experiment: one batch of 8, a worker that RELEASEs all it gets, limit 5
THROTTLE_CONFIGS = {"share.auto.offset.reset": "earliest", "share.delivery.count.limit": 5}
THROTTLE_BATCH = 8
#: what each poll brings, measured on Kafka 4.3.1 (``SharePartition.acquireSubsetBatchRecords``):
#: the whole batch until its delivery count reaches max(2, ceil(5 / 2)) = 3, then half of it -
#: and the other half in the next fetch, since the first half's RELEASE, sent with that fetch, is
#: still being written - then each record alone for its last delivery; 8 x 5 deliveries, then
#: everything is archived
THROTTLE_SIZES = [8, 8, 8, 4, 4, 1, 1, 1, 1, 1, 1, 1, 1]


def librdkafka_throttle(servers: str, topic: str, group: str, timeout_s: float = 60) -> list[int]:
    """The sizes of a confluent-kafka ShareConsumer's polls (``max.poll.records`` 8) that RELEASEs
    every record, over one batch of :data:`THROTTLE_BATCH` records, until every delivery is
    spent; then one more poll, which must bring nothing (``[-1]`` if it did)."""
    from confluent_kafka import AcknowledgeType, Producer, ShareConsumer

    c = ShareConsumer(
        {
            "bootstrap.servers": servers,
            "group.id": group,
            "share.acknowledgement.mode": "explicit",
            "max.poll.records": str(THROTTLE_BATCH),
            # a fetch that finds only records whose RELEASE is still being written waits at
            # most this long (500 ms by default) before the next one asks again
            "fetch.wait.max.ms": 100,
        }
    )
    try:
        c.subscribe([topic])
        p = Producer({"bootstrap.servers": servers, "linger.ms": LINGER_MS})
        for i in range(THROTTLE_BATCH):
            p.produce(topic, value=b"t%d" % i)
        assert p.flush(30) == 0
        sizes: list = []
        start = time.monotonic()
        while sum(sizes) < THROTTLE_BATCH * THROTTLE_CONFIGS["share.delivery.count.limit"]:
            assert time.monotonic() - start < timeout_s, f"not within {timeout_s} s: {sizes}"
            got = [m for m in c.poll(1) if m.error() is None]
            if got:
                sizes.append(len(got))
            for m in got:
                c.acknowledge(m, AcknowledgeType.RELEASE)
        c.commit_sync()
        if [m for m in c.poll(1) if m.error() is None]:
            sizes.append(-1)
        return sizes
    finally:
        c.close()


#: the member epochs a ShareGroupHeartbeat answers, measured on Kafka 4.3.1
#: (:func:`heartbeat_epochs`): a new group starts at epoch 1 (as consumer groups since
#: KAFKA-20268), so its first member joins at 2 - with nothing, the partition's share state not
#: yet initialized - and gets the partition at 3, once it is; every join and leave bumps the epoch
EPOCHS = {
    "first_joins": (2, []),
    "first_assigned": (3, [0]),
    "second_assigned": (4, [0]),
    "first_after_second": 4,
    "first_leaves": -1,
    "second_after_leave": 5,
    "first_rejoins_assigned": (6, [0]),
}


def heartbeat_epochs(servers: str, topic: str, group: str, timeout_s: float = 30) -> dict:
    """Two members of ``group``, new, on ``topic`` (one partition), by raw ShareGroupHeartbeat v1
    requests to the group's coordinator: A joins, B joins, A leaves and rejoins; then both leave.
    The group's partition is then initialized: members joining later get it at once. Each "assigned"
    step heartbeats until the member has the partition (Kafka assigns it once initialized, and
    4.3.1 batches assignments, ``group.share.assignment.interval.ms``: a member may first get the
    previous epoch and nothing, and B's epoch may move one heartbeat after A left)."""
    from kafka.protocol.metadata import MetadataRequest, MetadataResponse

    from course_lib.wire.apis.schemas import ShareGroupHeartbeatRequest, ShareGroupHeartbeatResponse
    from tests.wire.client_probes import _coordinator

    members = {name: uuid.uuid4().hex[:22] for name in "AB"}
    epochs = dict.fromkeys(members, 0)
    assigned: dict = dict.fromkeys(members, [])
    raw = [_coordinator(servers, group, 0)]

    def ask(request, response):
        """``request`` to the coordinator until it is loaded and still the coordinator."""
        deadline = time.monotonic() + timeout_s
        while True:
            answer = response.decode(raw[0].request(request, 1), version=1, header=True)
            errors = {getattr(answer, "error_code", 0)} | {t.error_code for t in getattr(answer, "topics", ())}
            if not errors & {3, 5, 14, 15, 16} or time.monotonic() > deadline:
                return answer
            if 16 in errors:  # NOT_COORDINATOR: a new cluster's coordinator moved
                raw[0].close()
                raw[0] = _coordinator(servers, group, 0)
            time.sleep(0.1)

    def heartbeat(name: str, epoch: int | None = None) -> int:
        joining = epoch == 0 or (epoch is None and epochs[name] == 0)
        req = ShareGroupHeartbeatRequest(
            version=1,
            group_id=group,
            member_id=members[name],
            member_epoch=epochs[name] if epoch is None else epoch,
            rack_id=None,
            subscribed_topic_names=[topic] if joining else None,
        )
        answer = ask(req, ShareGroupHeartbeatResponse)
        assert answer.error_code == 0, (name, answer)
        epochs[name] = max(answer.member_epoch, 0)
        if answer.assignment is not None:  # None: unchanged
            assigned[name] = sorted(p for t in answer.assignment.topic_partitions for p in t.partitions)
        return answer.member_epoch

    def until(name: str, done) -> None:
        deadline = time.monotonic() + timeout_s
        while not done():
            assert time.monotonic() < deadline, f"{name}: not within {timeout_s} s: {epochs} {assigned}"
            time.sleep(0.1)  # the coordinator's initialization (or its assignment batch) runs meanwhile
            heartbeat(name)

    def until_assigned(name: str) -> tuple:
        until(name, lambda: bool(assigned[name]))
        return (epochs[name], assigned[name])

    try:
        # a topic the coordinator does not know yet would cost the first member an epoch more
        ask(MetadataRequest(topics=[topic]), MetadataResponse)
        out: dict = {"first_joins": (heartbeat("A"), list(assigned["A"]))}
        out["first_assigned"] = until_assigned("A")
        heartbeat("B")
        out["second_assigned"] = until_assigned("B")
        out["first_after_second"] = heartbeat("A")
        out["first_leaves"] = heartbeat("A", -1)
        before = epochs["B"]
        until("B", lambda: epochs["B"] != before)  # at once, or after Kafka's assignment batch
        out["second_after_leave"] = epochs["B"]
        assigned["A"] = []
        heartbeat("A", 0)
        out["first_rejoins_assigned"] = until_assigned("A")
        heartbeat("A", -1)
        heartbeat("B", -1)
        return out
    finally:
        raw[0].close()


def decide(value: bytes, delivery_count: int) -> str:
    if value == POISON:
        return "release"
    if value == REJECTED:
        return "reject"
    if value == RELEASED_ONCE and delivery_count == 1:
        return "release"
    return "accept"


def observed(log: list, taken: list) -> dict:
    """The counts of :data:`EXPECTED` from the workers' ``(worker, offset, value, delivery
    count)`` rows and the offsets the stalled worker's poll returned."""
    accepted: dict = {}
    first: dict = {}  # offset -> delivery count of its first delivery to a worker
    for _, offset, value, count in log:
        first.setdefault(offset, count)
        if decide(value, count) == "accept":
            accepted[offset] = accepted.get(offset, 0) + 1
    return {
        "accepted": len(accepted),
        "accepted_twice": sum(1 for n in accepted.values() if n > 1),
        "poison_deliveries": sum(1 for _, _, v, _ in log if v == POISON),
        "reject_deliveries": sum(1 for _, _, v, _ in log if v == REJECTED),
        "release_once_deliveries": [
            sum(1 for _, o, _, _ in log if o == offset) for offset, v in sorted(SPECIAL.items()) if v == RELEASED_ONCE
        ],
        "stalled_held": sum(1 for count in first.values() if count == 2),
        "several_workers": len({w for w, *_ in log}) > 1,
        "stalled_returned": len(taken),
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
