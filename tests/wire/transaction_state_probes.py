"""DescribeTransactions and ListTransactions through kafka-python's admin (``describe_transactions``,
``list_transactions``) and raw ListTransactions requests, over a transactional producer's life:
initialized, in a transaction, committed. Run against the wire cluster
(tests/wire/test_transaction_states.py) and Kafka (tests/real/test_transaction_states_real.py);
reduced to what does not depend on the cluster's ids or clocks.
"""

from __future__ import annotations

import time
import uuid

from kafka import KafkaAdminClient, KafkaProducer
from kafka.protocol.admin.transactions import ListTransactionsRequest


def _described(admin, tid: str, topic: str) -> tuple:
    """(state, epoch, timeout, started, partitions of ``topic``) - or the error's name."""
    try:
        d = admin.describe_transactions([tid])[tid]
    except Exception as exc:  # noqa: BLE001 - the name is what the two clusters must agree on
        return (type(exc).__name__,)
    parts = sorted(tp.partition for tp in d.topic_partitions if tp.topic == topic)
    return (str(d.state.value), d.producer_epoch, d.transaction_timeout_ms, d.transaction_start_time_ms >= 0, parts)


def _listed(admin, prefix: str, **filters) -> tuple:
    """ListTransactions v2 to every broker: (error codes, unknown state filters, the listed
    (transactional id less ``prefix``, state) of ids starting with it)."""
    request = {"state_filters": [], "producer_id_filters": [], "duration_filter": -1, "transactional_id_pattern": None}
    request.update(filters)
    rows, errors, unknown = [], set(), set()
    for broker in sorted(b.node_id for b in admin._manager.cluster.brokers()):
        answer = admin._manager.run(admin._manager.send, ListTransactionsRequest(version=2, **request), broker)
        errors.add(answer.error_code)
        unknown.update(answer.unknown_state_filters)
        rows += [(t.transactional_id, t.transaction_state) for t in answer.transaction_states]
    return sorted(errors), sorted(unknown), sorted((t[len(prefix) :], s) for t, s in rows if t.startswith(prefix))


def _until(ask, done, timeout_s: float = 30):
    deadline = time.monotonic() + timeout_s
    while True:
        got = ask()
        if done(got) or time.monotonic() > deadline:
            return got
        time.sleep(0.05)


def _java(java, prefix: str, tid: str, topic: str) -> dict:
    """What Java's Admin (``kafka-transactions describe``/``list``) shows of the transaction."""
    got = java.describe_transactions([tid, f"{prefix}none"])
    d = got[tid]
    parts = sorted(tp["partition"] for tp in d["topicPartitions"] if tp["topic"] == topic)
    none = got[f"{prefix}none"]
    return {
        "described": (
            d["state"],
            d["producerEpoch"],
            d["transactionTimeoutMs"],
            d["transactionStartTimeMs"] >= 0,
            parts,
        ),
        "unknown id": none.java_class.rsplit(".", 1)[-1] if isinstance(none, Exception) else none,
        "listed": sorted(
            (r["transactionalId"][len(prefix) :], r["state"])
            for r in java.list_transactions(states=["Ongoing"], pattern=f"{prefix}.*")
        ),
    }


def transaction_states(bootstrap: str, topic: str, java=None) -> dict:
    """``java`` (if given): a Java Admin (:class:`course_lib.java_client.JavaAdmin`) on the cluster."""
    prefix = f"ts-{uuid.uuid4().hex[:6]}-"
    tid = f"{prefix}a"
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    producer = KafkaProducer(bootstrap_servers=bootstrap, transactional_id=tid, transaction_timeout_ms=45000)
    try:
        producer.init_transactions()
        out: dict = {"initialized": _described(admin, tid, topic)}
        producer.begin_transaction()
        producer.send(topic, b"x", partition=0).get(timeout=30)
        out["ongoing"] = _described(admin, tid, topic)
        out["listed, ongoing"] = _listed(admin, prefix)
        out["listed by state"] = _listed(admin, prefix, state_filters=["Ongoing", "Bogus"])
        out["listed by another state"] = _listed(admin, prefix, state_filters=["CompleteAbort"])
        out["listed by pattern"] = _listed(admin, prefix, transactional_id_pattern=f"{prefix}.*")
        out["listed by a pattern it does not match"] = _listed(admin, prefix, transactional_id_pattern="ts-")
        out["listed, started over an hour ago"] = _listed(admin, prefix, duration_filter=3_600_000)
        out["bad pattern"] = _listed(admin, prefix, transactional_id_pattern="(")
        if java is not None:
            out["java, ongoing"] = _java(java, prefix, tid, topic)
        producer.commit_transaction()
        out["committed"] = _until(lambda: _described(admin, tid, topic), lambda d: d[0] != "PrepareCommit")
        out["listed, committed"] = _listed(admin, prefix)
        out["unknown id"] = _described(admin, f"{prefix}none", topic)
        return out
    finally:
        producer.close(timeout=5)
        admin.close()


__all__ = ["transaction_acls", "transaction_states"]


def transaction_acls(bootstrap: str, login) -> dict:
    """With the workshop's authorizer (``login(user)``: kafka-python keyword arguments): the super
    user's transactions ``tsa-1`` (on ``tsa-t`` and ``tsa-hidden``) and ``tsa-2`` are ongoing;
    ``ann`` may DESCRIBE the transactional id ``tsa-1`` and the topic ``tsa-t`` only."""
    from kafka.admin import ACLOperation, NewTopic, ResourceType

    from .acl_probes import ADMIN, _allow, _everywhere, _failed

    admin = KafkaAdminClient(bootstrap_servers=bootstrap, **login(ADMIN))
    ann = KafkaAdminClient(bootstrap_servers=bootstrap, **login("ann"))
    producers = []
    try:
        admin.create_topics([NewTopic(t, 1, 3) for t in ("tsa-t", "tsa-hidden")])
        before = _everywhere(admin)
        grants = [
            _allow("ann", ACLOperation.DESCRIBE, ResourceType.TRANSACTIONAL_ID, "tsa-1"),
            _allow("ann", ACLOperation.DESCRIBE, ResourceType.TOPIC, "tsa-t"),
        ]
        refused = _failed(admin.create_acls(grants))
        mine = _everywhere(admin, before)
        for tid in ("tsa-1", "tsa-2"):
            producer = KafkaProducer(bootstrap_servers=bootstrap, transactional_id=tid, **login(ADMIN))
            producers.append(producer)
            producer.init_transactions()
            producer.begin_transaction()
            for topic in ("tsa-t", "tsa-hidden"):
                producer.send(topic, b"x", partition=0).get(timeout=30)
        out = {
            "refused": refused,
            "ann describes hers": (_described(ann, "tsa-1", "tsa-t"), _described(ann, "tsa-1", "tsa-hidden")),
            "ann describes another": _described(ann, "tsa-2", "tsa-t"),
            "ann lists": _listed(ann, "tsa-"),
            "the super user lists": _listed(admin, "tsa-"),
        }
        for producer in producers:
            producer.abort_transaction()
        removed = admin.delete_acls(grants)
        out["removed"] = sum(len(acls) for _f, acls, _err in removed)
        _everywhere(admin, mine)
        return out
    finally:
        for producer in producers:
            producer.close(timeout=5)
        ann.close()
        admin.close()
