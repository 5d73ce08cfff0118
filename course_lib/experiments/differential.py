"""The client differential: the same seeded sequences of application calls through the
simulator's own clients (on a simulated :class:`~course_lib.broker.Cluster`) and through
kafka-python 3.0.12 (on the same simulated brokers over TCP), comparing what the application
observes: each call's outcome (returned value, or which exception class) and what can be read at
the end. Both clients meet the same broker code, so a difference is a bug of the simulator's
client copy (``course_lib/clients``), unless it is listed in a ``KNOWN_*`` table with its reason.

Two kinds of sequence:

- **producer**: transactions in right and wrong orders, sends, flushes under one of eight
  configurations (acks, idempotence, retries, in-flight, timeouts, linger), with a leader crash,
  a lost ACK or a paused follower between calls (a lost request, a lost ACK or a leader crash
  inside a transaction: :data:`TXN_FAULTS`) and a ``close(timeout)`` at the end; compared
  also: every send future's outcome, the final close and the whole log as read_uncommitted sees
  it (records, aborted flags, markers, offsets) (:class:`ProducerDifferential`);
- **consumer**: assign, seek, poll, position, commit, committed, end offsets, and maybe a
  ``close(timeout_ms)`` with calls after it, on a plain topic or on one written in committed
  and aborted transactions, read committed or uncommitted (:class:`ConsumerDifferential`).

Half the seeds of each kind also get the rest of kafka-python's public API put anywhere in their
sequence (:data:`PRODUCER_EXTRAS`, :data:`CONSUMER_EXTRAS`: subscribe, pause, highwater,
commit_async, offsets_for_times, send_offsets_to_transaction...), a close with calls after it,
and for the producer a fault in any configuration, a transactional one's calls in any order too;
a quarter of the consumer seeds get a leader crash between two calls after their first read
(:data:`CONSUMER_FAULTS`) (issue 38) - each drawn from a random of its own, so
the calls a seed drew before stay.

Configuration validation, the third kind, is :mod:`course_lib.experiments.config_differential`.
``make test`` runs hundreds (tests/wire/test_client_differential.py,
tests/wire/test_consumer_differential.py), ``python -m bench wire --sequences N`` thousands.
"""

from __future__ import annotations

import random
import re
import time
import warnings
from dataclasses import dataclass, field
from typing import Any

from kafka import TopicPartition
from kafka.structs import OffsetAndMetadata

from ..broker import Cluster
from ..broker.txn_coordinator import markers_written
from ..client_adapters import library_consumer, library_producer
from ..client_adapters.call_sequences import (
    Action,
    Said,
    SequenceCluster,
    answer,
    method,
    replay,
    wait_for_outcomes,
)
from ..wire.cluster import WireCluster
from .sequence_clusters import VirtualClock, WallClock

#: the two clients compared, each with its library's whole API (client_adapters.library): the
#: simulator's on a simulated Cluster, kafka-python's on the wire cluster
SIMULATED, REAL = "simulator", "kafka-python"

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

#: the rest of kafka-python's public consumer API (all but metrics() and bootstrap*(), which
#: measure the client, not the cluster), put anywhere in a sequence - before its assign() too -
#: from a random of each seed's own (:meth:`ConsumerDifferential.calls`), so the calls the menu
#: above drew stay as they were (issue 38)
CONSUMER_EXTRAS = (
    "subscribe",
    "unsubscribe",
    "assignment",
    "subscription",
    "pause_p0",
    "resume_p0",
    "paused",
    "seek_p1_1",
    "seek_to_beginning_p0",
    "seek_to_end_p1",
    "position_p1",
    "highwater_p0",
    "commit_p0_3",
    "commit_async",
    "committed_p1_metadata",
    "beginning_offsets",
    "offsets_for_times",
    "topics",
    "partitions_for_topic",
    "group_metadata",
    "close_0",
    "close_5",
)

#: faults a consumer sequence may have between two calls after its first read (one, in
#: :data:`CONSUMER_FAULT_SHARE` of the seeds, from a random of its own): its topic's partition 0
#: leader crashed, revived after the sequence's close. Not before the first read: the simulator
#: looks positions up as soon as it can (``_Partition.early``: the lessons' timelines were
#: measured so), so its lookups may already be on their way to the broker the fault hits where
#: kafka-python has sent nothing yet (seeds 31 and 56, drawn so, waited out a request timeout on
#: one side only). Not a paused follower: a paused broker answers nothing, and the node each
#: client picks for a metadata or offsets request (kafka-python's least loaded one) differs, so one
#: side waits out request_timeout_ms where the other asked elsewhere - the node asked, not the
#: clients' rules (seeds 362, 452, 487)
CONSUMER_FAULTS = ("crash_leader",)
CONSUMER_FAULT_SHARE = 0.25

#: (call, simulator outcome, kafka-python outcome) -> why they differ. Empty: the four differences
#: found first (wrong-order calls raising IllegalStateError instead of kafka-python's plain
#: KafkaError, a second init_transactions() refused) are fixed.
KNOWN_PRODUCER_DIFFERENCES: dict[tuple[str, str, str], str] = {}

