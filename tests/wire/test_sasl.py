"""SASL on the wire cluster (course_lib/wire/sasl.py): kafka-python logs in with SCRAM or PLAIN,
the course's own connect() works against it, and a wrong password, a wrong mechanism or a
request before the login get what Kafka 4.3.1's SaslServerAuthenticator gives them."""

import json
from contextlib import closing
import logging
import queue
import subprocess
import sys
import threading
import time

import pytest
from kafka import KafkaConsumer, KafkaProducer
from kafka.protocol.metadata import ApiVersionsRequest, ApiVersionsResponse, MetadataRequest, MetadataResponse
from kafka.protocol.sasl import (
    SaslAuthenticateRequest,
    SaslAuthenticateResponse,
    SaslHandshakeRequest,
    SaslHandshakeResponse,
)

from course_lib.real import connect as connect_module
from course_lib.client_adapters.access import LoginFailed
from course_lib.wire import WireCluster
from course_lib.wire.sasl import FAILED_AUTHENTICATION_DELAY_MS, SaslConfigError
from tests.real.helpers import (
    WRONG_SCRAM_PASSWORD_ANSWER,
    refused_as_kafka_python_shows_it,
    kafka_log_only_to,
    refused_scram_login,
    wrong_login,
)

from .api_versions_probes import ask_api_versions
from .client_probes import RawClient

USERS = {"ann": "ann-pw", "bob": "bob-pw"}
SASL_KEYS = {SaslHandshakeRequest.API_KEY, SaslAuthenticateRequest.API_KEY}


@pytest.fixture
def sasl_wire(no_leaks):
    w = WireCluster(
        brokers=3,
        seed=1,
        users=USERS,
        sasl_mechanisms=("SCRAM-SHA-512", "SCRAM-SHA-256", "PLAIN"),
        group_initial_rebalance_delay_ms=0,
    ).start()
    try:
        yield w
    finally:
        w.stop()


@pytest.mark.parametrize("mechanism", ["SCRAM-SHA-512", "SCRAM-SHA-256", "PLAIN"])
def test_right_credentials_produce_and_consume_end_to_end(sasl_wire, mechanism):
    sasl_wire.create_topic("orders", partitions=2, min_insync_replicas=2)
    producer = KafkaProducer(
        bootstrap_servers=sasl_wire.bootstrap_servers,
        acks="all",
        enable_idempotence=True,
        **sasl_wire.sasl.client_config("ann", mechanism),
    )
    for i in range(10):
        producer.send("orders", str(i).encode(), partition=i % 2)
    producer.flush(10)
    producer.close()
    consumer = KafkaConsumer(
        "orders",
        bootstrap_servers=sasl_wire.bootstrap_servers,
        group_id="readers",
        auto_offset_reset="earliest",
        consumer_timeout_ms=5000,
        **sasl_wire.sasl.client_config("bob", mechanism),
    )
    values = sorted(int(r.value) for r in consumer)
    consumer.commit()
    consumer.close()
    assert values == list(range(10))
    # every connection the clients opened logged in (none would get this far otherwise)
    assert sasl_wire.call(lambda: sasl_wire.cluster.committed_records("orders"))


@pytest.mark.parametrize(
    ("user", "password", "mechanism"),
    [("ann", "wrong", "SCRAM-SHA-512"), ("nobody", "ann-pw", "SCRAM-SHA-512"), ("ann", "wrong", "PLAIN")],
)
def test_wrong_credentials_fail_in_kafka_python_as_against_kafka(sasl_wire, user, password, mechanism):
    # the answer arrives with the close, so kafka-python drops it (the raw test below reads it)
    outcome = wrong_login(sasl_wire.bootstrap_servers, user, password, mechanism, timeout_ms=1500)
    assert refused_as_kafka_python_shows_it(outcome), outcome


