"""The share group experiments moved to course_lib/experiments/share_group_experiments.py (notebook 09's
protocol matrix runs them too); the tests keep importing them by this name. The member-epoch probe
stays here: it speaks raw requests through tests/wire/client_probes."""

import time
import uuid

from course_lib.experiments.share_group_experiments import *  # noqa: F403


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
    from tests.wire.client_probes import _coordinator, ask_coordinator

    members = {name: uuid.uuid4().hex[:22] for name in "AB"}
    epochs = dict.fromkeys(members, 0)
    assigned: dict = dict.fromkeys(members, [])
    raw = [_coordinator(servers, group, 0)]

    def ask(request, response):
        return ask_coordinator(raw, servers, group, 0, request, response, timeout_s=timeout_s)

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


#: (error code, error message) of refused ShareGroupHeartbeats, measured on Kafka 4.4.0: no message
#: for what KafkaApis refuses, the coordinator's for the rest
HEARTBEAT_ERRORS = {
    "empty member id": (42, None),
    "join without topics": (42, "SubscribedTopicNames must be set in first request."),
    "unknown member": (25, "Member {member} is not a member of group {group}."),
}


def heartbeat_errors(servers: str, topic: str, group: str, timeout_s: float = 30) -> dict:
    """:data:`HEARTBEAT_ERRORS` as ``servers`` answer them: raw ShareGroupHeartbeat v1 requests,
    the unknown member's after a member joined (the group exists); its id and the group's name
    in the message as ``{member}`` and ``{group}``."""
    from course_lib.wire.apis.schemas import ShareGroupHeartbeatRequest, ShareGroupHeartbeatResponse
    from tests.wire.client_probes import _coordinator, ask_coordinator

    raw = [_coordinator(servers, group, 0)]

    def heartbeat(member: str, epoch: int, topics) -> tuple:
        req = ShareGroupHeartbeatRequest(
            version=1, group_id=group, member_id=member, member_epoch=epoch, rack_id=None, subscribed_topic_names=topics
        )
        answer = ask_coordinator(raw, servers, group, 0, req, ShareGroupHeartbeatResponse, timeout_s=timeout_s)
        message = answer.error_message
        if message is not None and member:
            message = message.replace(member, "{member}").replace(group, "{group}")
        return answer.error_code, message

    try:
        out = {"empty member id": heartbeat("", 0, [topic])}
        out["join without topics"] = heartbeat(uuid.uuid4().hex[:22], 0, None)
        joined = uuid.uuid4().hex[:22]
        assert heartbeat(joined, 0, [topic]) == (0, None)
        out["unknown member"] = heartbeat(uuid.uuid4().hex[:22], 5, None)
        heartbeat(joined, -1, None)
        return out
    finally:
        raw[0].close()


#: share group configs as ``kafka-configs --entity-type groups --alter`` sets them, one per case
GROUP_CONFIG_CASES = {
    "a valid delivery limit": {"share.delivery.count.limit": "4"},
    "a delivery limit of 1": {"share.delivery.count.limit": "1"},
    "a delivery limit of 11": {"share.delivery.count.limit": "11"},
    "a lock below the broker's floor": {"share.record.lock.duration.ms": "500"},
    "a valid lock": {"share.record.lock.duration.ms": "20000"},
    "an unknown name": {"share.no.such.config": "1"},
    "a limit that is no number": {"share.delivery.count.limit": "many"},
    "reset: latest": {"share.auto.offset.reset": "latest"},
    "reset: by_duration": {"share.auto.offset.reset": "by_duration:PT1H"},
    "reset: middle": {"share.auto.offset.reset": "middle"},
    "isolation: read_committed": {"share.isolation.level": "read_committed"},
}


def group_config_outcomes(servers: str) -> dict:
    """Each of :data:`GROUP_CONFIG_CASES` on a new group with confluent-kafka's admin client
    (IncrementalAlterConfigs of a GROUP resource): "ok" or the error's name."""
    from confluent_kafka import KafkaException

    outcomes = {}
    for case, configs in GROUP_CONFIG_CASES.items():
        try:
            configure_with_admin(servers, f"configs-{uuid.uuid4().hex[:8]}", configs)  # noqa: F405
            outcomes[case] = "ok"
        except KafkaException as e:
            outcomes[case] = e.args[0].name()
    return outcomes


