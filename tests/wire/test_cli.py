"""The CLI a learner points kcat or their own program at, and the pytest plugin's fixture."""

import subprocess
import sys

from kafka import KafkaProducer


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
