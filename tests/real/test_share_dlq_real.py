"""Dead-letter queues for share groups (KIP-1191) on the session's LocalCluster, measured with
confluent-kafka's ShareConsumer and the Java client's KafkaShareConsumer (each experiment of
course_lib.experiments.on_kafka.share_groups with both, through the share workload's contract): what Kafka 4.4.0
writes to a share group's dead-letter topic, and when it writes nothing. On Kafka 4.3.1
(``COURSE_KAFKA_VERSION=4.3.1``) the same group configs are refused as unknown.

What these pin, measured on Kafka 4.4.0 (2026-12-02):
- a REJECTed record and one RELEASEd past ``share.delivery.count.limit`` both go to the DLQ, in
  that order, each with six ``__dlq.errors.*`` headers (source topic, partition, offset, group,
  delivery count, why); without ``errors.deadletterqueue.copy.record.enable`` the record has no
  key and no value;
- with it, the key and the value are copied - not the source's headers, not its timestamp;
- when Kafka cannot write the DLQ (the topic did not opt in with
  ``errors.deadletterqueue.group.enable``, its name lacks the cluster's prefix ``dlq.``, it does
  not exist and auto-creation is off, or even the header-only record is over its
  ``max.message.bytes``) the record is archived all the same - nothing is redelivered, nothing is
  written, only the broker logs "Failed to write to DLQ, proceeding to ARCHIVED regardless";
- ``share.version=1`` (the 4.3 level) keeps the configs but writes nothing;
- a record consumers take and never acknowledge is dead-lettered when it reaches the limit, like
  one RELEASEd to it;
- a dead letter goes to the DLQ partition numbered like its source partition (not by key).
"""

from __future__ import annotations

import subprocess
import uuid

import pytest

from course_lib.clusters import jars
from course_lib.experiments.on_kafka.share_groups import (
    DLQ_DELIVERIES as DELIVERIES,
    DLQ_HEADERS,
    DLQ_OVER_LIMIT_MESSAGE as OVER_LIMIT,
    DLQ_REJECTED_MESSAGE as REJECTED,
    DLQ_SOURCE_TIMESTAMP_MS,
    dead_letter_queue,
    dlq_by_partition,
    dlq_never_acknowledged,
)
from course_lib.experiments.on_kafka.share_groups import dlq_origin as origin
from tests.java_client import support

pytestmark = pytest.mark.real_kafka


def has_kip_1191(cluster) -> bool:
    return cluster.kafka_version != "4.3.1"


@pytest.fixture
def kip_1191(cluster):
    if not has_kip_1191(cluster):
        pytest.skip(f"Kafka {cluster.kafka_version} has no dead-letter queues for share groups (4.4.0 has)")
    return cluster


