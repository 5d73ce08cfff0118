"""A consumer application with a sink, crash points and restarts: where delivery semantics are
won or lost.

Semantics (how the application orders processing and committing):

- ``at-most-once``: commit the polled offsets, *then* process. A crash in between loses messages.
- ``at-least-once``: process, *then* commit. A crash in between processes them again.
- ``auto-commit``: ``enable_auto_commit=True`` and no commits of its own: whatever earlier polls
  returned is committed every ``auto_commit_interval_ms`` - processed or not.
- ``exactly-once-external``: the output and the next offset go into the sink in *one* SQLite
  transaction; on restart the consumer seeks to the offset stored there, not to Kafka's.
- ``exactly-once-kafka``: consume-transform-produce. Outputs go to a Kafka topic in a
  transaction that also carries the consumed offsets (``send_offsets_to_transaction``); the
  input is read ``read_committed``. A restarted instance with the same ``transactional_id``
  fences the old one and aborts whatever it left open.

Crash points: ``after_poll``, ``mid_batch`` (half the batch processed), ``after_process``
(processed, not committed) and ``after_commit`` (committed, not processed - where at-most-once
commits first). After a crash a new instance starts, as a supervisor would restart it.

The same application and restart loop run on the simulator and on real Kafka
(``run_pipeline(..., backend=LocalCluster())``): see :mod:`course_lib.backend`.

Taught in notebooks/05_consumer_delivery_semantics and notebooks/07_exactly_once_external.
"""

from __future__ import annotations

import random
from typing import Any, NamedTuple

from kafka import errors as Errors
from kafka.structs import TopicPartition

from ..backend import Backend, open_backend
from ..judge.checker import check
from ..judge.result import Result
from ..history import Nemesis, OpName
from .supervisor import AfterPolls, Supervision, supervise

SEMANTICS = ("at-most-once", "at-least-once", "auto-commit", "exactly-once-external", "exactly-once-kafka")
CRASH_POINTS = ("after_poll", "mid_batch", "after_process", "after_commit")
INPUT, OUTPUT, GROUP, TRANSACTIONAL_ID = "input", "output", "processors", "processor"

#: what each consuming application shows when it crashes at each point (synchronous processing)
CONSUMER_EXPECTED = {
    ("at-most-once", "after_poll"): set(),
    ("at-most-once", "mid_batch"): {"lost_in_processing"},
    ("at-most-once", "after_process"): set(),
    ("at-most-once", "after_commit"): {"lost_in_processing"},
    ("at-least-once", "after_poll"): set(),
    ("at-least-once", "mid_batch"): {"duplicate_processing"},
    ("at-least-once", "after_process"): {"duplicate_processing"},
    ("at-least-once", "after_commit"): set(),
    ("auto-commit", "after_poll"): set(),
    ("auto-commit", "mid_batch"): {"duplicate_processing"},
    ("auto-commit", "after_process"): {"duplicate_processing"},
    ("auto-commit", "after_commit"): {"duplicate_processing"},
}


class Names(NamedTuple):
    """The topics, group and transactional id of one pipeline run, as the backend named them."""

    input: str
    output: str
    group: str
    transactional_id: str


class ListSink:
    """Output kept in a list that outlives the application process (think: another service)."""

    name = "sink:list"

    def __init__(self):
        self.rows: list[str] = []

    def write(self, message: str) -> None:
        self.rows.append(message)

    def contents(self) -> list[str]:
        return list(self.rows)


class SQLiteSink:
    """Output in SQLite; ``write_with_offset`` stores the output and the next offset atomically."""

    name = "sink:sqlite"

    def __init__(self, path: str = ":memory:"):
        # imported here: in a browser copy of the course without the full Pyodide distribution,
        # sqlite3 is missing and only the SQLite sink (lesson 07) should stop working
        import sqlite3

        self.db = sqlite3.connect(path, isolation_level=None)
        self.db.execute("CREATE TABLE IF NOT EXISTS output (message TEXT)")
        self.db.execute(
            "CREATE TABLE IF NOT EXISTS offsets (topic TEXT, partition INT, next_offset INT, "
            "PRIMARY KEY (topic, partition))"
        )

    def write(self, message: str) -> None:
        self.db.execute("INSERT INTO output VALUES (?)", (message,))

    def write_with_offset(self, message: str, topic: str, partition: int, next_offset: int) -> None:
        """One transaction: the output and where to resume. Both happen, or neither."""
        self.db.execute("BEGIN")
        self.db.execute("INSERT INTO output VALUES (?)", (message,))
        self.db.execute("INSERT OR REPLACE INTO offsets VALUES (?, ?, ?)", (topic, partition, next_offset))
        self.db.execute("COMMIT")

    def stored_offsets(self) -> dict:
        return {(t, p): o for t, p, o in self.db.execute("SELECT topic, partition, next_offset FROM offsets")}

    def rollback_open_transaction(self) -> None:
        """The application died mid-transaction: the database discards it."""
        if self.db.in_transaction:
            self.db.execute("ROLLBACK")

    def contents(self) -> list[str]:
        return [m for (m,) in self.db.execute("SELECT message FROM output ORDER BY rowid")]