def test_wrong_credentials_get_kafkas_answer_then_the_close(sasl_wire):
    assert refused_scram_login(sasl_wire.bootstrap_servers, "ann", "wrong") == WRONG_SCRAM_PASSWORD_ANSWER
    # an unknown user fails at the first message, with the same words (no user enumeration)
    assert refused_scram_login(sasl_wire.bootstrap_servers, "nobody", "x") == WRONG_SCRAM_PASSWORD_ANSWER
    assert refused_scram_login(sasl_wire.bootstrap_servers, "ann", "ann-pw") is None
    with closing(RawClient(sasl_wire.bootstrap_servers)) as raw:  # PLAIN's own message
        assert _ask(raw, SaslHandshakeResponse, SaslHandshakeRequest(mechanism="PLAIN"), 1).error_code == 0
        answer = _ask(raw, SaslAuthenticateResponse, SaslAuthenticateRequest(auth_bytes=b"\0ann\0wrong"), 2)
        assert (answer.error_code, answer.error_message) == (58, "Authentication failed: Invalid username or password")
        assert _closed(raw)


@pytest.fixture
def proxy_loop():
    """The learner's fault proxy runs on one asyncio thread shared by the whole process (it
    outlives every proxy by design): started before no_leaks counts threads."""
    from course_lib.real.proxy import _LoopThread

    _LoopThread.get()


def test_connect_logs_a_learner_in_and_a_wrong_password_is_a_clear_error(proxy_loop, sasl_wire, monkeypatch):
    for name in (*connect_module.SETTINGS, connect_module.ENV_CONNECTION_FILE):
        monkeypatch.delenv(name, raising=False)
    kafka = connect_module.connect(sasl_wire.bootstrap_servers, username="ann", password="ann-pw")
    try:
        assert kafka.client_config()["sasl_mechanism"] == "SCRAM-SHA-512" and "proxy_url" in kafka.client_config()
        topic = kafka.create_topic("orders")
        assert topic == "ann.orders" and kafka.live_broker_ids() == [1, 2, 3]
        producer = kafka.producer(acks="all")
        assert producer.send(topic, b"hello").get(timeout=10).offset == 0
        producer.close()
        consumer = kafka.consumer(
            topic, group_id=kafka.group_id("g"), auto_offset_reset="earliest", consumer_timeout_ms=3000
        )
        assert [r.value for r in consumer] == [b"hello"]
        consumer.close()
    finally:
        kafka.close()
    wrong = connect_module.connect(sasl_wire.bootstrap_servers, username="ann", password="wrong", fault_proxy=False)
    # the kafka logger at its usual level (the no_leaks fixture silences it): connect() reads
    # Kafka's refusal from kafka-python's log to say what to fix. (A producer, not admin():
    # kafka-python 3.0.12's KafkaAdminClient leaves its I/O thread running when its bootstrap
    # fails, against any Kafka.)
    with kafka_log_only_to(logging.NullHandler(), logging.WARNING):
        with pytest.raises(LoginFailed, match="user 'ann'") as e:
            wrong.producer(bootstrap_timeout_ms=1500)
    assert "wrong user name or password" in str(e.value)


def test_the_workshop_preflight_runs_against_the_wire_cluster(proxy_loop, sasl_wire, tmp_path, monkeypatch):
    """A learner's preflight (course_lib/workshop/preflight.py) with their connection file, no
    Java: login, own prefix and transactions are green; the isolation line is red because the
    wire cluster has no ACLs (a deliberate difference), which is what that line exists to catch."""
    from course_lib.workshop import preflight

    for name in (*connect_module.SETTINGS, connect_module.ENV_CONNECTION_FILE):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(preflight, "CLIENT_TIMEOUT_MS", 3000)  # the isolation line times out, not refused
    env = tmp_path / "ann.env"
    env.write_text(f"KAFKA_BOOTSTRAP_SERVERS={sasl_wire.bootstrap_servers}\nKAFKA_SASL_USERNAME=ann\n")
    env.write_text(env.read_text() + "KAFKA_SASL_PASSWORD=ann-pw\nKAFKA_SASL_MECHANISM=SCRAM-SHA-512\n")
    report = preflight.run_checks(env_file=str(env))
    status = {r.name: r.status for r in report.results}
    lines = "\n".join(r.line() for r in report.results)
    assert status["cluster login"] == status["your prefix"] == status["transactions"] == "ok", lines
    assert status["another's prefix"] == "fail", lines
    assert "as 'ann': 3 broker(s) answer" in report.by_name("cluster login").detail


