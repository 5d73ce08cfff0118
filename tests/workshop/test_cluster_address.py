"""The workshop cluster on a machine of its own: ``python -m course_lib.workshop cluster`` binds the
address given by ``--listen`` and gives clients the one given by ``--advertise`` (issue 22).

Tested with another loopback address (127.0.0.2: Linux routes all of 127/8 to lo), so a broker
that still bound or advertised 127.0.0.1 would be caught without a second machine.
"""

import socket

import pytest

from course_lib.workshop.__main__ import main

PASSWORD = "pw"


def test_listening_everywhere_needs_an_advertised_address(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("KAFKA_INSTRUCTOR_PASSWORD", PASSWORD)
    assert main(["cluster", "--dir", str(tmp_path), "--listen", "0.0.0.0"]) == 2
    assert "--advertise HOST" in capsys.readouterr().err
    assert not any(tmp_path.iterdir())  # refused before anything started


def _refused(host: str, port: int) -> bool:
    try:
        socket.create_connection((host, port), timeout=2).close()
    except ConnectionRefusedError:
        return True
    return False


@pytest.mark.real_kafka
def test_the_cluster_listens_and_advertises_the_addresses_it_is_given(cluster_command):
    from kafka.admin import KafkaAdminClient

    from course_lib.real.security import client_kwargs

    with cluster_command("--listen", "127.0.0.2", "--advertise", "127.0.0.2") as bootstrap:
        assert bootstrap.startswith("127.0.0.2:"), bootstrap
        port = int(bootstrap.rsplit(":", 1)[1])
        assert _refused("127.0.0.1", port), "the client port must be bound to --listen only"
        admin = KafkaAdminClient(
            bootstrap_servers=bootstrap, bootstrap_timeout_ms=15000, **client_kwargs("instructor", PASSWORD)
        )
        try:
            brokers = admin.describe_cluster()["brokers"]
        finally:
            admin.close()
        # what clients are told to connect to, from the brokers' own metadata
        assert [(b["host"], b["port"]) for b in brokers] == [("127.0.0.2", port)], brokers
