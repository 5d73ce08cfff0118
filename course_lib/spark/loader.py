"""Produce the orders data set into Kafka, transactionally and without duplicates on re-runs.

Every line of ``datasets/orders/orders.jsonl`` becomes one record, value = the line unchanged
(malformed lines too: the pipeline must see them), key = the line's position (``"000123"``),
which also fixes its partition. The producer is kafka-python's transactional producer
(idempotence on, ``acks='all'``): a chunk of lines is committed atomically or not at all, and
the pipeline reads with ``read_committed``.

Re-running the loader is safe: it first reads back which keys are already committed and only
sends the missing ones - the "idempotent loader" a replayable pipeline needs upstream.

Every function takes ``client_config``: kafka-python settings for an authenticated cluster (the
``security_protocol``/``sasl_*`` keys of ``RemoteCluster.client_config()``), used by each
client it builds.

Taught in notebooks/10_pyspark_exactly_once_lab.
"""

from __future__ import annotations

import time
import uuid

from course_lib.history import INFO, OK, History, OpName


def client_kwargs(bootstrap_servers: str, client_config: dict | None = None) -> dict:
    """kafka-python keyword arguments: ``client_config`` with these bootstrap servers.

    >>> client_kwargs("h:9092", {"bootstrap_servers": "x:1", "security_protocol": "SASL_PLAINTEXT"})
    {'bootstrap_servers': 'h:9092', 'security_protocol': 'SASL_PLAINTEXT'}
    """
    return {**(client_config or {}), "bootstrap_servers": bootstrap_servers}


def ensure_topic(
    bootstrap_servers: str,
    name: str,
    partitions: int = 3,
    replication_factor: int = 3,
    min_insync_replicas: int = 2,
    timeout_s: float = 30.0,
    client_config: dict | None = None,
) -> bool:
    """Create ``name`` if it does not exist; return True if it was created.

    Works against any cluster (a :class:`course_lib.real.cluster.LocalCluster` has its own
    ``create_topic``; this is for an external cluster given by its bootstrap servers).
    """
    from kafka.admin import NewTopic
    from kafka.errors import TopicAlreadyExistsError

    from course_lib.real.admin_client import AdminClient

    admin = AdminClient(
        **client_kwargs(bootstrap_servers, client_config),
        client_id="course-spark-admin",
        request_timeout_ms=int(timeout_s * 1000),
    )
    try:
        if name in admin.list_topics():
            return False
        try:
            admin.create_topics(
                [
                    NewTopic(
                        name,
                        partitions,
                        replication_factor,
                        topic_configs={"min.insync.replicas": str(min_insync_replicas)},
                    )
                ]
            )
        except TopicAlreadyExistsError:
            return False
    finally:
        admin.close()
    _wait_for_partitions(bootstrap_servers, name, partitions, timeout_s, client_config)
    return True


def _wait_for_partitions(
    bootstrap_servers: str, topic: str, partitions: int, timeout_s: float, client_config: dict | None = None
) -> None:
    from kafka import KafkaConsumer

    consumer = KafkaConsumer(**client_kwargs(bootstrap_servers, client_config))
    try:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            found = consumer.partitions_for_topic(topic)
            if found and len(found) == partitions:
                return
            time.sleep(0.2)
            consumer.topics()  # refresh metadata
    finally:
        consumer.close()
    raise TimeoutError(
        f"topic {topic!r} did not get {partitions} partitions within {timeout_s} s; "
        "is the cluster healthy (enough live brokers for the replication factor)?"
    )


def _retrying(fn, attempts: int = 5, pause_s: float = 1.0):
    # Right after a broker restart the client may first dial a node that is not listening yet;
    # a few bounded retries beat failing the whole experiment on ECONNREFUSED.
    from kafka.errors import KafkaConnectionError, KafkaTimeoutError

    for attempt in range(attempts):
        try:
            return fn()
        except (KafkaConnectionError, KafkaTimeoutError):
            if attempt == attempts - 1:
                raise
            time.sleep(pause_s)


