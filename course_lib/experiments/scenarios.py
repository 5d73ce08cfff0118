"""Named, seeded experiments: one call runs a workload against a fault and checks the result.

>>> r = run_scenario("lost_ack_retry", idempotent=False, seed=1)
>>> r.result.found, r.result.valid
({'duplicate'}, True)
>>> run_scenario("lost_ack_retry", idempotent=True, seed=1).result.found
set()

Every scenario follows Jepsen's shape: a workload (a producer sending numbered messages), a
nemesis (the fault), then heal everything, a final read, and the checker. Each is written once,
against :class:`course_lib.backend.Backend`, and runs on the simulator (the default: the same
seed gives the same history, so notebooks can quote the numbers) or on real Kafka::

    run_scenario("lost_ack_retry", backend=LocalCluster())     # or backend=connect(...)

A backend that cannot inject a scenario's fault says so (:class:`~course_lib.backend.MissingFault`).
:func:`course_lib.real.fidelity.fidelity_table` runs every scenario on both and compares.

Taught in notebooks/02_acks_and_durability to notebooks/04_idempotent_producer, and on real Kafka
in notebooks/09_real_kafka_lab.
"""

from __future__ import annotations

import random
from typing import Any
from functools import partial

from ..backend import open_backend
from ..clusters.lab import FAILURE_DETECTION, simulator_options
from .consumer_scenarios import (
    aborted_transaction,
    consume_transform_produce,
    consumer_crash,
    consumer_expected,
    external_store_exactly_once,
    transaction_timeout,
    zombie_fencing,
)
from ..history import Nemesis, OpName
from ..application.processing import CONSUMER_EXPECTED, GROUP, Names
from .scenario_framework import (
    SCENARIOS,
    TOPIC,
    PremiseLost,
    Result,
    _finish,
    _send_all,
    _summary,
    _unsafe_acks,
    run_scenario,
    scenario,
)


def _elected_after_crash(b, topic: str, crashed: int) -> int:
    """The follower elected once ``crashed`` (the leader) is fenced. These scenarios are about
    a follower taking over without the leader's last records; if none is elected, no follower was
    in the ISR when the leader died (on a loaded machine a paused follower is fenced after
    broker.session.timeout.ms), the partition waits for the crashed leader, and nothing is lost
    for a reason the scenario is not about: :class:`PremiseLost`, and the run is repeated.
    The controller moves the leadership in one step (to an ISR member or to none), so the first
    change seen decides."""
    elected = b.until(
        f"{topic}-0 to move its leadership away from the crashed {crashed}",
        lambda: b.leader_of(topic),
        lambda leader: leader != crashed,
    )
    if elected is None:
        raise PremiseLost(f"no follower of {topic}-0 was in the ISR when leader {crashed} crashed")
    return elected


# ---- producer scenarios ---------------------------------------------------------------------------
@scenario
def leader_crash_after_ack(seed: int = 0, backend=None, acks=1, messages: int = 10) -> Result:
    """The followers fall behind (paused, as a long GC pause would), the leader acknowledges
    ``messages`` writes, then crashes; a follower becomes leader.

    acks=0 or 1: the acknowledged writes the followers never fetched are lost. acks='all': none
    was acknowledged before the crash; the producer retries them on the new leader - nothing lost.

    On Kafka the pause is SIGSTOP and the crash SIGKILL; the followers are still in the ISR when
    the leader dies (fenced only after broker.session.timeout.ms), so one of them is elected.
    """
    unsafe = _unsafe_acks(acks)
    b = open_backend(backend, seed)
    b.require("leader_crash_after_ack", Nemesis.PAUSE, Nemesis.RESUME, Nemesis.CRASH)
    topic_cfg: dict[str, Any] = {"replication_factor": 3, "min_insync_replicas": 1 if unsafe else 2}
    config = {"acks": acks, "enable_idempotence": False} if unsafe else {"acks": acks}
    topic = b.create_topic(TOPIC, **topic_cfg)
    producer = b.producer(purpose="failover", **config)
    _send_all(producer, topic, "warmup", 3)
    producer.flush()
    b.settle(topic)  # acks=1 returns before the followers fetch: let them have the warm-up
    leader = b.leader_of(topic)
    followers = [r for r in b.replicas_of(topic) if r != leader]
    for f in followers:
        b.pause(f)
    futures = []
    for i in range(messages):  # one batch each: a paused follower takes in at most the first
        futures.append(producer.send(topic, f"m-{i}".encode()))
        b.until_acknowledged(futures[-1])  # the leader appends and (acks=0/1) acknowledges
    if unsafe:  # wait for the leader's acknowledgements (acks=all cannot get any now)
        b.wait_until(lambda: all(f.is_done for f in futures), 1000)
    acked_before_crash = sum(1 for op in b.history if op.f == OpName.SEND and op.type == "ok")
    b.crash(leader)
    for f in followers:
        b.resume(f)
    _elected_after_crash(b, topic, leader)
    producer.flush()
    return _finish(
        "leader_crash_after_ack",
        seed,
        _summary(leader_crash_after_ack),
        b,
        topic,
        config,
        topic_cfg,
        {"lost"} if unsafe else set(),
        crashed_leader=leader,
        acked_before_crash=acked_before_crash,
    )


