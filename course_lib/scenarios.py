"""Named, seeded experiments: one call runs a workload against a fault and checks the result.

>>> r = run_scenario("lost_ack_retry", idempotent=False, seed=1)
>>> r.result.found, r.result.valid
({'duplicate'}, True)
>>> run_scenario("lost_ack_retry", idempotent=True, seed=1).result.found
set()

Every scenario follows Jepsen's shape: a workload (a producer sending numbered messages), a
nemesis (the fault), then heal everything, a final read, and the checker. The same seed gives
the same history, so notebooks can quote the numbers. The real-Kafka lab runs the same names
against a real cluster (course_lib.real) and the fidelity table compares the two.

Taught in notebooks/02_acks_and_durability to notebooks/04_idempotent_producer.
"""
from __future__ import annotations

import random
import warnings
from dataclasses import dataclass, field
from typing import Callable

from .broker import Cluster
from .checker import CheckResult, check
from .clients import KafkaConsumer, KafkaProducer
from .history import History
from .nemesis import FAULT_KINDS, apply_schedule, random_schedule
from .processing import run_pipeline

TOPIC = "events"


@dataclass
class ScenarioResult:
    name: str
    seed: int
    description: str
    producer_config: dict
    topic_config: dict
    history: History
    result: CheckResult
    cluster: Cluster
    expected: set = field(default_factory=set)
    notes: dict = field(default_factory=dict)

    @property
    def anomalies(self) -> set[str]:
        return self.result.found

    def __repr__(self) -> str:
        return f"<ScenarioResult {self.name} seed={self.seed}: {self.result.summary()}>"

    def _repr_html_(self) -> str:
        return f"<h4>{self.name} (seed {self.seed})</h4><p>{self.description}</p>" + self.result._repr_html_()


SCENARIOS: dict[str, Callable[..., ScenarioResult]] = {}


def scenario(fn):
    SCENARIOS[fn.__name__] = fn
    return fn


def run_scenario(name: str, seed: int = 0, **kwargs) -> ScenarioResult:
    try:
        fn = SCENARIOS[name]
    except KeyError:
        raise ValueError(f"no scenario {name!r}; choose one of {sorted(SCENARIOS)}") from None
    return fn(seed=seed, **kwargs)


# ---- building blocks -----------------------------------------------------------------------------
def _cluster(seed: int, topic: dict, **options) -> Cluster:
    cluster = Cluster(brokers=3, seed=seed, **options)
    cluster.create_topic(TOPIC, **topic)
    return cluster


def _producer(cluster: Cluster, config: dict) -> KafkaProducer:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scenarios set enable_idempotence explicitly when it matters
        return KafkaProducer(bootstrap_servers=cluster, **config)


def _send_all(producer: KafkaProducer, prefix: str, n: int, start: int = 0) -> list:
    return [producer.send(TOPIC, f"{prefix}-{i}".encode()) for i in range(start, start + n)]


def _finish(name, seed, description, cluster, producer_config, topic, expected, **notes) -> ScenarioResult:
    cluster.final_read(TOPIC)
    result = check(cluster.history, producer_config, topic)
    return ScenarioResult(name, seed, description, producer_config, topic, cluster.history, result,
                          cluster, set(expected), notes)


# ---- producer scenarios ---------------------------------------------------------------------------
@scenario
def leader_crash_after_ack(seed: int = 0, acks=1, messages: int = 10) -> ScenarioResult:
    """The followers fall behind (paused, as a long GC pause would), the leader acknowledges
    ``messages`` writes, then crashes; a follower becomes leader.

    acks=1: the acknowledged writes the followers never fetched are lost. acks='all': none was
    acknowledged before the crash; the producer retries them on the new leader - nothing lost.
    """
    topic = {"replication_factor": 3, "min_insync_replicas": 2 if acks in ("all", -1) else 1}
    config = {"acks": acks} if acks in ("all", -1) else {"acks": acks, "enable_idempotence": False}
    cluster = _cluster(seed, topic)
    producer = _producer(cluster, config)
    _send_all(producer, "warmup", 3)
    producer.flush()
    leader = cluster.leader_of(TOPIC)
    followers = [b for b in cluster.partition_state(TOPIC)["replicas"] if b != leader]
    for b in followers:
        cluster.pause(b)
    for i in range(messages):  # one batch each: a paused follower takes in at most the first
        producer.send(TOPIC, f"m-{i}".encode())
        cluster.run_for(5)  # the leader appends and (acks=1) acknowledges
    acked_before_crash = sum(1 for op in cluster.history if op.f == "send" and op.type == "ok")
    cluster.crash(leader)
    for b in followers:
        cluster.resume(b)
    producer.flush()
    return _finish("leader_crash_after_ack", seed, leader_crash_after_ack.__doc__.split("\n\n")[0],
                   cluster, config, topic, {"lost"} if acks in (1, "1") else set(),
                   crashed_leader=leader, acked_before_crash=acked_before_crash)


