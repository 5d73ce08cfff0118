"""Share group experiments (KIP-932) shared by the simulator's, the wire cluster's and Kafka
4.3.1's tests, and by the protocol matrix of notebook 09 (:mod:`course_lib.experiments.protocol_matrix`):
workers share one partition, acknowledge each record explicitly (ACCEPT, RELEASE, REJECT), a
stalled worker's lock times out, and a record released every time reaches the delivery count
limit and is archived. Every cluster must give :data:`EXPECTED`.

The share group is set up first (``share.auto.offset.reset=earliest``, a lock of
:data:`LOCK_MS`, a limit of :data:`DELIVERY_LIMIT`), then :data:`RECORDS` records are written in
producer batches of :data:`BATCH`. Kafka hands out whole record batches: the stalled worker asks
for :data:`STALLED_ASKS` records and gets the whole first batch, the poison record and a
release-once record with it - so the working consumers see each of them once less than the
delivery count limit would suggest (Kafka 4.3.1 measured it; ``SharePartition.acquire``).
"""

from __future__ import annotations

import threading
import time
import uuid
from typing import Callable, TypedDict

from .registry import experiment, measured
from ..client_adapters.share_worker import ShareWorker as Worker  # the worker: a client adapter now
from ..judge.result import Result

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
    # (not counted: how many workers did the work. A Java member joins at its first poll() and
    # Kafka 4.3.1 hands it the partition at a later heartbeat: one run under load had a single
    # worker do it all before the two others had the partition, the next two shared it three
    # ways - which member gets a batch is the broker's choice, and the counts above are the same
    # either way. That the four share the partition, Admin.describeShareGroups shows: DESCRIBED.)
    # what the stalled worker's one poll() returned: the whole batch, past its max.poll.records -
    # confluent-kafka 2.16.1 and the Java client 4.3.1 alike (share.acquire.mode batch_optimized:
    # a poll "may exceed max.poll.records to align with batch boundaries")
    "stalled_returned": BATCH,
}


def group_configs(lock_ms: int, limit: int, heartbeat_ms: int | None = None) -> dict:
    """A share group's configs for an experiment: read from the start, records locked for
    ``lock_ms``, archived after ``limit`` deliveries; ``heartbeat_ms`` (when given) instead of
    Kafka's 5 s ``share.heartbeat.interval.ms``.

    >>> group_configs(2000, 5, heartbeat_ms=1000)["share.heartbeat.interval.ms"]
    1000
    """
    configs: dict = {
        "share.auto.offset.reset": "earliest",
        "share.record.lock.duration.ms": lock_ms,
        "share.delivery.count.limit": limit,
    }
    if heartbeat_ms is not None:
        configs["share.heartbeat.interval.ms"] = heartbeat_ms
    return configs


#: (Kafka's heartbeat interval, 5 s, kept: the four workers join together and get the partition at
#: the same heartbeat once it is initialized. At 1 s, Kafka 4.3.1 assigned them at different
#: heartbeats and one worker did all the work before the others had the partition.)
GROUP_CONFIGS = group_configs(LOCK_MS, DELIVERY_LIMIT)


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


