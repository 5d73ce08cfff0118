"""Share-group experiments (KIP-932) on the real lab cluster, with confluent-kafka's
``ShareConsumer`` (2.16.1, preview; :func:`worker_crash` also with the Java client's
``KafkaShareConsumer``) - the real-Kafka half of notebooks/05c_share_groups, and the tests' probes
on the wire cluster. Each returns the numbers the simulator's scenario of the same name has
(:mod:`course_lib.experiments.share_scenarios`), so the lesson prints the two side by side.

- :func:`worker_crash` - a worker takes records, processes some of them and dies (SIGKILL of its
  own process, as a crash does: its connections close; or SIGSTOP, ``host_lost``: they stay
  open, as for a machine that is gone). When does the other worker get them, and how many are
  processed twice? (Kafka 4.3.1: at once after a SIGKILL - the closed connection ends the share
  session and its records are released - after the lock otherwise, as on the simulator and the
  wire cluster; tests/real/test_share_groups_real.py, tests/wire/test_share_groups_wire.py.)
- :func:`poison_message` - a handler always fails on one record and RELEASEs it: how many
  deliveries before the broker archives it? (With either client; :func:`poison_compared` puts it
  beside the simulator's, as the lesson does.)

Both need the local lab cluster (:func:`course_lib.real.lab.start_lab`) or a wire cluster: the
lab lets a group's ``share.record.lock.duration.ms`` go down to 1 s (Kafka's floor is 15 s), and
the crash kills a process of this machine.

Taught in notebooks/05c_share_groups.
"""

from __future__ import annotations

import time
import uuid
from typing import TypedDict, cast

# what dead_letter_queue does with each record, and the records' timestamps: one definition for
# this probe and the simulator's (course_lib.experiments.share_dead_letters, whose experiment is this one)
from ..share_dead_letters import DLQ_LOCK_MS, DLQ_QUIET_MS, DLQ_REJECTED, DLQ_RELEASED, DLQ_SOURCE_TIMESTAMP_MS

#: the records of every experiment are ``job-<i>``, one producer batch each (Kafka hands a share
#: consumer whole batches; the simulator's scenarios write one record per batch too)
TOPIC_STEM = "share-jobs"


def _setup(kafka, group_configs: dict, partitions: int = 1, topic_config: dict | None = None) -> tuple[str, str]:
    """A topic (one partition unless told, ``topic_config`` its configs) and a new share group
    with ``group_configs``."""
    from confluent_kafka.admin import AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource, ResourceType

    topic = kafka.create_topic(f"{TOPIC_STEM}-{uuid.uuid4().hex[:8]}", partitions=partitions, config=topic_config)
    group = f"share-lab-{uuid.uuid4().hex[:8]}"
    # members heartbeat every second: one joining gets its partition within a second, not five
    # (the lab lowers the floor: group.share.min.heartbeat.interval.ms)
    configs = {"share.auto.offset.reset": "earliest", "share.heartbeat.interval.ms": 1000, **group_configs}
    entries = [ConfigEntry(k, str(v), incremental_operation=AlterConfigOpType.SET) for k, v in configs.items()]
    admin = AdminClient({"bootstrap.servers": kafka.bootstrap_servers})
    resource = ConfigResource(ResourceType.GROUP, group, incremental_configs=entries)
    for future in admin.incremental_alter_configs([resource]).values():
        future.result(30)
    return topic, group


def _produce(kafka, topic: str, values: list[str]) -> None:
    """Each value in a producer batch of its own."""
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": kafka.bootstrap_servers})
    for value in values:
        producer.produce(topic, value=value.encode())
        if producer.flush(30):
            raise RuntimeError(f"the lab cluster did not take {value} within 30 s")


def _consumer(servers: str, group: str, max_poll_records: int) -> dict:
    return {
        "bootstrap.servers": servers,
        "group.id": group,
        "share.acknowledgement.mode": "explicit",
        "max.poll.records": str(max_poll_records),
    }


def _first_records(worker, failure: str, timeout_s: float) -> list:
    """``worker`` polls until it gets records; ``failure`` (and the bound) if none come within it."""
    deadline = time.monotonic() + timeout_s
    while not (got := worker.poll(0.2)):
        if time.monotonic() > deadline:
            raise RuntimeError(f"{failure} within {timeout_s} s")
    return got


