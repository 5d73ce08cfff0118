"""Share groups (KIP-932) on Kafka 4.3.1 (the session's LocalCluster): the experiment the wire
cluster runs with confluent-kafka (tests/wire/test_share_groups_wire.py) and Java
(tests/java_client/test_share_groups_wire.py), with the same expected counts
(tests/share_protocol_support.py). The group's lock (2 s) is below Kafka's default floor for a
group config (``group.share.min.record.lock.duration.ms`` = 15 s): the lab lowers that floor."""

from __future__ import annotations

import uuid

import pytest

from course_lib.experiments import protocol_matrix as matrix
from tests import share_protocol_support as share
from tests.java_client import support

pytestmark = pytest.mark.real_kafka


@pytest.fixture(scope="module")
def driver():
    yield from support.module_driver()


def test_the_wire_advertises_kafkas_share_api_versions(cluster):
    """ShareGroupHeartbeat, ShareGroupDescribe, ShareFetch, ShareAcknowledge,
    DescribeShareGroupOffsets: the versions Kafka advertises are the wire cluster's, and a wire
    cluster modelling the release the real cluster runs finalizes the same features (Kafka 4.4.0:
    share.version 2, KIP-1191's dead-letter queues; 4.3.1: 1)."""
    from kafka.protocol.metadata import ApiVersionsRequest, ApiVersionsResponse

    from course_lib.wire import WireCluster
    from course_lib.wire.apis import SUPPORTED
    from tests.wire.client_probes import RawClient

    def advertised(servers: str):
        raw = RawClient(servers)
        try:
            frame = raw.request(ApiVersionsRequest(client_software_name="raw", client_software_version="0"), 3)
        finally:
            raw.close()
        return ApiVersionsResponse.decode(frame, version=3, header=True)

    resp = advertised(cluster.bootstrap_servers)
    share_apis = (76, 77, 78, 79, 90)  # ShareGroupHeartbeat ... ShareAcknowledge, DescribeShareGroupOffsets
    kafka = {k.api_key: (k.min_version, k.max_version) for k in resp.api_keys if k.api_key in share_apis}
    assert kafka == {key: SUPPORTED[key][:2] for key in share_apis}
    with WireCluster(brokers=1, kafka_version=cluster.kafka_version) as wire:
        modelled = advertised(wire.bootstrap_servers)
    finalized = {f.name: f.max_version_level for f in resp.finalized_features}
    assert finalized == {f.name: f.max_version_level for f in modelled.finalized_features}


@pytest.mark.timeout(60)
def test_share_member_epochs_on_kafka(cluster):
    """Two members joining and leaving by raw ShareGroupHeartbeat (the wire cluster's test asserts
    the same): a new group at epoch 1, its first member joining at 2 with nothing."""
    topic = cluster.create_topic(f"share-{uuid.uuid4().hex[:8]}", partitions=1)
    group = share.new_group()
    share.configure_with_admin(cluster.bootstrap_servers, group)
    assert share.heartbeat_epochs(cluster.bootstrap_servers, topic, group) == share.EPOCHS


@pytest.mark.timeout(60)
def test_share_heartbeat_errors_on_kafka(cluster):
    """Refused ShareGroupHeartbeats: the wire cluster's test asserts the same answers."""
    topic = cluster.create_topic(f"share-{uuid.uuid4().hex[:8]}", partitions=1)
    group = share.new_group()
    share.configure_with_admin(cluster.bootstrap_servers, group)
    assert share.heartbeat_errors(cluster.bootstrap_servers, topic, group) == share.HEARTBEAT_ERRORS


@pytest.mark.timeout(240)
def test_librdkafka_share_consumers_on_kafka(cluster):
    # once per test run: notebook 09's protocol matrix reads it back (course_lib/experiments/protocol_matrix.py)
    got = matrix.measured("share group", "Kafka confluent-kafka", cluster)
    print(f"kafka {cluster.kafka_version} librdkafka share:", got.pop("seconds"), "s")
    assert got == share.EXPECTED


@pytest.mark.timeout(240)
def test_java_share_consumers_on_kafka(driver, cluster):
    got = matrix.measured("share group", "Kafka java", cluster)
    print(f"kafka {cluster.kafka_version} java share:", got.pop("seconds"), "s")
    assert got.pop("during") == share.DESCRIBED  # Admin.describeShareGroups
    assert got == share.EXPECTED


