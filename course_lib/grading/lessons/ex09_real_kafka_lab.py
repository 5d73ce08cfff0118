"""Lesson 09 (real Kafka lab): production producer settings, in the simulator and on a real cluster.

Registered by :mod:`course_lib.grading.registry`.
"""

from __future__ import annotations

import os

from ..framework import (
    Part,
    exercise,
    expect_dict,
)
from .common import _fault_rerun, _fault_trials


@exercise(
    id="ex09_q1",
    notebook="09_real_kafka_lab",
    kind="choose",
    expect=expect_dict(),
    public_seeds=tuple(range(10)),
    question="Give the kafka-python KafkaProducer settings (a dict) you would use in production so that "
    "nothing acknowledged is lost, nothing is duplicated and per-partition order holds.",
    hint="Three settings matter: how many replicas acknowledge, whether retries are deduplicated, and "
    "whether anything caps that.",
)
def _ex09_q1(answer, seeds):
    unknown = [k for k in answer if k not in _producer_keys()]
    if unknown:
        return [Part("settings exist in kafka-python", False, f"unknown KafkaProducer setting(s) {unknown}")]
    results = _fault_trials(answer, {"min_insync_replicas": 2}, seeds)
    parts = [
        Part(
            f"simulator, seed {s}",
            not r.result.found,
            f"found {sorted(r.result.found)}",
            s,
            rerun=_fault_rerun(s, answer, {"min_insync_replicas": 2}),
        )
        for s, r in results
    ]
    parts.append(_real_kafka_part(answer))
    return parts


def _producer_keys() -> set:
    from kafka import KafkaProducer as RealProducer

    return set(RealProducer.DEFAULT_CONFIG)


def _real_kafka_part(config: dict) -> Part:
    """Cheap real check: 20 messages through the cluster named by COURSE_KAFKA_BOOTSTRAP, read back
    once each and in order. Without a cluster it is skipped, with a message saying how to run it."""
    bootstrap = os.environ.get("COURSE_KAFKA_BOOTSTRAP")
    if not bootstrap:
        return Part(
            "real Kafka",
            True,
            "skipped: no cluster. Start the lab's cluster (notebooks/09) and set "
            "COURSE_KAFKA_BOOTSTRAP=host:port to grade this part against it",
            skipped=True,
        )
    import uuid

    from kafka import KafkaConsumer as RealConsumer
    from kafka import KafkaProducer as RealProducer

    topic = f"graded-{uuid.uuid4().hex[:8]}"
    try:  # replicated like the lab's topics; a cluster that auto-creates topics works without this
        from kafka.admin import KafkaAdminClient, NewTopic

        admin = KafkaAdminClient(bootstrap_servers=bootstrap)
        admin.create_topics([NewTopic(topic, 1, min(3, len(admin.describe_cluster()["brokers"])))])
        admin.close()
    except Exception:
        pass
    producer = RealProducer(bootstrap_servers=bootstrap, **config)
    values = [f"m-{i}".encode() for i in range(20)]
    for v in values:
        producer.send(topic, v, partition=0)
    producer.flush(timeout=30)
    producer.close()
    consumer = RealConsumer(
        topic,
        bootstrap_servers=bootstrap,
        auto_offset_reset="earliest",
        consumer_timeout_ms=5000,
        isolation_level="read_committed",
    )
    got = [r.value for r in consumer]
    consumer.close()
    return Part(
        "real Kafka",
        got == values,
        f"read back {len(got)} of {len(values)} messages "
        f"({'out of order or duplicated' if sorted(set(got)) != got else 'missing some'})",
    )