#: (call, simulator outcome, kafka-python outcome) as regular expressions -> why they differ: the
#: producer differences the new observables found that stay (each with its reason).
KNOWN_PRODUCER_PATTERNS: dict[tuple[str, str, str], str] = {
    (r"send #\d+'s future", r"ok offset -1", r"ok offset \d+"): (
        "acks=0: kafka-python 3.0.12 synthesizes the missing answer with base offset 0, so each "
        "future reports its index in its batch as its offset; the simulator reports -1 (no offset: "
        "no broker answered), as Java does and as notebook 02 teaches"
    ),
}

#: (configuration, fault) -> why every difference of a sequence with both differs.
KNOWN_PRODUCER_SEQUENCES: dict[tuple[str, str], str] = {
    ("acks=0", "crash_leader"): (
        "acks=0 after a crash: the simulator's clock stands still between calls, so a record whose "
        "future is done (at once, with acks=0) may still be on the simulated network when the "
        "leader crashes and is refused there; kafka-python's was on the wire already, or waits to "
        "connect to the new leader (see the next entry): the simulator loses records kafka-python "
        "writes"
    ),
    ("retries=0", "crash_leader"): (
        "the simulated network has no connect step: a send to the crashed leader is refused after "
        "one latency and spends the batch's one attempt (KafkaConnectionError, or "
        "NotLeaderForPartitionError from a broker whose metadata is a step behind); kafka-python "
        "only drains batches for a node it is connected to, so with retries=0 its records wait in "
        "the accumulator for the new leader and succeed. With retries > 0 both succeed. Fixing it "
        "needs a connection state in course_lib/sim/network.py, which would change the "
        "simulator's fault traces (the golden traces)"
    ),
}

#: (call, simulator outcome, kafka-python outcome) -> why they differ. Empty: the two found first
#: (commit() after seek_to_beginning(), committed() then seek_to_end() reading from 0: a stale
#: offset lookup applied after a newer seek) are fixed.
KNOWN_CONSUMER_DIFFERENCES: dict[tuple[str, str, str], str] = {}

#: closes a consumer sequence may have (after its first call): close(timeout_ms=...) with 0 and
#: 5 s; the calls after it show what a closed consumer does
CONSUMER_CLOSES = ("close_0", "close_5")

RECORDS = 6  # per partition of the consumer sequences' plain topic
P0, P1 = TopicPartition("t", 0), TopicPartition("t", 1)

#: the consumer sequences' second topic, written in transactions (:func:`_write_transactions`):
#: per partition a committed transaction, an aborted one, another committed one, then a plain
#: record - so a read sees control records, aborted records and the isolation level's filter
TXN_TOPIC = "tx"
#: how each sequence reads: the plain topic, or the transactional one under each isolation level
#: (drawn from a stream of its own, so the calls a seed drew before stay the same)
READS = (("t", "read_uncommitted"), (TXN_TOPIC, "read_committed"), (TXN_TOPIC, "read_uncommitted"))
#: per partition: (records of each transaction, whether it commits); then one plain record
TRANSACTIONS = ((2, True), (1, False), (1, True))


@dataclass(frozen=True)
class Difference:
    """One call whose outcome differs: enough to reproduce it (the seed gives the calls)."""

    kind: str
    seed: int
    calls: tuple[str, ...]
    call: str
    simulated: str
    real: str
    #: the two logs themselves, of a "read_uncommitted log" difference (the strings are their reprs)
    logs: tuple = field(default=(), compare=False, repr=False)
    #: where ``call`` is in ``calls`` (a consumer difference's: the first one)
    at: int | None = field(default=None, compare=False, repr=False)

    @property
    def known(self) -> bool:
        table = KNOWN_PRODUCER_DIFFERENCES if self.kind == "producer" else KNOWN_CONSUMER_DIFFERENCES
        if (self.call, self.simulated, self.real) in table:
            return True
        if self.kind == "producer" and any(
            f"config:{config}" in self.calls and fault in self.calls for config, fault in KNOWN_PRODUCER_SEQUENCES
        ):
            return True
        if self.at is not None and joined_before_a_poll(self.calls[: self.at]):  # set by consumer runs
            return True  # KNOWN_BACKGROUND_JOIN
        if (
            self.call == "read_uncommitted log"
            and ends_in_an_unflushed_abort(self.calls)
            and len(self.logs) == 2
            and _differ_by_a_last_abort_marker(*self.logs)
        ):
            return True  # KNOWN_LAST_MARKER
        patterns = KNOWN_PRODUCER_PATTERNS if self.kind == "producer" else {}
        return any(
            re.fullmatch(c, self.call) and re.fullmatch(s, self.simulated) and re.fullmatch(r, self.real)
            for c, s, r in patterns
        )

    def __str__(self) -> str:
        return (
            f"{self.kind} seed {self.seed}: {list(self.calls)}: {self.call}: "
            f"simulator {self.simulated}, kafka-python {self.real}"
        )


#: why a consumer difference after subscribe() and before the next poll is known
KNOWN_BACKGROUND_JOIN = (
    "kafka-python 3.0.12 joins its group only inside poll() (ConsumerCoordinator.poll -> "
    "ensure_active_group; its IO thread only heartbeats), so until the first poll after subscribe() "
    "it has no assignment: seek/position/pause of a partition raise. The simulator's first join "
    "goes on in the background of any call that runs its clock (KafkaConsumer._advance), as the "
    "lessons' group timelines were measured: joining only in poll() moves them (lesson 05c's "
    "consumer-group time), which needs the lessons' checked outputs run again"
)


