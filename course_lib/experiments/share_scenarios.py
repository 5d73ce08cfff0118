"""Seeded experiments with share groups (KIP-932, "queues for Kafka"), for lesson 05c.

Each function runs workers - :class:`course_lib.clients.ShareConsumer` s with confluent-kafka's
names - against a seeded simulated cluster, judges the history with
:func:`course_lib.judge.checker.check_share`, and returns a :class:`~course_lib.judge.result.Result` whose
``numbers`` a lesson can explain (and whose ``expected`` anomaly classes a test can demand):

================================  ==========================================================
``more_workers_than_partitions``  ``workers`` > ``partitions``: every worker gets work;
                                  ``per_worker`` processed counts, ``workers_per_partition``
``worker_crash``                  a worker crashes holding ``max_poll_records`` records after
                                  processing ``processed_before_crash`` of them:
                                  ``redelivered``, ``processed_twice``,
                                  ``redelivery_after_crash_ms`` (at once when its process
                                  is killed; about the lock duration with ``host_lost``)
``paused_worker``                 a worker freezes longer than the lock after processing:
                                  the others process its ``held_when_paused`` records again;
                                  its late ACCEPTs of records they settled meanwhile are
                                  skipped without an error (``refused_acks`` 0)
``slow_handler``                  a handler slower than ``group.share.record.lock.duration.ms``
                                  (``renew=False``: locks expire, records are processed several
                                  times and archived at the delivery limit; ``renew=True``:
                                  RENEW keeps each lock, once each)
``poison_message``                a handler that always fails on one record RELEASEs it:
                                  ``poison_deliveries`` = the delivery count limit, then
                                  ``archived`` with ``archived_why``
``dead_letter_topic``             the poison message and a REJECTed record with a dead-letter
                                  topic (KIP-1191, Kafka 4.4): ``dead_letters`` read back
                                  (headers only unless ``copy_record``), ``archived_to_dlq``;
                                  ``refused`` on a release without them
``ordering_across_workers``       handlers of varying speed on one partition:
                                  ``reordered`` (0 with ``workers=1``)
``leader_failover``               the partition's leader crashes mid-run: ``accepted_before``
                                  stay accepted (``redelivered_after_ack`` = 0),
                                  ``held_at_failover`` records are delivered again
``share_group_vs_consumer_group`` the same work as a share group and as a consumer group:
                                  ``share_group_ms`` vs ``consumer_group_ms``, the per-worker
                                  counts (a consumer group leaves ``workers - partitions``
                                  idle), ``share_state_writes`` vs ``consumer_group_commits``
================================  ==========================================================

Every result also has ``records``, ``deliveries``, ``redelivered`` (records delivered more than
once), ``processed_twice``, ``archived`` and ``reordered`` (records processed after a later one
of their partition) in ``numbers``.

Every scenario takes ``seed`` and returns the same numbers for the same seed. Settings use
Kafka's names: ``lock_ms`` is ``share.record.lock.duration.ms``, ``delivery_count_limit`` is
``share.delivery.count.limit`` (group configs); the group starts at ``earliest`` so that records
written before the workers joined are delivered (Kafka's default, *latest*, would skip them:
``start_latest=True`` shows it).

For the lesson, the demo, the exercises and the real-Kafka part: ``run_share_scenario(name,
seed=..., **settings)`` runs one by name; ``result.numbers`` are the measured values (never
write them into markdown: show them after the learner's prediction), ``result.check`` the
verdict (``.anomalies``, ``.explain(message)``), ``result.history`` the operations,
``result.timeline()`` one row per delivery, ``result.observed`` the per-record fold
(:class:`course_lib.judge.checker.ShareObserved`: deliveries, acceptances, archivings and why).
During a run, ``cluster.inspect_share_partition(group, topic, partition)`` shows the leader's
share-partition (start offset; each in-flight record's state, delivery count, holder, lock time
left) for a picture of the mechanism. On real Kafka the same scenario needs
confluent-kafka's ShareConsumer against Kafka 4.3.1 (RENEW only from the Java client: confluent-
kafka 2.16.1 has no ``AcknowledgeType.RENEW``).

(The scenarios drive the simulator directly; once :mod:`course_lib.backend` offers share
consumers they should go through it like :mod:`course_lib.experiments.consumer_scenarios`.)

Taught in notebooks/05c_share_groups.
"""