@scenario
def not_enough_replicas(seed: int = 0, acks="all", min_insync_replicas: int = 2) -> ScenarioResult:
    """Both followers crash; once the controller fences them the ISR is just the leader.
    With acks='all' and min.insync.replicas=2 every write is refused (NotEnoughReplicas) and the
    producer is told - nothing is silently lost. With acks=1 the writes are accepted by a single
    replica."""
    topic = {"replication_factor": 3, "min_insync_replicas": min_insync_replicas}
    config = {"acks": acks, "delivery_timeout_ms": 5000, "request_timeout_ms": 1000, "linger_ms": 0}
    if acks not in ("all", -1):
        config["enable_idempotence"] = False
    cluster = _cluster(seed, topic)
    producer = _producer(cluster, config)
    leader = cluster.leader_of(TOPIC)
    for b in sorted(cluster.brokers):
        if b != leader:
            cluster.crash(b)
    cluster.run_until(lambda: len(cluster.partition_state(TOPIC)["isr"]) == 1, 30_000)
    futures = _send_all(producer, "m", 5)
    producer.flush()
    errors = sorted({type(f.exception).__name__ for f in futures if f.failed()})
    result = _finish("not_enough_replicas", seed, not_enough_replicas.__doc__, cluster, config, topic,
                     set(), errors=errors, failed=sum(f.failed() for f in futures))
    return result


@scenario
def lost_ack_retry(seed: int = 0, idempotent: bool = False, close_connection: bool = False) -> ScenarioResult:
    """The broker appends a batch but its response (the ACK) is lost; the producer times out and
    retries. Without idempotence the retry is appended again (a duplicate); with it the broker
    recognises the sequence number and answers with the first copy's offset."""
    topic = {"replication_factor": 3, "min_insync_replicas": 2}
    config = {"acks": "all", "enable_idempotence": idempotent, "request_timeout_ms": 2000,
              "delivery_timeout_ms": 30000}
    cluster = _cluster(seed, topic)
    producer = _producer(cluster, config)
    _send_all(producer, "m", 2)
    producer.flush()
    cluster.lose_next_ack(producer.node_id, close=close_connection)
    _send_all(producer, "m", 3, start=2)
    producer.flush()
    _send_all(producer, "m", 2, start=5)
    producer.flush()
    return _finish("lost_ack_retry", seed, lost_ack_retry.__doc__, cluster, config, topic,
                   set() if idempotent else {"duplicate"})


@scenario
def retries_reorder(seed: int = 0, idempotent: bool = False, max_in_flight: int = 5) -> ScenarioResult:
    """Two batches of one partition are in flight; the first request is lost, the second is
    appended, and the first is retried behind it. Idempotence (kafka-python keeps one batch per
    partition in flight) or max_in_flight_requests_per_connection=1 keep the order."""
    topic = {"replication_factor": 3, "min_insync_replicas": 2}
    config = {"acks": "all", "enable_idempotence": idempotent,
              "max_in_flight_requests_per_connection": max_in_flight, "request_timeout_ms": 2000,
              "delivery_timeout_ms": 30000}
    cluster = _cluster(seed, topic)
    producer = _producer(cluster, config)
    _send_all(producer, "m", 1)
    producer.flush()
    cluster.lose_next_request(producer.node_id)
    for i in range(1, 4):  # one request per message: each goes out before the next send
        producer.send(TOPIC, f"m-{i}".encode())
        cluster.run_for(0.1)
    producer.flush()
    expected = {"reordered"} if not idempotent and max_in_flight > 1 else set()
    return _finish("retries_reorder", seed, retries_reorder.__doc__, cluster, config, topic, expected)


