"""The client differential: the same seeded sequences of application calls through the
simulator's own clients (on a simulated :class:`~course_lib.broker.Cluster`) and through
kafka-python 3.0.12 (on the same simulated brokers over TCP), comparing what the application
observes: each call's outcome (returned value, or which exception class) and what can be read at
the end. Both clients meet the same broker code, so a difference is a bug of the simulator's
client copy (``course_lib/clients``), unless it is listed in a ``KNOWN_*`` table with its reason.

Two kinds of sequence:

- **producer**: transactions in right and wrong orders, sends, flushes
  (:class:`ProducerDifferential`);
- **consumer**: assign, seek, poll, position, commit, committed, end offsets
  (:class:`ConsumerDifferential`).

``make test`` runs hundreds (tests/wire/test_client_differential.py,
tests/wire/test_consumer_differential.py), ``python -m bench wire --sequences N`` thousands.
"""

from __future__ import annotations

import random
import time
import warnings
from dataclasses import dataclass

from kafka import KafkaConsumer as RealConsumer
from kafka import KafkaProducer as RealProducer
from kafka import TopicPartition

from ..broker import Cluster
from ..clients import KafkaConsumer as SimConsumer
from ..clients import KafkaProducer as SimProducer
from .cluster import WireCluster

PRODUCER_CALLS = (
    "init_transactions",
    "begin_transaction",
    "send",
    "send",
    "flush",
    "commit_transaction",
    "abort_transaction",
)
CONSUMER_CALLS = (
    "assign_both",
    "assign_p0",
    "seek_p0_2",
    "seek_to_beginning",
    "read",
    "read",
    "position_p0",
    "commit",
    "committed_p0",
    "end_offsets",
    "seek_to_end",
)

#: (call, simulator outcome, kafka-python outcome) -> why they differ. Empty: the four differences
#: found first (wrong-order calls raising IllegalStateError instead of kafka-python's plain
#: KafkaError, a second init_transactions() refused) are fixed.
KNOWN_PRODUCER_DIFFERENCES: dict[tuple[str, str, str], str] = {}

#: (call, simulator outcome, kafka-python outcome) -> why they differ. Empty: the two found first
#: (commit() after seek_to_beginning(), committed() then seek_to_end() reading from 0: a stale
#: offset lookup applied after a newer seek) are fixed.
KNOWN_CONSUMER_DIFFERENCES: dict[tuple[str, str, str], str] = {}

RECORDS = 6  # per partition of the consumer sequences' topic
P0, P1 = TopicPartition("t", 0), TopicPartition("t", 1)


@dataclass(frozen=True)
class Difference:
    """One call whose outcome differs: enough to reproduce it (the seed gives the calls)."""

    kind: str
    seed: int
    calls: tuple[str, ...]
    call: str
    simulated: str
    real: str

    @property
    def known(self) -> bool:
        table = KNOWN_PRODUCER_DIFFERENCES if self.kind == "producer" else KNOWN_CONSUMER_DIFFERENCES
        return (self.call, self.simulated, self.real) in table

    def __str__(self) -> str:
        return (
            f"{self.kind} seed {self.seed}: {list(self.calls)}: {self.call}: "
            f"simulator {self.simulated}, kafka-python {self.real}"
        )


def _outcome(fn, compare_value: bool = True) -> str:
    """``fn()``'s result as compared: an exception class name, "ok", or the value's repr."""
    try:
        value = fn()
    except Exception as exc:  # noqa: BLE001 - the exception class is what is compared
        return type(exc).__name__
    return "ok" if value is None or not compare_value else repr(value)


# ---- producer sequences -------------------------------------------------------------------------
def _producer_call(producer, name: str, topic: str) -> str:
    """A send's future (and a call's return value) is not compared: that it returned is."""
    action = (lambda: producer.send(topic, b"v")) if name == "send" else getattr(producer, name)
    return _outcome(action, compare_value=False)


def transactions_settled(cluster: Cluster, topic: str) -> bool:
    """Every decided transaction has its markers written and replicated (Kafka writes them after
    EndTxn is answered: reading at once would compare timing, not outcomes)."""
    for broker in cluster.brokers.values():
        txns = broker.txns
        if broker.alive and (
            txns.markers_pending or any(m.state in ("PrepareCommit", "PrepareAbort") for m in txns.txns.values())
        ):
            return False
    leader = cluster._leader_replica(topic, 0)
    return leader.log.hw == leader.log.leo