def kafka_tool(cluster, main_class: str, *args: str) -> str:
    """A tool of Kafka's jars (kafka-features.sh, kafka-configs.sh) against the cluster."""
    done = subprocess.run(
        [
            jars.java_executable(),
            "-cp",
            jars.kafka_classpath(progress=False, version=cluster.kafka_version),
            main_class,
            "--bootstrap-server",
            cluster.bootstrap_servers,
            *args,
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def dlq_topic(cluster, stem: str, partitions: int = 1, **config: str) -> str:
    """A topic that opted in as a DLQ (unless ``config`` says otherwise)."""
    settings = {"errors.deadletterqueue.group.enable": "true", **config}
    name = cluster.create_topic(f"{stem}-{uuid.uuid4().hex[:6]}", partitions=partitions, config=settings)
    assert name.startswith(stem.split("-")[0])
    return name


def test_on_4_3_1_the_dead_letter_configs_are_unknown(cluster):
    if has_kip_1191(cluster):
        pytest.skip("the DLQ configs exist on this release")
    got = dead_letter_queue(cluster, "dlq.never")
    assert "Unknown group config name: errors.deadletterqueue.topic.name" in got["group_config"]


def test_rejected_and_over_the_limit_records_carry_their_origin(kip_1191, share_client):
    got = dead_letter_queue(kip_1191, dlq_topic(kip_1191, "dlq.headers"), dead_letters=2, client=share_client)
    assert got["deliveries"] == DELIVERIES
    assert [(r["offset"], r["key"], r["value"], r["headers"]) for r in got["dlq"]] == [
        (0, None, None, origin(got, 1, 1, REJECTED)),
        (1, None, None, origin(got, 2, 2, OVER_LIMIT)),
    ]
    assert tuple(got["dlq"][0]["headers"]) == DLQ_HEADERS


def test_copy_record_enable_copies_the_key_and_value_only(kip_1191, share_client):
    got = dead_letter_queue(
        kip_1191,
        dlq_topic(kip_1191, "dlq.copy"),
        {"errors.deadletterqueue.copy.record.enable": "true"},
        dead_letters=2,
        client=share_client,
    )
    assert got["deliveries"] == DELIVERIES
    assert [(r["key"], r["value"], r["headers"]) for r in got["dlq"]] == [
        (b"k1", b"job-1", origin(got, 1, 1, REJECTED)),  # the source's header h is not copied
        (b"k2", b"job-2", origin(got, 2, 2, OVER_LIMIT)),
    ]
    # stamped when the DLQ record was written, not the source's CreateTime
    assert all(r["timestamp"] > DLQ_SOURCE_TIMESTAMP_MS + 10**9 for r in got["dlq"])


@pytest.mark.parametrize(
    "case", ["not opted in", "no dlq. prefix", "missing, no auto-create", "over max.message.bytes"]
)
def test_a_dlq_kafka_cannot_write_archives_the_records_anyway(kip_1191, case, share_client):
    if case == "not opted in":
        topic = dlq_topic(kip_1191, "dlq.plain", **{"errors.deadletterqueue.group.enable": "false"})
    elif case == "no dlq. prefix":
        topic = dlq_topic(kip_1191, "deadletters")
    elif case == "missing, no auto-create":
        topic = f"dlq.missing-{uuid.uuid4().hex[:6]}"
    else:  # not even the header-only record fits
        topic = dlq_topic(kip_1191, "dlq.tiny", **{"max.message.bytes": "60"})
    got = dead_letter_queue(kip_1191, topic, client=share_client)
    assert got["deliveries"] == DELIVERIES  # archived: neither record came back
    assert got["dlq"] == (None if case == "missing, no auto-create" else [])


def test_a_name_starting_with_two_underscores_is_refused(kip_1191):
    got = dead_letter_queue(kip_1191, "__dlq.internal")
    assert "DLQ topic name must not start with '__'" in got["group_config"]


def test_auto_create_makes_an_opted_in_topic(kip_1191):
    """``errors.deadletterqueue.auto.create.topics.enable`` is a dynamic cluster-wide config."""
    setting = "errors.deadletterqueue.auto.create.topics.enable"
    configs = "org.apache.kafka.tools.ConfigCommand"
    kafka_tool(
        kip_1191, configs, "--entity-type", "brokers", "--entity-default", "--alter", "--add-config", f"{setting}=true"
    )
    try:
        topic = f"dlq.auto-{uuid.uuid4().hex[:6]}"
        got = dead_letter_queue(kip_1191, topic, dead_letters=2)  # written once the topic exists
        # both, in either order: on Kafka 4.4.0 the two writes waiting for CreateTopics raced
        # (2026-12-02: offsets 2 then 1 in one run of tests/real)
        assert [r["headers"]["__dlq.errors.offset"] for r in got["dlq"]] in (["1", "2"], ["2", "1"])
        described = kafka_tool(kip_1191, configs, "--entity-type", "topics", "--entity-name", topic, "--describe")
        assert "errors.deadletterqueue.group.enable=true" in described
    finally:
        kafka_tool(
            kip_1191, configs, "--entity-type", "brokers", "--entity-default", "--alter", "--delete-config", setting
        )


def finalized_share_version(cluster) -> int:
    for line in kafka_tool(cluster, "org.apache.kafka.tools.FeatureCommand", "describe").splitlines():
        if "share.version" in line:
            return int(line.split("FinalizedVersionLevel:")[1].split()[0])
    raise AssertionError("no share.version in kafka-features describe")


def test_share_version_1_writes_nothing(kip_1191):
    features = "org.apache.kafka.tools.FeatureCommand"
    kafka_tool(kip_1191, features, "downgrade", "--feature", "share.version=1")
    try:
        assert support.until(lambda: finalized_share_version(kip_1191) == 1, 60)
        got = dead_letter_queue(kip_1191, dlq_topic(kip_1191, "dlq.sv1"))
        assert got["group_config"] == "ok"  # accepted, and ignored
        assert got["deliveries"] == DELIVERIES
        assert got["dlq"] == []
    finally:
        kafka_tool(kip_1191, features, "upgrade", "--feature", "share.version=2")
        assert support.until(lambda: finalized_share_version(kip_1191) == 2, 60)


def test_each_dead_letter_goes_to_the_partition_numbered_like_its_source(kip_1191, share_client):
    """Not by key: three source partitions, three DLQ partitions, every record REJECTed."""
    landed = dlq_by_partition(kip_1191, dlq_topic(kip_1191, "dlq.parts", partitions=3), client=share_client)
    assert {p: [r["headers"]["__dlq.errors.partition"] for r in rs] for p, rs in landed.items()} == {
        p: [str(p)] * 3 for p in range(3)
    }
    assert {p: [r["headers"]["__dlq.errors.offset"] for r in rs] for p, rs in landed.items()} == {
        p: ["0", "1", "2"] for p in range(3)
    }


def test_a_record_never_acknowledged_is_dead_lettered_at_the_limit(kip_1191, share_client):
    """Consumers take it and go away without a word, until the delivery limit (2) is reached."""
    counts, [letter] = dlq_never_acknowledged(kip_1191, dlq_topic(kip_1191, "dlq.silent"), client=share_client)
    assert counts == [1, 2]
    assert letter["headers"]["__dlq.errors.delivery.count"] == "2"
    assert letter["headers"]["__dlq.errors.message"] == OVER_LIMIT