@scenario
def not_enough_replicas(seed: int = 0, backend=None, acks="all", min_insync_replicas: int = 2) -> Result:
    """Both followers crash; once the controller fences them the ISR is just the leader.
    With acks='all' and min.insync.replicas=2 every write is refused (NotEnoughReplicas) and the
    producer is told - nothing is silently lost. With acks=1 the writes are accepted by a single
    replica."""
    b = open_backend(backend, seed)
    b.require("not_enough_replicas", Nemesis.CRASH)
    topic_cfg: dict[str, Any] = {"replication_factor": 3, "min_insync_replicas": min_insync_replicas}
    config = {"acks": acks, "delivery_timeout_ms": 5000, "request_timeout_ms": 1000, "linger_ms": 0}
    if _unsafe_acks(acks):
        config["enable_idempotence"] = False
    topic = b.create_topic(TOPIC, **topic_cfg)
    producer = b.producer(**config)
    leader = b.leader_of(topic)
    victims = [r for r in b.brokers if r != leader]
    for r in victims:
        b.crash(r)
    b.until_isr_shrinks(topic, to=1)  # the controller fenced the victims, and the leader knows
    futures = _send_all(producer, topic, "m", 5)
    producer.flush()
    errors = sorted({type(f.exception).__name__ for f in futures if f.failed()})
    return _finish(
        "not_enough_replicas",
        seed,
        not_enough_replicas.__doc__ or "",
        b,
        topic,
        config,
        topic_cfg,
        set(),
        errors=errors,
        failed=sum(1 for f in futures if f.failed()),
    )


@scenario
def lost_ack_retry(seed: int = 0, backend=None, idempotent: bool = False, close_connection: bool = False) -> Result:
    """The broker appends a batch but its response (the ACK) is lost; the producer times out and
    retries. Without idempotence the retry is appended again (a duplicate); with it the broker
    recognises the sequence number and answers with the first copy's offset."""
    b = open_backend(backend, seed)
    b.require("lost_ack_retry", Nemesis.LOSE_NEXT_ACK)
    topic_cfg: dict[str, Any] = {"replication_factor": 3, "min_insync_replicas": 2}
    # linger: the three sends after the lost ACK travel as one batch on every client and machine.
    # With none, a busy machine lets kafka-python's sender thread take m-2 alone; its retry then
    # lands after m-3 and m-4 - a reordering, which is retries_reorder's experiment, not this one.
    config = {
        "acks": "all",
        "enable_idempotence": idempotent,
        "request_timeout_ms": 2000,
        "delivery_timeout_ms": 30000,
        "linger_ms": 1000,
    }
    topic = b.create_topic(TOPIC, **topic_cfg)
    producer = b.producer(**config)
    _send_all(producer, topic, "m", 2)
    producer.flush()
    b.lose_next_ack(producer, topic, close=close_connection)
    _send_all(producer, topic, "m", 3, start=2)
    producer.flush()
    _send_all(producer, topic, "m", 2, start=5)
    producer.flush()
    return _finish(
        "lost_ack_retry",
        seed,
        lost_ack_retry.__doc__ or "",
        b,
        topic,
        config,
        topic_cfg,
        set() if idempotent else {"duplicate"},
    )