#: what a share group of each ``share.isolation.level`` gets in :func:`isolation_probe` (measured
#: on Kafka 4.3.1): read_uncommitted everything, the aborted transaction too, as it comes;
#: read_committed nothing aborted, and nothing from the open transaction on until it commits
ISOLATION_EXPECTED = {
    "read_uncommitted": {"while_open": ["a1", "a2", "c1", "c2", "p1", "o1", "p2"], "after_commit": []},
    "read_committed": {"while_open": ["c1", "c2", "p1"], "after_commit": ["o1", "p2"]},
}


def isolation_probe(servers: str, topic: str, quiet_s: float = 3, timeout_s: float = 30) -> dict:
    """What a share group of each ``share.isolation.level`` gets from ``topic`` (one partition,
    new), a group and a confluent-kafka ShareConsumer each: a transaction aborted (a1, a2), one
    committed (c1, c2), a plain p1, then an open transaction (o1) and a plain p2 after it:
    ``while_open`` (until ``quiet_s`` pass with nothing more), then ``after_commit`` once o1's
    transaction commits; each a list of values (every delivery count 1, or the probe fails)."""
    from confluent_kafka import AcknowledgeType, Producer, ShareConsumer

    consumers = {}
    for level in ISOLATION_EXPECTED:
        group = f"isolation-{uuid.uuid4().hex[:8]}"
        configure_with_admin(servers, group, {"share.auto.offset.reset": "earliest", "share.isolation.level": level})  # noqa: F405
        consumers[level] = ShareConsumer(
            {"bootstrap.servers": servers, "group.id": group, "share.acknowledgement.mode": "explicit"}
        )
    plain = Producer({"bootstrap.servers": servers})
    txn = Producer({"bootstrap.servers": servers, "transactional.id": f"iso-{uuid.uuid4().hex[:8]}"})
    txn.init_transactions(30)
    for values, commit in ((["a1", "a2"], False), (["c1", "c2"], True)):
        txn.begin_transaction()
        for v in values:
            txn.produce(topic, value=v.encode(), partition=0)
        txn.flush(30)  # in the log before the abort (an abort purges what is still queued)
        txn.commit_transaction(30) if commit else txn.abort_transaction(30)
    plain.produce(topic, value=b"p1", partition=0)
    plain.flush(30)
    txn.begin_transaction()
    txn.produce(topic, value=b"o1", partition=0)
    txn.flush(30)
    plain.produce(topic, value=b"p2", partition=0)
    plain.flush(30)

    def drain(joined: bool) -> dict:
        """What comes until ``quiet_s`` pass with nothing more (once each consumer got a first
        record, unless ``joined``: a member gets the partition at a heartbeat, 5 s apart)."""
        got: dict = {level: [] for level in consumers}
        deadline, quiet = time.monotonic() + timeout_s, time.monotonic() + quiet_s
        while time.monotonic() < deadline and (time.monotonic() < quiet or not (joined or all(got.values()))):
            for level, consumer in consumers.items():
                batch = [m for m in consumer.poll(0.1) if m.error() is None]
                for m in batch:
                    assert m.delivery_count() == 1, (level, m.value(), m.delivery_count())
                    got[level].append(m.value().decode())
                    consumer.acknowledge(m, AcknowledgeType.ACCEPT)
                if batch:
                    consumer.commit_sync()
                    quiet = time.monotonic() + quiet_s
        return got

    try:
        for consumer in consumers.values():
            consumer.subscribe([topic])
        while_open = drain(joined=False)
        txn.commit_transaction(30)
        after_commit = drain(joined=True)
        return {level: {"while_open": while_open[level], "after_commit": after_commit[level]} for level in consumers}
    finally:
        for consumer in consumers.values():
            consumer.close()


#: what :func:`group_config_outcomes` gives on Kafka 4.3.1 (the lab's floor for the lock: 1 s)
GROUP_CONFIG_OUTCOMES = {
    "a valid delivery limit": "ok",
    "a delivery limit of 1": "INVALID_CONFIG",
    "a delivery limit of 11": "INVALID_CONFIG",
    "a lock below the broker's floor": "INVALID_CONFIG",
    "a valid lock": "ok",
    "an unknown name": "INVALID_CONFIG",
    "a limit that is no number": "INVALID_CONFIG",
    "reset: latest": "ok",
    "reset: by_duration": "ok",
    "reset: middle": "INVALID_CONFIG",
    "isolation: read_committed": "ok",
}