from __future__ import annotations

import random
from functools import partial
from typing import Any, Callable, Sequence

from .registry import experiment, family
from ..broker import Cluster
from ..broker.share_config import DELIVERY_COUNT_LIMIT, RECORD_LOCK_DURATION_MS
from ..judge.checker import check_share, observe_share
from ..judge.result import Result
from ..client_adapters import library_producer
from ..client_adapters.share_worker import Handler, Stepped, SteppedGroupWorker, SteppedWorker, join_group
from ..history import OpName

#: the client the share scenarios run: the simulator's, in the simulated cluster's virtual time
SIMULATOR = "simulator"

TOPIC, GROUP = "jobs", "workers"


#: the share scenarios, by name: the registry's view of the ``share scenario`` family
SHARE_SCENARIOS = family("share scenario")


#: declare a share scenario (:func:`course_lib.experiments.registry.experiment`)
share_scenario = experiment("share scenario", "share")


def run_share_scenario(name: str, seed: int = 0, **settings) -> Result:
    try:
        fn = SHARE_SCENARIOS[name]
    except KeyError:
        raise ValueError(f"no share scenario {name!r}; choose one of {sorted(SHARE_SCENARIOS)}") from None
    return fn(seed=seed, **settings)


# ---- the workers ---------------------------------------------------------------------------------
def _worker(
    cluster: Cluster,
    handler: Handler,
    max_poll_records: int,
    renew_every_ms: float | None = None,
    acknowledgement: str = "explicit",
) -> SteppedWorker:
    """An application instance of the scenarios' group on :data:`TOPIC` (an adapter's
    :class:`~course_lib.client_adapters.share_worker.SteppedWorker`, which polls, acknowledges
    and commits): ``handler(m)`` says how long a record takes, in ms, and its outcome - True
    (ACCEPT), False (RELEASE) or an acknowledgement by name; with ``renew_every_ms`` it RENEWs
    what it still holds while it works; what it finished goes into the history
    (:func:`_processed`). Its steps run in virtual time (:func:`run_workers`)."""
    processed = partial(_processed, cluster)
    return SteppedWorker(
        cluster, GROUP, TOPIC, handler, processed, max_poll_records, renew_every_ms, acknowledgement=acknowledgement
    )


def _processed(cluster, worker: str, value: bytes, partition: int, offset: int) -> None:
    """The history's record that ``worker`` finished processing a record of :data:`TOPIC`."""
    cluster.history.record(
        worker, "ok", OpName.PROCESS, value.decode(), topic=TOPIC, partition=partition, offset=offset
    )


def _per_worker(history, workers) -> dict:
    """worker name -> how many records it processed."""
    return {w.name: sum(1 for op in history if op.f == OpName.PROCESS and op.process == w.name) for w in workers}


def run_workers(cluster, workers: Sequence[Stepped], until: Callable[[], bool], max_ms: float, faults=()) -> None:
    """Step the workers in virtual time until ``until()`` (or ``max_ms``). ``faults``:
    ``(at_ms, action)`` pairs run once the clock passes ``at_ms`` (from the start)."""
    start = cluster.now
    pending = sorted(faults, key=lambda f: f[0])
    while cluster.now - start < max_ms and not until():
        live = [w for w in workers if not w.crashed]
        if not live:
            return
        w = min(live, key=lambda w: w.next_ms)
        target = w.next_ms
        if pending and start + pending[0][0] <= target:
            at, action = pending.pop(0)
            cluster.run_for(max(start + at - cluster.now, 0))
            action()
            continue
        if target > cluster.now:
            cluster.run_for(target - cluster.now)
        w.step()
    for w in sorted(workers, key=lambda w: w.queue[-1][0] if w.queue else 0):
        w.finish()


# ---- building blocks ------------------------------------------------------------------------------
def _cluster(
    seed: int,
    partitions: int,
    records: int,
    lock_ms,
    limit,
    start_latest=False,
    per_batch: int = 1,
    kafka_version: str | None = None,
) -> Cluster:
    release = {"kafka_version": kafka_version} if kafka_version else {}  # default: the lab's
    cluster = Cluster(3, seed=seed, group_initial_rebalance_delay_ms=0, **release)
    cluster.create_topic(TOPIC, partitions=partitions, replication_factor=3, min_insync_replicas=2)
    configs: dict = {
        "share.auto.offset.reset": "latest" if start_latest else "earliest",
        "share.record.lock.duration.ms": lock_ms,
        "share.delivery.count.limit": limit,
    }
    cluster.alter_share_group_config(GROUP, configs)
    _produce(cluster, records, partitions, per_batch=per_batch)
    return cluster


