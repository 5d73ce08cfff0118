"""Crash harnesses for the "implement" exercises: run the learner's code against a backend (the
seeded simulator), kill it at seeded points, restart it, and judge the output with the checker.

The application runs under :mod:`course_lib.application.supervisor`, as the lessons' pipeline does: one crash
exception (:class:`AppCrash`, a BaseException, so a learner's ``except Exception`` cannot swallow
it - as a real process death could not be caught either), crash plans, one restart loop. The
clients that crash in the middle of a call are a client-side fault: :mod:`course_lib.client_adapters.crashing`
wraps them; the plan of which call dies is this module's.
"""

from __future__ import annotations

import random
import sqlite3
from typing import Any

from ..backend import Backend, open_backend
from ..client_adapters.crashing import CrashingConsumer, CrashingProducer
from ..judge.checker import check
from ..application.processing import Names, load_input
from ..history import OpName
from ..application.supervisor import AppCrash, Countdown, Steps, Supervision, supervise

GROUP = "graded-app"
MAX_POLLS = 200  # a loop that polls more than this on a 12-message input never stops
#: simulated time a consumer function may run: a 12-message input drains in a few seconds, so a
#: function still running after this never returns (a `while True` loop)
RETURN_WITHIN_S = 60


def _loaded(seed: int, messages: int, with_output: bool = False) -> tuple[Backend, Names]:
    """A seeded simulated cluster whose input topic holds ``msg-0`` .. ``msg-{messages-1}``."""
    b = open_backend(None, seed, group_initial_rebalance_delay_ms=0)
    return b, load_input(b, messages, 2, with_output)


class LoopDidNotStop(BaseException):
    """The learner's function kept running long after the input was drained (``while True``)."""

    message = (
        f"your function never returned (it ran past {RETURN_WITHIN_S} s of simulated time, long after "
        "the input was drained) - a `while True` loop must end: return once two polls in a row "
        "bring no records"
    )


class Deadline:
    """What a learner's consumer function may take: :data:`MAX_POLLS` polls and
    :data:`RETURN_WITHIN_S` simulated seconds; a poll past either never returns."""

    def __init__(self, backend: Backend):
        self._backend, self.started_ms, self.polls = backend, backend.now_ms, 0

    def overran(self) -> bool:
        return self.polls > MAX_POLLS or self._backend.now_ms - self.started_ms > RETURN_WITHIN_S * 1000

    def poll(self) -> None:
        """A poll is asked for: :class:`LoopDidNotStop` once the function overran."""
        self.polls += 1
        if self.overran():
            raise LoopDidNotStop()


class GradedSink:
    """Where the learner's loop writes: ``sink.write(record)``. The rows outlive crashes."""

    name = "sink:graded"

    def __init__(self, countdown: Countdown):
        self.rows: list[str] = []
        self._countdown = countdown

    def write(self, record) -> None:
        value = record.value.decode() if isinstance(record.value, bytes) else str(record.value)
        self.rows.append(value)
        self._countdown.reached("write")


def _judge(b: Backend, names: Names, rows: list[str], semantics: str):
    b.final_read(names.input)
    b.history.record(
        "final-reader", "ok", OpName.FINAL_READ, [[0, i, m] for i, m in enumerate(rows)], topic=GradedSink.name
    )
    spec = {
        "semantics": semantics,
        "isolation_level": "read_uncommitted",
        "input": names.input,
        "output": GradedSink.name,
    }
    return check(b.history, {"acks": "all"}, None, consumer=spec)


def _caught_up(b: Backend, consumer: Any) -> bool:
    """Has the consumer read every committed record of its partitions (the input holds no
    transactions, so its last stable offset is its last record's offset + 1)?"""
    positions = consumer.positions
    if not positions:
        return False
    for (topic, partition), position in positions.items():
        if position is None or position < b.end_offset(topic, partition, read_committed=True):
            return False
    return True