def worker_crash(
    kafka,
    records: int = 20,
    max_poll_records: int = 5,
    processed_before_crash: int = 3,
    handler_ms: float = 100,
    lock_ms: float = 5_000,
    host_lost: bool = False,
    timeout_s: float = 90,
    client: str = "confluent-kafka",
) -> dict:
    """The simulator's ``worker_crash`` on Kafka: the numbers it measures (``held_at_crash``,
    ``redelivered``, ``processed_twice``, ``redelivery_after_crash_ms``), ``delivery_counts``:
    what the other worker saw as the held records' delivery counts, ``deliveries_added``: by how
    much those exceed the crashed worker's (each distinct value once), and ``seconds``.
    ``host_lost``: the worker's process is stopped (SIGSTOP), not killed: its connections stay
    open, as they do for the brokers when a machine is gone (until long after the lock).
    ``client``: both workers' share consumers, the crashing one in a process of its own
    (confluent-kafka's in a Python process, Java's in a JVM: the share contract's
    ``own_process``)."""
    from ..share_group_experiments import worker

    started = time.monotonic()
    topic, group = _setup(kafka, {"share.record.lock.duration.ms": lock_ms})
    servers = kafka.bootstrap_servers
    # The other worker joins first and polls until it has a warm-up record: then it is a member
    # with the partition, and what it sees after the crash depends on the locks alone (a member
    # joining later waits for its partition, up to a heartbeat interval). It then stops polling
    # until the crash, as in the simulator.
    survivor = worker(client, servers, topic, group, max_poll_records)
    doomed = None
    try:
        _produce(kafka, topic, ["warm-up"])
        for *_, m in _first_records(survivor, "the worker got no warm-up record", timeout_s):
            survivor.acknowledge(m, "accept")
        survivor.commit()
        _produce(kafka, topic, [f"job-{i}" for i in range(records)])
        doomed = worker(client, servers, topic, group, max_poll_records, own_process=True)
        got = _first_records(doomed, "the first worker got no record", timeout_s)
        held = {offset: count for offset, _, count, _ in got}
        done_first = list(held)[:processed_before_crash]
        time.sleep(len(done_first) * handler_ms / 1000)  # it processes these, then dies mid-record
        doomed.crash(host_lost)  # what it finished is processed, nothing acknowledged
        crashed = time.monotonic()
        accepted: set = set()
        again: dict = {}  # held offset -> (seconds after the crash, delivery count)
        deadline = crashed + timeout_s + lock_ms / 1000
        while len(accepted) < records:
            if time.monotonic() > deadline:
                raise RuntimeError(f"only {len(accepted)} of {records} jobs accepted within {timeout_s} s")
            got = survivor.poll(0.1)
            polled = time.monotonic()
            for offset, _, count, m in got:
                # A held record that comes with a delivery count no higher than the crashed
                # worker's is a copy this worker acquired before it: Java's share consumer may
                # have fetched ahead after the warm-up (a ShareFetch parked on the broker takes
                # the jobs as they are written), and the copy's lock ran out in its buffer before
                # the crashed worker polled. Not a redelivery, and its acknowledgement fails.
                stale = offset in held and count <= held[offset]
                if offset in held and not stale:
                    again.setdefault(offset, (polled - crashed, count))
                time.sleep(handler_ms / 1000)
                survivor.acknowledge(m, "accept")
                if not stale:
                    accepted.add(offset)
            if got:
                # a record whose lock ran out in the client's buffer comes back (and is accepted
                # again): the counts compared are of the crashed worker's records only
                survivor.commit(expired_ok=True)
        return {
            "held_at_crash": len(held),
            "redelivered": len(again),
            "processed_twice": len(set(done_first) & set(again)),
            "redelivery_after_crash_ms": round(1000 * min(s for s, _ in again.values())) if again else None,
            "delivery_counts": sorted(c for _, c in again.values()),
            # each redelivery counted once: a count one more than the crashed worker's
            "deliveries_added": sorted({c - held[o] for o, (_, c) in again.items()}),
            "seconds": round(time.monotonic() - started, 1),
        }
    finally:
        if doomed is not None:
            doomed.close()
        survivor.close()


class Crash(TypedDict):
    """One of :data:`CRASHES`: keywords of :func:`worker_crash` and of the simulator's scenario."""

    host_lost: bool
    lock_ms: int


class CrashSettings(TypedDict):
    """:data:`CRASH_SETTINGS`: keywords of :func:`worker_crash` and of the simulator's scenario."""

    records: int
    max_poll_records: int
    processed_before_crash: int
    handler_ms: float


#: the two crashes every cluster is checked on: the process killed (a lock long enough to tell "at
#: once" from the lock) and the machine gone (a short lock: a quick test)
CRASHES: dict[str, Crash] = {
    "process killed": {"host_lost": False, "lock_ms": 10_000},
    "machine gone": {"host_lost": True, "lock_ms": 5_000},
}
#: what stays the same in both: 10 jobs, 5 per poll, 3 finished before the crash, 50 ms each
CRASH_SETTINGS: CrashSettings = {"records": 10, "max_poll_records": 5, "processed_before_crash": 3, "handler_ms": 50}
#: what the two must agree on (the wait as the lesson's answer: "at once", "after about the lock duration")
CRASH_COUNTS = ("held_at_crash", "redelivered", "processed_twice")


