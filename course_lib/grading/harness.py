"""Crash harnesses for the "implement" exercises: run the learner's code against the simulator,
kill it at seeded points, restart it, and judge the output with the checker.

The crash is an exception derived from BaseException, so a learner's ``except Exception`` cannot
swallow it - as a real process death could not be caught either.
"""

from __future__ import annotations

import random
import sqlite3

from ..broker import Cluster
from ..checker import check
from ..clients import KafkaConsumer, KafkaProducer
from ..backend import open_backend
from ..processing import INPUT, OUTPUT, load_input

GROUP = "graded-app"
MAX_POLLS = 200  # a loop that polls more than this on a 12-message input never stops
#: simulated time a consumer function may run: a 12-message input drains in a few seconds, so a
#: function still running after this never returns (a `while True` loop)
RETURN_WITHIN_S = 60


def loaded_cluster(seed: int, messages: int, partitions: int = 2, with_output: bool = False) -> Cluster:
    """A simulated 3-broker cluster whose input topic holds ``msg-0`` .. ``msg-{messages-1}``."""
    b = open_backend(None, seed, group_initial_rebalance_delay_ms=0)
    load_input(b, messages, partitions, with_output)
    return b.cluster


class AppCrash(BaseException):
    """The application process dies here."""


class LoopDidNotStop(BaseException):
    """The learner's function kept running long after the input was drained (``while True``)."""

    message = (
        f"your function never returned (it ran past {RETURN_WITHIN_S} s of simulated time, long after "
        "the input was drained) - a `while True` loop must end: return once two polls in a row "
        "bring no records"
    )


class _Countdown:
    """Raises AppCrash right after the n-th call of ``method`` (None: never)."""

    def __init__(self, method: str | None, n: int):
        self.method, self.n = method, n

    def tick(self, method: str) -> None:
        if method == self.method:
            self.n -= 1
            if self.n == 0:
                raise AppCrash(f"crashed after call of {method}()")


class CrashingConsumer:
    """The consumer the learner's loop receives: kafka-python's methods, plus a seeded crash, and
    a clock: a call that runs past :data:`RETURN_WITHIN_S` simulated seconds never returns."""

    def __init__(self, consumer: KafkaConsumer, countdown: _Countdown, sim):
        self._consumer, self._countdown, self.polls = consumer, countdown, 0
        self._sim, self.started_ms = sim, sim.now

    def overran(self) -> bool:
        return self.polls > MAX_POLLS or self._sim.now - self.started_ms > RETURN_WITHIN_S * 1000

    def poll(self, timeout_ms: int = 500, max_records: int | None = None):
        self.polls += 1
        if self.overran():
            raise LoopDidNotStop()
        batches = self._consumer.poll(timeout_ms=timeout_ms, max_records=max_records)
        self._countdown.tick("poll")
        return batches

    def __iter__(self):
        """``for record in consumer`` as in kafka-python: records one by one, polling forever."""
        while True:
            for records in self.poll(timeout_ms=500).values():
                yield from records

    def commit(self, offsets=None):
        if offsets is None and not self._consumer.assignment():
            # nothing assigned (the group is still forming): commit() sends nothing (kafka-python
            # and the simulated client), so it is no crash point of the countdown either
            return None
        result = self._consumer.commit(offsets) if offsets is not None else self._consumer.commit()
        self._countdown.tick("commit")
        return result

    def __getattr__(self, name):
        return getattr(self._consumer, name)


class GradedSink:
    """Where the learner's loop writes: ``sink.write(record)``. The rows outlive crashes."""

    name = "sink:graded"

    def __init__(self, countdown: _Countdown):
        self.rows: list[str] = []
        self._countdown = countdown

    def write(self, record) -> None:
        value = record.value.decode() if isinstance(record.value, bytes) else str(record.value)
        self.rows.append(value)
        self._countdown.tick("write")


def _judge(cluster: Cluster, rows: list[str], semantics: str):
    cluster.final_read(INPUT)
    cluster.history.record(
        "final-reader", "ok", "final_read", [[0, i, m] for i, m in enumerate(rows)], topic=GradedSink.name
    )
    spec = {"semantics": semantics, "isolation_level": "read_uncommitted", "input": INPUT, "output": GradedSink.name}
    return check(cluster.history, {"acks": "all"}, None, consumer=spec)


def _caught_up(cluster: Cluster, consumer: KafkaConsumer) -> bool:
    positions = consumer.positions
    if not positions:
        return False
    for (topic, partition), position in positions.items():
        records = cluster.committed_records(topic, partition, read_committed=True)
        if position is None or position < (records[-1][0] + 1 if records else 0):
            return False
    return True


def _call(app, consumer: CrashingConsumer, sink) -> None:
    """Call the learner's function; whatever it raises after it overran its time is reported as
    "never returned" (the error is a symptom: a loop that never ends meets a rebalance sooner or later)."""
    try:
        app(consumer, sink)
    except Exception:
        if consumer.overran():
            raise LoopDidNotStop() from None
        raise