@pytest.mark.timeout(120)
def test_kafka_throttles_a_batch_near_the_delivery_limit(cluster):
    """One batch of 8, every record RELEASEd: whole three times, then halves, then one by one
    (the simulator's share_batches.py; tests/test_share_batches.py runs it on the simulator)."""
    topic = cluster.create_topic(f"share-{uuid.uuid4().hex[:8]}", partitions=1)
    group = share.new_group()
    share.configure_with_admin(cluster.bootstrap_servers, group, share.THROTTLE_CONFIGS)
    sizes = share.librdkafka_throttle(cluster.bootstrap_servers, topic, group)
    print(f"kafka {cluster.kafka_version} throttled poll sizes:", sizes)
    # The sizes are the mechanism's; their order after the first half is timing: the second half
    # comes next while the first half's RELEASE is still being written (a quiet machine), or after
    # the first half's last deliveries (a loaded one: [8, 8, 8, 4, 1, 1, 1, 1, 4, 1, 1, 1, 1]).
    assert sizes[:4] == share.THROTTLE_SIZES[:4] and sorted(sizes) == sorted(share.THROTTLE_SIZES), sizes


@pytest.mark.timeout(180)
def test_a_share_partition_leader_failover_on_kafka(healthy):
    """course_lib/experiments/share_leader_failover.py on Kafka 4.3.1 with confluent-kafka; the wire cluster (both
    clients) and the simulator give the same (tests/wire/test_share_groups_wire.py,
    tests/java_client/test_share_groups_wire.py). Java on Kafka gives the same too (measured:
    ``kafka_run(cluster, "java", driver)``), 25 s more than make test's budget keeps."""
    from course_lib.experiments import share_leader_failover as failover

    assert failover.kafka_run(healthy, "confluent-kafka") == failover.EXPECTED


@pytest.mark.timeout(180)
@pytest.mark.parametrize("client", ["confluent-kafka", "java"])
def test_a_killed_or_frozen_share_consumer_on_kafka_as_on_the_simulator(client, driver, cluster):
    """Lesson 05c's real-Kafka part (:mod:`course_lib.experiments.on_kafka.share_groups`), small: a worker holding
    records, 3 of them processed, is SIGKILLed - Kafka 4.3.1 releases them as soon as its
    connections close - or SIGSTOPped, its connections open as for a machine that is gone - they
    wait for the lock. The simulator gives the same counts and the same wait, with either client;
    so does the wire cluster (tests/wire/test_share_groups_wire.py,
    tests/java_client/test_share_groups_wire.py)."""
    from course_lib.experiments.on_kafka import share_groups

    compared = share_groups.crashes_compared(cluster, client)
    print(f"kafka {cluster.kafka_version} worker crashes, {client}:", compared)
    assert share_groups.crash_disagreements(compared) == []
    assert [c["wait"][1] for c in compared.values()] == ["at once", "after about the lock duration"]


@pytest.mark.timeout(90)
def test_a_late_accept_is_refused_while_another_holds_the_record_and_skipped_once_archived_on_kafka(
    share_client, cluster
):
    """course_lib/experiments/share_late_acks.py with either client on Kafka; the wire cluster and the
    simulator give the same."""
    from course_lib.experiments import share_late_acks

    assert share_late_acks.client_run(cluster, share_client) == share_late_acks.EXPECTED


@pytest.mark.timeout(90)
def test_implicit_acknowledgement_accepts_the_batch_at_the_next_poll_on_kafka(share_client, cluster):
    """course_lib/experiments/share_implicit.py with either client on Kafka: the next poll() accepts
    the previous batch, a record the handler failed on too; the wire cluster and the simulator
    give the same."""
    from course_lib.experiments import share_implicit

    assert share_implicit.client_run(cluster, share_client) == share_implicit.EXPECTED


@pytest.mark.timeout(180)
def test_records_of_one_partition_are_processed_out_of_order_by_several_workers_on_kafka(share_client, cluster):
    """Lesson 05c's ordering runs with either client on Kafka: in offset order with one worker,
    out of order with three, nothing redelivered - as on the simulator and the wire cluster."""
    from course_lib.experiments.on_kafka import share_groups

    compared = share_groups.ordering_compared(cluster, share_client)
    print(f"kafka {cluster.kafka_version} ordering, {share_client}:", {k: c["cluster"] for k, c in compared.items()})
    assert share_groups.ordering_disagreements(compared) == []


@pytest.mark.timeout(180)
def test_a_poison_message_on_kafka_as_on_the_simulator(share_client, cluster):
    """Lesson 05c's poison message with its settings, by either client: Kafka delivers job-3 with
    the delivery counts the simulator gives, archives it and delivers every other record once;
    the wire cluster gives the same (tests/wire/test_share_groups_wire.py)."""
    from course_lib.experiments.on_kafka import share_groups

    compared = share_groups.poison_compared(cluster, share_client)
    print(f"kafka {cluster.kafka_version} poison message, {share_client}:", compared["cluster"])
    assert share_groups.poison_disagreements(compared) == []