class Processor:
    """One instance of the consumer application. ``run()`` returns when the input is drained or
    raises :class:`~course_lib.application.supervisor.AppCrash` at its crash point (once it has had records
    from ``crash_after_polls`` polls). The same code drives simulated and real clients."""

    def __init__(
        self,
        backend: Backend,
        names: Names,
        semantics,
        sink,
        number,
        crash_point=None,
        crash_after_polls=None,
        batch=5,
        session_timeout_ms=10_000,
        buffered=False,
        processing_ms=25.0,
        input_ends=None,
    ):
        self.b, self.names, self.semantics, self.sink, self.number = backend, names, semantics, sink, number
        self.input_ends = input_ends if input_ends is not None else _input_ends(backend, names.input)
        self.buffered = buffered  # processing runs one poll behind (a worker queue)
        self.processing_ms = processing_ms  # time each record takes: auto-commits happen meanwhile
        self.queue: list = []
        self._sends: list = []  # the futures of the open transaction's sends
        self.plan = AfterPolls(crash_point, crash_after_polls)
        self.polls = 0
        config = dict(
            client_id=f"processor-{number}",
            max_poll_records=batch,
            auto_offset_reset="earliest",
            session_timeout_ms=session_timeout_ms,
            heartbeat_interval_ms=session_timeout_ms // 3,
            auto_commit_interval_ms=100,
        )
        if semantics == "exactly-once-external":
            self.consumer = backend.consumer(enable_auto_commit=False, **config)
            self.consumer.assign([(names.input, p) for p in range(backend.partitions_of(names.input))])
            for tp, offset in sink.stored_offsets().items():
                self.consumer.seek(tp, offset)
        else:
            self.consumer = backend.consumer(
                names.input,
                group_id=names.group,
                enable_auto_commit=semantics == "auto-commit",
                isolation_level="read_committed" if semantics == "exactly-once-kafka" else "read_uncommitted",
                **config,
            )
        self.producer: Any = None
        if semantics == "exactly-once-kafka":
            self.producer = backend.producer(
                transactional_id=names.transactional_id, client_id=f"processor-{number}-producer"
            )
            self.producer.init_transactions()  # fences an older instance, aborts its open transaction

    def _maybe_crash(self, point: str) -> None:
        self.plan.reached(point, self.polls)

    def process(self, record) -> None:
        self.b.app_time(self.processing_ms)
        message = record.value.decode()
        if self.semantics == "exactly-once-external":
            self.sink.write_with_offset(message, record.topic, record.partition, record.offset + 1)
        elif self.semantics == "exactly-once-kafka":
            self._sends.append(self.producer.send(self.names.output, record.value, partition=record.partition))
        else:
            self.sink.write(message)
        if self.semantics != "exactly-once-kafka":
            self.b.history.record(
                self.consumer.node_id,
                "ok",
                OpName.PROCESS,
                message,
                topic=record.topic,
                partition=record.partition,
                offset=record.offset,
            )

    def run(self, idle_polls: int = 6, max_polls: int = 500) -> None:
        idle = 0
        for _ in range(max_polls):
            batches = self.consumer.poll(timeout_ms=500)
            records = [r for rs in batches.values() for r in rs]
            if self.buffered:  # hand this poll to the worker; process what the last one returned
                records, self.queue = self.queue, records
            if not records and not self.queue:
                idle += 1
                if idle >= idle_polls and self._caught_up():
                    return
                continue
            if not records:
                continue
            idle = 0
            self.polls += 1
            self._maybe_crash("after_poll")
            if self.semantics == "at-most-once":
                if not self._commit():
                    continue  # not committed: processing now could repeat work - leave it to the new owner
                self._maybe_crash("after_commit")
            if self.producer is not None:
                self.producer.begin_transaction()
            for i, record in enumerate(records):
                if i == len(records) // 2:
                    self._maybe_crash("mid_batch")
                self.process(record)
            self._maybe_crash("after_process")
            if self.semantics == "at-least-once":
                self._commit()
            elif self.producer is not None and not self._commit_transaction(records):
                return  # fenced: a newer instance owns this transactional id
            if self.semantics != "at-most-once":
                self._maybe_crash("after_commit")
        raise RuntimeError(
            f"processor-{self.number} ({self.semantics}) did not reach the end of {self.names.input} in {max_polls} "
            f"polls ({self.polls} returned records): positions {self._where()}, ends {self.input_ends}"
        )

    def _where(self) -> dict:
        return {tuple(tp): position for tp, position in self.consumer.positions.items()}

    def _commit_transaction(self, records) -> bool:
        """Offsets and outputs commit together; if the group moved on, abort - the new owner of the
        partitions redoes the work. Returns False if this instance was fenced.

        kafka-python commits a transaction one of whose sends failed (Java refuses, KAFKA-5385), so
        the sends are checked first: if one failed, abort and rewind to the batch's first offsets
        so the batch is redone in a new transaction."""
        sends, self._sends = self._sends, []
        try:
            self.producer.flush()
            if any(f.failed() for f in sends):
                try:
                    self.producer.abort_transaction()
                except Errors.KafkaError:
                    return False  # fenced while sending (InvalidProducerEpoch): this instance is done
                self.queue = []
                for record in sorted(records, key=lambda r: r.offset, reverse=True):
                    self.consumer.seek(TopicPartition(record.topic, record.partition), record.offset)
                return True
            self.producer.send_offsets_to_transaction(self.consumer.positions, self.consumer.group_metadata())
            self.producer.commit_transaction()
        except Errors.ProducerFencedError:
            return False
        except Errors.CommitFailedError:
            self.producer.abort_transaction()
        return True

    def _commit(self) -> bool:
        try:
            self.consumer.commit()
            return True
        except Errors.CommitFailedError:
            return False  # the group moved on: the partitions' new owner starts from the last committed offset

    def _caught_up(self) -> bool:
        """Has this instance read to the end of the input (as loaded before the run)?"""
        positions = self.consumer.positions
        return bool(positions) and all(
            position is not None and position >= self.input_ends.get(tuple(tp), 0) for tp, position in positions.items()
        )

    def crash(self) -> None:
        self.b.crash_client(self.consumer)
        if self.producer is not None:  # abandoned with its transaction open; no abort
            self.b.crash_client(self.producer)
        if isinstance(self.sink, SQLiteSink):
            self.sink.rollback_open_transaction()

    def close(self) -> None:
        self.consumer.close()
        if self.producer is not None:
            self.producer.close()