@scenario
def unclean_election(seed: int = 0, unclean: bool = True, messages: int = 5) -> ScenarioResult:
    """The followers crash and leave the ISR; the leader alone acknowledges writes
    (min.insync.replicas=1), then crashes; the followers come back. With unclean leader election an
    out-of-sync follower leads and the acknowledged writes are gone; without it the partition
    waits, offline, for the old leader - and loses nothing."""
    topic = {"replication_factor": 3, "min_insync_replicas": 1, "unclean_leader_election_enable": unclean}
    config = {"acks": "all"}
    cluster = _cluster(seed, topic)
    producer = _producer(cluster, config)
    _send_all(producer, "warmup", 2)
    producer.flush()
    leader = cluster.leader_of(TOPIC)
    followers = [b for b in sorted(cluster.brokers) if b != leader]
    for b in followers:
        cluster.crash(b)
    cluster.run_until(lambda: cluster.partition_state(TOPIC)["isr"] == [leader], 30_000)
    _send_all(producer, "m", messages)
    producer.flush()
    cluster.crash(leader)
    for b in followers:
        cluster.restart(b)
    cluster.run_for(15_000)
    leader_while_old_down = cluster.leader_of(TOPIC)
    return _finish("unclean_election", seed, unclean_election.__doc__, cluster, config, topic,
                   {"lost"} if unclean else set(), leader_while_old_down=leader_while_old_down)


@scenario
def fire_and_forget_crash(seed: int = 0, messages: int = 40) -> ScenarioResult:
    """acks=0: the producer sends a stream and never waits; the leader crashes halfway. Every
    future succeeded (offset -1), yet the records sent to the dead leader are gone."""
    topic = {"replication_factor": 3, "min_insync_replicas": 1}
    config = {"acks": 0, "enable_idempotence": False}
    cluster = _cluster(seed, topic)
    producer = _producer(cluster, config)
    leader = cluster.leader_of(TOPIC)
    for i in range(messages):
        cluster.at(i * 1.0, producer.send, TOPIC, f"m-{i}".encode())
    cluster.at(messages / 2, cluster.crash, leader)
    cluster.run_for(messages + 5)
    producer.flush()
    return _finish("fire_and_forget_crash", seed, fire_and_forget_crash.__doc__, cluster, config, topic,
                   {"lost"}, crashed_leader=leader)


@scenario
def producer_restart_gap(seed: int = 0) -> ScenarioResult:
    """An idempotent producer's ACK is lost and the application dies before the retry; the
    restarted application sends the message again with a *new* producer id, which the broker
    cannot match to the first copy: a duplicate despite idempotence (transactions close this gap)."""
    topic = {"replication_factor": 3, "min_insync_replicas": 2}
    config = {"acks": "all", "enable_idempotence": True}
    cluster = _cluster(seed, topic)
    first = _producer(cluster, config)
    _send_all(first, "m", 3)
    first.flush()
    cluster.lose_next_ack(first.node_id)
    first.send(TOPIC, b"m-3")
    cluster.run_for(20)  # appended on the brokers; the ACK is gone
    first.crash()
    second = _producer(cluster, config)
    second.send(TOPIC, b"m-3")  # the application's own retry after restart
    _send_all(second, "m", 2, start=4)
    second.flush()
    return _finish("producer_restart_gap", seed, producer_restart_gap.__doc__, cluster, config, topic,
                   {"duplicate"}, producer_ids=[first.producer_id, second.producer_id])


# ---- many seeded trials ------------------------------------------------------------------------
#: lab-friendly timeouts, the same the real-Kafka lab uses, so trials take seconds of virtual time
FAST_FAILOVER = dict(broker_session_timeout_ms=3000, broker_heartbeat_interval_ms=500,
                     replica_lag_time_max_ms=2000)


@scenario
def random_faults(seed: int = 0, producer_config: dict | None = None, topic_config: dict | None = None,
                  messages: int = 30, duration_ms: float = 10_000, faults: int = 4,
                  kinds: tuple = FAULT_KINDS) -> ScenarioResult:
    """A producer sends ``messages`` numbered messages over ``duration_ms`` while a random
    schedule of ``faults`` (crashes, pauses, isolation, lost ACKs and requests, slow links, an ISR
    shrink followed by the leader's death) drawn from ``seed`` hits the cluster; then everything
    heals and the log is read and checked.

    ``duration_ms`` (10 s) is longer than the broker session timeout of the fast-failover settings
    (3 s), so the ISR does shrink during a trial and ``min.insync.replicas`` matters."""
    topic = {"replication_factor": 3, "min_insync_replicas": 2, **(topic_config or {})}
    config = {"request_timeout_ms": 1000, **(producer_config or {})}
    cluster = Cluster(brokers=3, seed=seed, **FAST_FAILOVER)
    cluster.create_topic(TOPIC, **topic)
    producer = _producer(cluster, config)
    rng = random.Random(f"nemesis-{seed}")
    schedule = random_schedule(rng, duration_ms, sorted(cluster.brokers), kinds, faults)
    apply_schedule(cluster, schedule, TOPIC, producer.node_id)
    for i, at in enumerate(sorted(rng.uniform(0, duration_ms) for _ in range(messages))):
        cluster.at(at, producer.send, TOPIC, f"m-{i}".encode())
    cluster.run_for(duration_ms + max((f.duration_ms for f in schedule), default=0) + 10)
    cluster.heal_all()
    producer.flush()
    return _finish("random_faults", seed, random_faults.__doc__.split("\n\n")[0], cluster, config, topic,
                   set(), schedule=schedule)