def _produce(cluster, records: int, partitions: int, start: int = 0, per_batch: int = 1) -> None:
    """Write the jobs, ``per_batch`` of them at a time (a flush after each group): Kafka hands
    a share consumer whole record batches, so one batch of all jobs would go to one worker.
    The default, one job per batch, is a queue fed one job at a time."""
    if not records:
        return
    producer = library_producer(SIMULATOR, cluster, {"client_id": "loader"})
    for i in range(start, start + records):
        producer.send(TOPIC, f"job-{i}".encode(), partition=i % partitions)
        if (i - start + 1) % (per_batch * partitions) == 0:
            producer.flush()
    producer.flush()
    producer.close()


def _drained(cluster, records: int) -> Callable[[], bool]:
    """Every record accepted or archived, as the history says (read incrementally)."""
    finished: set = set()
    seen = [0]

    def done() -> bool:
        ops = cluster.history.ops
        for op in ops[seen[0] :]:
            if op.f == OpName.SHARE_ACK and op.type == "ok":
                finished.update((p, o) for p, o, k in op.value if k in ("accept", "reject"))
            elif op.f in (
                "share_archived",
                "share_lock_expired",
                "share_released_on_close",
                "share_released_on_disconnect",
            ):
                v = op.value
                for name in ("archived", "rejected", "delivery_limit"):
                    finished.update((v["partition"], o) for o in v.get(name, ()))
        seen[0] = len(ops)
        return len(finished) >= records

    return done


def _finish(
    name, seed, fn, cluster, workers, settings, numbers, expected, mode="explicit", limit=DELIVERY_COUNT_LIMIT
) -> Result:
    for w in workers:
        if not w.crashed:
            w.close()
    cluster.final_read(TOPIC)
    result = check_share(cluster.history, TOPIC, mode, limit)
    observed = observe_share(cluster.history, TOPIC)
    numbers = {
        "records": settings.get("records"),
        "deliveries": sum(len(d) for d in observed.deliveries.values()),
        "redelivered": observed.redelivered,
        "processed_twice": observed.processed_twice,
        "archived": len(observed.archived),
        "reordered": len(result.by_kind("reordered_across_workers")),
        **numbers,
    }
    return Result(
        "share scenario",
        name,
        "share",
        seed=seed,
        description=(fn.__doc__ or "").strip(),
        settings=settings,
        history=cluster.history,
        check=result,
        numbers=numbers,
        expected=set(expected),
        observed=observed,
        cluster=cluster,
    )


def _fixed(ms: float) -> Handler:
    return lambda m: (ms, True)


# ---- the scenarios -------------------------------------------------------------------------------
@share_scenario
def more_workers_than_partitions(
    seed: int = 0, workers: int = 4, partitions: int = 2, records: int = 40, handler_ms: float = 50
) -> Result:
    """More workers than partitions: a consumer group would leave some idle; a share group
    gives every worker records, several workers sharing a partition."""
    cluster = _cluster(seed, partitions, records, RECORD_LOCK_DURATION_MS, DELIVERY_COUNT_LIMIT)
    ws = [_worker(cluster, _fixed(handler_ms), max_poll_records=2) for _ in range(workers)]
    run_workers(cluster, ws, _drained(cluster, records), 120_000)
    history = cluster.history
    per_worker = _per_worker(history, ws)
    sharing: dict = {}
    for op in history:
        if op.f == OpName.PROCESS:
            sharing.setdefault(op.partition, set()).add(op.process)
    settings = {"workers": workers, "partitions": partitions, "records": records, "handler_ms": handler_ms}
    numbers = {
        "per_worker": per_worker,
        "idle_workers": sum(1 for n in per_worker.values() if n == 0),
        "workers_per_partition": {p: len(s) for p, s in sorted(sharing.items())},
    }
    return _finish(
        "more_workers_than_partitions",
        seed,
        more_workers_than_partitions,
        cluster,
        ws,
        settings,
        numbers,
        {"reordered_across_workers"} if workers > partitions else set(),
    )