@experiment("share group", "share", name="share group")
def run(make, produce, timeout_s: float = 60, during=None, clock=time.monotonic, threads: bool = True) -> Result:
    """``make(max_records)`` -> a worker: ``poll(seconds)`` -> ``[(offset, value, delivery count,
    record)]``, ``acknowledge(record, "accept" | "release" | "reject")``, ``commit()``, ``close()``.
    One worker takes records and stalls; three others work (see the module's docstring).
    ``during()``, if given, runs once the work is done, all four still members; its answer is
    ``["during"]``. ``clock()``: seconds (the simulator's virtual clock for simulated workers).
    ``threads``: each working worker polls in a thread of its own (real clients); False: they poll
    in turn (the simulator, whose clients share one virtual clock)."""
    stalled = make(STALLED_ASKS)
    workers = [make(3) for _ in range(3)]
    try:
        produce()
        start = clock()
        # One poll(), however long the group takes to assign the partition: the Java client sends
        # one ShareFetchEvent per poll() call, and its background thread fetches until a response
        # acquires records. Short polls in a loop raced with that fetch: on a slow machine a poll
        # that found the buffer empty asked for more just as the first batch came, so the stalled
        # worker acquired a second batch too, held unseen in its buffer (measured: 12 redelivered
        # instead of 6, on the wire and on Kafka; KafkaShareConsumer 4.3.1's ShareConsumerImpl.collect
        # and ShareConsumeRequestManager.fetchMoreRecords).
        taken = [offset for offset, *_ in stalled.poll(timeout_s)]
        assert taken, f"the stalled worker got nothing within {timeout_s} s"
        log: list = []  # (worker, offset, value, delivery count)

        def serve(i: int) -> None:
            """One poll of worker ``i``: each record acknowledged as :func:`decide` says, then committed."""
            c = workers[i]
            polled_at = clock()
            got = c.poll(0.1)
            for offset, value, count, record in got:
                log.append((i, offset, value, count))
                c.acknowledge(record, decide(value, count))
            if got:
                try:
                    c.commit()
                except AssertionError as e:  # the Java client's commitSync() answered an error
                    raise AssertionError(
                        f"worker {i} could not acknowledge {[o for o, *_ in got]} "
                        f"{clock() - polled_at:.1f} s after its poll began: its own lock ({LOCK_MS} ms) "
                        f"ran out, so the run cannot tell its records from the stalled worker's ({e})"
                    ) from e

        def done() -> bool:
            rows = list(log)  # the workers' threads append to it
            return observed(rows, taken)["accepted"] >= EXPECTED["accepted"] and any(
                v == POISON and n == DELIVERY_LIMIT for _, _, v, n in rows
            )

        def late() -> str:
            return f"not within {timeout_s} s: {observed(log, taken)}"

        work = _InThreads(serve, len(workers), clock) if threads else _InTurn(serve, len(workers), clock)
        with work:
            work.until(done, start + timeout_s, late)
            seen_during = during() if during is not None else None
            # a lock's time more: nothing else may come (archived records stay archived)
            work.until(lambda: False, clock() + LOCK_MS / 1000)
        out = observed(log, taken)
        out["seconds"] = round(clock() - start, 1)
        if during is not None:
            out["during"] = seen_during
        return measured(run, out)
    finally:
        for c in [stalled, *workers]:
            c.close()


class _InTurn:
    """The workers poll one after the other, on the caller's thread (simulated clients: their
    cluster runs on the virtual clock that each poll advances)."""

    def __init__(self, serve, n: int, clock) -> None:
        self.serve, self.n, self.clock = serve, n, clock

    def __enter__(self) -> _InTurn:
        return self

    def __exit__(self, *exc) -> None:
        pass

    def until(self, condition, deadline: float, late=None) -> None:
        """Serve every worker in turn until ``condition()``; at ``deadline`` fail (``late()``
        says why) or, without ``late``, stop."""
        while not condition():
            if self.clock() >= deadline:
                assert late is None, late()
                return
            for i in range(self.n):
                self.serve(i)


class _InThreads:
    """Each worker polls in a thread of its own, as each runs in a process of its own in
    production: a worker's records come back from its buffer at its next poll, not after the
    other workers' turns. In turn, on a loaded machine, a batch a worker's fetch brought after its
    poll() had returned waited a whole round of polls, acknowledgements and commits of the others
    - 1.5 s of the group's 2 s lock, measured - and an expired lock would count its records
    twice."""

    def __init__(self, serve, n: int, clock) -> None:
        self.serve, self.n, self.clock = serve, n, clock
        self.changed = threading.Condition()
        self.stop = threading.Event()
        self.errors: list[BaseException] = []
        self.threads = [threading.Thread(target=self._loop, args=(i,), daemon=True) for i in range(n)]

    def _loop(self, i: int) -> None:
        try:
            while not self.stop.is_set():
                self.serve(i)
                with self.changed:
                    self.changed.notify_all()
        except BaseException as e:  # the caller raises it
            self.errors.append(e)
            with self.changed:
                self.changed.notify_all()

    def __enter__(self) -> _InThreads:
        for t in self.threads:
            t.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop.set()
        for t in self.threads:
            t.join(60)
        assert not any(t.is_alive() for t in self.threads), "a worker's poll did not return"
        if self.errors and exc[0] is None:
            raise self.errors[0]

    def until(self, condition, deadline: float, late=None) -> None:
        """Wait, the workers polling, until ``condition()`` (checked after each of their polls);
        at ``deadline`` (on ``clock``, seconds of real time) fail (``late()`` says why) or, without
        ``late``, stop."""
        with self.changed:
            while not (self.errors or condition()):
                remaining = deadline - self.clock()
                if remaining <= 0:
                    assert late is None, late()
                    return
                self.changed.wait(remaining)
        if self.errors:
            raise self.errors[0]


def with_client(client: str, servers: str, topic: str, group: str, produce, during=None) -> Result:
    """:func:`run` with ``client``'s share consumers (``share.acknowledgement.mode=explicit``) on
    ``servers``."""
    return run(lambda max_records: worker(client, servers, topic, group, max_records), produce, during=during)


#: long enough that only flush() sends a batch: each holds the records produced since the last
LINGER_MS = 5_000