def by_duration_probe(servers: str, topic: str, timeout_s: float = 30) -> list[str]:
    """A new share group with ``share.auto.offset.reset`` = ``by_duration:PT1H`` on ``topic`` (one
    partition) holding two records stamped two hours ago and two ten minutes ago: what it gets."""
    from confluent_kafka import Producer, ShareConsumer

    now_ms = int(time.time() * 1000)
    producer = Producer({"bootstrap.servers": servers})
    for value, ago_ms in (("old-1", 7_200_000), ("old-2", 7_200_000), ("new-1", 600_000), ("new-2", 600_000)):
        producer.produce(topic, value=value.encode(), partition=0, timestamp=now_ms - ago_ms)
    producer.flush(30)
    group = f"by-duration-{uuid.uuid4().hex[:8]}"
    configure_with_admin(servers, group, {"share.auto.offset.reset": "by_duration:PT1H"})  # noqa: F405
    consumer = ShareConsumer({"bootstrap.servers": servers, "group.id": group})
    got: list = []
    try:
        consumer.subscribe([topic])
        deadline = time.monotonic() + timeout_s
        while len(got) < 2 and time.monotonic() < deadline:
            got += [m.value().decode() for m in consumer.poll(0.2) if m.error() is None]
        return got
    finally:
        consumer.close()


def default_reset_probe(servers: str, topic: str, timeout_s: float = 30) -> dict:
    """A new share group with no configs (Kafka's default ``share.auto.offset.reset``) on
    ``topic`` (one partition) holding two records: its member polls while records are written one
    at a time until one comes. ``{"old": what it got of the two, "new": whether it got a later
    one}`` - lesson 05c: the default is *latest*, what was written before is skipped."""
    from confluent_kafka import Producer, ShareConsumer

    producer = Producer({"bootstrap.servers": servers})
    for value in ("old-1", "old-2"):
        producer.produce(topic, value=value.encode(), partition=0)
    producer.flush(30)
    consumer = ShareConsumer({"bootstrap.servers": servers, "group.id": f"default-reset-{uuid.uuid4().hex[:8]}"})
    got: list = []
    try:
        consumer.subscribe([topic])
        deadline = time.monotonic() + timeout_s
        written = 0
        # the group starts where the partition ends when its share partition is initialized (at
        # the member's first fetch): records written until then are skipped too, so write on
        while not any(v.startswith("new-") for v in got) and time.monotonic() < deadline:
            written += 1
            producer.produce(topic, value=f"new-{written}".encode(), partition=0)
            producer.flush(30)
            got += [m.value().decode() for m in consumer.poll(0.5) if m.error() is None]
        return {"old": [v for v in got if v.startswith("old-")], "new": any(v.startswith("new-") for v in got)}
    finally:
        consumer.close()


#: :func:`default_reset_probe`: nothing of what was there before, later records delivered
DEFAULT_RESET_EXPECTED = {"old": [], "new": True}


#: :func:`record_locks_probe`: the records a share group may have in flight (the group config's
#: floor) and what the fast worker got, measured on Kafka 4.3.1: offsets 1 to 99, the span from
#: the stuck offset 0 capped at 100, not 149 (all but the stuck one), as a count of acquired would
RECORD_LOCKS = 100
RECORD_LOCKS_EXPECTED = {"held": [0], "got": 99, "first": 1, "last": 99}