@share_scenario
def worker_crash(
    seed: int = 0,
    records: int = 20,
    max_poll_records: int = 5,
    processed_before_crash: int = 3,
    handler_ms: float = 100,
    lock_ms: float = RECORD_LOCK_DURATION_MS,
    host_lost: bool = False,
) -> Result:
    """A worker crashes holding records it has partly processed. Nobody acknowledged them, so the
    broker hands them to the other worker - those already processed are processed twice. When?
    A killed process's connections close, and the broker releases its records at once; a lost
    machine (``host_lost``) closes nothing, and they wait for their locks to expire."""
    cluster = _cluster(seed, 1, records, lock_ms, DELIVERY_COUNT_LIMIT)
    doomed = _worker(cluster, _fixed(handler_ms), max_poll_records)
    survivor = _worker(cluster, _fixed(handler_ms), max_poll_records)
    doomed.take_first()  # it polls first: it holds the first records
    held = [m for _, m, _ in doomed.queue]
    crash_at = cluster.now + processed_before_crash * handler_ms + handler_ms / 2
    cluster.run_for(crash_at - cluster.now)
    doomed.crash(host_lost=host_lost)
    crashed_ms = cluster.now
    run_workers(cluster, [survivor], _drained(cluster, records), 10 * lock_ms + 60_000)
    history = cluster.history
    again = [
        op.time_ms
        for op in history
        if op.f == OpName.SHARE_POLL and op.process == survivor.name
        for _, o, _, count in op.value
        if count > 1 and o in {m.offset() for m in held}
    ]
    settings = {
        "records": records,
        "max_poll_records": max_poll_records,
        "processed_before_crash": processed_before_crash,
        "handler_ms": handler_ms,
        "lock_ms": lock_ms,
        "host_lost": host_lost,
    }
    numbers = {
        "held_at_crash": len(held),
        "redelivery_after_crash_ms": round(min(again) - crashed_ms) if again else None,
    }
    expected = {"redelivered"} | ({"duplicate_processing"} if processed_before_crash else set())
    return _finish("worker_crash", seed, worker_crash, cluster, [doomed, survivor], settings, numbers, expected)


@share_scenario
def paused_worker(
    seed: int = 0,
    records: int = 10,
    max_poll_records: int = 3,
    handler_ms: float = 100,
    pause_ms: float = 40_000,
    lock_ms: float = RECORD_LOCK_DURATION_MS,
) -> Result:
    """A worker processes what it polled, then freezes (a long GC pause) before acknowledging.
    Its locks expire meanwhile and another worker processes the same records; when the paused
    one wakes up, its ACCEPTs of records the other worker settled meanwhile come back without an
    error: Kafka skips an acknowledgement below the share partition's start offset ("already
    archived"; measured on Kafka 4.3.1 by course_lib/experiments/share_differential.py). The zombie
    cannot tell from the answer that it processed them twice; a record another worker still held
    would have been refused (INVALID_RECORD_STATE), as in :func:`slow_handler`."""
    cluster = _cluster(seed, 1, records, lock_ms, DELIVERY_COUNT_LIMIT)
    zombie = _worker(cluster, _fixed(handler_ms), max_poll_records)
    other = _worker(cluster, _fixed(handler_ms), max_poll_records)
    zombie.take_first()
    held = len(zombie.queue)
    frozen_until = zombie.queue[-1][0] + pause_ms  # it finishes its batch, then stops
    zombie.freeze(until_ms=frozen_until)
    run_workers(cluster, [other], lambda: cluster.now >= frozen_until, pause_ms + 60_000)
    zombie.wake()
    zombie.step()  # records what it processed, sends its ACCEPTs
    refused = sum(len(op.value) for op in cluster.history if op.f == OpName.SHARE_ACK and op.type == "fail")
    run_workers(cluster, [zombie, other], _drained(cluster, records), 120_000)
    settings = {
        "records": records,
        "max_poll_records": max_poll_records,
        "handler_ms": handler_ms,
        "pause_ms": pause_ms,
        "lock_ms": lock_ms,
    }
    slower = pause_ms > lock_ms
    expected = {"redelivered", "duplicate_processing"} if slower else set()
    return _finish(
        "paused_worker",
        seed,
        paused_worker,
        cluster,
        [zombie, other],
        settings,
        {"held_when_paused": held, "refused_acks": refused},
        expected,
    )


