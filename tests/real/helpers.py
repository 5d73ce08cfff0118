"""Small kafka-python helpers shared by the real-Kafka tests."""

import contextlib

import pytest
from kafka import KafkaConsumer, TopicPartition

INSTRUCTOR_PASSWORD = "instructor-pw"


@contextlib.contextmanager
def provisioned_cluster(out, learners: list[str]):
    """An authenticated 1-broker cluster (SASL SCRAM, StandardAuthorizer) with ``learners``
    provisioned by the instructor's command; yields ``out``, which holds each learner's
    ``NAME.env`` connection file."""
    from course_lib.real.cluster import LocalCluster
    from course_lib.real.security import ClusterAuth
    from course_lib.workshop.__main__ import main

    (out / "roster.txt").write_text("".join(f"{name}\n" for name in learners))
    with LocalCluster(brokers=1, progress=False, auth=ClusterAuth(admin_password=INSTRUCTOR_PASSWORD)) as cluster:
        with pytest.MonkeyPatch.context() as mp:
            mp.setenv("KAFKA_INSTRUCTOR_PASSWORD", INSTRUCTOR_PASSWORD)
            assert main([str(out / "roster.txt"), "--bootstrap", cluster.bootstrap_servers, "--out", str(out)]) == 0
        yield out


def read_all(bootstrap: str, topic: str, partition: int = 0, timeout_ms: int = 5000) -> list:
    """Every record of one partition from offset 0 up to the current end (read_uncommitted)."""
    c = KafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False, consumer_timeout_ms=timeout_ms)
    try:
        tp = TopicPartition(topic, partition)
        c.assign([tp])
        end = c.end_offsets([tp])[tp]
        c.seek_to_beginning(tp)
        out = []
        for r in c:
            out.append(r)
            if r.offset + 1 >= end:
                break
        return out
    finally:
        c.close()
