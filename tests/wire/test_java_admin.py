"""Kafka's own Java admin tools (the lab's release's jars: Java's Admin client) against the wire
cluster's admin APIs (issue 30): CreatePartitions, DeleteRecords, DeleteGroups,
IncrementalAlterConfigs and DescribeCluster, each checked in the simulator's state."""

import json
import subprocess

from course_lib.clusters.jars import kafka_version

from .test_java_clients import _java_or_skip

#: kafka-configs' main class: Kafka 4.4.0 moved it from the core jar to kafka-tools
CONFIG_COMMAND = {"4.3.1": "kafka.admin.ConfigCommand", "4.4.0": "org.apache.kafka.tools.ConfigCommand"}


def _tool(java, main: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([*java, main, *args], capture_output=True, text=True, timeout=120)


def test_java_admin_tools_on_the_wire(wire, tmp_path):
    java = _java_or_skip()
    boot = wire.bootstrap_servers
    wire.create_topic("admin", partitions=1, replication_factor=3)

    out = _tool(java, "org.apache.kafka.tools.ClusterTool", "cluster-id", "--bootstrap-server", boot)
    assert "Cluster ID: course-sim-wire" in out.stdout, out.stdout + out.stderr[-2000:]

    out = _tool(
        java, "org.apache.kafka.tools.TopicCommand", "--bootstrap-server", boot, "--alter", "--topic", "admin",
        "--partitions", "3",
    )  # fmt: skip
    assert out.returncode == 0, out.stdout + out.stderr[-2000:]
    assert wire.call(lambda: wire.cluster.controller.configs["admin"].partitions) == 3

    out = _tool(
        java, CONFIG_COMMAND[kafka_version()], "--bootstrap-server", boot, "--entity-type", "topics", "--entity-name",
        "admin", "--alter", "--add-config", "min.insync.replicas=3",
    )  # fmt: skip
    assert out.returncode == 0, out.stdout + out.stderr[-2000:]
    assert wire.call(lambda: wire.cluster.controller.configs["admin"].min_insync_replicas) == 3

    producer = _tool(
        java, "org.apache.kafka.tools.ProducerPerformance", "--topic", "admin", "--num-records", "30",
        "--record-size", "10", "--throughput", "-1", "--producer-props", f"bootstrap.servers={boot}", "acks=all",
        "partitioner.class=org.apache.kafka.clients.producer.RoundRobinPartitioner",
    )  # fmt: skip
    assert "30 records sent" in producer.stdout, producer.stdout + producer.stderr[-2000:]
    plan = tmp_path / "delete.json"
    plan.write_text(json.dumps({"version": 1, "partitions": [{"topic": "admin", "partition": 0, "offset": 4}]}))
    out = _tool(
        java, "org.apache.kafka.tools.DeleteRecordsCommand", "--bootstrap-server", boot, "--offset-json-file",
        str(plan),
    )  # fmt: skip
    assert "low_watermark: 4" in out.stdout, out.stdout + out.stderr[-2000:]

    consumer = _tool(
        java, "org.apache.kafka.tools.consumer.ConsoleConsumer", "--bootstrap-server", boot, "--topic", "admin",
        "--group", "java-admin", "--from-beginning", "--max-messages", "3", "--timeout-ms", "30000",
    )  # fmt: skip
    assert "Processed a total of 3 messages" in consumer.stderr, consumer.stderr[-2000:]
    out = _tool(
        java, "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand", "--bootstrap-server", boot, "--delete",
        "--group", "java-admin",
    )  # fmt: skip
    assert "successful" in out.stdout, out.stdout + out.stderr[-2000:]
    assert wire.call(lambda: any("java-admin" in b.groups.offsets for b in wire.cluster.brokers.values())) is False