def joined_before_a_poll(calls) -> bool:
    """Whether the consumer calls before a difference subscribed, with no poll (``read``) since:
    where the simulator may have joined in the background (:data:`KNOWN_BACKGROUND_JOIN`)."""
    since = [c for c in calls if c in ("subscribe", "read")]
    return bool(since) and since[-1] == "subscribe"


# ---- producer sequences -------------------------------------------------------------------------
#: Producer configurations a sequence runs with (the transactional one gets its transactional id
#: per seed). Both clients get the same settings; request_timeout_ms is short everywhere so that a
#: request to a paused broker is given up within the test's budget.
PRODUCER_CONFIGS: dict[str, dict] = {
    "transactional": {},
    "idempotent": {},
    "acks=1": {"acks": 1, "enable_idempotence": False},
    "acks=0": {"acks": 0, "enable_idempotence": False},
    "retries=0": {"retries": 0, "enable_idempotence": False},
    "in-flight=1": {"max_in_flight_requests_per_connection": 1, "enable_idempotence": False},
    "short delivery timeout": {"request_timeout_ms": 1000, "delivery_timeout_ms": 3000},
    "long linger": {"linger_ms": 60_000},
    # sends held until a flush or the transaction's end: a commit or abort comes "right after the
    # sends, nothing flushed" on both sides (with linger 0 kafka-python's sender thread may drain
    # a batch before the abort: a race, not a rule)
    "transactional, long linger": {"linger_ms": 60_000},
}
BASE_PRODUCER_CONFIG = {"request_timeout_ms": 2000, "max_block_ms": 5000}
TRANSACTIONAL_CALLS = (
    "init_transactions",
    "begin_transaction",
    "send",
    "send",
    "flush",
    "commit_transaction",
    "abort_transaction",
)
PLAIN_CALLS = ("send", "send", "send", "flush")
#: faults put between calls of the non-transactional configurations (at most one per sequence:
#: a second crash would leave the topic under min.insync.replicas until the delivery timeout);
#: healed before the final close
FAULTS = ("crash_leader", "lose_ack", "pause_follower")
#: faults put between the calls of a transactional sequence (begin, send, flush, commit, abort):
#: its produce request lost on the way, its ACK lost, the topic's leader killed. Such a sequence
#: runs on a wire cluster of its own, seeded as the simulated one (see ProducerDifferential.run).
#: Not refuse_next_request: the simulated cluster has no refusing gateway (the wire cluster's and
#: the lab proxy's fault), so there is no simulator side to compare it with.
TXN_FAULTS = ("crash_leader", "lose_ack", "lose_next_request")
#: closes that may end a sequence: close(timeout=0) with records pending raises in kafka-python
#: 3.0.12 and leaves the producer open (the final close(timeout=5) then finishes it)
CLOSES = ("close_0", "close_5")
PRODUCER_CALLS = TRANSACTIONAL_CALLS  # the name tests and notebooks knew
#: calls not made on a closed producer, on either side - a known difference, not compared:
#: kafka-python 3.0.12's close() leaves an open transaction open (its Sender.run drains and stops;
#: Java's aborts it), and then these calls queue a request for the stopped sender and wait on it
#: without a timeout (KafkaProducer.commit_transaction: ``result.wait()``): they block forever
#: (found by seed 120: begin, send, close(5), commit). The simulated producer raises
#: KafkaTimeoutError after max_block_ms instead: an application that hangs teaches nothing.
BLOCKS_AFTER_CLOSE = ("commit_transaction", "abort_transaction", "send_offsets_to_transaction")
#: the rest of kafka-python's public producer API (all but metrics(), which measures the client),
#: a close with calls after it, and a fault: put anywhere in a sequence, any configuration, from a
#: random of each seed's own (:func:`_anywhere`) so the calls the menus above drew stay as they
#: were (issue 38). The fault is one of the configuration's own (:data:`FAULTS`, or
#: :data:`TXN_FAULTS` for a transactional producer), and a sequence keeps at most one.
PRODUCER_EXTRAS = ("partitions_for", "bootstrap_connected", "send_offsets_to_transaction", *CLOSES, "fault")
#: the share of seeds whose sequence gets extras (:data:`PRODUCER_EXTRAS`, :data:`CONSUMER_EXTRAS`)
EXTRAS_SHARE = 0.5
#: options of both clusters: a crashed leader is replaced within about a second and a paused
#: follower leaves the ISR after one, so faults cost the wall-clock run little
FAULT_OPTIONS: dict[str, Any] = {
    "broker_heartbeat_interval_ms": 200,
    "broker_session_timeout_ms": 1000,
    "replica_lag_time_max_ms": 1000,
}


#: what each fault of a sequence is on its cluster (SequenceCluster.fault)
FAULT_KINDS = {
    "crash_leader": "crash",
    "pause_follower": "pause",
    "lose_next_request": "lose_next_request",
    "lose_ack": "lose_next_ack",
}


def _faulted_broker(cluster: SequenceCluster, topic: str, fault: str) -> int | None:
    """Which broker a fault hits: the topic's leader, or the first follower (None: no leader)."""
    leader = cluster.read(lambda c: c.leader_of(topic))
    if leader is None or leader < 0:
        return None
    if fault != "pause_follower":
        return leader
    return next(b for b in cluster.read(lambda c: list(c.broker_ids)) if b != leader)