def crashes_compared(cluster, client: str = "confluent-kafka") -> dict:
    """Each of :data:`CRASHES` on ``cluster`` (Kafka's, or a started WireCluster) and on the
    simulator (seed 1): ``{crash: {"simulator": numbers, "cluster": numbers, "wait": (the
    simulator's answer, the cluster's)}}``, with ``client``'s share consumers."""
    from ..share_waits import crash_wait_answer, real_crash_answer
    from ..share_scenarios import run_share_scenario

    compared = {}
    for name, crash in CRASHES.items():
        sim = run_share_scenario("worker_crash", seed=1, **CRASH_SETTINGS, **crash)
        measured = worker_crash(cluster, **CRASH_SETTINGS, **crash, client=client)
        compared[name] = {
            "simulator": sim.numbers,
            "cluster": measured,
            "wait": (crash_wait_answer(sim), real_crash_answer(measured, sim)),
        }
    return compared


def crash_disagreements(compared: dict) -> list[str]:
    """What :func:`crashes_compared` found differing: [] when the cluster and the simulator agree
    on the counts and the wait, and each release counted a delivery (delivery count 2)."""
    wrong = []
    for name, c in compared.items():
        sim, measured = c["simulator"], c["cluster"]
        if any(sim[k] != measured[k] for k in CRASH_COUNTS):
            wrong.append(
                f"{name}: counts {[measured[k] for k in CRASH_COUNTS]}, simulator {[sim[k] for k in CRASH_COUNTS]}"
            )
        if c["wait"][0] != c["wait"][1]:
            wrong.append(f"{name}: the wait {c['wait'][1]!r}, simulator {c['wait'][0]!r} ({measured}, {sim})")
        if measured["deliveries_added"] not in ([1], []):
            wrong.append(
                f"{name}: delivery counts {measured['delivery_counts']}, each should be one more than the crashed "
                f"worker's (added: {measured['deliveries_added']})"
            )
    return wrong


def poison_message(
    kafka,
    records: int = 10,
    poison: int = 3,
    delivery_count_limit: int = 5,
    workers: int = 2,
    timeout_s: float = 90,
    client: str = "confluent-kafka",
) -> dict:
    """The simulator's ``poison_message`` on Kafka: ``workers`` (``client``'s share consumers)
    RELEASE ``job-<poison>`` each time and ACCEPT the others. ``poison_deliveries``,
    ``poison_delivery_counts``, ``archived`` (1 when, a lock duration after its last delivery,
    nothing brought it back), ``others_redelivered`` (the other records delivered more than once:
    the lesson says they are processed once each), and ``seconds``."""
    from ..share_group_experiments import worker

    started = time.monotonic()
    # every record is acknowledged at once; the lock bounds the check that nothing comes back, and
    # is long enough that no record's lock runs out in a client's buffer on a loaded machine
    lock_ms = 4_000
    topic, group = _setup(
        kafka, {"share.delivery.count.limit": delivery_count_limit, "share.record.lock.duration.ms": lock_ms}
    )
    _produce(kafka, topic, [f"job-{i}" for i in range(records)])
    bad = f"job-{poison}".encode()
    members = [worker(client, kafka.bootstrap_servers, topic, group, 2) for _ in range(workers)]
    try:
        counts: list = []
        accepted: dict = {}  # offset -> how many times it was delivered and accepted

        def work() -> None:
            for w in members:
                got = w.poll(0.1)
                for offset, value, count, m in got:
                    if value == bad:
                        counts.append(count)
                        w.acknowledge(m, "release")
                    else:
                        accepted[offset] = accepted.get(offset, 0) + 1
                        w.acknowledge(m, "accept")
                if got:
                    w.commit(expired_ok=True)  # a lock run out in the buffer: counted in others_redelivered

        deadline = time.monotonic() + timeout_s
        while len(accepted) < records - 1 or delivery_count_limit not in counts:
            if time.monotonic() > deadline:
                raise RuntimeError(f"not within {timeout_s} s: {len(accepted)} accepted, poison counts {counts}")
            work()
        before = len(counts)
        settle = time.monotonic() + lock_ms / 1000
        while time.monotonic() < settle:
            work()
        return {
            "poison_deliveries": len(counts),
            "poison_delivery_counts": sorted(counts),
            "archived": 1 if len(counts) == before else 0,
            "others_redelivered": sum(1 for n in accepted.values() if n > 1),
            "seconds": round(time.monotonic() - started, 1),
        }
    finally:
        for w in members:
            w.close()