@pytest.mark.timeout(180)
def test_a_share_group_keeps_every_worker_busy_where_a_consumer_group_idles_on_kafka(share_client, cluster):
    """Lesson 05c's "share group or consumer group?" with either share client on Kafka: the share
    group's 4 instances all busy, its busiest handling fewer records than the consumer group's,
    which leaves 2 of them idle on 2 partitions - as on the simulator and the wire cluster."""
    from course_lib.experiments.on_kafka import share_groups

    compared = share_groups.choice_compared(cluster, share_client)
    print(f"kafka {cluster.kafka_version} share or consumer group, {share_client}:", compared["cluster"])
    assert share_groups.choice_disagreements(compared) == [], compared


@pytest.mark.timeout(120)
def test_share_group_configs_isolation_and_reset_on_kafka(cluster):
    """``kafka-configs --entity-type groups`` on Kafka 4.3.1: which share group configs it takes,
    what ``share.isolation.level`` hands out around aborted and open transactions, where
    ``by_duration`` starts, how far ``share.partition.max.record.locks`` lets a group get past a
    stuck record; the wire cluster gives the same (tests/wire/test_share_groups_wire.py)
    and the simulator too (tests/test_share_partition.py)."""
    servers = cluster.bootstrap_servers
    assert share.group_config_outcomes(servers) == share.GROUP_CONFIG_OUTCOMES
    isolation = share.isolation_probe(servers, cluster.create_topic(f"iso-{uuid.uuid4().hex[:8]}", partitions=1))
    assert isolation == share.ISOLATION_EXPECTED
    assert share.by_duration_probe(servers, cluster.create_topic(f"dur-{uuid.uuid4().hex[:8]}", partitions=1)) == [
        "new-1",
        "new-2",
    ]
    reset = cluster.create_topic(f"reset-{uuid.uuid4().hex[:8]}", partitions=1)
    assert share.default_reset_probe(servers, reset) == share.DEFAULT_RESET_EXPECTED  # lesson 05c: latest
    locks = cluster.create_topic(f"locks-{uuid.uuid4().hex[:8]}", partitions=1)
    assert share.record_locks_probe(servers, locks) == share.RECORD_LOCKS_EXPECTED


@pytest.mark.timeout(90)
def test_java_admin_lists_share_group_offsets_on_kafka(driver, cluster):
    """Admin.listShareGroupOffsets on Kafka 4.3.1; the wire cluster gives the same
    (tests/java_client/test_share_groups_wire.py)."""
    topic = cluster.create_topic(f"offsets-{uuid.uuid4().hex[:8]}", partitions=1)
    assert share.share_offsets_probe(driver, cluster.bootstrap_servers, topic) == share.SHARE_OFFSETS_EXPECTED


@pytest.mark.timeout(90)
@pytest.mark.parametrize(("client", "renew"), [("java", True), ("java", False), ("confluent-kafka", False)])
def test_java_renews_a_lock_on_kafka(driver, cluster, client, renew):
    """course_lib/experiments/share_renew.py with the Java client (confluent-kafka has no RENEW); without
    RENEW (either client) the lock runs out under the work, the other worker gets the record and
    the holder's late ACCEPT is refused (lesson 05c's slow handler). The wire cluster and the
    simulator give the same."""
    from course_lib.experiments import share_renew

    assert share_renew.client_run(cluster, renew=renew, client=client) == share_renew.EXPECTED[renew]


@pytest.mark.timeout(120)
def test_java_admin_alters_and_deletes_share_group_offsets_on_kafka(driver, cluster):
    """Admin.alterShareGroupOffsets / deleteShareGroupOffsets and their raw requests on Kafka; the
    wire cluster gives the same (tests/java_client/test_share_group_offsets_wire.py)."""
    from tests.java_client.test_share_group_offsets_wire import java_expected, raw_expected
    from tests.wire.share_group_offsets_probes import raw_share_offsets_answers, share_offsets_answers

    topic = cluster.create_topic(f"share-offsets-{uuid.uuid4().hex[:8]}", partitions=1)
    assert share_offsets_answers(driver, cluster.bootstrap_servers, topic) == java_expected(topic)
    raw = cluster.create_topic(f"share-offsets-raw-{uuid.uuid4().hex[:8]}", partitions=1)
    assert raw_share_offsets_answers(cluster.bootstrap_servers, raw) == raw_expected(raw)