def _fault(cluster: SequenceCluster, name: str, topic: str) -> str:
    """The fault ``name`` on ``topic``'s partition 0: "ok", or "no leader" (nothing to hit)."""
    broker = _faulted_broker(cluster, topic, name)
    if broker is None:
        return "no leader"
    cluster.fault(FAULT_KINDS[name], broker)
    return "ok"


def _heal(cluster: SequenceCluster, topic: str) -> None:
    """Every fault healed, and the transactions decided meanwhile settled."""
    if not cluster.heal():
        raise AssertionError(f"{cluster.name} did not settle after its faults were healed")
    if not cluster.wait_until(lambda c: transactions_settled(c, topic), 10):
        raise AssertionError(f"{cluster.name}'s transactions did not settle")


def uncommitted_log(cluster: Cluster, topic: str) -> tuple:
    """The whole partition as ``read_uncommitted`` sees it, markers included: one row per offset,
    ``(offset, value, "aborted"|"")`` for a record, ``(offset, "COMMIT"|"ABORT marker")`` for a
    transaction marker. Producer ids are left out: the wire cluster is shared, so they differ."""
    aborted = {offset for offset, _, _ in cluster.aborted_records(topic)}
    rows: list[tuple] = []
    for batch in cluster.leader_log(topic):
        if batch.control:
            rows.append((batch.base_offset, f"{batch.control.upper()} marker"))
            continue
        for i, value in enumerate(batch.values):
            offset = batch.base_offset + i
            rows.append((offset, value, "aborted" if offset in aborted else ""))
    return tuple(rows)


def future_outcome(future) -> str:
    """A send future as the application sees it at the end: where it was written, the exception
    class it failed with, or still pending."""
    if not future.is_done:
        return "pending"
    if future.exception is not None:
        return type(future.exception).__name__
    return f"ok offset {future.value.offset}"


#: the producer calls whose answers are compared as values (the others: succeeded, or raised what)
ANSWERED = ("partitions_for", "bootstrap_connected")


def _producer_outcome(call: str, make) -> str:
    return answer(call, make, compare_value=call in ANSWERED)


def _producer_actions(topic: str, futures: list, cluster: SequenceCluster, transactional: bool) -> dict[str, Action]:
    """What each producer call of a sequence does on ``topic`` (each send's future into ``futures``)."""

    def send(producer):
        futures.append(producer.send(topic, b"v%d" % len(futures)))

    def fault(name: str) -> Action:
        def inject(producer):
            if transactional:
                # a fault after a commit or abort hits a broker still writing its markers or not,
                # as the two clocks fall: the coordinator's retried marker write is then appended
                # twice on one cluster and once on the other (found by seed 668) - brokers'
                # timing, not the clients'. An application's next call comes later: markers first.
                cluster.wait_until(markers_written, 5)
            return Said(_fault(cluster, name, topic))

        return inject

    def unless_closed(make: Action) -> Action:
        # not made on a closed producer, on either side: see BLOCKS_AFTER_CLOSE
        return lambda producer: Said("not called: closed") if producer._closed else make(producer)

    def send_offsets(producer):
        # the offset this application consumed so far: as many as it sent (a group per topic)
        offsets = {TopicPartition(topic, 0): OffsetAndMetadata(len(futures), "", -1)}
        producer.send_offsets_to_transaction(offsets, f"g-{topic}")

    actions: dict[str, Action] = {call: method(call) for call in (*TRANSACTIONAL_CALLS, *PLAIN_CALLS)}
    actions |= {name: fault(name) for name in (*FAULTS, *TXN_FAULTS)}
    actions |= {
        "send": send,
        "send_offsets_to_transaction": send_offsets,
        "close_0": method("close", timeout=0),
        "close_5": method("close", timeout=5),
        "partitions_for": method("partitions_for", topic),
        "bootstrap_connected": method("bootstrap_connected"),
    }
    return actions | {call: unless_closed(actions[call]) for call in BLOCKS_AFTER_CLOSE}


def producer_sequence(
    client: str, producer, cluster: SequenceCluster, topic: str, calls, config: dict, wait_s: float = 5
) -> tuple[list[str], list]:
    """``client``'s ``producer`` through ``calls`` on ``cluster`` (the call-sequence contract): each
    call's outcome, then the final close(timeout=5)'s, and every send's future.

    Unless a long linger holds the sends, each call starts once every earlier send has its
    outcome (at most ``wait_s``: a send may wait for a paused follower to leave the ISR). An
    application's calls are apart in time: kafka-python's sender thread sends each record at once
    (linger_ms=0) while the simulator's clock stands still between calls. Without this wait,
    records the simulator batches together kafka-python sends one by one, and a fault then hits
    different batches, or a request still on its way on one side and answered on the other: a
    difference of timing, not of the clients' rules.

    At the end every send gets its outcome (a lost ACK healed before the answer it drops would be
    no fault at all), the faults are healed, then close(timeout=5) (a no-op after a close that
    succeeded)."""
    futures: list = []
    actions = _producer_actions(topic, futures, cluster, bool(config.get("transactional_id")))
    idle = (lambda: wait_for_outcomes(client, producer, wait_s)) if config.get("linger_ms", 0) < 1000 else None
    outcomes: list[str] = []
    try:
        outcomes = replay(producer, calls, actions, before=idle, outcome=_producer_outcome)
    finally:
        if idle is not None:
            idle()
        _heal(cluster, topic)
        outcomes.append(answer("close", lambda: producer.close(timeout=5)))
    return outcomes, futures


