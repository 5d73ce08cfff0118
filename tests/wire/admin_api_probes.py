"""The admin APIs issue 39 adds, through kafka-python's admin client, reduced to what a cluster
must agree on (not disk sizes, ports or timestamps); run against the wire cluster
(tests/wire/test_admin_apis_kafka43.py) and Kafka 4.3.1 (tests/real/test_admin_apis_real.py)."""

from __future__ import annotations

from kafka import KafkaAdminClient, KafkaProducer


def admin_api_answers(bootstrap: str, topic: str) -> dict:
    """``topic`` has 2 partitions, replication factor 3, on brokers 1-3; 5 records go to
    partition 0 first."""
    producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all")
    for i in range(5):
        producer.send(topic, f"v{i}".encode(), partition=0)
    producer.flush(30)
    producer.close()
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        return {
            "inferred version": admin._manager.broker_version_data.broker_version[:2],
            "log dirs": _log_dirs(admin, topic),
            "quorum": _quorum(admin),
            "topic partitions": _topic_partitions(admin.describe_topic_partitions([topic, "no-such-topic"]), topic),
            "paged": admin.describe_topic_partitions([topic], response_partition_limit=1)["next_cursor"],
            "config resources": _config_resources(admin.list_config_resources(), topic),
            "preferred": _election(admin.elect_leaders(0, {topic: [0, 1, 7]}, raise_errors=False)),
            "unclean": _election(admin.elect_leaders(1, {topic: [0]}, raise_errors=False)),
        }
    finally:
        admin.close()


def _log_dirs(admin, topic: str) -> dict:
    out = {}
    for result in admin.describe_log_dirs():
        dirs = result["log_dirs"]
        mine = [p for d in dirs for t in d["topics"] if t["name"] == topic for p in t["partitions"]]
        out[result["broker"]] = (
            len(dirs),
            [d["error_code"] for d in dirs],
            sorted((p["partition_index"], p["partition_size"] > 0, p["offset_lag"]) for p in mine),
        )
    return out


def _quorum(admin) -> dict:
    (t,) = admin.describe_metadata_quorum()["topics"]
    (p,) = t["partitions"]
    return {
        "topic": t["topic_name"],
        "error": p["error"],
        "leader is a voter": p["leader_id"] in {v["replica_id"] for v in p["current_voters"]},
        "high watermark > 0": p["high_watermark"] > 0,
    }


def _topic_partitions(result: dict, topic: str) -> list:
    return [
        (
            t["name"],
            t["error_code"],
            t["topic_authorized_operations"],
            [
                (
                    p["partition_index"],
                    p["leader_id"] in p["replica_nodes"],
                    sorted(p["replica_nodes"]),
                    sorted(p["isr_nodes"]),
                    # empty and null alike: kafka-python reads Kafka's empty ELR as None, while
                    # the Java admin dereferences the list (a null fails it with an NPE)
                    p["eligible_leader_replicas"] or None,
                    p["last_known_elr"] or None,
                    p["offline_replicas"],
                )
                for p in t["partitions"]
            ],
        )
        for t in sorted(result["topics"], key=lambda t: t["name"])
    ] + [result["next_cursor"]]


def _config_resources(result: dict, topic: str) -> dict:
    # a cluster shared with other tests lists their topics and groups too (internal topics, share
    # groups with configs): only the brokers and this probe's topic are known here
    return {
        kind: sorted(names) if kind != "topic" else topic in names
        for kind, names in result.items()
        if kind in ("broker", "broker_logger", "topic")
    }


def _election(response) -> list:
    return [
        (r.topic, sorted((p.partition_id, p.error_code, p.error_message) for p in r.partition_result))
        for r in response.replica_election_results
    ]


def described_configs(bootstrap: str, topic: str) -> dict:
    """kafka-python's describe_configs (all) of ``topic`` (created with retention.ms=86400000) and
    of broker 1: per topic config ``(value, source, read only, type)``; per broker config
    ``(read only, sensitive, type)``, and advertised.listeners' source."""
    from kafka.admin import ConfigResource, ConfigResourceType

    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        got = admin.describe_configs(
            [ConfigResource(ConfigResourceType.TOPIC, topic), ConfigResource(ConfigResourceType.BROKER, 1)],
            config_filter="all",
        )
        modified = admin.describe_configs([ConfigResource(ConfigResourceType.TOPIC, topic)])
    finally:
        admin.close()
    broker = got["broker"]["1"]
    return {
        "topic": {
            name: (c["value"], c["config_source"], c["read_only"], c["config_type"])
            for name, c in got["topic"][topic].items()
        },
        "topic modified": sorted(modified["topic"][topic]),
        "broker": {name: (c["read_only"], c["is_sensitive"], c["config_type"]) for name, c in broker.items()},
        "advertised.listeners": broker["advertised.listeners"]["config_source"],
    }