@scenario
def retries_reorder(seed: int = 0, backend=None, idempotent: bool = False, max_in_flight: int = 5) -> Result:
    """Two batches of one partition are in flight; the first request is lost, the second is
    appended, and the first is retried behind it. Idempotence (kafka-python keeps one batch per
    partition in flight) or max_in_flight_requests_per_connection=1 keep the order.

    The first request fails retriably while the ones behind it are appended: refused, answered
    late (``refuse_next_request``: the lab proxy on Kafka, the wire cluster's gateway), or where
    no broker refuses one, lost on the simulated network (``lose_next_request``: the simulator),
    which the simulated producer notices at its request timeout without losing the others."""
    b = open_backend(backend, seed)
    refuse = Nemesis.REFUSE_NEXT_REQUEST in b.faults
    b.require("retries_reorder", Nemesis.REFUSE_NEXT_REQUEST if refuse else Nemesis.LOSE_NEXT_REQUEST)
    topic_cfg: dict[str, Any] = {"replication_factor": 3, "min_insync_replicas": 2}
    config = {
        "acks": "all",
        "enable_idempotence": idempotent,
        "max_in_flight_requests_per_connection": max_in_flight,
        "request_timeout_ms": 2000,
        "delivery_timeout_ms": 30000,
    }
    topic = b.create_topic(TOPIC, **topic_cfg)
    producer = b.producer(**config)
    _send_all(producer, topic, "m", 1)
    producer.flush()
    # Whether a request will follow the first while it is in flight: without idempotence and with
    # more than one in flight each send goes out at once; a refused answer waits for the next one's.
    followed = not idempotent and max_in_flight > 1
    if refuse:
        b.refuse_next_request(producer, topic, followed=followed)
    else:
        b.lose_next_request(producer, topic)
    for i in range(1, 4):  # one request per message: each goes out before the next send
        producer.send(topic, f"m-{i}".encode())
        b.until_sent(producer)
    producer.flush()
    expected = {"reordered"} if followed else set()
    return _finish("retries_reorder", seed, retries_reorder.__doc__ or "", b, topic, config, topic_cfg, expected)


@scenario
def unclean_election(seed: int = 0, backend=None, unclean: bool = True, messages: int = 5) -> Result:
    """The followers crash and leave the ISR; the leader alone acknowledges writes
    (min.insync.replicas=1), then crashes; the followers come back. With unclean leader election an
    out-of-sync follower leads and the acknowledged writes are gone; without it the partition
    waits, offline, for the old leader - and loses nothing.

    On Kafka this needs a controller quorum that survives two dead brokers:
    ``LocalCluster(controllers=1)`` runs the KRaft controller as a process of its own."""
    b = open_backend(backend, seed)
    b.require("unclean_election", Nemesis.CRASH, Nemesis.RESTART)
    topic_cfg: dict[str, Any] = {
        "replication_factor": 3,
        "min_insync_replicas": 1,
        "unclean_leader_election_enable": unclean,
    }
    config = {"acks": "all"}
    topic = b.create_topic(TOPIC, **topic_cfg)
    producer = b.producer(**config)
    _send_all(producer, topic, "warmup", 2)
    producer.flush()
    leader = b.leader_of(topic)
    followers = [r for r in b.brokers if r != leader]
    for r in followers:
        b.crash(r)
    b.until_isr_shrinks(topic, to=1)  # the leader alone
    _send_all(producer, topic, "m", messages)
    producer.flush()
    b.crash(leader)
    for r in followers:
        b.restart(r)
    if unclean:  # once a follower has registered again, the controller elects it
        b.until_leader_elected(topic, not_=leader)
    else:  # the partition stays offline: give an election every chance to happen
        b.confirm_no_leader_elected(topic, not_=leader)
    leader_while_old_down = b.leader_of(topic)
    return _finish(
        "unclean_election",
        seed,
        unclean_election.__doc__ or "",
        b,
        topic,
        config,
        topic_cfg,
        {"lost"} if unclean else set(),
        leader_while_old_down=leader_while_old_down,
    )


@scenario
def fire_and_forget_crash(seed: int = 0, backend=None, messages: int = 40) -> Result:
    """acks=0: the producer sends a stream and never waits; the leader crashes halfway. Every
    future succeeded (offset -1), yet the records sent to the dead leader are gone.

    A real follower fetches within a millisecond, so where the backend needs it the followers are
    frozen (SIGSTOP on Kafka) before the stream starts and resumed after the crash: the records the
    crashed leader alone had are the lost ones. The simulator's followers lag by its network
    latency."""
    b = open_backend(backend, seed)
    b.require("fire_and_forget_crash", Nemesis.CRASH, *b.timing.holding_back_followers)
    topic_cfg: dict[str, Any] = {"replication_factor": 3, "min_insync_replicas": 1}
    config = {"acks": 0, "enable_idempotence": False}
    topic = b.create_topic(TOPIC, **topic_cfg)
    # sends held for the dead leader must find the new one
    producer = b.producer(purpose="metadata_refresh", **config)
    leader = b.leader_of(topic)
    followers = b.hold_back_followers(topic, leader)
    sends = [partial(producer.send, topic, f"m-{i}".encode()) for i in range(messages)]
    b.stream(
        sends,
        midway=[partial(b.crash, leader), *(partial(b.resume, r) for r in followers)],
    )
    _elected_after_crash(b, topic, leader)
    producer.flush()
    return _finish(
        "fire_and_forget_crash",
        seed,
        fire_and_forget_crash.__doc__ or "",
        b,
        topic,
        config,
        topic_cfg,
        {"lost"},
        crashed_leader=leader,
    )


