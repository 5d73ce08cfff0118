"""Small kafka-python helpers shared by the real-Kafka tests."""

import contextlib
import logging

import pytest
from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka import errors as kerr

INSTRUCTOR_PASSWORD = "instructor-pw"
#: what kafka-python 3.0.12 shows of a wrong SCRAM-SHA-512 password (``wrong_login``): the
#: constructor's bootstrap times out, the broker's refusal is only logged. Checked against Kafka
#: 4.3.1 (tests/workshop/test_workshop_cluster.py) and the wire cluster (tests/wire/test_sasl.py).
WRONG_SCRAM_PASSWORD = (
    "KafkaTimeoutError",
    "SaslAuthenticationFailedError",
    "Authentication failed during authentication due to invalid credentials with SASL mechanism SCRAM-SHA-512",
)


@contextlib.contextmanager
def kafka_log_only_to(handler: logging.Handler, level: int):
    """kafka-python's records at ``level`` and up go to ``handler`` only: not to pytest's log
    capture, which would keep their exceptions - and the sockets in their tracebacks - alive."""
    kafka_log = logging.getLogger("kafka")
    saved = kafka_log.level, kafka_log.propagate
    kafka_log.setLevel(level)
    kafka_log.propagate = False
    kafka_log.addHandler(handler)
    try:
        yield
    finally:
        kafka_log.removeHandler(handler)
        kafka_log.setLevel(saved[0])
        kafka_log.propagate = saved[1]


def wrong_login(bootstrap: str, user: str, password: str, mechanism: str = "SCRAM-SHA-512", timeout_ms: int = 3000):
    """Build a ``KafkaProducer`` with these credentials, expecting a refusal: (the class of the
    error raised, the class of the SASL error kafka-python logged, the broker's message in it)."""
    seen: list[tuple[str, str]] = []

    class Watch(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            for arg in record.args if isinstance(record.args, tuple) else ():
                if isinstance(arg, (kerr.SaslAuthenticationFailedError, kerr.UnsupportedSaslMechanismError)):
                    # kafka-python words it "<error class>: <broker's message>"
                    seen.append((type(arg).__name__, str(arg.args[0]).split(": ", 1)[-1] if arg.args else ""))

    with kafka_log_only_to(Watch(), logging.ERROR):
        try:
            producer = KafkaProducer(
                bootstrap_servers=bootstrap,
                security_protocol="SASL_PLAINTEXT",
                sasl_mechanism=mechanism,
                sasl_plain_username=user,
                sasl_plain_password=password,
                bootstrap_timeout_ms=timeout_ms,
            )
            producer.close()
            raised = "nothing"
        except Exception as exc:  # noqa: BLE001 - its class is the answer
            raised = type(exc).__name__
    logged, message = seen[0] if seen else ("nothing", "")
    return raised, logged, message


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