def reassignment_answers(bootstrap: str, topic: str) -> dict:
    """kafka-python's alter/list_partition_reassignments on partition 0 of ``topic`` (RF 3 on
    brokers 1-3): to its own replicas, to a broker that does not exist, a cancel with nothing to
    cancel, and the list afterwards."""
    from kafka import TopicPartition

    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    tp = TopicPartition(topic, 0)
    out = {}
    try:
        replicas = admin.describe_topics([topic])[0]["partitions"][0]["replica_nodes"]
        for case, target in (("same", replicas), ("unknown broker", [99]), ("cancel", None)):
            try:
                result = admin.alter_partition_reassignments({tp: target})[tp]
                out[case] = None if result is None else getattr(result, "errno", repr(result))
            except Exception as exc:  # noqa: BLE001 - the error is the answer
                out[case] = getattr(exc, "errno", type(exc).__name__)
        out["list"] = admin.list_partition_reassignments([tp])
    finally:
        admin.close()
    return out


def replica_log_dir_moves(bootstrap: str, topic: str) -> dict:
    """kafka-python's alter_replica_log_dirs for partition 0 of ``topic`` on the first broker that
    describe_log_dirs lists: to its current directory, and to one that does not exist."""
    from kafka.structs import TopicPartitionReplica

    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        first = sorted(admin.describe_log_dirs(), key=lambda r: r["broker"])[0]
        replica = TopicPartitionReplica(topic, 0, first["broker"])
        out = {}
        for case, path in (("same dir", first["log_dirs"][0]["log_dir"]), ("no such dir", "/no/such/dir")):
            result = admin.alter_replica_log_dirs({replica: path})[replica]
            out[case] = getattr(result, "errno", result)
        return out
    finally:
        admin.close()


#: NewPartitions(total, assignments) a 1-partition, RF 3 topic on brokers 1-3 is asked to grow by
MANUAL_ASSIGNMENT_CASES = {
    "unknown broker": (2, [[4, 1, 0]]),  # Kafka checks the ids in ascending order: 0 first
    "repeated broker": (2, [[2, 1, 1]]),
    "fewer replicas": (2, [[1, 2]]),
    "empty": (2, [[]]),
    "too few assignments": (4, [[1, 2, 3]]),
    "second assignment bad": (3, [[1, 2, 3], [3, 3, 2]]),
    "valid": (2, [[3, 1, 2]]),
}


def manual_assignment_answers(bootstrap: str, topic: str) -> dict:
    """(error code, error message) of CreatePartitions with manual assignments, validate only."""
    from kafka.admin import NewPartitions

    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        out = {}
        for case, (total, assignments) in MANUAL_ASSIGNMENT_CASES.items():
            response = admin.create_partitions(
                {topic: NewPartitions(total, assignments)}, validate_only=True, raise_errors=False
            )
            (result,) = response.results
            out[case] = (result.error_code, result.error_message)
        return out
    finally:
        admin.close()


#: NewTopic(num_partitions, replication_factor, replica_assignments) on brokers 1-3: a topic of its
#: own per case, the manual assignments either refused or followed to the replica
TOPIC_ASSIGNMENT_CASES = {
    "unknown broker": (-1, -1, {0: [4, 1, 2]}),
    "repeated broker": (-1, -1, {0: [2, 1, 1]}),
    "empty": (-1, -1, {0: []}),
    "mixed sizes": (-1, -1, {0: [1, 2, 3], 1: [1, 2]}),
    "gap": (-1, -1, {0: [1, 2, 3], 2: [2, 3, 1]}),
    "partitions given": (2, -1, {0: [1, 2, 3]}),
    "replication factor given": (-1, 3, {0: [1, 2, 3]}),
    "valid": (-1, -1, {0: [3, 1], 1: [2, 3], 2: [1, 2]}),
}