#: what the lesson's poison message says, compared between a cluster and the simulator
POISON_COUNTS = ("poison_deliveries", "poison_delivery_counts", "archived")


def poison_compared(cluster, client: str = "confluent-kafka") -> dict:
    """Lesson 05c's poison message (seed 1, its settings) on the simulator and on ``cluster``
    (Kafka's, or a started WireCluster) with ``client``'s share consumers: ``{"simulator":
    numbers, "cluster": numbers}``."""
    from ..share_scenarios import run_share_scenario

    sim = run_share_scenario("poison_message", seed=1)
    return {"simulator": sim.numbers, "cluster": poison_message(cluster, **sim.settings, client=client)}


def poison_disagreements(compared: dict) -> list[str]:
    """What :func:`poison_compared` found differing: [] when the cluster delivers the poison record
    as often, with the same delivery counts, archives it as the simulator does, and delivers
    every other record once (the simulator: ``redelivered`` counts the poison record alone)."""
    sim, measured = compared["simulator"], compared["cluster"]
    wrong = [f"{k}: {measured[k]}, simulator {sim[k]}" for k in POISON_COUNTS if sim[k] != measured[k]]
    if measured["others_redelivered"] != sim["redelivered"] - 1:
        wrong.append(
            f"other records delivered twice: {measured['others_redelivered']}, simulator {sim['redelivered'] - 1}"
        )
    return wrong


def ordering_across_workers(
    kafka,
    workers: int = 3,
    records: int = 30,
    fastest_ms: float = 10,
    slowest_ms: float = 300,
    seed: int = 1,
    timeout_s: float = 90,
    client: str = "confluent-kafka",
) -> dict:
    """The simulator's ``ordering_across_workers`` on Kafka: ``workers`` (``client``'s share
    consumers, 1 record per poll) process ``job-<i>`` in the time the simulator's seeded handler
    takes for it, concurrently (one thread, each worker's record done when its time is up).
    ``reordered``: records processed after a later record of the partition; ``redelivered``:
    records delivered more than once; and ``seconds``."""
    import random

    from ..share_group_experiments import worker

    started = time.monotonic()
    topic, group = _setup(kafka, {})  # the default 30 s lock: every record is ACCEPTed well before
    rng = random.Random(seed)  # the simulator's draw, record by record
    durations = {f"job-{i}".encode(): rng.uniform(fastest_ms, slowest_ms) / 1000 for i in range(records)}
    members = [worker(client, kafka.bootstrap_servers, topic, group, 1) for _ in range(workers)]
    try:
        _produce(kafka, topic, [f"job-{i}" for i in range(records)])
        in_hand: list[list] = [[] for _ in members]  # per worker: [(done at, offset, message)]
        delivered: dict = {}  # offset -> deliveries
        order: list = []  # offsets, in the order they were processed
        deadline = time.monotonic() + timeout_s
        while len(order) < records:
            if time.monotonic() > deadline:
                raise RuntimeError(f"only {len(order)} of {records} jobs processed within {timeout_s} s")
            for w, held in zip(members, in_hand):
                if not held:
                    at = time.monotonic()
                    for offset, value, _, m in w.poll(0.02):
                        at += durations[value]
                        held.append((at, offset, m))
                        delivered[offset] = delivered.get(offset, 0) + 1
                while held and held[0][0] <= time.monotonic():
                    _, offset, m = held.pop(0)
                    if offset not in order:
                        order.append(offset)
                    w.acknowledge(m, "accept")
                    w.commit()
        reordered = sum(1 for i, offset in enumerate(order) if any(o > offset for o in order[:i]))
        return {
            "records": records,
            "reordered": reordered,
            "redelivered": sum(1 for n in delivered.values() if n > 1),
            "seconds": round(time.monotonic() - started, 1),
        }
    finally:
        for w in members:
            w.close()


def ordering_compared(cluster, client: str = "confluent-kafka") -> dict:
    """Lesson 05c's ordering runs (seed 1, 1 worker and 3) on the simulator and on ``cluster``
    with ``client``'s share consumers: ``{workers: {"simulator": numbers, "cluster": numbers}}``."""
    from ..share_scenarios import run_share_scenario

    compared = {}
    for k in (1, 3):
        sim = run_share_scenario("ordering_across_workers", seed=1, workers=k)
        compared[k] = {
            "simulator": sim.numbers,
            "cluster": ordering_across_workers(cluster, **sim.settings, client=client),
        }
    return compared