def _group_member(b: Backend, names: Names, number: int, rng: random.Random, **config) -> Any:
    """Instance ``number`` of the graded application's consumer: a member of the group, no
    auto-commit, from the earliest offset, a seeded 2-5 records per poll."""
    return b.consumer(
        names.input,
        group_id=b.group_id(GROUP),
        client_id=f"app-{number}",
        enable_auto_commit=False,
        auto_offset_reset="earliest",
        **config,
        max_poll_records=rng.randint(2, 5),
        session_timeout_ms=6000,
    )


def _call(app, consumer: CrashingConsumer, sink, deadline: Deadline) -> None:
    """Call the learner's function; whatever it raises after it overran its time is reported as
    "never returned" (the error is a symptom: a loop that never ends meets a rebalance sooner or later)."""
    try:
        app(consumer, sink)
    except Exception:
        if deadline.overran():
            raise LoopDidNotStop() from None
        raise


def run_consumer_loop(app, seed: int, messages: int = 12, semantics: str = "at-least-once", crash: bool = True):
    """Run ``app(consumer, sink)`` until it returns, crashing it once at a seeded point
    (right after a poll, a write or a commit; ``crash=False``: never) and restarting it with a
    new consumer in the same group. Returns the checker's result for ``semantics``."""
    rng = random.Random(f"grading-consumer-{seed}")
    b, names = _loaded(seed, messages)
    countdown = Countdown(rng.choice(["poll", "write", "commit"]) if crash else None, rng.randint(1, 4))
    sink = GradedSink(countdown)

    def start(number: int) -> Steps:
        consumer = _group_member(b, names, number, rng)
        deadline = Deadline(b)
        # the consumer the learner's loop receives: kafka-python's methods, plus the seeded crash
        # and the clock (a call past the deadline never returns)
        wrapped = CrashingConsumer(consumer, countdown.reached, before_poll=deadline.poll)

        def run() -> None:
            # a supervisor calls the loop again while input is left (it may return during a rebalance)
            _call(app, wrapped, sink, deadline)
            while not _caught_up(b, consumer):
                _call(app, wrapped, sink, deadline)

        return Steps(run, consumer.close, lambda: b.crash_client(consumer))

    # one crash per run: the restarted instance runs to the end
    supervise(b, start, max_instances=4, on_crash=countdown.disarm)
    return _judge(b, names, sink.rows, semantics)


class CrashingDB:
    """An SQLite connection (autocommit mode) that dies right before its n-th statement.
    When it dies, SQLite discards the open transaction, as it would for a dead process."""

    def __init__(self, db: sqlite3.Connection, crash_at: int | None):
        self._db, self._left = db, crash_at

    def _tick(self):
        if self._left is not None:
            self._left -= 1
            if self._left == 0:
                raise AppCrash("crashed before an SQL statement")

    def execute(self, sql, parameters=()):
        self._tick()
        return self._db.execute(sql, parameters)

    def executemany(self, sql, seq):
        self._tick()
        return self._db.executemany(sql, seq)

    def commit(self):
        self._tick()
        return self._db.commit()

    def rollback(self):
        return self._db.rollback()

    def __enter__(self):
        return self._db.__enter__()

    def __exit__(self, *exc):
        return self._db.__exit__(*exc)

    def __getattr__(self, name):
        return getattr(self._db, name)

    def disarm(self):
        self._left = None

    def died(self):
        if self._db.in_transaction:
            self._db.rollback()


def new_store() -> sqlite3.Connection:
    """The SQLite database of exercise 07: ``output(message)`` and ``offsets(topic, partition,
    next_offset)``, in autocommit mode (use BEGIN and COMMIT for a transaction)."""
    db = sqlite3.connect(":memory:", isolation_level=None)
    db.execute("CREATE TABLE output (message TEXT)")
    db.execute("CREATE TABLE offsets (topic TEXT, partition INT, next_offset INT, PRIMARY KEY (topic, partition))")
    return db