def write_batches(cluster, client: str, topic: str) -> None:
    """:func:`batches` written by ``client``'s producer - the producer workload's contract
    (:data:`course_lib.client_adapters.CLIENTS`) composed with ``cluster``, as every scenario
    is - one flush (one producer batch) each."""
    from course_lib.backend import ComposedBackend
    from course_lib.client_adapters import CLIENTS

    b = ComposedBackend(cluster, CLIENTS[client]())
    try:
        p = b.producer(linger_ms=LINGER_MS)
        for batch in batches():
            for v in batch:
                p.send(topic, v)
            p.flush()
    finally:
        b.close_clients()


def simulator_run(seed: int = 0) -> Result:
    """The experiment on the simulator itself, seeded, in virtual time: the simulated
    ShareConsumer (confluent-kafka's names), batches written by the simulated producer."""
    from course_lib.broker import Cluster
    from course_lib.clients import KafkaProducer

    cluster = Cluster(3, seed=seed)
    topic, group = "work", new_group()
    cluster.create_topic(topic, partitions=1, min_insync_replicas=2)
    cluster.alter_share_group_config(group, GROUP_CONFIGS)

    def produce() -> None:
        p = KafkaProducer(bootstrap_servers=cluster)
        for batch in batches():
            for v in batch:
                p.send(topic, v)
            p.flush()
        p.close()

    return run(
        lambda n: worker("simulator", cluster, topic, group, n),
        produce,
        clock=lambda: cluster.now / 1000,
        threads=False,
    )


#: what ``Admin.describeShareGroups`` shows while the four workers are members: one partition
#: shared by all four
DESCRIBED = {"state": "Stable", "members": 4, "partitions": [[0]] * 4}


def described(client: str, servers: str, group: str, timeout_s: float = 30) -> dict:
    """``client``'s admin describing the share group (ShareGroupDescribe), summed up as
    :data:`DESCRIBED`, once every member has an assignment (or after ``timeout_s``, as it is
    then); a client whose admin can (:func:`course_lib.client_adapters.share_group_describer`).

    A member joins at its first poll() and Kafka hands it the partition at one of its heartbeats
    (every 5 s): the workers, joining after the stalled worker has its records, may be done
    before the last of them has it. Measured on Kafka 4.3.1 under load, with Java: two of the
    four members had no partition yet when the work was done. So the description waits for that
    state."""
    from course_lib.client_adapters import share_group_describer

    describe = share_group_describer(client)
    assert describe is not None, f"{client}'s admin cannot describe share groups"
    deadline = time.monotonic() + timeout_s
    while True:
        d = describe(servers, group)
        if all(m["assignment"] for m in d["members"]) or time.monotonic() > deadline:
            break
        time.sleep(0.2)  # between two descriptions: the next heartbeat is what it waits for
    return {
        "state": d["state"],
        "members": len(d["members"]),
        "partitions": sorted(sorted(tp["partition"] for tp in m["assignment"]) for m in d["members"]),
    }


#: the throttling experiment: one batch of 8, a worker that RELEASEs all it gets, limit 5
THROTTLE_DELIVERY_LIMIT = 5
THROTTLE_CONFIGS = {"share.auto.offset.reset": "earliest", "share.delivery.count.limit": THROTTLE_DELIVERY_LIMIT}
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
        while sum(sizes) < THROTTLE_BATCH * THROTTLE_DELIVERY_LIMIT:
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
        "stalled_returned": len(taken),
    }


def wire_setup(wire) -> tuple[str, str]:
    """A one-partition topic and a new share group with :data:`GROUP_CONFIGS` on a WireCluster."""
    topic = wire.create_topic("work", partitions=1)
    group = new_group()
    configure_with_admin(wire.bootstrap_servers, group, GROUP_CONFIGS)
    return topic, group


# ---- the experiment on one cluster, as the protocol matrix runs it ------------------------------
class WireSettings(TypedDict):
    """The :class:`~course_lib.wire.cluster.WireCluster` keywords of :data:`WIRE_SETTINGS`."""

    brokers: int
    seed: int
    group_initial_rebalance_delay_ms: int


#: the wire cluster it runs on (the tests' ``wire_cluster``: 3 brokers, seed 1)
WIRE_SETTINGS: WireSettings = {"brokers": 3, "seed": 1, "group_initial_rebalance_delay_ms": 0}


def run_on(client: str, cluster) -> Result:
    """The experiment with ``client``'s share consumers and producer on a LocalCluster (the lab's
    Kafka): a new topic and share group, set up with the admin client as an operator would (the
    lab lowers Kafka's floor under the group's 2 s lock)."""
    topic = cluster.create_topic(f"share-{uuid.uuid4().hex[:8]}", partitions=1)
    group = new_group()
    configure_with_admin(cluster.bootstrap_servers, group)
    return on(cluster, client, topic, group)