def load_input(
    backend: Backend, messages: int, partitions: int = 2, with_output: bool = False, loader_id: str | None = "loader"
) -> Names:
    """Create the input topic (and optionally an empty output topic) and load ``msg-0`` ..
    ``msg-{messages-1}`` into it, keyed so they spread over the partitions."""
    input_topic = backend.create_topic(INPUT, partitions=partitions, min_insync_replicas=2)
    output_topic = OUTPUT
    if with_output:
        output_topic = backend.create_topic(OUTPUT, partitions=partitions, min_insync_replicas=2)
    loader = backend.producer(**({"client_id": loader_id} if loader_id else {}))
    for i in range(messages):
        loader.send(input_topic, f"msg-{i}".encode(), key=str(i).encode())
    loader.flush()
    return Names(input_topic, output_topic, backend.group_id(GROUP), backend.transactional_id(TRANSACTIONAL_ID))


def _input_ends(backend: Backend, topic: str) -> dict:
    """The end of each input partition (the harness loads all input before processing)."""
    return {(topic, p): backend.end_offset(topic, p, read_committed=True) for p in range(backend.partitions_of(topic))}


def run_pipeline(
    semantics: str = "at-least-once",
    crash_point: str | None = "after_process",
    crashes: int = 1,
    seed: int = 0,
    messages: int = 20,
    partitions: int = 2,
    batch: int = 5,
    restart_delay_ms: float = 1000,
    buffered: bool = False,
    broker_fault: tuple | None = None,
    lose_response_at_ms: float | None = None,
    backend=None,
) -> Result:
    """Produce ``messages`` to the input topic, run the application with ``crashes`` crashes at
    ``crash_point`` (on a seeded poll), restart it each time, then read everything and check.
    ``buffered=True`` processes each poll's records one poll later, as an application that hands
    records to a worker queue does - the case where auto-commit loses messages.
    ``broker_fault=(at_ms, broker)`` crashes a broker that long after processing starts (restarted
    3 s later); ``lose_response_at_ms`` drops one response to the application's clients then
    (both simulator only: its clock moves with the application's steps). ``backend``: see :func:`course_lib.backend.open_backend`."""
    if semantics not in SEMANTICS:
        raise ValueError(f"semantics must be one of {SEMANTICS}, got {semantics!r}")
    if crash_point is not None and crash_point not in CRASH_POINTS:
        raise ValueError(f"crash_point must be one of {CRASH_POINTS} or None, got {crash_point!r}")
    rng = random.Random(f"processing-{seed}")
    b = open_backend(backend, seed, group_initial_rebalance_delay_ms=0)
    if broker_fault is not None or lose_response_at_ms is not None:
        b.require("run_pipeline with timed broker faults", Nemesis.TIMED_FAULTS)
    names = load_input(b, messages, partitions, with_output=semantics == "exactly-once-kafka")
    sink = SQLiteSink() if semantics == "exactly-once-external" else ListSink()
    input_ends = _input_ends(b, names.input)
    if broker_fault is not None:
        at_ms, broker = broker_fault
        b.at(at_ms, b.crash, broker)
        b.at(at_ms + 3000, b.restart, broker)
    if lose_response_at_ms is not None:
        b.at(lose_response_at_ms, b.lose_next_coordinator_response)
    seen = Supervision()

    def start(number: int) -> Processor:
        crash_here = crash_point if len(seen.crashes) < crashes else None
        return Processor(
            b,
            names,
            semantics,
            sink,
            number,
            crash_here,
            rng.randint(1, 2),
            batch,
            buffered=buffered,
            input_ends=input_ends,
        )

    try:
        supervise(b, start, crashes + 6, restart_delay_ms, facts=lambda p: {"after_polls": p.polls}, seen=seen)
        if not seen.finished:
            raise RuntimeError(f"the application did not finish after {seen.instances} instances (seed={seed})")
    finally:
        b.close_clients()
    crash_log = seen.crashes
    isolation = "read_committed" if semantics == "exactly-once-kafka" else "read_uncommitted"
    b.final_read(names.input)
    if semantics == "exactly-once-kafka":
        sink_rows = [m for _, _, m in b.final_read(names.output, isolation_level="read_committed")]
        sink_name = names.output
    else:
        sink_rows = sink.contents()
        b.history.record(
            "final-reader", "ok", OpName.FINAL_READ, [[0, i, m] for i, m in enumerate(sink_rows)], topic=sink.name
        )
        sink_name = sink.name
    consumer = {"semantics": semantics, "isolation_level": isolation, "input": names.input, "output": sink_name}
    result = check(b.history, {"acks": "all"}, None, consumer=consumer)
    where = b.provenance()
    return Result(
        "scenario",
        "consumer_crash",  # the scenario that runs it (course_lib.experiments.consumer_scenarios)
        "consumer classic",
        seed=seed,
        description=f"{semantics}, crash {crash_point or 'none'}",
        config={"semantics": semantics, "crash_point": crash_point},
        history=b.history,
        check=result,
        numbers={"sink": sink_rows, "crashes": crash_log},
        notes={"crashes": crash_log, "names": names._asdict(), **where.notes},
        cluster=where.target,
        backend=where.label,
    )


def random_processing(seed: int, semantics: str, messages: int = 20) -> Result:
    """One seeded trial: random crash point and number of crashes, plus a broker crash and a lost
    response somewhere during the run (property tests and notebook trials use it)."""
    rng = random.Random(f"random-processing-{seed}")
    point = rng.choice(CRASH_POINTS)
    return run_pipeline(
        semantics,
        point,
        crashes=rng.randint(1, 3),
        seed=seed,
        messages=messages,
        batch=rng.randint(2, 6),
        broker_fault=(rng.uniform(0, 400), rng.choice([1, 2, 3])),
        lose_response_at_ms=rng.uniform(0, 400),
    )


__all__ = [
    "SEMANTICS",
    "CRASH_POINTS",
    "CONSUMER_EXPECTED",
    "Names",
    "Processor",
    "ListSink",
    "SQLiteSink",
    "load_input",
    "run_pipeline",
    "random_processing",
]
