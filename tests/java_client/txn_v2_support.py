"""Transactional experiments for the Java client where transactions v1 and v2 could part: run on
the wire cluster (tests/java_client/test_transactions_v2_wire.py, per ``transaction.version``) and
on Kafka 4.3.1 (tests/real/test_java_transactions_v2.py, default and with
``transaction.version=1``), each asserting the same outcome."""

from __future__ import annotations

from course_lib.java_client import JavaConsumer, JavaException, JavaProducer
from tests.java_client.support import read_all, unique


def _name(call) -> str:
    try:
        call()
    except JavaException as exc:
        return exc.name
    return "ok"


def zombie(driver, servers: str, make_topic) -> dict:
    """Instance 1 writes in a transaction; instance 2 (same transactional.id) initializes, which
    fences 1 and aborts its open transaction; 1 then tries to write and to commit; 2 commits its
    own. What each call of the zombie met, and what read_committed reads."""
    topic = make_topic(unique("java-zombie"), 3, 2)
    tid = unique("java-zombie-id")
    config = {"bootstrap.servers": servers, "transactional.id": tid, "max.block.ms": "20000"}
    old, new = JavaProducer(driver, config), None
    try:
        old.init_transactions()
        old.begin_transaction()
        old.send(topic, b"zombie-1", partition=0).get(timeout=30)
        new = JavaProducer(driver, config)
        new.init_transactions()
        late = old.send(topic, b"zombie-2", partition=0)
        state, error = late.outcome() if _settle(late) else ("pending", None)
        zombie_send = error.name if isinstance(error, JavaException) else state
        zombie_commit = _name(old.commit_transaction)
        new.begin_transaction()
        new.send(topic, b"new-1", partition=0)
        new.commit_transaction()
    finally:
        old.close(timeout=5)
        if new is not None:
            new.close(timeout=5)
    reader = JavaConsumer(driver, {"bootstrap.servers": servers, "isolation.level": "read_committed"})
    try:
        reader.assign([(topic, 0)])
        reader.seek_to_beginning([(topic, 0)])
        values = [r.value for r in read_all(reader, 1, polls=10)]
    finally:
        reader.close(timeout=10)
    return {"zombie send": zombie_send, "zombie commit": zombie_commit, "read_committed": values}


def _settle(future, timeout_s: float = 30.0) -> bool:
    from tests.java_client.support import until

    return until(future.done, timeout_s)