def committed_records(
    bootstrap_servers: str,
    topic: str,
    timeout_s: float = 30.0,
    isolation_level: str = "read_committed",
    client_config: dict | None = None,
) -> list[tuple[int, int, bytes | None, bytes]]:
    """Read a whole topic once: ``[(partition, offset, key, value), ...]`` (bounded, no group).

    Stops at the end offsets seen at the start (the last stable offset with read_committed).
    """
    return _retrying(lambda: _read_topic(bootstrap_servers, topic, timeout_s, isolation_level, client_config))


def _read_topic(bootstrap_servers, topic, timeout_s, isolation_level, client_config=None):
    from kafka import KafkaConsumer, TopicPartition

    consumer = KafkaConsumer(
        **client_kwargs(bootstrap_servers, client_config),
        enable_auto_commit=False,
        isolation_level=isolation_level,
        group_id=None,
        consumer_timeout_ms=1000,
    )
    try:
        parts = consumer.partitions_for_topic(topic) or set()
        tps = [TopicPartition(topic, p) for p in sorted(parts)]
        if not tps:
            return []
        consumer.assign(tps)
        consumer.seek_to_beginning(*tps)
        end = consumer.end_offsets(tps)
        out = []
        deadline = time.monotonic() + timeout_s
        while any(consumer.position(tp) < end[tp] for tp in tps):
            if time.monotonic() > deadline:
                raise TimeoutError(f"reading {topic!r} did not reach the end offsets {end} within {timeout_s} s")
            for tp, records in consumer.poll(timeout_ms=500).items():
                out.extend((r.partition, r.offset, r.key, r.value) for r in records if r.offset < end[tp])
        return sorted(out)
    finally:
        consumer.close()


def load_orders(
    bootstrap_servers: str,
    topic: str,
    lines: list[str],
    *,
    history: History | None = None,
    chunk: int = 500,
    transactional_id: str | None = None,
    progress: bool = True,
    client_config: dict | None = None,
) -> dict:
    """Send every line not yet committed in ``topic``; return counts (sent, already there).

    With ``history``, every send is recorded as ``invoke``/``ok`` (or ``info`` if the
    transaction's outcome is unknown), value = the line's key, with partition and offset.
    """
    from kafka import KafkaProducer
    from tqdm.auto import tqdm

    present = {
        k.decode() for _, _, k, _ in committed_records(bootstrap_servers, topic, client_config=client_config) if k
    }
    todo = [(f"{i:06d}", line) for i, line in enumerate(lines) if f"{i:06d}" not in present]
    if not todo:
        return {"sent": 0, "already_present": len(present)}
    producer = KafkaProducer(
        **client_kwargs(bootstrap_servers, client_config),
        acks="all",
        enable_idempotence=True,
        transactional_id=transactional_id or f"orders-loader-{uuid.uuid4().hex[:8]}",
        linger_ms=5,
    )
    sent = 0
    try:
        producer.init_transactions()
        bar = tqdm(total=len(todo), desc=f"loading {topic}", unit=" records", disable=not progress)
        for start in range(0, len(todo), chunk):
            part = todo[start : start + chunk]
            producer.begin_transaction()
            pending = []
            for key, line in part:
                inv = history.invoke("loader", OpName.SEND, key, topic=topic) if history is not None else None
                pending.append((inv, producer.send(topic, key=key.encode(), value=line.encode())))
            try:
                producer.commit_transaction()
            except Exception as exc:
                # Unknown outcome for this chunk: record 'info', never 'fail' (it may be there).
                for inv, _ in pending:
                    if history is not None:
                        history.complete(inv, INFO, error=type(exc).__name__)
                raise
            for inv, fut in pending:
                md = fut.get(timeout=30)
                if history is not None:
                    history.complete(inv, OK, partition=md.partition, offset=md.offset)
            sent += len(part)
            bar.update(len(part))
        bar.close()
    finally:
        producer.close()
    return {"sent": sent, "already_present": len(present)}