def ordering_disagreements(compared: dict) -> list[str]:
    """What the lesson says of :func:`ordering_compared`, where the cluster differs: in offset
    order with 1 worker, some records out of order with several, nothing redelivered. (How many
    are out of order is the machine's timing, not compared.)"""
    wrong = []
    for k, c in compared.items():
        sim, measured = c["simulator"], c["cluster"]
        if bool(sim["reordered"]) != bool(measured["reordered"]):
            wrong.append(f"{k} worker(s): {measured['reordered']} out of order, simulator {sim['reordered']}")
        if measured["redelivered"] != sim["redelivered"]:
            wrong.append(f"{k} worker(s): {measured['redelivered']} redelivered, simulator {sim['redelivered']}")
    return wrong


def _produce_spread(kafka, topic: str, values: list[str], partitions: int) -> None:
    """``values`` round robin over the topic's partitions, one record per batch, as the
    simulator's runs write them: a share consumer is handed whole batches, so one batch of every
    job would go to one worker."""
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": kafka.bootstrap_servers})
    for i, value in enumerate(values):
        producer.produce(topic, value=value.encode(), partition=i % partitions)
        if (i + 1) % partitions == 0 and producer.flush(30):
            raise RuntimeError(f"the cluster did not take {value} within 30 s")
    if producer.flush(30):
        raise RuntimeError(f"the cluster did not take {len(values)} records within 30 s")


def _every_share_worker_joined(kafka, topic: str, members: list, partitions: int, deadline: float) -> None:
    """Until each worker has been handed a record: warm-up records (acknowledged, not counted),
    one more per partition after each round in which no worker still waiting got one (a worker
    already handed one polls no more: what its client fetched ahead stays with it). A worker handed
    a record is a member with partitions, whatever its client shows of the group."""
    warmed: set[int] = set()
    written = 0
    while len(warmed) < len(members):
        if time.monotonic() > deadline:
            raise RuntimeError(f"{len(warmed)} of {len(members)} share workers were handed a record in time")
        _produce_spread(kafka, topic, [f"warm-{written + i}" for i in range(partitions)], partitions)
        written += partitions
        got_some = True
        while got_some and len(warmed) < len(members):
            got_some = False
            for i, w in enumerate(members):
                if i in warmed:
                    continue
                got = w.poll(0.05)
                for _, _, _, m in got:
                    w.acknowledge(m, "accept")
                if got:
                    w.commit()
                    warmed.add(i)
                    got_some = True


def share_vs_consumer_group(
    kafka,
    workers: int = 4,
    partitions: int = 2,
    records: int = 40,
    handler_ms: float = 100,
    client: str = "confluent-kafka",
    timeout_s: float = 90,
) -> dict:
    """The simulator's ``share_group_vs_consumer_group`` on a wall-clock cluster: the same
    ``records`` on ``partitions`` partitions to ``workers`` instances, once as a share group
    (``client``'s share consumers, 2 records a poll, each record taking ``handler_ms``, all workers
    at once: one thread, each worker's record done when its time is up) and once as a consumer
    group (kafka-python's members, as the lesson's twin), each started once every instance has
    joined. Returns the records each instance handled, per group, and each group's ``busiest_ms``:
    its busiest instance's records times ``handler_ms`` - how long the work takes when the
    handlers, not the cluster, are the slow part (the cluster's own latencies are the machine's)."""
    from ...client_adapters import group_member
    from ..share_group_experiments import worker

    deadline = time.monotonic() + timeout_s
    jobs = [f"job-{i}" for i in range(records)]
    topic, group = _setup(kafka, {}, partitions=partitions)
    members = [worker(client, kafka.bootstrap_servers, topic, group, 2) for _ in range(workers)]
    try:
        _every_share_worker_joined(kafka, topic, members, partitions, deadline)
        _produce_spread(kafka, topic, jobs, partitions)
        handled = [0] * workers
        done: set = set()
        in_hand: list[list] = [[] for _ in members]  # per worker: [(done at, value, message)]
        while len(done) < records:
            if time.monotonic() > deadline:
                raise RuntimeError(f"the share group handled {len(done)} of {records} records within {timeout_s} s")
            for i, (w, held) in enumerate(zip(members, in_hand)):
                if not held:
                    at = time.monotonic()
                    for _, value, _, m in w.poll(0.02):
                        at += handler_ms / 1000 if value.startswith(b"job-") else 0
                        held.append((at, value, m))
                while held and held[0][0] <= time.monotonic():
                    _, value, m = held.pop(0)
                    if value.startswith(b"job-") and value not in done:
                        done.add(value)
                        handled[i] += 1
                    w.acknowledge(m, "accept")
                    w.commit()
    finally:
        for w in members:
            w.close()

    topic = kafka.create_topic(f"{TOPIC_STEM}-{uuid.uuid4().hex[:8]}", partitions=partitions)
    config = {
        "bootstrap.servers": kafka.bootstrap_servers,
        "group.id": f"group-lab-{uuid.uuid4().hex[:8]}",
        "auto.offset.reset": "earliest",
        "max.poll.records": 2,
    }
    instances = [group_member("kafka-python", config, [topic]) for _ in range(workers)]
    try:
        while not (
            len({m.epoch() for m in instances}) == 1
            and instances[0].epoch() >= 0
            and sum(len(m.owned()) for m in instances) == partitions
        ):
            if time.monotonic() > deadline:
                raise RuntimeError(f"the consumer group of {workers} was not stable within {timeout_s} s")
            for m in instances:
                m.poll()
        _produce_spread(kafka, topic, jobs, partitions)
        while sum(m.seen for m in instances) < records:
            if time.monotonic() > deadline:
                raise RuntimeError(f"the consumer group read {sum(m.seen for m in instances)} of {records} in time")
            for m in instances:
                m.poll()
        group_handled = [m.seen for m in instances]
    finally:
        for m in instances:
            m.close()
    return {
        "share_group_per_worker": handled,
        "consumer_group_per_worker": group_handled,
        "share_busiest_ms": max(handled) * handler_ms,
        "consumer_busiest_ms": max(group_handled) * handler_ms,
    }