def trials(seeds, **kwargs) -> list[ScenarioResult]:
    """Run :func:`random_faults` once per seed (with a progress bar in notebooks)."""
    from tqdm.auto import tqdm
    return [random_faults(seed=s, **kwargs) for s in tqdm(list(seeds), desc="seeded trials", leave=False)]


# ---- consumers and transactions -------------------------------------------------------------------
#: what each consuming application shows when it crashes at each point (synchronous processing)
CONSUMER_EXPECTED = {
    ("at-most-once", "after_poll"): set(), ("at-most-once", "mid_batch"): {"lost_in_processing"},
    ("at-most-once", "after_process"): set(), ("at-most-once", "after_commit"): {"lost_in_processing"},
    ("at-least-once", "after_poll"): set(), ("at-least-once", "mid_batch"): {"duplicate_processing"},
    ("at-least-once", "after_process"): {"duplicate_processing"}, ("at-least-once", "after_commit"): set(),
    ("auto-commit", "after_poll"): set(), ("auto-commit", "mid_batch"): {"duplicate_processing"},
    ("auto-commit", "after_process"): {"duplicate_processing"},
    ("auto-commit", "after_commit"): {"duplicate_processing"},
}


@scenario
def consumer_crash(seed: int = 0, semantics: str = "at-least-once", crash_point: str = "after_process",
                   buffered: bool = False):
    """A consuming application crashes at ``crash_point`` and is restarted; its output is compared
    with its input. See :mod:`course_lib.processing` for the semantics and crash points."""
    result = run_pipeline(semantics, crash_point, seed=seed, buffered=buffered)
    if semantics.startswith("exactly-once"):
        result.expected = set()
    elif buffered and semantics == "auto-commit" and crash_point == "after_poll":
        result.expected = {"lost_in_processing"}
    else:
        result.expected = CONSUMER_EXPECTED[(semantics, crash_point)]
    return result


@scenario
def consume_transform_produce(seed: int = 0, crash_point: str = "mid_batch"):
    """Read, transform, write to another topic in a transaction that also commits the consumed
    offsets; crash anywhere; exactly once in the output."""
    return consumer_crash(seed, "exactly-once-kafka", crash_point)


@scenario
def external_store_exactly_once(seed: int = 0, crash_point: str = "mid_batch"):
    """Output and offsets in one SQLite transaction; seek from the stored offset on restart."""
    return consumer_crash(seed, "exactly-once-external", crash_point)


@scenario
def aborted_transaction(seed: int = 0, isolation_level: str = "read_committed") -> ScenarioResult:
    """A transactional producer commits a transaction, aborts the next, commits a third. A
    read_committed consumer never sees the aborted records; a read_uncommitted one does. The
    markers take offsets: the partition has gaps."""
    cluster = _cluster(seed, {"replication_factor": 3, "min_insync_replicas": 2, "partitions": 1})
    producer = _producer(cluster, {"transactional_id": "writer"})
    producer.init_transactions()
    for label, commit in (("a", True), ("b", False), ("c", True)):
        producer.begin_transaction()
        _send_all(producer, label, 3)
        producer.flush()
        producer.commit_transaction() if commit else producer.abort_transaction()
    consumer = KafkaConsumer(bootstrap_servers=cluster, isolation_level=isolation_level,
                             auto_offset_reset="earliest", client_id="reader")
    consumer.assign([(TOPIC, 0)])
    seen = []
    for _ in range(5):
        for records in consumer.poll(timeout_ms=200).values():
            seen += [(r.offset, r.value.decode()) for r in records]
    cluster.final_read(TOPIC, isolation_level="read_committed")
    spec = {"semantics": None, "isolation_level": isolation_level, "input": TOPIC}
    result = check(cluster.history, {"transactional_id": "writer"}, None, consumer=spec)
    return ScenarioResult("aborted_transaction", seed, aborted_transaction.__doc__, {"transactional_id": "writer"},
                          {"isolation_level": isolation_level}, cluster.history, result, cluster,
                          set() if isolation_level == "read_committed" else {"aborted_read"},
                          {"seen": seen, "log_end_offset": cluster.partition_state(TOPIC)["replicas"][
                              cluster.leader_of(TOPIC)]["leo"]})


