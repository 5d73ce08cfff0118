"""Small kafka-python helpers shared by the real-Kafka tests."""

import contextlib
import logging
import socket
import struct

import pytest
from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka import errors as kerr
from kafka.net.sasl.scram import ScramClient
from kafka.protocol.metadata import ApiVersionsRequest, ApiVersionsResponse
from kafka.protocol.sasl import (
    SaslAuthenticateRequest,
    SaslAuthenticateResponse,
    SaslHandshakeRequest,
    SaslHandshakeResponse,
)

INSTRUCTOR_PASSWORD = "instructor-pw"
#: A wrong SCRAM-SHA-512 password, as Kafka 4.3.1 refuses it and as kafka-python 3.0.12 shows it;
#: checked against Kafka (tests/workshop/test_workshop_cluster.py) and the wire cluster
#: (tests/wire/test_sasl.py). Kafka answers SASL_AUTHENTICATION_FAILED and closes right behind
#: the answer; kafka-python mostly reads both at once, drops the answer and sees only the
#: disconnect; when the close comes in a later read it logs the refusal too (seen once in a CI run
#: on Kafka 4.3.1: a race of two reads, retried every bootstrap attempt). Either way the
#: constructor's bootstrap times out: see :func:`refused_as_kafka_python_shows_it`.
WRONG_SCRAM_PASSWORD_ANSWER = (
    58,
    "Authentication failed during authentication due to invalid credentials with SASL mechanism SCRAM-SHA-512",
    "closed",
)
WRONG_SCRAM_PASSWORD_IN_KAFKA_PYTHON = ("KafkaTimeoutError", ("KafkaConnectionError",))
#: what kafka-python may log besides, when it reads the refusal before the close
MAY_ALSO_LOG = "SaslAuthenticationFailedError"


def refused_as_kafka_python_shows_it(outcome) -> bool:
    """``outcome`` (from :func:`wrong_login`) is a refused login as kafka-python 3.0.12 shows it:
    the bootstrap times out, the connection losses were logged, the refusal at most logged too.

    >>> refused_as_kafka_python_shows_it(WRONG_SCRAM_PASSWORD_IN_KAFKA_PYTHON)
    True
    >>> refused_as_kafka_python_shows_it(("KafkaTimeoutError", ("KafkaConnectionError", MAY_ALSO_LOG)))
    True
    >>> refused_as_kafka_python_shows_it(("nothing", ())), refused_as_kafka_python_shows_it(("KafkaTimeoutError", ()))
    (False, False)
    """
    raised, logged = outcome
    expected_raised, (lost,) = WRONG_SCRAM_PASSWORD_IN_KAFKA_PYTHON
    return raised == expected_raised and lost in logged and set(logged) <= {lost, MAY_ALSO_LOG}


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
    error raised, the classes of the connection losses kafka-python logged but its own time-outs
    - an attempt in flight at the bootstrap deadline)."""
    lost: set[str] = set()
    own_timeouts = (kerr.KafkaTimeoutError, kerr.RequestTimedOutError)

    class Watch(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            if record.name == "kafka.net.connection" and isinstance(record.args, tuple):
                errors = [a for a in record.args if isinstance(a, BaseException) and not isinstance(a, own_timeouts)]
                lost.update(type(a).__name__ for a in errors)

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
    return raised, tuple(sorted(lost))


def refused_scram_login(bootstrap: str, user: str, password: str, mechanism: str = "SCRAM-SHA-512"):
    """A SCRAM login by hand (ApiVersions, SaslHandshake v1, SaslAuthenticate v2): the error code
    and message of the broker's answer to the step that failed, and whether the connection was
    then "closed" (or None if the login succeeded)."""
    host, port = bootstrap.split(",")[0].rsplit(":", 1)
    scram = ScramClient(user, password, mechanism)
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        stream = sock.makefile("rb")

        def ask(request, response_cls, version: int, corr: int):
            request.API_VERSION = version
            request.with_header(correlation_id=corr, client_id="probe")
            sock.sendall(bytes(request.encode(header=True, framed=True)))
            size = struct.unpack(">i", stream.read(4))[0]
            return response_cls.decode(stream.read(size), version=version, header=True)

        # v3+ needs a client software name and version: Kafka answers INVALID_REQUEST without them
        versions = ApiVersionsRequest(client_software_name="probe", client_software_version="1")
        assert ask(versions, ApiVersionsResponse, 3, 1).error_code == 0
        assert ask(SaslHandshakeRequest(mechanism=mechanism), SaslHandshakeResponse, 1, 2).error_code == 0
        first = ask(SaslAuthenticateRequest(auth_bytes=scram.first_message()), SaslAuthenticateResponse, 2, 3)
        if first.error_code:
            return first.error_code, first.error_message, "closed" if stream.read(1) == b"" else "open"
        scram.process_server_first_message(first.auth_bytes)
        final = ask(SaslAuthenticateRequest(auth_bytes=scram.final_message()), SaslAuthenticateResponse, 2, 4)
        if final.error_code:
            return final.error_code, final.error_message, "closed" if stream.read(1) == b"" else "open"
    return None


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