def choice_compared(cluster, client: str = "confluent-kafka") -> dict:
    """Lesson 05c's "share group or consumer group?" (seed 1, its settings) on the simulator and on
    ``cluster`` with ``client``'s share consumers: ``{"simulator": numbers, "cluster": numbers}``."""
    from ..share_scenarios import run_share_scenario

    sim = run_share_scenario(
        "share_group_vs_consumer_group", seed=1, workers=4, partitions=2, records=40, handler_ms=100
    )
    return {"simulator": sim.numbers, "cluster": share_vs_consumer_group(cluster, **sim.settings, client=client)}


def choice_disagreements(compared: dict) -> list[str]:
    """What the lesson says of :func:`choice_compared`, where the cluster differs: which group
    finishes the work first, and how many instances each leaves idle (the consumer group one per
    instance beyond its partitions, the share group none)."""
    sim, measured = compared["simulator"], compared["cluster"]
    wrong = []
    sim_first = sim["share_group_ms"] < sim["consumer_group_ms"]
    if sim_first != (measured["share_busiest_ms"] < measured["consumer_busiest_ms"]):
        wrong.append(
            f"the share group first: {not sim_first} on the cluster ({measured['share_busiest_ms']:g} against "
            f"{measured['consumer_busiest_ms']:g} ms of handling), {sim_first} on the simulator"
        )
    for key in ("share_group_per_worker", "consumer_group_per_worker"):
        idle, sim_idle = measured[key].count(0), list(sim[key].values()).count(0)
        if idle != sim_idle:
            wrong.append(f"{key}: {measured[key]} ({idle} idle), simulator {dict(sim[key])} ({sim_idle} idle)")
    return wrong


#: the headers Kafka 4.4.0 writes on every dead-letter record (KIP-1191), measured
DLQ_HEADERS = (
    "__dlq.errors.topic",
    "__dlq.errors.partition",
    "__dlq.errors.offset",
    "__dlq.errors.group",
    "__dlq.errors.delivery.count",
    "__dlq.errors.message",
)
#: the deliveries every run sees, whatever the DLQ does: the rejected record and the one over the
#: limit (2) are archived, never delivered again (value -> delivery counts seen)
DLQ_DELIVERIES = {"job-0": [1], "job-1": [1], "job-2": [1, 2], "job-3": [1]}
#: ``__dlq.errors.message`` of a rejected record, and of one over the delivery count limit
DLQ_REJECTED_MESSAGE = "Offset rejected by client."
DLQ_OVER_LIMIT_MESSAGE = "Offset delivery count exceeded the threshold."


def dlq_origin(got: dict, offset: int, count: int, why: str, partition: int = 0) -> dict:
    """The headers Kafka 4.4.0 writes on the dead letter of ``got``'s (a :func:`dead_letter_queue`
    result's) source record at ``offset``, delivered ``count`` times, for ``why``."""
    return {
        "__dlq.errors.topic": got["topic"],
        "__dlq.errors.partition": str(partition),
        "__dlq.errors.offset": str(offset),
        "__dlq.errors.group": got["group"],
        "__dlq.errors.delivery.count": str(count),
        "__dlq.errors.message": why,
    }