@share_scenario
def slow_handler(
    seed: int = 0,
    records: int = 3,
    handler_ms: float = 40_000,
    lock_ms: float = RECORD_LOCK_DURATION_MS,
    renew: bool = False,
    workers: int = 2,
    delivery_count_limit: int = DELIVERY_COUNT_LIMIT,
) -> Result:
    """A handler slower than the acquisition lock. Without RENEW the lock expires while the
    worker is still busy: another worker gets the record, the first one's ACCEPT is refused, and
    after the delivery count limit the record is archived although it was processed every time.
    With RENEW (every half lock) each record is processed once."""
    cluster = _cluster(seed, 1, records, lock_ms, delivery_count_limit)
    ws = [_worker(cluster, _fixed(handler_ms), 1, lock_ms / 2 if renew else None) for _ in range(workers)]
    budget = (delivery_count_limit + 2) * (handler_ms + lock_ms) * records
    run_workers(cluster, ws, _drained(cluster, records), budget)
    refused = sum(1 for op in cluster.history if op.f == OpName.SHARE_ACK and op.type == "fail")
    processed = observe_share(cluster.history, TOPIC).processed
    settings = {
        "records": records,
        "handler_ms": handler_ms,
        "lock_ms": lock_ms,
        "renew": renew,
        "workers": workers,
        "delivery_count_limit": delivery_count_limit,
    }
    slower = handler_ms > lock_ms and not renew
    expected = {"redelivered", "duplicate_processing", "archived"} if slower else set()
    return _finish(
        "slow_handler",
        seed,
        slow_handler,
        cluster,
        ws,
        settings,
        {"refused_acks": refused, "times_processed": {m: len(r) for m, r in sorted(processed.items())}},
        expected,
        limit=delivery_count_limit,
    )


@share_scenario
def poison_message(
    seed: int = 0,
    records: int = 10,
    poison: int = 3,
    delivery_count_limit: int = DELIVERY_COUNT_LIMIT,
    workers: int = 2,
) -> Result:
    """One record makes the handler fail every time: the worker RELEASEs it, the broker hands it
    out again - ``share.delivery.count.limit`` times - then archives it. The other records are
    processed once each; the poison one never."""
    cluster = _cluster(seed, 1, records, RECORD_LOCK_DURATION_MS, delivery_count_limit)
    bad = f"job-{poison}".encode()
    ws = [_worker(cluster, lambda m: (20, m.value() != bad), 2) for _ in range(workers)]
    run_workers(cluster, ws, _drained(cluster, records), 120_000)
    observed = observe_share(cluster.history, TOPIC)
    counts = observed.delivery_counts().get(bad.decode(), [])
    why = [w for (p, o), (w, _) in observed.archived.items()]
    settings = {"records": records, "poison": poison, "delivery_count_limit": delivery_count_limit}
    numbers = {"poison_deliveries": len(counts), "poison_delivery_counts": counts, "archived_why": why}
    return _finish(
        "poison_message",
        seed,
        poison_message,
        cluster,
        ws,
        settings,
        numbers,
        {"redelivered", "archived"},
        limit=delivery_count_limit,
    )


#: the group's dead-letter topic in :func:`dead_letter_topic` (the broker's own would start ``dlq.``)
DLQ_TOPIC = "dlq.jobs"