def _closed(raw: RawClient) -> bool:
    try:
        raw.read_frame()
    except (ConnectionError, OSError):
        return True
    return False


def test_a_request_before_the_login_closes_the_connection(sasl_wire):
    # first thing on the connection: Kafka reads no further, answers nothing, and closes after
    # its failed-authentication delay
    with closing(RawClient(sasl_wire.bootstrap_servers)) as raw:
        t0 = time.monotonic()
        raw.send_bytes(_frame(MetadataRequest(topics=None), 1, 1))
        assert _closed(raw)
        assert time.monotonic() - t0 >= FAILED_AUTHENTICATION_DELAY_MS / 1000 * 0.9
    # after ApiVersions (answered, with the SASL APIs): the same
    with closing(RawClient(sasl_wire.bootstrap_servers)) as raw:
        versions = _ask(raw, ApiVersionsResponse, ApiVersionsRequest(), 3)
        assert SASL_KEYS <= {k.api_key for k in versions.api_keys}
        raw.send_bytes(_frame(MetadataRequest(topics=None), 1, 2))
        assert _closed(raw)
    # a second ApiVersions: closed too
    with closing(RawClient(sasl_wire.bootstrap_servers)) as raw:
        raw.request(ApiVersionsRequest(), 3)
        raw.send_bytes(_frame(ApiVersionsRequest(), 3, 2))
        assert _closed(raw)


def test_api_versions_v5_before_the_login(sasl_wire):
    """Before a login Kafka 4.4.0's SaslServerAuthenticator answers ApiVersions itself (read with
    javap): a v5 naming half a node gets INVALID_REQUEST with the state kept, so another
    ApiVersions may follow; one naming another cluster gets the versions (it does not compare
    them), after which the handshake is expected."""
    with closing(RawClient(sasl_wire.bootstrap_servers)) as raw:
        assert ask_api_versions(raw, 5, cluster_id="x", node_id=-1).error_code == 42  # INVALID_REQUEST
        answer = ask_api_versions(raw, 5, cluster_id="another-cluster", node_id=1)
        assert answer.error_code == 0 and SASL_KEYS <= {k.api_key for k in answer.api_keys}
        assert _ask(raw, SaslHandshakeResponse, SaslHandshakeRequest(mechanism="PLAIN"), 1).error_code == 0


def test_an_unsupported_mechanism_gets_the_enabled_list_then_the_close(sasl_wire):
    with closing(RawClient(sasl_wire.bootstrap_servers)) as raw:
        answer = _ask(raw, SaslHandshakeResponse, SaslHandshakeRequest(mechanism="GSSAPI"), 1)
        assert answer.error_code == 33  # UNSUPPORTED_SASL_MECHANISM
        assert list(answer.mechanisms) == ["SCRAM-SHA-512", "SCRAM-SHA-256", "PLAIN"]
        assert _closed(raw)


def test_plain_login_by_hand_then_sasl_requests_are_an_illegal_state(sasl_wire):
    with closing(RawClient(sasl_wire.bootstrap_servers)) as raw:
        ok = _ask(raw, SaslHandshakeResponse, SaslHandshakeRequest(mechanism="PLAIN"), 1)
        assert ok.error_code == 0
        login = raw.request(SaslAuthenticateRequest(auth_bytes=b"\0ann\0ann-pw"), 2)
        answer = SaslAuthenticateResponse.decode(login, version=2, header=True)
        assert (answer.error_code, answer.auth_bytes, answer.session_lifetime_ms) == (0, b"", 0)
        assert _ask(raw, MetadataResponse, MetadataRequest(topics=None), 1).brokers
        # once logged in, what Kafka's request handler answers: ILLEGAL_SASL_STATE
        again = _ask(raw, SaslHandshakeResponse, SaslHandshakeRequest(mechanism="PLAIN"), 1)
        assert again.error_code == 34
        late = _ask(raw, SaslAuthenticateResponse, SaslAuthenticateRequest(auth_bytes=b"x"), 1)
        assert late.error_code == 34 and "after successful authentication" in late.error_message