def run_consumer_loop(app, seed: int, messages: int = 12, semantics: str = "at-least-once", crash: bool = True):
    """Run ``app(consumer, sink)`` until it returns, crashing it once at a seeded point
    (right after a poll, a write or a commit; ``crash=False``: never) and restarting it with a
    new consumer in the same group. Returns the checker's result for ``semantics``."""
    rng = random.Random(f"grading-consumer-{seed}")
    cluster = loaded_cluster(seed, messages)
    countdown = _Countdown(rng.choice(["poll", "write", "commit"]) if crash else None, rng.randint(1, 4))
    sink = GradedSink(countdown)
    for number in range(1, 5):
        consumer = KafkaConsumer(
            INPUT,
            bootstrap_servers=cluster,
            group_id=GROUP,
            client_id=f"app-{number}",
            enable_auto_commit=False,
            auto_offset_reset="earliest",
            max_poll_records=rng.randint(2, 5),
            session_timeout_ms=6000,
        )
        wrapped = CrashingConsumer(consumer, countdown, cluster.sim)
        try:
            # a supervisor calls the loop again while input is left (it may return during a rebalance)
            _call(app, wrapped, sink)
            while not _caught_up(cluster, consumer):
                _call(app, wrapped, sink)
            consumer.close()
            break
        except AppCrash:
            consumer.crash()
            countdown.method = None  # one crash per run: the restarted instance runs to the end
            cluster.run_for(1000)
    return _judge(cluster, sink.rows, semantics)


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
    cluster = loaded_cluster(seed, messages)
    raw = new_store()
    crashes = 0
    for number in range(1, 6):
        db = CrashingDB(raw, rng.randint(1, 3 * messages) if crashes < 2 else None)
        consumer = KafkaConsumer(
            bootstrap_servers=cluster,
            client_id=f"app-{number}",
            enable_auto_commit=False,
            auto_offset_reset="earliest",
            max_poll_records=rng.randint(2, 5),
        )
        consumer.assign([(INPUT, p) for p in range(2)])
        try:
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
            consumer.close()
            break
        except AppCrash:
            db.died()
            consumer.crash()
            crashes += 1
            cluster.run_for(1000)
    rows = [m for (m,) in raw.execute("SELECT message FROM output ORDER BY rowid")]
    return _judge(cluster, rows, "exactly-once-external")


# ---- consume-transform-produce (exercise 06) -----------------------------------------------------


class CrashingProducer:
    """The transactional producer the learner's code receives, with a seeded crash right after a
    call of send / send_offsets_to_transaction / commit_transaction."""

    def __init__(self, producer: KafkaProducer, countdown: _Countdown):
        self._producer, self._countdown = producer, countdown

    def send(self, *args, **kwargs):
        future = self._producer.send(*args, **kwargs)
        self._countdown.tick("send")
        return future

    def send_offsets_to_transaction(self, offsets, group_metadata):
        result = self._producer.send_offsets_to_transaction(offsets, group_metadata)
        self._countdown.tick("send_offsets_to_transaction")
        return result

    def commit_transaction(self, *args, **kwargs):
        result = self._producer.commit_transaction(*args, **kwargs)
        self._countdown.tick("commit_transaction")
        return result

    def __getattr__(self, name):
        return getattr(self._producer, name)


def _rewind(consumer: KafkaConsumer) -> None:
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
    cluster = loaded_cluster(seed, messages, with_output=True)
    countdown = _Countdown(rng.choice(["send", "send_offsets_to_transaction", "commit_transaction"]), rng.randint(1, 3))
    for number in range(1, 5):
        consumer = KafkaConsumer(
            INPUT,
            bootstrap_servers=cluster,
            group_id=GROUP,
            client_id=f"app-{number}",
            enable_auto_commit=False,
            auto_offset_reset="earliest",
            isolation_level="read_committed",
            max_poll_records=rng.randint(2, 5),
            session_timeout_ms=6000,
        )
        producer = KafkaProducer(
            bootstrap_servers=cluster, transactional_id="graded-transformer", client_id=f"app-{number}-producer"
        )
        producer.init_transactions()  # fences the previous instance and aborts what it left open
        wrapped = CrashingProducer(producer, countdown)
        try:
            idle = 0
            for _ in range(MAX_POLLS):
                records = [r for rs in consumer.poll(timeout_ms=500).values() for r in rs]
                if not records:
                    idle += 1
                    if idle >= 4 and _caught_up(cluster, consumer):
                        break
                    continue
                idle = 0
                try:
                    process_batch(consumer, wrapped, records)
                except Errors.CommitFailedError:  # the group moved on: abort, and redo from the committed offsets
                    producer.abort_transaction()
                    _rewind(consumer)
            consumer.close()
            producer.close()
            break
        except AppCrash:
            consumer.crash()
            producer.crash()
            countdown.method = None
            cluster.run_for(1000)
    cluster.final_read(INPUT)
    cluster.final_read(OUTPUT, isolation_level="read_committed")
    spec = {"semantics": "exactly-once-kafka", "isolation_level": "read_committed", "input": INPUT, "output": OUTPUT}
    return check(cluster.history, {"acks": "all"}, None, consumer=spec)