@share_scenario
def dead_letter_topic(
    seed: int = 0,
    records: int = 10,
    poison: int = 3,
    reject: int = 7,
    delivery_count_limit: int = DELIVERY_COUNT_LIMIT,
    copy_record: bool = False,
    transient_failures: int = 0,
    workers: int = 2,
    kafka_version: str | None = None,
) -> Result:
    """The poison message with a dead-letter topic (KIP-1191, Kafka 4.4): the handler always fails
    on ``job-<poison>`` (RELEASE) and the worker REJECTs ``job-<reject>``; every other record fails
    (RELEASE) on its first ``transient_failures`` deliveries - a dependency down for a while - and
    succeeds after. The group's ``errors.deadletterqueue.topic.name`` is a topic that opted in
    (``errors.deadletterqueue.group.enable``); the broker writes a dead letter there for each
    record it archives, the source's key and value only with ``copy_record``
    (``errors.deadletterqueue.copy.record.enable``). ``dead_letters``: the topic read back, each
    with the source record it stands for; ``archived_to_dlq`` of ``archived``. On a release without
    dead-letter queues (``kafka_version``, default the lab's) the configs are refused: ``refused``."""
    from .share_dead_letters import dlq_topic, read_topic

    cluster = _cluster(seed, 1, records, RECORD_LOCK_DURATION_MS, delivery_count_limit, kafka_version=kafka_version)
    settings = {
        "records": records,
        "poison": poison,
        "reject": reject,
        "delivery_count_limit": delivery_count_limit,
        "copy_record": copy_record,
        "transient_failures": transient_failures,
        "kafka_version": cluster.options.kafka_version,
    }
    try:
        dlq = dlq_topic(cluster, DLQ_TOPIC, numbered=False)
        cluster.alter_share_group_config(
            GROUP,
            {"errors.deadletterqueue.topic.name": dlq, "errors.deadletterqueue.copy.record.enable": copy_record},
        )
    except ValueError as refused:  # Kafka 4.3: "Unknown topic config name: errors.deadletterqueue..."
        numbers: dict = {"refused": str(refused), "dlq_topic": None, "dead_letters": [], "archived_to_dlq": 0}
        return _finish("dead_letter_topic", seed, dead_letter_topic, cluster, [], settings, numbers, set())
    bad, rejected = f"job-{poison}".encode(), f"job-{reject}".encode()

    def handler(m: Any) -> tuple[float, Any]:
        if m.value() == rejected:
            return 20, "reject"
        return 20, m.value() != bad and m.delivery_count() > transient_failures

    ws = [_worker(cluster, handler, 2) for _ in range(workers)]
    run_workers(cluster, ws, _drained(cluster, records), 120_000)
    observed = observe_share(cluster.history, TOPIC)
    # the dead letters are written after the archiving: let the broker finish writing them
    written: list = []

    def all_written() -> bool:
        written[:] = read_topic(cluster, dlq) or ()
        return len(written) >= len(observed.archived)

    cluster.run_until(all_written, 10_000)
    source = {(p, o): ds[0].message for (p, o), ds in observed.deliveries.items()}
    letters = [
        {
            "source": source.get(
                (int(r["headers"]["__dlq.errors.partition"]), int(r["headers"]["__dlq.errors.offset"]))
            ),
            "delivery_count": int(r["headers"]["__dlq.errors.delivery.count"]),
            "why": r["headers"]["__dlq.errors.message"],
            "key": r["key"],
            "value": r["value"],
            "headers": sorted(r["headers"]),
        }
        for r in written
    ]
    numbers = {
        "refused": None,
        "dlq_topic": dlq,
        "dead_letters": letters,
        # read again: the dead letters' events came after ``observed`` was read
        "archived_to_dlq": observe_share(cluster.history, TOPIC).archived_to_dead_letter_topic,
    }
    return _finish(
        "dead_letter_topic",
        seed,
        dead_letter_topic,
        cluster,
        ws,
        settings,
        numbers,
        {"redelivered", "archived"},
        limit=delivery_count_limit,
    )


@share_scenario
def ordering_across_workers(
    seed: int = 0, workers: int = 3, records: int = 30, fastest_ms: float = 10, slowest_ms: float = 300
) -> Result:
    """One partition, several workers whose handlers take varying time: the records are
    processed in another order than the partition's. (A consumer group would process one
    partition in order, on one consumer.)"""
    cluster = _cluster(seed, 1, records, RECORD_LOCK_DURATION_MS, DELIVERY_COUNT_LIMIT)
    rng = random.Random(seed)
    durations = {f"job-{i}".encode(): rng.uniform(fastest_ms, slowest_ms) for i in range(records)}
    ws = [_worker(cluster, lambda m: (durations[m.value()], True), 1) for _ in range(workers)]
    run_workers(cluster, ws, _drained(cluster, records), 300_000)
    settings = {"workers": workers, "records": records, "fastest_ms": fastest_ms, "slowest_ms": slowest_ms}
    return _finish(
        "ordering_across_workers",
        seed,
        ordering_across_workers,
        cluster,
        ws,
        settings,
        {},
        {"reordered_across_workers"} if workers > 1 else set(),
    )