def dead_letter_queue(
    kafka,
    dlq_topic: str | None,
    group_configs: dict | None = None,
    delivery_count_limit: int = 2,
    timeout_s: float = 60,
    dead_letters: int = 0,
    client: str = "confluent-kafka",
) -> dict:
    """KIP-1191 (Kafka 4.4, ``share.version`` 2) on the lab cluster: four records ``job-0`` ..
    ``job-3`` (key ``k<i>``, header ``h: v<i>``) in a new share group whose
    ``errors.deadletterqueue.topic.name`` is ``dlq_topic`` (None: no DLQ configured); one worker
    REJECTs ``job-1``, RELEASEs ``job-2`` at every delivery (so it goes over
    ``share.delivery.count.limit``) and ACCEPTs the others. Returns ``deliveries`` (value ->
    delivery counts seen), ``dlq`` (the dead-letter topic read back from the start: key, value,
    headers, the timestamp as written; None when the topic does not exist), ``group_config``
    ("ok" or the refusal when the group configs were set), ``topic`` and ``group`` (the source),
    and ``seconds``. The records carry the timestamps :data:`DLQ_SOURCE_TIMESTAMP_MS` + i.

    The worker stops once every record has had its last delivery and :data:`DLQ_QUIET_MS` passed
    without another one (a released record would have come back by then). ``dead_letters``: how
    many DLQ records to wait for (up to 30 s) before reading the topic - a DLQ topic the broker
    creates itself gets its records after the source records are already archived. ``client``:
    whose share consumer the worker is (:data:`course_lib.client_adapters.SHARE_CLIENTS`)."""
    from course_lib.client_adapters import share_consumer
    from course_lib.clients.share_consumer import AcknowledgeType

    started = time.monotonic()
    configs = {
        "share.delivery.count.limit": delivery_count_limit,
        "share.record.lock.duration.ms": DLQ_LOCK_MS,
        **({"errors.deadletterqueue.topic.name": dlq_topic} if dlq_topic else {}),
        **(group_configs or {}),
    }
    try:
        # The records' CreateTime is years old (so a copied dead letter's new timestamp shows):
        # under the default retention.ms (7 days) Kafka's first retention check, 30 s after a
        # broker starts (log.initial.task.delay.ms), deleted them before a slow first consumer
        # read them (seen on 4.4.0 with Java's: deliveries {}). Kept here whatever their age.
        topic, group = _setup(kafka, configs, topic_config={"retention.ms": "-1"})
    except Exception as e:  # a broker that does not know the configs refuses them (INVALID_CONFIG)
        return {"group_config": str(e), "deliveries": {}, "dlq": None, "topic": None, "group": None, "seconds": 0.0}
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": kafka.bootstrap_servers})
    for i in range(4):
        producer.produce(
            topic,
            key=b"k%d" % i,
            value=b"job-%d" % i,
            headers=[("h", b"v%d" % i)],
            timestamp=DLQ_SOURCE_TIMESTAMP_MS + i,
        )
        if producer.flush(30):
            raise RuntimeError(f"the lab cluster did not take job-{i} within 30 s")
    deliveries: dict = {}
    consumer = share_consumer(client, _consumer(kafka.bootstrap_servers, group, 10))
    try:
        consumer.subscribe([topic])
        deadline = time.monotonic() + timeout_s

        def done() -> bool:
            return len(deliveries) == 4 and len(deliveries[DLQ_RELEASED]) >= delivery_count_limit

        quiet_since = None
        while quiet_since is None or time.monotonic() - quiet_since < DLQ_QUIET_MS / 1000:
            if time.monotonic() > deadline:
                raise RuntimeError(f"not within {timeout_s} s: deliveries {deliveries}")
            got = [m for m in consumer.poll(0.2) if m.error() is None]
            for m in got:
                value = m.value().decode()
                deliveries.setdefault(value, []).append(m.delivery_count())
                kind = {DLQ_REJECTED: AcknowledgeType.REJECT, DLQ_RELEASED: AcknowledgeType.RELEASE}
                consumer.acknowledge(m, kind.get(value, AcknowledgeType.ACCEPT))
            if got:
                consumer.commit_sync()
                quiet_since = None
            elif done() and quiet_since is None:
                quiet_since = time.monotonic()
    finally:
        consumer.close()
    return {
        "group_config": "ok",
        "deliveries": deliveries,
        "dlq": _read_topic(kafka, dlq_topic, dead_letters) if dlq_topic else None,
        "topic": topic,
        "group": group,
        "seconds": round(time.monotonic() - started, 1),
    }