def on(cluster, client: str, topic: str, group: str) -> Result:
    """:func:`with_client` on a wall-clock ``cluster`` whose ``topic`` and ``group`` are set up:
    the records written by ``client``'s producer (:func:`write_batches`), ``["during"]`` what
    its admin describes of the group while the workers are members (if it can)."""
    from course_lib.client_adapters import share_group_describer

    servers = cluster.bootstrap_servers
    describes = share_group_describer(client) is not None
    return with_client(
        client,
        servers,
        topic,
        group,
        lambda: write_batches(cluster, client, topic),
        during=(lambda: described(client, servers, group)) if describes else None,
    )


def on_the_wire(client: str) -> Result:
    """The experiment with ``client`` on a WireCluster of :data:`WIRE_SETTINGS`, started and
    stopped here, with the share group invariants checked after every simulator event (their
    count under ``"invariant checks"``)."""
    from course_lib.broker.share_invariants import ShareInvariants
    from course_lib.wire.cluster import WireCluster

    with WireCluster(**WIRE_SETTINGS) as wire:
        checker = wire.call(lambda: ShareInvariants.attach(wire.cluster))
        topic, group = wire_setup(wire)
        got = on(wire, client, topic, group)
        got.numbers["invariant checks"] = wire.call(lambda: checker.checks)
        return got


# ---- the workers: one per client, the same calls ----------------------------------------------
def simulated_job(seed: int, group: str, configs: dict) -> tuple[Callable, Callable, dict]:
    """One record for the single-job experiments (RENEW, late ACCEPTs) in virtual time: a seeded simulated cluster
    with a one-partition topic ``work``, ``group`` under ``configs``. Returns how to make a
    worker, how to write the job (the simulated producer) and the run's ``clock`` and ``wait``."""
    from ..broker import Cluster
    from ..clients import KafkaProducer

    cluster = Cluster(3, seed=seed)
    topic = "work"
    cluster.create_topic(topic, partitions=1, min_insync_replicas=2)
    cluster.alter_share_group_config(group, configs)

    def produce() -> None:
        p = KafkaProducer(bootstrap_servers=cluster)
        p.send(topic, b"job")
        p.flush()
        p.close()

    timing = {"clock": lambda: cluster.now / 1000, "wait": lambda seconds: cluster.run_for(seconds * 1000)}
    return (lambda: worker("simulator", cluster, topic, group, 1)), produce, timing


def wall_clock_jobs(cluster, stem: str, configs: dict, values: list[bytes]) -> tuple[str, str, Callable]:
    """The same jobs on a wall-clock cluster (a started WireCluster or Kafka's): a one-partition
    topic and a share group named from ``stem``, the group's ``configs`` set as an operator does
    (:func:`configure_with_admin`). Returns the topic, the group and how to write ``values`` (with
    confluent-kafka, one batch each: a share consumer is handed whole batches)."""
    from confluent_kafka import Producer

    servers = cluster.bootstrap_servers
    topic = cluster.create_topic(f"{stem}-{uuid.uuid4().hex[:8]}", partitions=1)
    group = f"{stem}-{uuid.uuid4().hex[:8]}"
    configure_with_admin(servers, group, configs)

    def produce() -> None:
        p = Producer({"bootstrap.servers": servers})
        for value in values:
            p.produce(topic, value=value)
            assert p.flush(30) == 0

    return topic, group, produce


def worker_config(servers, group: str, max_records: int, acknowledgement: str = "explicit") -> dict:
    """A worker's settings: explicit acknowledgement unless told (``servers``: a simulated
    Cluster or a string)."""
    return {
        "bootstrap.servers": servers,
        "group.id": group,
        "share.acknowledgement.mode": acknowledgement,
        "max.poll.records": max_records,
    }


def worker(
    client: str,
    servers,
    topic: str,
    group: str,
    max_records: int,
    own_process: bool = False,
    acknowledgement: str = "explicit",
) -> Worker:
    """A :class:`Worker` with ``client``'s share consumer (a key of
    :data:`course_lib.client_adapters.SHARE_CLIENTS`; ``servers``: the simulated Cluster for
    "simulator", else a bootstrap string) set up by :func:`worker_config`; ``own_process``: one
    that can :meth:`~Worker.crash`; ``acknowledgement``: its ``share.acknowledgement.mode``."""
    from course_lib.client_adapters import share_consumer

    config = worker_config(servers, group, max_records, acknowledgement)
    return Worker(share_consumer(client, config, own_process), topic)