def test_handshake_v0_takes_bare_tokens(sasl_wire):
    """Kafka 0.10's framing, still in 4.3.1: after SaslHandshake v0 the tokens have no header."""
    with closing(RawClient(sasl_wire.bootstrap_servers)) as raw:
        ok = _ask(raw, SaslHandshakeResponse, SaslHandshakeRequest(mechanism="PLAIN"), 0)
        assert ok.error_code == 0
        raw.send_bytes(b"\0ann\0ann-pw")
        assert raw.read_frame() == b""  # PLAIN's empty answer, size-prefixed
        assert _ask(raw, MetadataResponse, MetadataRequest(topics=None), 1).brokers
    with closing(RawClient(sasl_wire.bootstrap_servers)) as raw:
        raw.request(SaslHandshakeRequest(mechanism="PLAIN"), 0)
        raw.send_bytes(b"\0ann\0wrong")
        assert _closed(raw)  # a bare token cannot say why: closed without an answer


def test_sasl_is_advertised_only_with_users(wire):
    """The default cluster stays PLAINTEXT: no SASL APIs, and a SaslHandshake is unsupported."""
    with closing(RawClient(wire.bootstrap_servers)) as raw:
        versions = _ask(raw, ApiVersionsResponse, ApiVersionsRequest(), 3)
        assert not SASL_KEYS & {k.api_key for k in versions.api_keys}
        answer = raw.request(SaslHandshakeRequest(mechanism="PLAIN"), 1)
        assert SaslHandshakeResponse.decode(answer, version=1, header=True).error_code == 35  # UNSUPPORTED_VERSION


@pytest.mark.parametrize(
    ("users", "mechanisms", "match"),
    [
        ({}, ("PLAIN",), "at least one user"),
        ({"ann": ""}, ("PLAIN",), "non-empty"),
        ({"ann": "pw"}, ("GSSAPI",), "choose one or more of SCRAM-SHA-512, SCRAM-SHA-256, PLAIN"),
    ],
)
def test_bad_sasl_settings_say_what_to_change(users, mechanisms, match):
    with pytest.raises(SaslConfigError, match=match):
        WireCluster(brokers=1, users=users, sasl_mechanisms=mechanisms)


def test_cli_takes_users_and_prints_their_client_settings(no_leaks):
    """``python -m course_lib.wire --user ann:ann-pw``, in this process: its stdin is a queue of
    commands, its stdout a queue of lines."""
    from course_lib.wire.__main__ import main

    commands: queue.Queue = queue.Queue()
    printed: queue.Queue = queue.Queue()

    class Lines:
        partial = ""

        def write(self, text: str) -> None:  # print() writes the text, then "\n"
            *lines, self.partial = (self.partial + text).split("\n")
            for line in lines:
                printed.put(line)

        def flush(self) -> None:
            pass

    argv = ["--brokers", "1", "--user", "ann:ann-pw", "--topic", "orders"]
    cli = threading.Thread(target=main, args=(argv, iter(commands.get, "quit\n"), Lines()), name="test-cli")
    cli.start()
    try:
        assert printed.get(timeout=30).startswith("bootstrap_servers=127.0.0.1:")
        key, _, settings = printed.get(timeout=10).partition("=")
        assert key == "client_config[ann]"
        config = json.loads(settings)
        assert config["security_protocol"] == "SASL_PLAINTEXT" and config["sasl_mechanism"] == "SCRAM-SHA-512"
        producer = KafkaProducer(**config)
        assert producer.send("orders", b"x").get(timeout=10).offset == 0
        producer.close()
    finally:
        commands.put("quit\n")
        cli.join(30)
    assert not cli.is_alive()
    bad = subprocess.run(
        [sys.executable, "-m", "course_lib.wire", "--user", "ann"], capture_output=True, text=True, timeout=60
    )
    assert bad.returncode == 2 and "expected NAME:PASSWORD" in bad.stderr


def _ask(raw: RawClient, response_cls, request, version: int):
    """Send ``request`` at ``version`` and decode its answer, a ``response_cls``."""
    return response_cls.decode(raw.request(request, version), version=version, header=True)


def _frame(request, version: int, correlation_id: int) -> bytes:
    """A request's bytes without the size prefix (RawClient.send_bytes adds it)."""
    request.API_VERSION = version
    request.with_header(correlation_id=correlation_id, client_id="raw")
    return bytes(request.encode(header=True, framed=False))