def run_external_store(store, resume_positions, seed: int, messages: int = 12):
    """The exactly-once-into-SQLite application of exercise 07: the harness polls, calls
    ``store(db, record)`` for every record and, on (re)start, seeks to
    ``resume_positions(db)``. The database dies before a seeded statement (up to two times)."""
    rng = random.Random(f"grading-external-{seed}")
    b, names = _loaded(seed, messages)
    raw = new_store()
    seen = Supervision()

    def start(number: int) -> Steps:
        db = CrashingDB(raw, rng.randint(1, 3 * messages) if len(seen.crashes) < 2 else None)
        consumer = b.consumer(
            client_id=f"app-{number}",
            enable_auto_commit=False,
            auto_offset_reset="earliest",
            max_poll_records=rng.randint(2, 5),
        )
        consumer.assign([(names.input, p) for p in range(2)])

        def run() -> None:
            positions = resume_positions(db) or {}
            for tp, offset in dict(positions).items():
                consumer.seek(tuple(tp), int(offset))
            idle = 0
            for _ in range(MAX_POLLS):
                records = [r for rs in consumer.poll(timeout_ms=500).values() for r in rs]
                if not records:
                    idle += 1
                    if idle >= 4:
                        break
                    continue
                idle = 0
                for record in records:
                    store(db, record)

        def died() -> None:
            db.died()
            b.crash_client(consumer)

        return Steps(run, consumer.close, died)

    supervise(b, start, max_instances=5, seen=seen)
    rows = [m for (m,) in raw.execute("SELECT message FROM output ORDER BY rowid")]
    return _judge(b, names, rows, "exactly-once-external")


# ---- consume-transform-produce (exercise 06) -----------------------------------------------------


def _rewind(consumer: Any) -> None:
    """After an aborted transaction the consumer's positions are ahead of what was committed:
    seek back (as kafka-python applications do), or the aborted batch would be skipped."""
    for tp in list(consumer.assignment()):
        try:
            consumer.seek(tp, consumer.committed(tp) or 0)
        except Exception:
            pass  # no longer ours: the next rebalance assigns it from the committed offset


def run_transform_loop(process_batch, seed: int, messages: int = 12):
    """Consume-transform-produce: the harness polls ``input`` (read_committed) and calls
    ``process_batch(consumer, producer, records)`` per batch; the application dies once at a
    seeded call and restarts with the same transactional_id. The committed ``output`` must hold
    every input message exactly once."""
    from kafka import errors as Errors

    rng = random.Random(f"grading-transform-{seed}")
    b, names = _loaded(seed, messages, with_output=True)
    countdown = Countdown(rng.choice(["send", "send_offsets_to_transaction", "commit_transaction"]), rng.randint(1, 3))

    def start(number: int) -> Steps:
        consumer = _group_member(b, names, number, rng, isolation_level="read_committed")
        producer = b.producer(
            transactional_id=b.transactional_id("graded-transformer"), client_id=f"app-{number}-producer"
        )
        producer.init_transactions()  # fences the previous instance and aborts what it left open
        wrapped = CrashingProducer(producer, countdown.reached)  # the crash right after a call

        def run() -> None:
            idle = 0
            for _ in range(MAX_POLLS):
                records = [r for rs in consumer.poll(timeout_ms=500).values() for r in rs]
                if not records:
                    idle += 1
                    if idle >= 4 and _caught_up(b, consumer):
                        break
                    continue
                idle = 0
                try:
                    process_batch(consumer, wrapped, records)
                except Errors.CommitFailedError:  # the group moved on: abort, and redo from the committed offsets
                    producer.abort_transaction()
                    _rewind(consumer)

        def close() -> None:
            consumer.close()
            producer.close()

        def died() -> None:
            b.crash_client(consumer)
            b.crash_client(producer)

        return Steps(run, close, died)

    supervise(b, start, max_instances=4, on_crash=countdown.disarm)
    b.final_read(names.input)
    b.final_read(names.output, isolation_level="read_committed")
    spec = {
        "semantics": "exactly-once-kafka",
        "isolation_level": "read_committed",
        "input": names.input,
        "output": names.output,
    }
    return check(b.history, {"acks": "all"}, None, consumer=spec)