def dlq_by_partition(
    kafka, dlq_topic: str, partitions: int = 3, timeout_s: float = 60, client: str = "confluent-kafka"
) -> dict:
    """Three records in each of ``partitions`` source partitions (keys ``k<p><i>``), all
    REJECTed by one ShareConsumer, into a DLQ topic of as many partitions: DLQ partition ->
    its dead letters (as :func:`_read_topic` returns them)."""
    from confluent_kafka import Producer

    from course_lib.client_adapters import share_consumer
    from course_lib.clients.share_consumer import AcknowledgeType

    source, group = _setup(kafka, {"errors.deadletterqueue.topic.name": dlq_topic}, partitions=partitions)
    producer = Producer({"bootstrap.servers": kafka.bootstrap_servers})
    for partition in range(partitions):
        for i in range(3):
            producer.produce(source, key=b"k%d%d" % (partition, i), value=b"v", partition=partition)
    if producer.flush(30):
        raise RuntimeError("the cluster did not take the records within 30 s")
    consumer = share_consumer(client, _consumer(kafka.bootstrap_servers, group, 10))
    rejected: list = []
    try:
        consumer.subscribe([source])
        deadline = time.monotonic() + timeout_s
        while len(rejected) < 3 * partitions:
            if time.monotonic() > deadline:
                raise RuntimeError(f"not within {timeout_s} s: rejected {rejected}")
            got = [m for m in consumer.poll(0.2) if m.error() is None]
            for m in got:
                consumer.acknowledge(m, AcknowledgeType.REJECT)
                rejected.append(m.offset())
            if got:
                consumer.commit_sync()
    finally:
        consumer.close()
    return {p: _read_topic(kafka, dlq_topic, 3, partition=p) for p in range(partitions)}


def dlq_never_acknowledged(
    kafka, dlq_topic: str, timeout_s: float = 60, client: str = "confluent-kafka"
) -> tuple[list, list | None]:
    """One record (limit 2, lock 1 s) that consumers poll and close on without acknowledging,
    one after another, twice: (the delivery counts they got, the DLQ topic's records)."""
    from confluent_kafka import Producer

    from course_lib.client_adapters import share_consumer

    source, group = _setup(
        kafka,
        {
            "errors.deadletterqueue.topic.name": dlq_topic,
            "share.delivery.count.limit": 2,
            "share.record.lock.duration.ms": 1000,
        },
    )
    producer = Producer({"bootstrap.servers": kafka.bootstrap_servers})
    producer.produce(source, key=b"k0", value=b"job-0")
    if producer.flush(30):
        raise RuntimeError("the cluster did not take job-0 within 30 s")
    counts = []
    for _ in range(2):
        consumer = share_consumer(client, _consumer(kafka.bootstrap_servers, group, 10))
        try:
            consumer.subscribe([source])
            deadline = time.monotonic() + timeout_s
            got: list = []
            while not got:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"no delivery within {timeout_s} s")
                got = [m for m in consumer.poll(0.2) if m.error() is None]
            counts.append(got[0].delivery_count())
        finally:
            consumer.close()  # never acknowledged: its session ends, the record is released
    return counts, _read_topic(kafka, dlq_topic, 1)


def _read_topic(kafka, topic: str, at_least: int = 0, timeout_s: float = 30, partition: int = 0) -> list | None:
    """Every record of one partition of ``topic`` once it holds ``at_least`` of them (or
    ``timeout_s`` passed), or None when the topic does not exist."""
    from confluent_kafka import Consumer, TopicPartition

    reader = Consumer({"bootstrap.servers": kafka.bootstrap_servers, "group.id": f"dlq-reader-{uuid.uuid4().hex[:8]}"})
    try:
        deadline = time.monotonic() + timeout_s
        while topic not in reader.list_topics(timeout=10).topics:
            if not at_least or time.monotonic() > deadline:
                return None
            time.sleep(0.2)
        _, end = reader.get_watermark_offsets(TopicPartition(topic, partition), timeout=10)
        while end < at_least and time.monotonic() < deadline:
            time.sleep(0.2)
            _, end = reader.get_watermark_offsets(TopicPartition(topic, partition), timeout=10)
        reader.assign([TopicPartition(topic, partition, 0)])
        records: list = []
        deadline = time.monotonic() + 30
        while len(records) < end:
            if time.monotonic() > deadline:
                raise RuntimeError(f"{topic}: read {len(records)} of {end} records within 30 s")
            m = reader.poll(0.2)
            if m is None or m.error():
                continue
            # a consumed record's headers are (key, bytes) pairs; confluent-kafka's stub gives
            # headers() the type a producer accepts (a dict too, str values)
            headers = cast("list[tuple[str, bytes]]", m.headers() or [])
            records.append(
                {
                    "offset": m.offset(),
                    "key": m.key(),
                    "value": m.value(),
                    "headers": {k: v.decode() for k, v in headers},
                    "timestamp": m.timestamp()[1],
                }
            )
        return records
    finally:
        reader.close()