def topic_assignment_answers(bootstrap: str, prefix: str) -> dict:
    """Per case (error code, error message, partitions, replication factor) of CreateTopics, and
    for the topics created, each partition's (leader, replicas, isr) as describe_topics sees them."""
    from kafka.admin import NewTopic

    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        out = {}
        for case, (partitions, rf, assignments) in TOPIC_ASSIGNMENT_CASES.items():
            name = f"{prefix}-{case.replace(' ', '-')}"
            response = admin.create_topics([NewTopic(name, partitions, rf, assignments)], raise_errors=False)
            (result,) = response["topics"]
            out[case] = tuple(
                result[k] for k in ("error_code", "error_message", "num_partitions", "replication_factor")
            )
            if result["error_code"] == 0:
                admin.wait_for_topics([name])
                (described,) = admin.describe_topics([name])
                out[f"{case} described"] = sorted(
                    (p["partition_index"], p["leader_id"], p["replica_nodes"], p["isr_nodes"])
                    for p in described["partitions"]
                )
        return out
    finally:
        admin.close()


#: the changes config_change_answers and java_config_answers make to a topic (IncrementalAlterConfigs),
#: one case after the other
CONFIG_CHANGES = {
    "set": [("retention.ms", "1000", "SET")],
    "append": [("cleanup.policy", "compact", "APPEND")],
    "subtract": [("cleanup.policy", "delete", "SUBTRACT")],
    "delete": [("retention.ms", None, "DELETE")],
    "unknown config": [("retention.msec", "1", "SET")],
    "bad value": [("retention.ms", "a day", "SET")],
    "append a part it has": [("cleanup.policy", "compact,delete", "APPEND")],
    "append to a non-list": [("retention.ms", "5", "APPEND")],
    "append a bad part": [("cleanup.policy", "forever", "APPEND")],
}


def config_change_answers(bootstrap: str, topic: str, changes: dict) -> dict:
    """kafka-python's twin of java_admin_api_probes.java_config_answers' changes: its admin's
    ``alter_configs(incremental=True)`` (IncrementalAlterConfigs) per case of ``changes`` (case ->
    [(config, value, op name)]) on ``topic``, each (error code, message) or None, with the (value,
    source) of retention.ms and cleanup.policy that describe_configs shows after it."""
    import re

    from kafka.admin import ConfigResource, ConfigResourceType

    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    out = {}
    try:
        for case, changed in changes.items():
            configs = {name: (op, value) for name, value, op in changed}
            resource = ConfigResource(ConfigResourceType.TOPIC, topic, configs=configs)
            # kafka-python answers "OK" or the error as text: "[Error 40] InvalidConfigurationError: <message>"
            answer = admin.alter_configs([resource], incremental=True, raise_on_unknown=False)["topic"][topic]
            refused = re.fullmatch(r"\[Error (\d+)\] \w+: (.*)", answer, re.S)
            if refused is None:
                wait_until_described(admin, topic, changed)
            now = admin.describe_configs([ConfigResource(ConfigResourceType.TOPIC, topic)], config_filter="all")
            now = now["topic"][topic]
            out[case] = (
                None if refused is None else (int(refused[1]), refused[2]),
                {c: (now[c]["value"], now[c]["config_source"]) for c in ("retention.ms", "cleanup.policy")},
            )
    finally:
        admin.close()
    return out


def wait_until_described(admin, topic: str, changed: list) -> None:
    """Until every broker describes ``topic`` with the effect of ``changed`` (the ops of an
    IncrementalAlterConfigs that succeeded): the controller answers once it has the change, each
    broker applies it with its next metadata, and DescribeConfigs goes to any broker."""
    import time

    from kafka.protocol.admin import DescribeConfigsRequest

    def applied(configs: dict) -> bool:
        for name, value, op in changed:
            current, dynamic = configs[name]
            parts = current.split(",") if current else []
            if (op, dynamic) == ("DELETE", True) or (op == "SET" and current != value):
                return False
            if op in ("APPEND", "SUBTRACT") and any((p in parts) != (op == "APPEND") for p in value.split(",")):
                return False
        return True

    resource = DescribeConfigsRequest.DescribeConfigsResource(
        resource_type=2, resource_name=topic, configuration_keys=None
    )
    request = DescribeConfigsRequest(
        version=4, resources=[resource], include_synonyms=False, include_documentation=False
    )
    deadline = time.monotonic() + 30
    for broker in sorted(b.node_id for b in admin._manager.cluster.brokers()):
        while True:
            (result,) = admin._manager.run(admin._manager.send, request, broker).results
            if applied({c.name: (c.value, c.config_source == 1) for c in result.configs}):  # 1: DYNAMIC_TOPIC_CONFIG
                break
            assert time.monotonic() < deadline, f"broker {broker} does not describe {changed} on {topic}"
            time.sleep(0.05)