def _stop_sender(producer) -> None:
    """kafka-python 3.0.12's close(timeout) raises and leaves the producer open while a record is
    unfinished: stop its sender thread as its own forced close does (the test starts no thread it
    does not stop)."""
    sender = getattr(producer, "_sender", None)
    if sender is not None and sender.is_alive():
        sender.force_close()
        sender.join(5)


def transactions_settled(cluster: Cluster, topic: str) -> bool:
    """Every decided transaction has its markers written and replicated (reading at once would
    compare timing, not outcomes)."""
    if not markers_written(cluster):
        return False
    leader = cluster._leader_replica(topic, 0)
    return leader.log.hw == leader.log.leo


def _anywhere(seed: int, calls: list[str], extras: tuple[str, ...], faults: tuple[str, ...] = ()) -> list[str]:
    """``calls`` with one to four of ``extras`` put anywhere (before the first call, between any
    two, after the last), for :data:`EXTRAS_SHARE` of the seeds; "fault" becomes one of
    ``faults``, unless the sequence has one already. Drawn from a random of the seed's own, so
    ``calls`` (drawn from the seed's first one) are the same calls as before extras existed.

    >>> _anywhere(2, ["send", "flush"], ("close_0",))
    ['send', 'close_0', 'flush']
    """
    rng = random.Random(f"{seed}:anywhere")
    if rng.random() >= EXTRAS_SHARE:
        return calls
    calls = list(calls)
    for _ in range(rng.randint(1, 4)):
        extra = rng.choice(extras)
        if extra == "fault":
            if not faults or any(c in faults for c in calls):
                continue
            extra = rng.choice(faults)
        calls.insert(rng.randrange(len(calls) + 1), extra)
    return calls


def _faulted_transactions(rng: random.Random) -> list[str]:
    """A transaction in the right order with one of :data:`TXN_FAULTS` somewhere after its
    begin_transaction() - between sends, before the flush, before or after the commit or abort -
    and maybe a second transaction after it: does the producer go on? (A fault among calls in a
    wrong order hits no transaction.)

    >>> calls = _faulted_transactions(random.Random(3))
    >>> calls[:2], sum(c in TXN_FAULTS for c in calls)
    (['init_transactions', 'begin_transaction'], 1)
    """
    body = ["send"] * rng.randint(1, 3) + (["flush"] if rng.random() < 0.5 else [])
    txn = ["begin_transaction", *body, rng.choice(("commit_transaction", "abort_transaction"))]
    txn.insert(rng.randrange(1, len(txn) + 1), rng.choice(TXN_FAULTS))
    again = ["begin_transaction", "send", "commit_transaction"] if rng.random() < 0.5 else []
    return ["init_transactions", *txn, *again]


def _transactions(rng: random.Random, unflushed_abort: bool) -> list[str]:
    """init_transactions(), then one or two transactions in the right order, without a fault:
    sends, maybe a flush, a commit or an abort. With ``unflushed_abort`` (a long linger holds the
    sends on both sides) the last may abort right after its sends; otherwise an abort follows a
    flush, since with linger 0 whether kafka-python's sender drains a batch before the abort is a
    race.

    >>> _transactions(random.Random(6), True)
    ['init_transactions', 'begin_transaction', 'send', 'abort_transaction']
    """
    calls = ["init_transactions"]
    count = rng.randint(1, 2)
    for i in range(count):
        end = rng.choice(("commit_transaction", "abort_transaction"))
        unflushed = end == "abort_transaction" and unflushed_abort and i == count - 1
        flush = rng.random() < 0.5 or (end == "abort_transaction" and not unflushed)
        calls += ["begin_transaction", *["send"] * rng.randint(1, 3), *(["flush"] if flush else []), end]
    return calls


def ends_in_an_unflushed_abort(calls) -> bool:
    """Whether the sequence's last transaction aborts right after its sends, nothing after it but a
    close: where kafka-python's ABORT marker is a race of its own (see :data:`KNOWN_LAST_MARKER`).
    A fault, a question (partitions_for, bootstrap_connected) or send_offsets_to_transaction
    writes nothing to the topic, before or after the abort: the sends are still the last thing
    before it (found so by seeds 346 - sends, a crash, abort - and 682 - sends, abort, offsets).

    >>> ends_in_an_unflushed_abort(["begin_transaction", "send", "crash_leader", "abort_transaction"])
    True
    """
    ignored = (*CLOSES, *FAULTS, *TXN_FAULTS, "partitions_for", "bootstrap_connected", "send_offsets_to_transaction")
    *rest, last = [c for c in calls if c not in ignored] or [""]
    return last == "abort_transaction" and bool(rest) and rest[-1] == "send"


#: why a log may differ by its last ABORT marker alone after :func:`ends_in_an_unflushed_abort`
KNOWN_LAST_MARKER = (
    "begin, sends, abort - nothing flushed: kafka-python's send() puts the partition in "
    "_new_partitions_in_transaction and its sender's next loop sends AddPartitionsToTxn, after which "
    "EndTxn writes an ABORT marker; but begin_abort clears the partitions not sent yet. Alone its "
    "sender wins (a marker); in a busy suite the abort often does (none), which is the simulator's "
    "order: its sender adds a partition when it drains a batch. No record differs "
    "(tests/wire/test_client_differential.py's named abort test)"
)