def record_locks_probe(servers: str, topic: str, records: int = 150, quiet_s: float = 3, timeout_s: float = 30) -> dict:
    """``share.partition.max.record.locks`` = :data:`RECORD_LOCKS` on a one-partition ``topic``
    of ``records`` records, one batch each: a worker takes offset 0 and never acknowledges it (a
    60 s lock); a second worker ACCEPTs whatever it gets until ``quiet_s`` pass with nothing."""
    from confluent_kafka import AcknowledgeType, Producer, ShareConsumer

    group = f"locks-{uuid.uuid4().hex[:8]}"
    configs = {
        "share.auto.offset.reset": "earliest",
        "share.partition.max.record.locks": RECORD_LOCKS,
        "share.record.lock.duration.ms": 60_000,
        "share.heartbeat.interval.ms": 1000,
    }
    configure_with_admin(servers, group, configs)  # noqa: F405
    producer = Producer({"bootstrap.servers": servers, "linger.ms": 0})
    for i in range(records):
        producer.produce(topic, value=f"r{i}".encode(), partition=0)
        producer.flush(30)  # one batch each: Kafka acquires whole batches

    def worker(max_records: int):
        c = ShareConsumer(
            {
                "bootstrap.servers": servers,
                "group.id": group,
                "share.acknowledgement.mode": "explicit",
                "max.poll.records": str(max_records),
            }
        )
        c.subscribe([topic])
        return c

    stuck, fast = worker(1), worker(50)
    try:
        held: list = []
        deadline = time.monotonic() + timeout_s
        while not held and time.monotonic() < deadline:
            held = [m.offset() for m in stuck.poll(0.2) if m.error() is None]
        got: list = []
        quiet = None
        while time.monotonic() < deadline and (quiet is None or time.monotonic() < quiet):
            batch = [m for m in fast.poll(0.2) if m.error() is None]
            for m in batch:
                got.append(m.offset())
                fast.acknowledge(m, AcknowledgeType.ACCEPT)
            if batch:
                fast.commit_sync()
                quiet = time.monotonic() + quiet_s
        return {"held": held, "got": len(got), "first": min(got, default=None), "last": max(got, default=None)}
    finally:
        stuck.close()
        fast.close()


#: what :func:`share_offsets_probe` gives on Kafka 4.3.1: the persisted start offset trails the
#: leader's (3 while offset 3 is accepted and 4 held: the write that moved past 3 was the one
#: that accepted it); the lag counts what is neither acknowledged nor archived from it on (10 - 3
#: - 1, then 10 - 4 - 5); a group that does not exist: no partitions, no error
SHARE_OFFSETS_EXPECTED = {
    "held": 4,
    "holding": {0: {"startOffset": 3, "leaderEpoch": "set", "lag": 6}},
    "rest_accepted": {0: {"startOffset": 4, "leaderEpoch": "set", "lag": 1}},
    "unknown": {},
}


def share_offsets_probe(driver, servers: str, topic: str, timeout_s: float = 30) -> dict:
    """What ``Admin.listShareGroupOffsets`` (Java 4.3.1: DescribeShareGroupOffsets) answers for a
    share group on ``topic`` (one partition, 10 records, one batch each): ``holding``: worker a
    accepted offsets 0-3 and holds 4; ``rest_accepted``: worker b then accepted 5-9; ``unknown``:
    for a group that does not exist. Each ``{"startOffset", "leaderEpoch" (None or a number: kept
    as "set"), "lag"}``, or the error's class name."""
    from confluent_kafka import AcknowledgeType, Producer, ShareConsumer

    from course_lib.java_client import JavaAdmin

    group = f"offsets-{uuid.uuid4().hex[:8]}"
    configure_with_admin(servers, group, {"share.auto.offset.reset": "earliest", "share.heartbeat.interval.ms": 1000})  # noqa: F405
    producer = Producer({"bootstrap.servers": servers, "linger.ms": 0})
    for i in range(10):
        producer.produce(topic, value=f"r{i}".encode(), partition=0)
        producer.flush(30)

    def worker():
        c = ShareConsumer(
            {
                "bootstrap.servers": servers,
                "group.id": group,
                "share.acknowledgement.mode": "explicit",
                "max.poll.records": "1",
            }
        )
        c.subscribe([topic])
        return c

    def next_record(c):
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            got = [m for m in c.poll(0.2) if m.error() is None]
            if got:
                return got[0]
        raise AssertionError(f"no record within {timeout_s} s")

    admin = JavaAdmin(driver, {"bootstrap.servers": servers})

    def offsets(g: str):
        got = admin.list_share_group_offsets([g])[g]
        if not isinstance(got, dict):
            return got.java_class.rsplit(".", 1)[-1]
        return {p: {**o, "leaderEpoch": None if o["leaderEpoch"] is None else "set"} for (_, p), o in got.items()}

    a, b = worker(), worker()
    try:
        for _ in range(4):
            m = next_record(a)
            a.acknowledge(m, AcknowledgeType.ACCEPT)
            a.commit_sync()
        held = next_record(a)
        holding = offsets(group)
        accepted = 0
        while accepted < 5:
            m = next_record(b)
            b.acknowledge(m, AcknowledgeType.ACCEPT)
            b.commit_sync()
            accepted += 1
        rest = offsets(group)
        return {"held": held.offset(), "holding": holding, "rest_accepted": rest, "unknown": offsets(f"{group}-none")}
    finally:
        a.close()
        b.close()
        admin.close()
