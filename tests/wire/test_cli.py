"""The CLI a learner points kcat or their own program at, and the pytest plugin's fixture."""

import os
import pty
import signal
import subprocess
import sys

import pytest
from kafka import KafkaConsumer, KafkaProducer

CLI = [sys.executable, "-m", "course_lib.wire", "--brokers", "3", "--seed", "1"]


def test_cli_prints_the_bootstrap_address_and_takes_fault_commands(no_leaks):
    proc = subprocess.Popen(
        [sys.executable, "-m", "course_lib.wire", "--brokers", "3", "--seed", "1", "--topic", "orders:2:2"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        first = proc.stdout.readline().strip()
        assert first.startswith("bootstrap_servers=127.0.0.1:")
        bootstrap = first.split("=", 1)[1]
        producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all")
        assert producer.send("orders", b"x", partition=1).get(timeout=10).offset == 0
        producer.close()
        for command, answer in [
            ("crash 2", "ok crash 2"),
            ("restart 2", "ok restart 2"),
            ("lose_next_ack", "ok lose_next_ack"),
            ("heal", "ok heal"),
            ("topic orders", "error: [Error 36] TopicAlreadyExistsError"),
            ("delete_topic orders", "ok delete_topic orders"),
            ("delete_topic orders", "error: [Error 3] UnknownTopicOrPartitionError"),
            ("crash 7", "error: usage: crash BROKER (one of [1, 2, 3])"),
            ("teleport 1", "error: unknown command 'teleport'"),
        ]:
            proc.stdin.write(command + "\n")
            proc.stdin.flush()
            assert proc.stdout.readline().startswith(answer)
        proc.stdin.write("quit\n")
        proc.stdin.flush()
        assert proc.wait(20) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        proc.stdin.close()
        proc.stdout.close()


def test_the_pytest_plugin_fixture_hands_out_a_cluster(wire_cluster):
    wire_cluster.create_topic("app", partitions=1)
    producer = KafkaProducer(bootstrap_servers=wire_cluster.bootstrap_servers)
    producer.send("app", b"hello").get(timeout=10)
    producer.close()
    assert wire_cluster.seed == 1 and len(wire_cluster.ports) == 3
    wire_cluster.nemesis.crash(1)
    assert not wire_cluster.call(lambda: wire_cluster.cluster.brokers[1].alive)


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_cli_in_the_background_keeps_serving_after_its_input_ends_until_a_signal(no_leaks, stop):
    """``python -m course_lib.wire --brokers 3 --seed 1 < /dev/null &``: its input ends at once
    and is no terminal, so the cluster serves on - a producer and a consumer use it after the
    end of input - until the signal stops it cleanly."""
    proc = subprocess.Popen(
        [*CLI, "--topic", "orders:1:2"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        bootstrap = proc.stdout.readline().strip().split("=", 1)[1]
        said = [proc.stderr.readline().strip() for _ in range(2)]
        assert said == ["ok topic orders", "end of input: serving until SIGTERM or SIGINT"], said
        assert proc.poll() is None
        producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all")
        assert producer.send("orders", b"after the end of input").get(timeout=10).offset == 0
        producer.close()
        consumer = KafkaConsumer("orders", bootstrap_servers=bootstrap, auto_offset_reset="earliest")
        try:
            records = consumer.poll(timeout_ms=10_000, max_records=1)
        finally:
            consumer.close()
        assert [r.value for batch in records.values() for r in batch] == [b"after the end of input"]
        proc.send_signal(stop)
        assert proc.wait(30) == 0
        assert "Traceback" not in proc.stderr.read()
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        proc.stdout.close()
        proc.stderr.close()


def test_cli_on_a_terminal_stops_at_the_end_of_input(no_leaks):
    """Ctrl-D on an interactive stdin is a ``quit``."""
    controller, terminal = pty.openpty()
    proc = subprocess.Popen(CLI, stdin=terminal, stdout=subprocess.PIPE, text=True)
    os.close(terminal)
    try:
        assert proc.stdout.readline().startswith("bootstrap_servers=127.0.0.1:")
        os.write(controller, b"\x04")  # Ctrl-D at the start of a line: end of input
        assert proc.wait(30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        proc.stdout.close()
        os.close(controller)