def _differ_by_a_last_abort_marker(x: tuple, y: tuple) -> bool:
    longer, shorter = (x, y) if len(x) > len(y) else (y, x)
    return len(longer) == len(shorter) + 1 and longer[:-1] == shorter and longer[-1][1:] == ("ABORT marker",)


def _known_topic_then(client: str, producer, cluster: SequenceCluster, topic: str, calls, config: dict):
    """:func:`producer_sequence`, the topic known first. The application knows its topic before
    the first fault: otherwise kafka-python's first metadata request may go to a paused broker
    (its pick of the least loaded node), and wait out request_timeout_ms there, where the
    simulator's went elsewhere - a difference of which node was asked, not of the clients' rules
    (found by seed 42 on a busy machine)."""
    producer.partitions_for(topic)
    return producer_sequence(client, producer, cluster, topic, calls, config)


class ProducerDifferential:
    """Producer sequences under one of :data:`PRODUCER_CONFIGS`, with at most one fault between
    calls and maybe a close(timeout) at the end; each seed gets its own topic (and transactional
    id) on the shared wire cluster and a fresh simulated cluster. Compared: each call's outcome,
    each send future's, the final close(timeout=5)'s, and the whole log as read_uncommitted sees
    it (aborted records, markers, offsets)."""

    kind = "producer"

    def __init__(self, wire: WireCluster):
        self.wire = wire

    @staticmethod
    def calls(seed: int, anywhere: bool = True) -> tuple[str, ...]:
        """``("config:<name>", call, ...)``: the configuration, then the calls (without
        ``anywhere``: without :data:`PRODUCER_EXTRAS`, the sequence as drawn before them)."""
        rng = random.Random(seed)
        config = rng.choice(sorted(PRODUCER_CONFIGS))
        transactional = config.startswith("transactional")
        if config == "transactional" and rng.random() < 0.35:
            calls = _faulted_transactions(rng)
        elif transactional and rng.random() < 0.4:
            calls = _transactions(rng, unflushed_abort=PRODUCER_CONFIGS[config].get("linger_ms", 0) > 0)
        else:
            menu = TRANSACTIONAL_CALLS if transactional else PLAIN_CALLS
            calls = [rng.choice(menu) for _ in range(rng.randint(3, 10))]
            if not transactional and rng.random() < 0.35:
                calls.insert(rng.randrange(len(calls) + 1), rng.choice(FAULTS))
        if rng.random() < 0.2:
            calls.append(rng.choice(CLOSES))
        if anywhere:
            calls = _anywhere(seed, calls, PRODUCER_EXTRAS, TXN_FAULTS if transactional else FAULTS)
        return (f"config:{config}", *calls)

    @staticmethod
    def config(seed: int, name: str) -> dict:
        extra = {"transactional_id": f"tx-{seed}"} if name.startswith("transactional") else {}
        return {**BASE_PRODUCER_CONFIG, **PRODUCER_CONFIGS[name], **extra}

    def run(self, seed: int, labelled: tuple[str, ...] | None = None) -> list[Difference]:
        """The differences of seed's sequence (:meth:`calls`), or of ``labelled`` (the same shape:
        ``("config:<name>", call, ...)``) run under that seed."""
        labelled = labelled or self.calls(seed)
        config, calls = self.config(seed, labelled[0].split(":", 1)[1]), labelled[1:]
        topic = f"t{seed}"

        cluster = Cluster(3, seed=seed, **FAULT_OPTIONS)
        cluster.create_topic(topic, min_insync_replicas=2)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            simulated = library_producer(SIMULATED, cluster, config)
        sim = _known_topic_then(SIMULATED, simulated, VirtualClock(cluster), topic, calls, config)

        # A fault in a transaction hits a broker by its role (the topic's leader), which may also
        # be the transaction coordinator: on the shared wire cluster, whose leaders moved with
        # earlier seeds' crashes, it is so where on the fresh simulated cluster it is not. So
        # such a sequence gets a wire cluster of its own, seeded as the simulated one: the same
        # leaders, the same coordinator (a start costs well under a second).
        own = labelled[0].startswith("config:transactional") and any(c in TXN_FAULTS for c in calls)
        wire = WireCluster(brokers=3, seed=seed, **FAULT_OPTIONS).start() if own else self.wire
        try:
            wire.create_topic(topic, min_insync_replicas=2)
            producer = library_producer(REAL, wire.bootstrap_servers, config)
            try:
                real = _known_topic_then(REAL, producer, WallClock(wire), topic, calls, config)
            finally:
                _stop_sender(producer)
            return self._compare(seed, labelled, calls, cluster, sim, wire, real, topic)
        finally:
            if own:
                wire.stop()

    def _compare(self, seed, labelled, calls, cluster, sim, wire, real, topic) -> list[Difference]:
        """Every difference between the two runs of one sequence."""

        def differs(call: str, s, r) -> Difference:
            return Difference(self.kind, seed, labelled, call, str(s), str(r))

        (sim_outcomes, sim_sent), (real_outcomes, real_sent) = sim, real
        steps = (*calls, "close(timeout=5) at the end")
        found = [differs(c, s, r) for c, s, r in zip(steps, sim_outcomes, real_outcomes) if s != r]
        sim_futures = [future_outcome(f) for f in sim_sent]
        real_futures = [future_outcome(f) for f in real_sent]
        if len(sim_futures) != len(real_futures):
            found.append(differs("send futures", len(sim_futures), len(real_futures)))
        for i, (s, r) in enumerate(zip(sim_futures, real_futures)):
            if s != r:
                found.append(differs(f"send #{i}'s future", s, r))
        sim_log = uncommitted_log(cluster, topic)
        # an acks=0 produce may still be on its way after close(): wait (a condition, bounded)
        # until the wire's log is the simulator's, then compare what it is
        wire.wait_until(lambda: uncommitted_log(wire.cluster, topic) == sim_log, 2)
        real_log = WallClock(wire).read(lambda c: uncommitted_log(c, topic))
        if sim_log != real_log:
            found.append(
                Difference(
                    self.kind, seed, labelled, "read_uncommitted log", str(sim_log), str(real_log), (sim_log, real_log)
                )
            )
        return found