@scenario
def zombie_fencing(seed: int = 0, messages: int = 10) -> ScenarioResult:
    """Instance A of a consume-transform-produce app freezes in the middle of a transaction (a long
    GC pause); B replaces it with the same transactional_id, which fences A and aborts its open
    transaction. A wakes up and tries to commit: ProducerFenced. The output has every input once."""
    from .processing import GROUP, INPUT, OUTPUT, Processor
    cluster = Cluster(brokers=3, seed=seed, group_initial_rebalance_delay_ms=0)
    for name in (INPUT, OUTPUT):
        cluster.create_topic(name, partitions=2, min_insync_replicas=2)
    loader = _producer(cluster, {})
    for i in range(messages):
        loader.send(INPUT, f"msg-{i}".encode(), key=str(i).encode())
    loader.flush()
    zombie = Processor(cluster, "exactly-once-kafka", None, 1)
    batch = []
    while not batch:
        batch = [r for rs in zombie.consumer.poll(timeout_ms=500).values() for r in rs]
    zombie.producer.begin_transaction()
    for record in batch:
        zombie.process(record)
    zombie.producer.flush()               # its outputs are in the log, uncommitted
    zombie.consumer._heartbeat_gen += 1   # frozen: no heartbeats, no polls
    cluster.record("nemesis", "freeze", {"client": zombie.consumer.node_id})
    replacement = Processor(cluster, "exactly-once-kafka", None, 2)  # init_transactions() fences A
    replacement.run()
    cluster.record("nemesis", "wake", {"client": zombie.consumer.node_id})
    fenced = None
    try:
        zombie.producer.send_offsets_to_transaction(zombie.consumer.positions, zombie.consumer.group_metadata())
        zombie.producer.commit_transaction()
    except Exception as exc:  # ProducerFencedError (or CommitFailedError from the group)
        fenced = type(exc).__name__
    replacement.consumer.close()
    cluster.final_read(INPUT)
    cluster.final_read(OUTPUT, isolation_level="read_committed")
    spec = {"semantics": "exactly-once-kafka", "isolation_level": "read_committed", "input": INPUT, "output": OUTPUT}
    result = check(cluster.history, {"acks": "all"}, None, consumer=spec)
    return ScenarioResult("zombie_fencing", seed, zombie_fencing.__doc__, {"transactional_id": "processor"}, {},
                          cluster.history, result, cluster, set(), {"zombie_error": fenced, "group": GROUP})


@scenario
def transaction_timeout(seed: int = 0, transaction_timeout_ms: int = 5000) -> ScenarioResult:
    """A producer opens a transaction, writes, and hangs. After transaction_timeout_ms the
    coordinator aborts it (bumping the epoch); read_committed consumers move on; the producer's
    late commit is refused."""
    cluster = Cluster(brokers=3, seed=seed, transaction_abort_timed_out_transaction_cleanup_interval_ms=1000)
    cluster.create_topic(TOPIC, min_insync_replicas=2)
    producer = _producer(cluster, {"transactional_id": "slow", "transaction_timeout_ms": transaction_timeout_ms})
    producer.init_transactions()
    producer.begin_transaction()
    _send_all(producer, "m", 3)
    producer.flush()
    stuck_lso = cluster.brokers[cluster.leader_of(TOPIC)].partitions[(TOPIC, 0)].readable_end(True)
    cluster.run_for(transaction_timeout_ms + 3000)  # the producer hangs
    error = None
    try:
        producer.commit_transaction()
    except Exception as exc:
        error = type(exc).__name__
    cluster.final_read(TOPIC, isolation_level="read_committed")
    result = check(cluster.history, {"transactional_id": "slow"}, None)
    return ScenarioResult("transaction_timeout", seed, transaction_timeout.__doc__,
                          {"transactional_id": "slow", "transaction_timeout_ms": transaction_timeout_ms}, {},
                          cluster.history, result, cluster, set(),
                          {"late_commit_error": error, "lso_while_open": stuck_lso})
