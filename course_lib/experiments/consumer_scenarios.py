"""Named, seeded experiments of consuming applications and transactions: a consumer crashing at
each point of its loop, consume-transform-produce and an external store exactly once, an aborted
transaction, a fenced zombie, a transaction that times out. Registered for
:func:`course_lib.experiments.scenarios.run_scenario` like the producer scenarios, and written the same way:
once, against :class:`course_lib.backend.Backend`.

Taught in notebooks/05_consumer_delivery_semantics to notebooks/07_exactly_once_external.
"""

from __future__ import annotations

from ..backend import open_backend
from ..judge.checker import check
from ..history import Nemesis
from ..application.processing import CONSUMER_EXPECTED, Processor, load_input, run_pipeline
from .scenario_framework import TOPIC, Result, _result, _send_all, scenario


def consumer_expected(semantics: str, crash_point: str | None, buffered: bool = False) -> set[str]:
    """What each consuming application shows when it crashes at each point: one rule for both backends."""
    if semantics.startswith("exactly-once") or crash_point is None:
        return set()
    if buffered and semantics == "auto-commit" and crash_point == "after_poll":
        return {"lost_in_processing"}
    return set(CONSUMER_EXPECTED[(semantics, crash_point)])


@scenario(workload="consumer classic")
def consumer_crash(
    seed: int = 0,
    backend=None,
    semantics: str = "at-least-once",
    crash_point: str = "after_process",
    buffered: bool = False,
) -> Result:
    """A consuming application crashes at ``crash_point`` and is restarted; its output is compared
    with its input. See :mod:`course_lib.application.processing` for the semantics and crash points."""
    result = run_pipeline(semantics, crash_point, seed=seed, buffered=buffered, backend=backend)
    result.expected = consumer_expected(semantics, crash_point, buffered)
    return result


@scenario(workload="consumer classic")
def consume_transform_produce(seed: int = 0, backend=None, crash_point: str = "mid_batch") -> Result:
    """Read, transform, write to another topic in a transaction that also commits the consumed
    offsets; crash anywhere; exactly once in the output."""
    return consumer_crash(seed, backend, "exactly-once-kafka", crash_point)


@scenario(workload="consumer classic")
def external_store_exactly_once(seed: int = 0, backend=None, crash_point: str = "mid_batch") -> Result:
    """Output and offsets in one SQLite transaction; seek from the stored offset on restart."""
    return consumer_crash(seed, backend, "exactly-once-external", crash_point)


@scenario
def aborted_transaction(seed: int = 0, backend=None, isolation_level: str = "read_committed") -> Result:
    """A transactional producer commits a transaction, aborts the next, commits a third. A
    read_committed consumer never sees the aborted records; a read_uncommitted one does. The
    markers take offsets: the partition has gaps."""
    b = open_backend(backend, seed)
    topic = b.create_topic(TOPIC, replication_factor=3, min_insync_replicas=2, partitions=1)
    config = {"transactional_id": b.transactional_id("writer")}
    producer = b.producer(**config)
    producer.init_transactions()
    for label, commit in (("a", True), ("b", False), ("c", True)):
        producer.begin_transaction()
        _send_all(producer, topic, label, 3)
        producer.flush()
        producer.commit_transaction() if commit else producer.abort_transaction()
    consumer = b.consumer(isolation_level=isolation_level, auto_offset_reset="earliest", client_id="reader")
    consumer.assign([(topic, 0)])
    end = b.end_offset(topic)
    seen: list = []
    for records in b.read_to_end(consumer, topic, end):
        seen += [(r.offset, r.value.decode()) for r in records]
    b.final_read(topic, isolation_level="read_committed")
    b.close_clients()
    spec = {"semantics": None, "isolation_level": isolation_level, "input": topic}
    result = check(b.history, config, None, consumer=spec)
    return _result(
        "aborted_transaction",
        seed,
        aborted_transaction.__doc__ or "",
        b,
        config,
        {"isolation_level": isolation_level},
        result,
        set() if isolation_level == "read_committed" else {"aborted_read"},
        topic=topic,
        seen=seen,
        log_end_offset=b.end_offset(topic),
    )


