"""connect() reads the learner's settings: arguments, then a connection file, then the environment."""

import pytest

from course_lib.client_adapters.access import AccessDenied, explain
from course_lib.real.connect import ConnectionSettingsError, connect
from course_lib.workshop.credentials import connection_lines
from course_lib.workshop.roster import Learner

ENV = (
    "KAFKA_BOOTSTRAP_SERVERS",
    "KAFKA_SASL_USERNAME",
    "KAFKA_SASL_PASSWORD",
    "KAFKA_SASL_MECHANISM",
    "COURSE_LEARNER_PREFIX",
    "COURSE_CONNECTION_FILE",
    "KAFKA_SECURITY_PROTOCOL",
)


@pytest.fixture(autouse=True)
def clean_env(monkeypatch):
    for k in ENV:
        monkeypatch.delenv(k, raising=False)


def test_the_file_the_workshop_command_writes_is_what_connect_reads(tmp_path, monkeypatch):
    f = tmp_path / "ann.env"
    f.write_text(connection_lines("k1:9092,k2:9092", Learner("ann"), "s3cret", spark_remote="sc://spark:15002"))
    for kafka in (connect(env_file=f), (monkeypatch.setenv("COURSE_CONNECTION_FILE", str(f)), connect())[1]):
        config = kafka.client_config()
        assert config["bootstrap_servers"] == "k1:9092,k2:9092"
        assert config["security_protocol"] == "SASL_PLAINTEXT" and config["sasl_mechanism"] == "SCRAM-SHA-512"
        assert (config["sasl_plain_username"], config["sasl_plain_password"]) == ("ann", "s3cret")
        assert kafka.topic("orders") == "ann.orders" == kafka.topic("ann.orders")  # prefixed once
        assert config["proxy_url"].startswith("socks5://127.0.0.1:")  # the learner's own fault proxy
        assert kafka.spark_remote == "sc://spark:15002"
        kafka.close()


def test_environment_variables_and_the_user_as_default_prefix(monkeypatch):
    monkeypatch.setenv("KAFKA_BOOTSTRAP_SERVERS", "k:9092")
    monkeypatch.setenv("KAFKA_SASL_USERNAME", "bob")
    monkeypatch.setenv("KAFKA_SASL_PASSWORD", "pw")
    kafka = connect(fault_proxy=False)
    assert kafka.prefix == "bob" and kafka.client_config()["sasl_plain_username"] == "bob"
    assert connect(prefix="x", fault_proxy=False).group_id("g") == "x.g"


@pytest.mark.parametrize(
    "lines, fragment",
    [
        ("KAFKA_SASL_USERNAME=ann\n", "No cluster given"),
        ("KAFKA_BOOTSTRAP_SERVERS=k:1\nKAFKA_SASL_USERNAME=ann\n", "has no password"),
        ("KAFKA_BOOTSTRAP_SERVERS=k:1\nKAFKA_SASL_PASSWORD=x\n", "no user name"),
        (
            "KAFKA_BOOTSTRAP_SERVERS=k:1\nKAFKA_SASL_USERNAME=a\nKAFKA_SASL_PASSWORD=x\nKAFKA_SASL_MECHANISM=GSSAPI\n",
            "not supported",
        ),
        ("KAFKA_BOOTSTRAP=k:1\n", "unknown setting 'KAFKA_BOOTSTRAP'"),
        ("just words\n", "expected KEY=value"),
    ],
)
def test_bad_settings_say_what_to_fix(tmp_path, lines, fragment):
    f = tmp_path / "x.env"
    f.write_text(lines)
    with pytest.raises(ConnectionSettingsError, match=fragment):
        connect(env_file=f, fault_proxy=False)


def test_a_missing_connection_file_is_named(tmp_path):
    with pytest.raises(ConnectionSettingsError, match="nope.env"):
        connect(env_file=tmp_path / "nope.env")


def test_authorization_errors_name_the_resource_and_the_learners_prefix():
    from kafka.errors import GroupAuthorizationFailedError, TransactionalIdAuthorizationFailedError

    e = explain(GroupAuthorizationFailedError("bob.g"), user="ann", prefix="ann")
    assert isinstance(e, AccessDenied) and (e.resource_type, e.resource, e.prefix) == (
        "consumer group",
        "bob.g",
        "ann.",
    )
    assert "'bob.g'" in str(e) and "'ann.'" in str(e) and "not yours" in str(e)
    e = explain(TransactionalIdAuthorizationFailedError(), user="ann", prefix="ann", transactional_id="bob.tx")
    assert e.resource == "bob.tx" and "transactional id 'bob.tx'" in str(e)


def test_in_a_notebook_any_clients_authorization_error_reads_as_access_denied(capsys):
    from IPython.core.interactiveshell import InteractiveShell
    from kafka.errors import TopicAuthorizationFailedError

    from course_lib.client_adapters.access import AUTHORIZATION_ERRORS, notebook_handler

    shell = InteractiveShell()
    shell.set_custom_exc(AUTHORIZATION_ERRORS, notebook_handler("ann", "ann"))
    shell.user_ns["error"] = TopicAuthorizationFailedError({"bob.orders"})
    shell.run_cell("raise error")
    err = capsys.readouterr().err
    assert err.startswith("AccessDenied: The cluster refused user 'ann' access to topic 'bob.orders'"), err
    assert "'ann.'" in err and "Traceback" not in err


def test_the_real_kafka_lab_connects_with_the_learners_file(tmp_path, monkeypatch):
    from course_lib.real.lab import is_local, start_lab, stop_lab

    f = tmp_path / "ann.env"
    f.write_text(connection_lines("k:9092", Learner("ann"), "pw"))
    monkeypatch.setenv("COURSE_CONNECTION_FILE", str(f))
    kafka, why = start_lab(progress=False)
    assert not is_local(kafka) and kafka.username == "ann" and kafka.message_faults
    assert "connected to k:9092 as 'ann'" in why
    assert stop_lab(kafka) == "left the shared cluster running (it is not ours)"
