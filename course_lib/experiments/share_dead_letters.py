"""Dead-letter queues for share groups (KIP-1191) on the simulator: the experiment
:func:`course_lib.experiments.on_kafka.share_groups.dead_letter_queue` runs on Kafka 4.4.0 (and, unchanged, on
the wire cluster), with the simulated clients under confluent-kafka's names, in virtual time.
It returns the same dict, so the tests hold all three to one set of measured values
(tests/test_share_dead_letters.py, tests/wire/test_share_dlq_wire.py,
tests/real/test_share_dlq_real.py).

>>> from course_lib.broker import Cluster
>>> cluster = Cluster(brokers=1, seed=1, kafka_version="4.4.0")
>>> got = dead_letter_queue(cluster, dlq_topic(cluster, "dlq.jobs"))
>>> got["deliveries"]
{'job-0': [1], 'job-1': [1], 'job-2': [1, 2], 'job-3': [1]}
>>> [r["headers"]["__dlq.errors.message"] for r in got["dlq"]]
['Offset rejected by client.', 'Offset delivery count exceeded the threshold.']

Taught in notebooks/05c_share_groups.
"""

from __future__ import annotations

import itertools

from ..broker.cluster import Cluster
from ..broker.topic_requests import create_topic_request
from ..clients import KafkaConsumer, KafkaProducer
from ..clients.share_consumer import AcknowledgeType, ShareConsumer

#: what :func:`dead_letter_queue` (and the real probe, course_lib.experiments.on_kafka.share_groups) does with each
#: record (the rest are ACCEPTed)
DLQ_REJECTED, DLQ_RELEASED = "job-1", "job-2"
#: the source records' timestamps (CreateTime): a copied dead-letter record does not keep them
DLQ_SOURCE_TIMESTAMP_MS = 1_700_000_000_000
#: the group's record lock: longer than any worker holds a record, however slow the machine (with
#: 1 s, a first Java consumer on a loaded machine acknowledged after its locks expired, and every
#: record came back a second time)
DLQ_LOCK_MS = 30_000
#: how long no delivery must come after the last one expected before the worker stops: a RELEASEd
#: record is available again at once, so it would be back by then
DLQ_QUIET_MS = 1_000

_names = itertools.count(1)


def dlq_topic(cluster: Cluster, stem: str, partitions: int = 1, *, numbered: bool = True, **config: str) -> str:
    """A topic ``<stem>-<n>`` (``numbered=False``: ``<stem>``) that opted in as a dead-letter topic
    (unless ``config`` says otherwise)."""
    name = f"{stem}-{next(_names)}" if numbered else stem
    settings = {"errors.deadletterqueue.group.enable": "true", **config}
    error, message = create_topic_request(cluster, name, partitions, 1, settings)
    if error is not None:
        raise ValueError(message or error.__name__)
    cluster.run_until(lambda: all(cluster.leader_of(name, p) is not None for p in range(partitions)), 5_000)
    return name


def setup(cluster: Cluster, group_configs: dict, partitions: int = 1) -> tuple[str, str]:
    """A source topic and a new share group with ``group_configs`` (ValueError: refused)."""
    n = next(_names)
    topic, group = f"share-jobs-{n}", f"share-lab-{n}"
    cluster.alter_share_group_config(group, {"share.auto.offset.reset": "earliest", **group_configs})
    cluster.create_topic(topic, partitions=partitions, replication_factor=1)
    return topic, group


def dead_letter_queue(
    cluster: Cluster,
    dlq_topic: str | None,
    group_configs: dict | None = None,
    delivery_count_limit: int = 2,
    timeout_s: float = 60,
) -> dict:
    """The real probe's experiment (same records, group configs and acknowledgements; see
    :func:`course_lib.experiments.on_kafka.share_groups.dead_letter_queue`): ``deliveries``, ``dlq`` (the
    dead-letter topic's partition 0 read back, None if it does not exist), ``group_config``,
    ``topic``, ``group``."""
    configs = {
        "share.delivery.count.limit": delivery_count_limit,
        "share.record.lock.duration.ms": DLQ_LOCK_MS,
        **({"errors.deadletterqueue.topic.name": dlq_topic} if dlq_topic else {}),
        **(group_configs or {}),
    }
    try:
        topic, group = setup(cluster, configs)
    except ValueError as e:  # what a broker answers with INVALID_CONFIG
        return {"group_config": str(e), "deliveries": {}, "dlq": None, "topic": None, "group": None}
    producer = KafkaProducer(bootstrap_servers=cluster, acks="all")
    for i in range(4):
        producer.send(
            topic,
            key=b"k%d" % i,
            value=b"job-%d" % i,
            headers=[("h", b"v%d" % i)],
            timestamp_ms=DLQ_SOURCE_TIMESTAMP_MS + i,
        )
        producer.flush()  # one batch per record, as the probe's producer writes them
    deliveries: dict = {}
    consumer = ShareConsumer(
        {
            "bootstrap.servers": cluster,
            "group.id": group,
            "share.acknowledgement.mode": "explicit",
            "max.poll.records": 10,
        }
    )
    kinds = {DLQ_REJECTED: AcknowledgeType.REJECT, DLQ_RELEASED: AcknowledgeType.RELEASE}
    try:
        consumer.subscribe([topic])
        deadline = cluster.now + timeout_s * 1000
        quiet_since = None
        # until every record had its last delivery and DLQ_QUIET_MS passed without another
        while quiet_since is None or cluster.now - quiet_since < DLQ_QUIET_MS:
            if cluster.now > deadline:
                raise RuntimeError(f"not within {timeout_s} s: deliveries {deliveries}")
            got = consumer.poll(0.2)
            for m in got:
                value = m.value().decode()
                deliveries.setdefault(value, []).append(m.delivery_count())
                consumer.acknowledge(m, kinds.get(value, AcknowledgeType.ACCEPT))
            if got:
                consumer.commit_sync()
                quiet_since = None
            elif quiet_since is None and len(deliveries) == 4 and len(deliveries[DLQ_RELEASED]) >= delivery_count_limit:
                quiet_since = cluster.now
    finally:
        consumer.close()
    return {
        "group_config": "ok",
        "deliveries": deliveries,
        "dlq": read_topic(cluster, dlq_topic) if dlq_topic else None,
        "topic": topic,
        "group": group,
    }


def read_topic(cluster: Cluster, topic: str, partition: int = 0) -> list | None:
    """Every record of one partition of ``topic``, as the probe's reader returns them; None when
    the topic does not exist."""
    from kafka import TopicPartition

    try:
        cluster.topic_config(topic)
    except ValueError:  # no such topic
        return None
    reader = KafkaConsumer(bootstrap_servers=cluster, enable_auto_commit=False)
    tp = TopicPartition(topic, partition)
    reader.assign([tp])
    reader.seek_to_beginning(tp)
    end = reader.end_offsets([tp])[tp]
    records: list = []
    while len(records) < end:
        for r in reader.poll(timeout_ms=1000).get(tp, []):
            records.append(
                {
                    "offset": r.offset,
                    "key": r.key,
                    "value": r.value,
                    "headers": {k: v.decode() for k, v in r.headers or []},
                    "timestamp": r.timestamp,
                }
            )
    reader.close()
    return records
