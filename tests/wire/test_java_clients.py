"""Kafka's own Java tools (the cached 4.3.1 jars) against the simulated cluster: the Java client
negotiates down to what ApiVersions advertises (no topic ids, no transactions v2)."""

import re
import subprocess

import pytest

from course_lib.clusters import jars


def _java_or_skip() -> list[str]:
    try:
        jars.check_jvm_tools()
    except jars.JvmToolMissing as exc:
        pytest.skip(f"needs Java: {str(exc).splitlines()[0]}")
    return [jars.java_executable(), "-Xmx256m", "-cp", jars.kafka_classpath(progress=False)]


def test_producer_performance_and_console_consumer(wire):
    java = _java_or_skip()
    wire.create_topic("perf", partitions=1, min_insync_replicas=2)
    perf = subprocess.run(
        [
            *java,
            "org.apache.kafka.tools.ProducerPerformance",
            "--topic",
            "perf",
            "--num-records",
            "500",
            "--record-size",
            "100",
            "--throughput",
            "-1",
            "--producer-props",
            f"bootstrap.servers={wire.bootstrap_servers}",
            "acks=all",
            "enable.idempotence=true",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert re.search(r"^500 records sent", perf.stdout, re.M), perf.stdout + perf.stderr[-2000:]
    assert len(wire.call(lambda: wire.cluster.committed_records("perf"))) == 500
    consumer = subprocess.run(
        [
            *java,
            "org.apache.kafka.tools.consumer.ConsoleConsumer",
            "--bootstrap-server",
            wire.bootstrap_servers,
            "--topic",
            "perf",
            "--group",
            "java-group",
            "--from-beginning",
            "--max-messages",
            "5",
            "--timeout-ms",
            "30000",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "Processed a total of 5 messages" in consumer.stderr, consumer.stderr[-2000:]
    assert len(consumer.stdout.splitlines()) == 5