# ---- consumer sequences -------------------------------------------------------------------------
def _write_transactions(producer, plain, topic: str) -> int:
    """:data:`TRANSACTIONS` on both partitions of ``topic`` (``producer`` transactional, ``plain``
    not), then a plain record each; returns the partitions' end offset (the same on both:
    records, one marker per transaction, the plain record)."""
    producer.init_transactions()
    n = 0
    for records, commits in TRANSACTIONS:
        producer.begin_transaction()
        for partition in (0, 1):
            for _ in range(records):
                producer.send(topic, b"x%d" % n, partition=partition)
                n += 1
        # written before the end: an abort right after the sends may or may not leave its
        # marker in kafka-python (ProducerDifferential's abort differential); here both must
        producer.flush()
        producer.commit_transaction() if commits else producer.abort_transaction()
    for partition in (0, 1):
        plain.send(topic, b"x%d" % n, partition=partition).get(timeout=30)
        n += 1
    return sum(records + 1 for records, _ in TRANSACTIONS) + 1


def _read(consumer, end: int) -> list:
    """Poll until every assigned partition's position reaches ``end`` (or 10 s): every record the
    assignment can give. A condition, not a quiet spell: kafka-python's first polls may come back
    empty while it looks up offsets, longer on a busy machine."""
    got: list = []
    deadline = time.monotonic() + 10
    while True:
        batch = [r for records in consumer.poll(200).values() for r in records]
        got += [(r.partition, r.offset, r.value) for r in batch]
        # a subscribed consumer's assignment comes with its join (in some poll); a paused
        # partition gives nothing
        assigned = consumer.assignment()
        joined = bool(assigned) or consumer.subscription() is None
        fetchable = assigned - consumer.paused()
        if joined and all(consumer.position(tp) >= end for tp in fetchable) or time.monotonic() > deadline:
            return sorted(got)


def _consumer_actions(topic: str, end: int) -> dict:
    """What each consumer call does, on ``topic`` (whose partitions end at ``end``)."""
    p0, p1 = TopicPartition(topic, 0), TopicPartition(topic, 1)
    return {
        "assign_both": lambda c: c.assign([p0, p1]),
        "assign_p0": lambda c: c.assign([p0]),
        "seek_p0_2": lambda c: c.seek(p0, 2),
        "seek_to_beginning": lambda c: c.seek_to_beginning(),
        "seek_to_end": lambda c: c.seek_to_end(),
        "read": lambda c: _read(c, end),
        "position_p0": lambda c: c.position(p0),
        "commit": lambda c: c.commit(),
        "committed_p0": lambda c: c.committed(p0),
        "end_offsets": lambda c: dict(sorted((tp.partition, o) for tp, o in c.end_offsets([p0, p1]).items())),
        "close_0": lambda c: c.close(timeout_ms=0),
        "close_5": lambda c: c.close(timeout_ms=5000),
        # CONSUMER_EXTRAS: the answers as sorted values; none compares what differs by design
        # (member ids, timestamps, other seeds' topics)
        "subscribe": lambda c: c.subscribe([topic]),
        "unsubscribe": lambda c: c.unsubscribe(),
        "assignment": lambda c: sorted(c.assignment()),
        "subscription": lambda c: c.subscription() and sorted(c.subscription()),
        "pause_p0": lambda c: c.pause(p0),
        "resume_p0": lambda c: c.resume(p0),
        "paused": lambda c: sorted(c.paused()),
        "seek_p1_1": lambda c: c.seek(p1, 1),
        "seek_to_beginning_p0": lambda c: c.seek_to_beginning(p0),
        "seek_to_end_p1": lambda c: c.seek_to_end(p1),
        "position_p1": lambda c: c.position(p1),
        "highwater_p0": lambda c: c.highwater(p0),
        "commit_p0_3": lambda c: c.commit({p0: OffsetAndMetadata(3, "", -1)}),
        "commit_async": lambda c: c.commit_async() and None,
        "committed_p1_metadata": lambda c: c.committed(p1, metadata=True),
        "beginning_offsets": lambda c: sorted((tp.partition, o) for tp, o in c.beginning_offsets([p0, p1]).items()),
        # the first record at or after time 0 (its timestamp is each cluster's clock: left out),
        # and none after the far future
        "offsets_for_times": lambda c: sorted(
            (tp.partition, found and found.offset) for tp, found in c.offsets_for_times({p0: 0, p1: 2**62}).items()
        ),
        "topics": lambda c: sorted(c.topics() & {"t", TXN_TOPIC}),
        "partitions_for_topic": lambda c: c.partitions_for_topic(topic),
        "group_metadata": lambda c: _membership(c.group_metadata()),
    }


