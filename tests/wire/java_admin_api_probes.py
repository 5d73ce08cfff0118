"""The admin APIs issue 39 adds, through the Java client's ``Admin`` (kafka-clients of the lab's
release, :class:`course_lib.java_client.JavaAdmin`), reduced to what a cluster must agree on (not
disk sizes, ids or timestamps): the Java twin of :mod:`tests.wire.admin_api_probes`, run against
the wire cluster (tests/wire/test_java_admin.py) and Kafka (tests/real/test_admin_apis_real.py)."""

from __future__ import annotations

from kafka import KafkaAdminClient, KafkaProducer

from .admin_api_probes import CONFIG_CHANGES, MANUAL_ASSIGNMENT_CASES, TOPIC_ASSIGNMENT_CASES, wait_until_described


def _failure(outcome):
    """None, or the simple class name of the Java exception (what the clusters must agree on)."""
    return None if outcome is None else outcome.name


def _failure_and_message(outcome):
    return None if outcome is None else (outcome.name, outcome.message)


def java_admin_answers(java, bootstrap: str, topic: str) -> dict:
    """``java``: a JavaAdmin on the cluster; ``topic`` has 2 partitions, replication factor 3, on
    brokers 1-3; 5 records go to partition 0 first."""
    producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all")
    for i in range(5):
        producer.send(topic, f"v{i}".encode(), partition=0)
    producer.flush(30)
    producer.close()
    return {
        "log dirs": _log_dirs(java, topic),
        "log dir moves": _log_dir_moves(java, topic),
        "quorum": _quorum(java.describe_metadata_quorum()),
        "topics": _topics(java.describe_topics([topic, "no-such-topic"])),
        "config resources": _config_resources(java.list_config_resources(["BROKER", "BROKER_LOGGER", "TOPIC"]), topic),
        "preferred": _elections(java.elect_leaders("PREFERRED", [(topic, 0), (topic, 1), (topic, 7)])),
        "unclean": _elections(java.elect_leaders("UNCLEAN", [(topic, 0)])),
        "reassignments": _reassignments(java, topic),
    }


def java_manual_partitions(java, topic: str) -> dict:
    """(failure, message) of ``createPartitions`` with each of MANUAL_ASSIGNMENT_CASES' manual
    assignments, validate only, on ``topic`` (1 partition, replication factor 3, brokers 1-3)."""
    return {
        case: _failure_and_message(java.create_partitions({topic: spec}, validate_only=True)[topic])
        for case, spec in MANUAL_ASSIGNMENT_CASES.items()
    }


def _log_dirs(java, topic: str) -> dict:
    out = {}
    for broker, dirs in java.describe_log_dirs([1, 2, 3]).items():
        mine = [r for d in dirs.values() for r in d["replicas"] if r["topic"] == topic]
        out[broker] = (
            len(dirs),
            [d["error"] for d in dirs.values()],
            sorted((r["partition"], r["size"] > 0, r["offsetLag"], r["isFuture"]) for r in mine),
        )
    return out


def _log_dir_moves(java, topic: str) -> dict:
    """Partition 0's replica on broker 1 to its own directory, and to one that does not exist."""
    (current,) = java.describe_log_dirs([1])[1]
    got = {}
    for case, path in (("same dir", current), ("no such dir", "/no/such/dir")):
        got[case] = _failure(java.alter_replica_log_dirs({(topic, 0, 1): path})[(topic, 0, 1)])
    return got


def _quorum(q: dict) -> dict:
    voters = {v["replicaId"] for v in q["voters"]}
    return {"leader is a voter": q["leaderId"] in voters, "high watermark > 0": q["highWatermark"] > 0}


def _topics(described: dict) -> dict:
    return {
        name: d.name
        if isinstance(d, Exception)
        else [
            (p["partition"], p["leader"] in p["replicas"], sorted(p["replicas"]), sorted(p["isr"]))
            for p in d["partitions"]
        ]
        for name, d in described.items()
    }