@scenario
def zombie_fencing(seed: int = 0, backend=None, messages: int = 10) -> Result:
    """Instance A of a consume-transform-produce app freezes in the middle of a transaction (a long
    GC pause); B replaces it with the same transactional_id, which fences A and aborts its open
    transaction. A wakes up and tries to commit: ProducerFenced. The output has every input once.

    On Kafka A's consumer is closed when it freezes (a frozen consumer leaves the group after
    max.poll.interval.ms; closing skips that wait); its producer stays open, mid-transaction."""
    b = open_backend(backend, seed, group_initial_rebalance_delay_ms=0)
    b.require("zombie_fencing", Nemesis.FREEZE_CLIENT)
    names = load_input(b, messages, partitions=2, with_output=True, loader_id=None)
    zombie = Processor(b, names, "exactly-once-kafka", None, 1)
    batch: list = []
    for _ in range(100):
        batch = [r for rs in zombie.consumer.poll(timeout_ms=500).values() for r in rs]
        if batch:
            break
    zombie.producer.begin_transaction()
    for record in batch:
        zombie.process(record)
    zombie.producer.flush()  # its outputs are in the log, uncommitted
    offsets, metadata = zombie.consumer.positions, zombie.consumer.group_metadata()
    b.freeze_client(zombie.consumer)  # no heartbeats, no polls
    replacement = Processor(b, names, "exactly-once-kafka", None, 2)  # init_transactions() fences A
    replacement.run()
    b.note(Nemesis.WAKE_CLIENT, client=zombie.consumer.node_id)
    fenced = None
    try:
        zombie.producer.send_offsets_to_transaction(offsets, metadata)
        zombie.producer.commit_transaction()
    except Exception as exc:  # ProducerFencedError (or CommitFailedError from the group)
        fenced = type(exc).__name__
    replacement.consumer.close()
    b.final_read(names.input)
    b.final_read(names.output, isolation_level="read_committed")
    b.close_clients()
    spec = {
        "semantics": "exactly-once-kafka",
        "isolation_level": "read_committed",
        "input": names.input,
        "output": names.output,
    }
    result = check(b.history, {"acks": "all"}, None, consumer=spec)
    return _result(
        "zombie_fencing",
        seed,
        zombie_fencing.__doc__ or "",
        b,
        {"transactional_id": names.transactional_id},
        {},
        result,
        set(),
        zombie_error=fenced,
        group=names.group,
    )


@scenario
def transaction_timeout(seed: int = 0, backend=None, transaction_timeout_ms: int = 5000) -> Result:
    """A producer opens a transaction, writes, and hangs. After transaction_timeout_ms the
    coordinator aborts it (bumping the epoch); read_committed consumers move on; the producer's
    late commit is refused."""
    b = open_backend(backend, seed, transaction_abort_timed_out_transaction_cleanup_interval_ms=1000)
    topic = b.create_topic(TOPIC, min_insync_replicas=2)
    config = {"transactional_id": b.transactional_id("slow"), "transaction_timeout_ms": transaction_timeout_ms}
    producer = b.producer(**config)
    producer.init_transactions()
    producer.begin_transaction()
    _send_all(producer, topic, "m", 3)
    producer.flush()
    stuck_lso = b.end_offset(topic, read_committed=True)
    # the producer hangs until the coordinator has aborted its transaction (it looks for timed-out
    # ones every transaction.abort.timed.out.transaction.cleanup.interval.ms)
    b.until_transaction_aborted(topic, transaction_timeout_ms)
    error = None
    try:
        producer.commit_transaction()
    except Exception as exc:
        error = type(exc).__name__
    b.final_read(topic, isolation_level="read_committed")
    b.close_clients()
    result = check(b.history, {"transactional_id": config["transactional_id"]}, None)
    return _result(
        "transaction_timeout",
        seed,
        transaction_timeout.__doc__ or "",
        b,
        config,
        {},
        result,
        set(),
        topic=topic,
        late_commit_error=error,
        lso_while_open=stuck_lso,
    )