class ProducerDifferential:
    """Transactional producer sequences; each seed gets its own topic and transactional id on the
    shared wire cluster and a fresh simulated cluster."""

    kind = "producer"

    def __init__(self, wire: WireCluster):
        self.wire = wire

    @staticmethod
    def calls(seed: int) -> tuple[str, ...]:
        rng = random.Random(seed)
        return tuple(rng.choice(PRODUCER_CALLS) for _ in range(rng.randint(3, 10)))

    def run(self, seed: int) -> list[Difference]:
        calls = self.calls(seed)
        topic, tid = f"t{seed}", f"tx-{seed}"

        cluster = Cluster(3, seed=seed)
        cluster.create_topic(topic, min_insync_replicas=2)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            simulated = SimProducer(bootstrap_servers=cluster, transactional_id=tid)
        sim_out = [_producer_call(simulated, c, topic) for c in calls]
        if not cluster.run_until(lambda: transactions_settled(cluster, topic), 10_000):
            raise AssertionError(f"producer seed {seed}: the simulator's transactions did not settle")
        sim_read = len(cluster.committed_records(topic, read_committed=True))

        wire = self.wire
        wire.create_topic(topic, min_insync_replicas=2)
        real = RealProducer(bootstrap_servers=wire.bootstrap_servers, transactional_id=tid, max_block_ms=5000)
        try:
            real_out = [_producer_call(real, c, topic) for c in calls]
        finally:
            real.close(timeout=5)
        if not wire.wait_until(lambda: transactions_settled(wire.cluster, topic), 10):
            raise AssertionError(f"producer seed {seed}: the wire cluster's transactions did not settle")
        real_read = wire.call(lambda: len(wire.cluster.committed_records(topic, read_committed=True)))

        found = [Difference(self.kind, seed, calls, c, s, r) for c, s, r in zip(calls, sim_out, real_out) if s != r]
        if sim_read != real_read:
            found.append(Difference(self.kind, seed, calls, "read_committed records", str(sim_read), str(real_read)))
        return found


# ---- consumer sequences -------------------------------------------------------------------------
def _read(consumer) -> list:
    """Poll until every assigned partition's position is at the end of the topic's fixed records
    (or 10 s): every record the assignment can give. A condition, not a quiet spell: kafka-python's
    first polls may come back empty while it looks up offsets, longer on a busy machine."""
    got: list = []
    deadline = time.monotonic() + 10
    while True:
        batch = [r for records in consumer.poll(200).values() for r in records]
        got += [(r.partition, r.offset, r.value) for r in batch]
        if all(consumer.position(tp) >= RECORDS for tp in consumer.assignment()) or time.monotonic() > deadline:
            return sorted(got)


_CONSUMER_ACTIONS = {
    "assign_both": lambda c: c.assign([P0, P1]),
    "assign_p0": lambda c: c.assign([P0]),
    "seek_p0_2": lambda c: c.seek(P0, 2),
    "seek_to_beginning": lambda c: c.seek_to_beginning(),
    "seek_to_end": lambda c: c.seek_to_end(),
    "read": _read,
    "position_p0": lambda c: c.position(P0),
    "commit": lambda c: c.commit(),
    "committed_p0": lambda c: c.committed(P0),
    "end_offsets": lambda c: dict(sorted((tp.partition, o) for tp, o in c.end_offsets([P0, P1]).items())),
}


class ConsumerDifferential:
    """Consumer sequences on one two-partition topic with the same records on both clusters; each
    seed is its own group. After the first difference a sequence is not compared further (the
    two consumers' states have parted)."""

    kind = "consumer"

    def __init__(self, wire: WireCluster):
        self.wire = wire
        wire.create_topic("t", partitions=2, min_insync_replicas=2)
        producer = RealProducer(bootstrap_servers=wire.bootstrap_servers, acks="all")
        for i in range(RECORDS * 2):
            producer.send("t", b"m%d" % i, partition=i % 2)
        producer.close()
        self.cluster = Cluster(3, seed=1, group_initial_rebalance_delay_ms=0)
        self.cluster.create_topic("t", partitions=2, min_insync_replicas=2)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            simulated = SimProducer(bootstrap_servers=self.cluster, acks="all")
        for i in range(RECORDS * 2):
            simulated.send("t", b"m%d" % i, partition=i % 2)
        simulated.flush()

    @staticmethod
    def calls(seed: int) -> tuple[str, ...]:
        rng = random.Random(seed)
        first = "assign_both" if rng.random() < 0.5 else "assign_p0"
        return (first, *(rng.choice(CONSUMER_CALLS) for _ in range(rng.randint(2, 7))))

    def _through(self, consumer, calls) -> list[str]:
        try:
            return [_outcome(lambda: _CONSUMER_ACTIONS[name](consumer)) for name in calls]
        finally:
            consumer.close(autocommit=False)

    def run(self, seed: int) -> list[Difference]:
        calls = self.calls(seed)
        config = dict(group_id=f"g{seed}", enable_auto_commit=False, auto_offset_reset="earliest")
        sim_out = self._through(SimConsumer(bootstrap_servers=self.cluster, **config), calls)
        real_out = self._through(RealConsumer(bootstrap_servers=self.wire.bootstrap_servers, **config), calls)
        for c, s, r in zip(calls, sim_out, real_out):
            if s != r:
                return [Difference(self.kind, seed, calls, c, s, r)]
        return []


def wire_for_differential() -> WireCluster:
    """The wire cluster the sequences share (started; stop it after)."""
    return WireCluster(brokers=3, seed=1, group_initial_rebalance_delay_ms=0).start()