def _config_resources(listed: list, topic: str) -> dict:
    # a cluster shared with other tests lists their topics too: only the brokers and this topic are known
    return {
        "BROKER": sorted(n for t, n in listed if t == "BROKER"),
        "BROKER_LOGGER": sorted(n for t, n in listed if t == "BROKER_LOGGER"),
        "TOPIC": (("TOPIC", topic) in listed),
    }


def _elections(result: dict) -> dict:
    return {tp.partition: _failure_and_message(e) for tp, e in sorted(result.items())}


def _reassignments(java, topic: str) -> dict:
    """Partition 0 to its own replicas, to a broker that does not exist, a cancel with nothing
    to cancel, and the list afterwards."""
    replicas = java.describe_topics([topic])[topic]["partitions"][0]["replicas"]
    got = {}
    for case, target in (("same", replicas), ("unknown broker", [99]), ("cancel", None)):
        (outcome,) = java.alter_partition_reassignments({(topic, 0): target}).values()
        got[case] = _failure(outcome)
    got["list"] = java.list_partition_reassignments([(topic, 0)])
    return got


def java_topic_assignments(java, prefix: str) -> dict:
    """``NewTopic(name, replicasAssignments)`` for each case of TOPIC_ASSIGNMENT_CASES Java can
    express (it sends no partition count or replication factor with assignments): the failure and
    its message, and for the topics created each partition's (leader, replicas, isr)."""
    out = {}
    for case, (partitions, rf, assignments) in TOPIC_ASSIGNMENT_CASES.items():
        if (partitions, rf) != (-1, -1):
            continue
        name = f"{prefix}-{case.replace(' ', '-')}"
        given = {str(p): replicas for p, replicas in assignments.items()}
        out[case] = _failure_and_message(java.create_topics([{"name": name, "assignments": given}])[name])
        if out[case] is None:
            out[f"{case} described"] = sorted(
                (p["partition"], p["leader"], p["replicas"], p["isr"]) for p in _described(java, name)["partitions"]
            )
    return out


def _described(java, topic: str, timeout_s: float = 30) -> dict:
    """``describeTopics`` of a topic just created, once the broker asked knows it: CreateTopics is
    answered when the controller has the topic, a broker learns it with its next metadata (on a
    loaded machine a describe can come first: UnknownTopicOrPartitionException) - as kafka-python's
    twin waits (``wait_for_topics``)."""
    import time

    deadline = time.monotonic() + timeout_s
    while True:
        got = java.describe_topics([topic])[topic]
        if isinstance(got, dict) or got.name != "UnknownTopicOrPartitionException" or time.monotonic() > deadline:
            return got
        time.sleep(0.05)


def java_config_answers(java, bootstrap: str, topic: str) -> dict:
    """Each change of CONFIG_CHANGES on ``topic`` (created with retention.ms=86400000), then what
    describeConfigs answers of the configs it touches (once every broker has a change that
    succeeded); every topic config's (value, source, read only, type) before; broker 1's configs
    (read only, sensitive, type)."""
    resource = ("TOPIC", topic)
    before = java.describe_configs([resource, ("BROKER", "1")])
    out: dict = {
        "topic": {n: (c["value"], c["source"], c["readOnly"], c["type"]) for n, c in before[resource].items()},
        "broker": {n: (c["readOnly"], c["sensitive"], c["type"]) for n, c in before[("BROKER", "1")].items()},
        "validate only": _failure(
            java.incremental_alter_configs({resource: CONFIG_CHANGES["set"]}, validate_only=True)[resource]
        ),
    }
    watcher = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        for case, ops in CONFIG_CHANGES.items():
            failure = _failure_and_message(java.incremental_alter_configs({resource: ops})[resource])
            if failure is None:
                wait_until_described(watcher, topic, ops)
            now = java.describe_configs([resource])[resource]
            out[case] = (failure, {c: (now[c]["value"], now[c]["source"]) for c in ("retention.ms", "cleanup.policy")})
    finally:
        watcher.close()
    return out


__all__ = [
    "java_admin_answers",
    "java_config_answers",
    "java_manual_partitions",
    "java_topic_assignments",
]