@scenario
def producer_restart_gap(seed: int = 0, backend=None) -> Result:
    """An idempotent producer's ACK is lost and the application dies before the retry; the
    restarted application sends the message again with a *new* producer id, which the broker
    cannot match to the first copy: a duplicate despite idempotence (transactions close this gap)."""
    b = open_backend(backend, seed)
    b.require("producer_restart_gap", Nemesis.LOSE_NEXT_ACK, Nemesis.CRASH_CLIENT)
    topic_cfg: dict[str, Any] = {"replication_factor": 3, "min_insync_replicas": 2}
    config = {"acks": "all", "enable_idempotence": True}
    topic = b.create_topic(TOPIC, **topic_cfg)
    first = b.producer(purpose="no_retry_before_crash", **config)
    _send_all(first, topic, "m", 3)
    first.flush()
    b.lose_next_ack(first, topic)
    first.send(topic, b"m-3")
    b.until_appended(topic, 4)  # appended on the brokers; the ACK is gone
    b.crash_client(first)
    second = b.producer(**config)
    second.send(topic, b"m-3")  # the application's own retry after restart
    _send_all(second, topic, "m", 2, start=4)
    second.flush()
    return _finish(
        "producer_restart_gap",
        seed,
        producer_restart_gap.__doc__ or "",
        b,
        topic,
        config,
        topic_cfg,
        {"duplicate"},
        producer_ids=[first.producer_id, second.producer_id],
    )


# ---- many seeded trials ------------------------------------------------------------------------
#: the lab profile's failure detection, with a lagging follower dropped after 2 s (the lab: 10 s), so
#: trials take seconds of virtual time (the golden traces were recorded with these)
FAST_FAILOVER = {**simulator_options(FAILURE_DETECTION), "replica_lag_time_max_ms": 2000}


@scenario
def random_faults(
    seed: int = 0,
    backend=None,
    producer_config: dict | None = None,
    topic_config: dict | None = None,
    messages: int = 30,
    duration_ms: float = 10_000,
    faults: int = 8,
    kinds: tuple | None = None,
) -> Result:
    """A producer sends ``messages`` numbered messages over ``duration_ms`` while a random
    schedule of ``faults`` (crashes, pauses, isolation, lost ACKs and requests, slow links, an ISR
    shrink followed by the leader's death) drawn from ``seed`` hits the cluster; then everything
    heals and the log is read and checked.

    ``duration_ms`` (10 s) is longer than the broker session timeout of the fast-failover settings
    (3 s), so the ISR does shrink during a trial and ``min.insync.replicas`` matters; 8 faults
    keep about the fault density the 3 s, 4-fault trials had. The schedule is replayed on the
    simulator's virtual clock, to the millisecond, or on the wire cluster's simulation at wall-clock
    ms (the same schedule from the same seed); real Kafka cannot replay it. ``kinds``: the fault kinds to draw from
    (:data:`course_lib.nemesis.FAULT_KINDS`; None: all of them)."""
    b = open_backend(backend, seed, **FAST_FAILOVER)
    b.require("random_faults", Nemesis.SCHEDULE)
    topic_cfg: dict[str, Any] = {"replication_factor": 3, "min_insync_replicas": 2, **(topic_config or {})}
    config = {"request_timeout_ms": 1000, **(producer_config or {})}
    topic = b.create_topic(TOPIC, **topic_cfg)
    producer = b.producer(**config)
    rng = random.Random(f"nemesis-{seed}")
    schedule = b.schedule_faults(rng, duration_ms, kinds, faults, topic, producer)
    for i, at in enumerate(sorted(rng.uniform(0, duration_ms) for _ in range(messages))):
        b.at(at, producer.send, topic, f"m-{i}".encode())
    b.wait(duration_ms + max((f.duration_ms for f in schedule), default=0) + 10)
    b.heal()
    producer.flush()
    return _finish(
        "random_faults", seed, _summary(random_faults), b, topic, config, topic_cfg, set(), schedule=schedule
    )


def trials(seeds, **kwargs) -> list[Result]:
    """Run :func:`random_faults` once per seed (with a progress bar in notebooks)."""
    from ..progress import progress

    return [random_faults(seed=s, **kwargs) for s in progress(list(seeds), "seeded trials")]


__all__ = [
    "SCENARIOS",
    "run_scenario",
    "trials",
    "consumer_expected",
    "TOPIC",
    "GROUP",
    "Names",
    "CONSUMER_EXPECTED",
    # the consumer and transaction scenarios (course_lib.experiments.consumer_scenarios), here as before
    "consumer_crash",
    "consume_transform_produce",
    "external_store_exactly_once",
    "aborted_transaction",
    "zombie_fencing",
    "transaction_timeout",
]
