"""The simulated ShareConsumer against confluent-kafka 2.16.1's: the same method names, the same
AcknowledgeType ids, the same Message accessors (skipped where confluent-kafka is not installed).
What confluent-kafka 2.16.1 lacks and the simulator offers (Java 4.3's RENEW) is listed here."""

from __future__ import annotations

import warnings

import pytest

from course_lib.broker import Cluster
from course_lib.clients import KafkaProducer
from course_lib.clients.share_consumer import AcknowledgeType, Message, ShareConsumer

ck = pytest.importorskip("confluent_kafka")

#: the simulator's additions, each with why
SIMULATOR_ONLY = {
    "crash": "a fault the lessons inject",
    "freeze": "a fault the lessons inject",
    "wake": "the end of that fault",
    "member_id": "what the broker's history names",
    "assignment": "the share group's assignment (Java's KafkaShareConsumer has none either; shown in lessons)",
    "consume": "confluent-kafka Consumer's batch call, for code written for both",
    "receive": "the simulated network's callback",
    "on_disconnect": "the simulated network's callback",
}


def _public(cls) -> set[str]:
    return {n for n in dir(cls) if not n.startswith("_")}


def test_every_confluent_kafka_share_consumer_method_exists():
    missing = _public(ck.ShareConsumer) - _public(ShareConsumer) - {"set_sasl_credentials"}
    assert not missing, f"the simulated ShareConsumer lacks {sorted(missing)}"


def test_the_simulator_adds_only_what_it_says():
    assert _public(ShareConsumer) - _public(ck.ShareConsumer) == set(SIMULATOR_ONLY)


def test_acknowledge_types_have_confluent_kafka_s_ids_and_renew_is_java_s():
    theirs = {t.name: int(t.value) for t in ck.AcknowledgeType}
    ours = {t.name: int(t.value) for t in AcknowledgeType}
    assert {k: v for k, v in ours.items() if k in theirs} == theirs
    # confluent-kafka 2.16.1 has no RENEW (KIP-1222 is in the Java client 4.3): if it appears, the
    # docstrings that say so must change
    assert set(ours) - set(theirs) == {"RENEW"}, sorted(theirs)


def test_messages_have_confluent_kafka_s_accessors():
    needed = {"topic", "partition", "offset", "key", "value", "headers", "timestamp", "error", "delivery_count"}
    assert needed <= _public(ck.Message)
    assert needed <= _public(Message)


def test_unknown_settings_are_refused_with_the_known_ones():
    from course_lib.clients.config import ConfigurationError

    cluster = Cluster(1)
    with pytest.raises(ConfigurationError, match="share.acknowledgement.mode"):
        ShareConsumer({"bootstrap.servers": cluster, "group.id": "g", "share.ack.mode": "explicit"})
    with pytest.raises(ConfigurationError, match="group.id"):
        ShareConsumer({"bootstrap.servers": cluster})


def test_inspect_share_partition_shows_holders_and_locks():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cluster = Cluster(3, seed=1)
        cluster.create_topic("jobs")
        cluster.alter_share_group_config("g", {"share.auto.offset.reset": "earliest"})
        producer = KafkaProducer(bootstrap_servers=cluster)
        for i in range(3):
            producer.send("jobs", f"m-{i}".encode())
        producer.flush()
        assert cluster.inspect_share_partition("g", "jobs") is None  # nobody fetched yet
        worker = ShareConsumer(
            {"bootstrap.servers": cluster, "group.id": "g", "share.acknowledgement.mode": "explicit"}
        )
        worker.subscribe(["jobs"])
        (first, *_) = worker.poll(5)
        worker.acknowledge(first, AcknowledgeType.ACCEPT)
        worker.commit_sync()
        view = cluster.inspect_share_partition("g", "jobs")
        assert view is not None and view.start_offset == 1 and view.high_watermark == 3
        assert [(r.offset, r.state, r.delivery_count, r.member) for r in view.records] == [
            (1, "ACQUIRED", 1, worker.member_id),
            (2, "ACQUIRED", 1, worker.member_id),
        ]
        assert all(0 < r.lock_remaining_ms <= 30_000 for r in view.records)


def test_a_frozen_consumer_that_wanted_records_fetches_them_once_it_goes_on():
    """librdkafka keeps fetching after an empty poll until records come, and that wish survives a
    SIGSTOP: while frozen it fetches nothing, woken it acquires what came meanwhile, unpolled."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cluster = Cluster(3, seed=1)
        cluster.create_topic("jobs")
        cluster.alter_share_group_config("g", {"share.auto.offset.reset": "earliest"})
        worker = ShareConsumer({"bootstrap.servers": cluster, "group.id": "g"})
        worker.subscribe(["jobs"])
        assert worker.poll(2) == []  # nothing yet: it goes on asking
        worker.freeze()
        cluster.run_for(5_000)  # the fetch it had sent comes back empty; it sends no other
        producer = KafkaProducer(bootstrap_servers=cluster)
        for i in range(2):
            producer.send("jobs", f"m-{i}".encode())
        producer.flush()
        cluster.run_for(5_000)

        def acquired() -> list:
            view = cluster.inspect_share_partition("g", "jobs")
            return [(r.offset, r.state, r.member) for r in view.records] if view else []

        assert all(state != "ACQUIRED" for _, state, _ in acquired())
        worker.wake()
        assert cluster.run_until(lambda: len(acquired()) == 2, 10_000), acquired()
        assert acquired() == [(0, "ACQUIRED", worker.member_id), (1, "ACQUIRED", worker.member_id)]