@share_scenario
def leader_failover(
    seed: int = 0, records: int = 20, crash_after_ms: float = 1_000, handler_ms: float = 100, workers: int = 2
) -> Result:
    """The partition's leader crashes while workers are busy. The new leader reads the share
    coordinator's state: what was accepted stays accepted; what workers held at the crash is
    delivered again (acquisitions are not persisted), with the delivery count last persisted."""
    cluster = _cluster(seed, 1, records, RECORD_LOCK_DURATION_MS, DELIVERY_COUNT_LIMIT)
    ws = [_worker(cluster, _fixed(handler_ms), 3) for _ in range(workers)]
    box: dict = {}

    def crash_leader() -> None:
        leader = cluster.leader_of(TOPIC)
        obs = observe_share(cluster.history, TOPIC)
        box["accepted_before"] = len(obs.accepted)
        box["held"] = sum(len(w.queue) for w in ws)
        box["leader"] = leader
        if leader is not None:
            cluster.crash(leader)

    run_workers(cluster, ws, _drained(cluster, records), 180_000, faults=[(crash_after_ms, crash_leader)])
    settings = {"records": records, "crash_after_ms": crash_after_ms, "handler_ms": handler_ms, "workers": workers}
    numbers = {
        "crashed_leader": box.get("leader"),
        "accepted_before": box.get("accepted_before"),
        "held_at_failover": box.get("held"),
    }
    return _finish("leader_failover", seed, leader_failover, cluster, ws, settings, numbers, {"redelivered"})


@share_scenario
def share_group_vs_consumer_group(
    seed: int = 0, workers: int = 4, partitions: int = 2, records: int = 40, handler_ms: float = 100
) -> Result:
    """The same work - ``records`` records taking ``handler_ms`` each - on ``workers`` instances,
    once as a share group and once as a consumer group (on a twin cluster, same seed). With more
    workers than partitions the consumer group leaves workers idle and takes longer; the share
    group keeps everyone busy, at the price of a state write to the share coordinator for the
    acknowledgements and of order within a partition. Timing starts when every worker has its
    assignment and the records are written."""
    cluster = _cluster(seed, partitions, 0, RECORD_LOCK_DURATION_MS, DELIVERY_COUNT_LIMIT)
    ws = [_worker(cluster, _fixed(handler_ms), max_poll_records=2) for _ in range(workers)]
    cluster.run_until(lambda: all(w.assigned() for w in ws), 30_000)
    _produce(cluster, records, partitions)
    start = cluster.now
    run_workers(cluster, ws, _drained(cluster, records), 600_000)
    share_ms = cluster.now - start
    state_writes = cluster.inspect("__share_group_state").hw

    twin = _cluster(seed, partitions, 0, RECORD_LOCK_DURATION_MS, DELIVERY_COUNT_LIMIT)
    processed = partial(_processed, twin)
    gws = [SteppedGroupWorker(twin, "group-workers", TOPIC, handler_ms, processed, 2) for _ in range(workers)]
    join_group(gws)  # everyone polls until the group is stable with all of them
    _produce(twin, records, partitions)
    begin = twin.now
    run_workers(twin, gws, lambda: sum(1 for op in twin.history.ops if op.f == OpName.PROCESS) >= records, 600_000)
    group_ms = twin.now - begin
    per_share = _per_worker(cluster.history, ws)
    per_group = _per_worker(twin.history, gws)
    for w in gws:
        w.close()
    settings = {"workers": workers, "partitions": partitions, "records": records, "handler_ms": handler_ms}
    numbers = {
        "share_group_ms": round(share_ms),
        "consumer_group_ms": round(group_ms),
        "share_group_per_worker": per_share,
        "consumer_group_per_worker": per_group,
        "share_state_writes": state_writes,
        "consumer_group_commits": sum(1 for op in twin.history if op.f == OpName.COMMIT and op.type == "ok"),
    }
    return _finish(
        "share_group_vs_consumer_group", seed, share_group_vs_consumer_group, cluster, ws, settings, numbers, set()
    )