def _membership(metadata) -> tuple:
    """What a consumer's group_metadata() says of its membership, without its member id (each
    cluster's own name): its group, generation, whether it has a member id."""
    return (metadata.group_id, metadata.generation_id, bool(metadata.member_id))


def consumer_sequence(consumer, cluster: SequenceCluster, topic: str, end: int, calls) -> list[str]:
    """``consumer`` through ``calls`` on ``topic`` (whose partitions end at ``end``) on ``cluster``
    (the call-sequence contract): each call's outcome. Then it closes without a commit, and a
    fault among the calls is healed."""
    actions = _consumer_actions(topic, end)
    for fault in CONSUMER_FAULTS:
        actions[fault] = lambda _, fault=fault: _fault(cluster, fault, topic)
    try:
        return replay(consumer, calls, actions)
    finally:
        consumer.close(autocommit=False)
        if any(c in CONSUMER_FAULTS for c in calls):
            _heal(cluster, topic)


class ConsumerDifferential:
    """Consumer sequences on a two-partition topic with the same records on both clusters - the
    plain topic, or the transactional one read committed or uncommitted (:data:`READS`); each
    seed is its own group. After the first difference a sequence is not compared further (the
    two consumers' states have parted)."""

    kind = "consumer"

    def __init__(self, wire: WireCluster):
        self.wire = wire
        self.ends = {"t": RECORDS}
        wire.create_topic("t", partitions=2, min_insync_replicas=2)
        wire.create_topic(TXN_TOPIC, partitions=2, min_insync_replicas=2)
        producer = library_producer(REAL, wire.bootstrap_servers, {"acks": "all"})
        for i in range(RECORDS * 2):
            producer.send("t", b"m%d" % i, partition=i % 2)
        transactional = library_producer(REAL, wire.bootstrap_servers, {"transactional_id": "differential"})
        self.ends[TXN_TOPIC] = _write_transactions(transactional, producer, TXN_TOPIC)
        transactional.close()
        producer.close()
        self.cluster = Cluster(3, seed=1, group_initial_rebalance_delay_ms=0, **FAULT_OPTIONS)
        self.cluster.create_topic("t", partitions=2, min_insync_replicas=2)
        self.cluster.create_topic(TXN_TOPIC, partitions=2, min_insync_replicas=2)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            simulated = library_producer(SIMULATED, self.cluster, {"acks": "all"})
            sim_transactional = library_producer(SIMULATED, self.cluster, {"transactional_id": "differential"})
        for i in range(RECORDS * 2):
            simulated.send("t", b"m%d" % i, partition=i % 2)
        simulated.flush()
        _write_transactions(sim_transactional, simulated, TXN_TOPIC)

    @staticmethod
    def calls(seed: int, anywhere: bool = True) -> tuple[str, ...]:
        """The seed's calls (without ``anywhere``: without :data:`CONSUMER_EXTRAS`, the sequence as
        drawn before them)."""
        rng = random.Random(seed)
        first = "assign_both" if rng.random() < 0.5 else "assign_p0"
        calls = [first, *(rng.choice(CONSUMER_CALLS) for _ in range(rng.randint(2, 7)))]
        if rng.random() < 0.3:  # drawn last: the sequences before it are the same
            calls.insert(rng.randrange(1, len(calls) + 1), rng.choice(CONSUMER_CLOSES))
        if not anywhere:
            return tuple(calls)
        calls = _anywhere(seed, calls, CONSUMER_EXTRAS)
        faults = random.Random(f"{seed}:fault")  # a stream of its own: the calls above stay
        if "read" in calls and faults.random() < CONSUMER_FAULT_SHARE:
            after = calls.index("read") + 1
            calls.insert(faults.randrange(after, len(calls) + 1), faults.choice(CONSUMER_FAULTS))
        return tuple(calls)

    @staticmethod
    def reads(seed: int) -> tuple[str, str]:
        """The seed's topic and isolation level (:data:`READS`)."""
        return random.Random(f"{seed}:reads").choice(READS)

    def run(self, seed: int) -> list[Difference]:
        calls, (topic, isolation) = self.calls(seed), self.reads(seed)
        config = dict(
            group_id=f"g{seed}", enable_auto_commit=False, auto_offset_reset="earliest", isolation_level=isolation
        )
        simulated = self.cluster  # its consumer's brokers, and where its faults hit
        sim_consumer = library_consumer(SIMULATED, simulated, config)
        end = self.ends[topic]
        sim_out = consumer_sequence(sim_consumer, VirtualClock(simulated), topic, end, calls)
        real = library_consumer(REAL, self.wire.bootstrap_servers, config)
        real_out = consumer_sequence(real, WallClock(self.wire), topic, end, calls)
        labelled = (f"{topic} {isolation}", *calls)
        for i, (c, s, r) in enumerate(zip(calls, sim_out, real_out)):
            if s != r:
                return [Difference(self.kind, seed, labelled, c, s, r, at=i + 1)]
        return []


def wire_for_differential() -> WireCluster:
    """The wire cluster the sequences share (started; stop it after)."""
    return WireCluster(brokers=3, seed=1, group_initial_rebalance_delay_ms=0, **FAULT_OPTIONS).start()