@share_scenario
def job_queue(
    seed: int = 0,
    workers: int = 3,
    records: int = 20,
    handler_ms: float = 100,
    lock_ms: float = RECORD_LOCK_DURATION_MS,
    renew: bool = False,
    poison_rate: float = 0.0,
    crash: bool = False,
    acknowledgement: str = "explicit",
    delivery_count_limit: int = DELIVERY_COUNT_LIMIT,
    max_poll_records: int = 3,
) -> Result:
    """A queue of jobs on one partition, every knob of the lesson at once (the "try it yourself"
    app and the demo): ``workers`` workers, a handler of ``handler_ms`` against a lock of
    ``lock_ms`` (with or without RENEW), a share ``poison_rate`` of jobs that always fail, the
    first worker crashing in the middle of the last job of its first batch, and explicit
    acknowledgement (each job ACCEPTed or RELEASEd as it ends) or implicit (the next poll
    ACCEPTs the whole batch: a crash loses the acknowledgement of every job finished since,
    and a failed job is accepted - never processed, never retried)."""
    if not 0 <= poison_rate <= 1:
        raise ValueError(f"poison_rate is a share of the jobs, from 0 to 1; got {poison_rate!r}")
    if acknowledgement not in ("explicit", "implicit"):
        raise ValueError(f"acknowledgement must be 'explicit' or 'implicit', got {acknowledgement!r}")
    if workers < 1 + bool(crash):
        raise ValueError(f"{workers} worker(s): a crash needs another worker to take over")
    cluster = _cluster(seed, 1, records, lock_ms, delivery_count_limit)
    rng = random.Random(seed)
    poison = set(rng.sample([f"job-{i}".encode() for i in range(records)], round(poison_rate * records)))
    ws = [
        _worker(
            cluster,
            lambda m: (handler_ms, m.value() not in poison),
            max_poll_records,
            lock_ms / 2 if renew else None,
            acknowledgement=acknowledgement,
        )
        for _ in range(workers)
    ]
    faults = []
    held = 0
    held_offsets: set = set()
    crashed_at: list[float] = []
    if crash:
        ws[0].take_first()  # it polls first: it holds the first records
        held = len(ws[0].queue)
        held_offsets = {m.offset() for _, m, _ in ws[0].queue}

        def crash_first() -> None:
            crashed_at.append(cluster.now)
            ws[0].crash()

        faults.append(((held - 0.5) * handler_ms, crash_first))  # in the middle of its last job
    budget = (delivery_count_limit + 2) * (handler_ms + lock_ms) * records + 60_000
    run_workers(cluster, ws, _drained(cluster, records), budget, faults=faults)
    observed = observe_share(cluster.history, TOPIC)
    settings = {
        "workers": workers,
        "records": records,
        "handler_ms": handler_ms,
        "lock_ms": lock_ms,
        "renew": renew,
        "poison_rate": poison_rate,
        "crash": crash,
        "acknowledgement": acknowledgement,
        "delivery_count_limit": delivery_count_limit,
        "max_poll_records": max_poll_records,
    }
    jobs = [f"job-{i}" for i in range(records)]
    again = [
        op.time_ms
        for op in cluster.history
        if op.f == OpName.SHARE_POLL and op.process != ws[0].name
        for _, o, _, count in op.value
        if count > 1 and o in held_offsets
    ]
    numbers = {
        "poison": sorted((p.decode() for p in poison), key=jobs.index),
        "held_at_crash": held,
        # from the crash to the first poll that got one of its records again (None: no crash)
        "redelivery_after_crash_ms": round(min(again) - crashed_at[0]) if again and crashed_at else None,
        "never_processed": [j for j in jobs if j not in observed.processed],
        "per_worker": _per_worker(cluster.history, ws),
    }
    # a lock starts at the poll: a batch's last job ends max_poll_records handler runs later
    batch_expires = not renew and handler_ms * min(max_poll_records, records) > lock_ms
    expected = set()
    if crash:  # explicit ACCEPTs each job as it ends: only the one in progress comes back
        expected |= {"redelivered"} | ({"duplicate_processing"} if not ws[0].explicit and held > 1 else set())
    if batch_expires:
        expected |= {"redelivered", "duplicate_processing"}
    if (not renew and handler_ms > lock_ms) or (poison and acknowledgement == "explicit"):
        expected |= {"redelivered", "archived"}
    return _finish(
        "job_queue", seed, job_queue, cluster, ws, settings, numbers, expected, acknowledgement, delivery_count_limit
    )
