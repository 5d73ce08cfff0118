"""Share groups (KIP-932) over the wire with confluent-kafka's ShareConsumer: workers share one
partition and acknowledge explicitly; a stalled worker's records come back when the lock runs
out; a poison record is archived at the delivery count limit (tests/share_protocol_support.py).
The simulator's share group invariants are checked after every event."""

from __future__ import annotations

import struct

import pytest
from kafka import errors as Errors
from kafka.protocol.api_key import ApiKey

from course_lib.wire import WireCluster
from course_lib.wire.apis import SUPPORTED
from course_lib.wire.apis.common import build
from course_lib.wire.apis.schemas import (
    ShareAcknowledgeRequest,
    ShareAcknowledgeResponse,
    ShareFetchRequest,
    ShareFetchResponse,
    ShareGroupHeartbeatRequest,
    ShareGroupHeartbeatResponse,
)
from course_lib.wire.apis.topic_ids import names_by_uuid, topic_uuid
from course_lib.experiments import protocol_matrix as matrix
from tests import share_protocol_support as share

from .client_probes import RawClient
from .conftest import with_versions


def test_share_schemas_round_trip_at_kafka_4_3_1_versions():
    assert {k: SUPPORTED[k][:2] for k in range(76, 80)} == {
        ApiKey.ShareGroupHeartbeat: (1, 1),
        ApiKey.ShareGroupDescribe: (1, 1),
        ApiKey.ShareFetch: (1, 2),
        ApiKey.ShareAcknowledge: (1, 2),
    }
    req = ShareFetchRequest(
        version=2,
        group_id="g",
        member_id="m",
        share_session_epoch=1,
        max_wait_ms=500,
        min_bytes=1,
        max_bytes=1 << 20,
        max_records=5,
        batch_size=5,
        share_acquire_mode=0,
        is_renew_ack=False,
        topics=[],
        forgotten_topics_data=[],
    )
    assert ShareFetchRequest.decode(req.encode(), version=2).max_records == 5
    resp = build(
        ShareFetchResponse,
        1,
        throttle_time_ms=0,
        error_code=0,
        acquisition_lock_timeout_ms=30000,
        responses=[
            {
                "topic_id": topic_uuid(1),
                "partitions": [
                    {
                        "partition_index": 0,
                        "error_code": 0,
                        "acknowledge_error_code": 0,
                        "current_leader": {"leader_id": 1, "leader_epoch": 0},
                        "records": b"",
                        "acquired_records": [{"first_offset": 3, "last_offset": 4, "delivery_count": 2}],
                    }
                ],
            }
        ],
        node_endpoints=[],
    )
    back = ShareFetchResponse.decode(resp.encode(), version=1)
    assert back.responses[0].partitions[0].acquired_records[0].delivery_count == 2


@pytest.mark.timeout(120)
def test_librdkafka_share_consumers_on_the_wire(monkeypatch):
    """The share group invariants are checked after every simulator event (on_the_wire); once
    per test run, with the versions the client sent (notebook 09's protocol matrix reads it back)."""
    got = dict(
        matrix.measure(
            "share group", "wire confluent-kafka", lambda: with_versions(monkeypatch, "confluent-kafka")
        ).numbers
    )
    versions = got.pop("versions")
    print("wire librdkafka share:", got.pop("seconds"), "s; versions:", {k: v for k, v in versions.items() if k >= 76})
    assert got.pop("invariant checks") > 100
    assert got == share.EXPECTED
    assert versions[ApiKey.ShareGroupHeartbeat] == [1] and versions[ApiKey.ShareFetch] == [1]


@pytest.mark.timeout(60)
def test_share_member_epochs_on_the_wire(wire_cluster):
    """Two members joining and leaving by raw ShareGroupHeartbeat: Kafka 4.3.1's member epochs
    (tests/real/test_share_groups_real.py), a new group starting at epoch 1."""
    topic, group = share.wire_setup(wire_cluster)
    assert share.heartbeat_epochs(wire_cluster.bootstrap_servers, topic, group) == share.EPOCHS


@pytest.mark.timeout(60)
def test_share_heartbeat_errors_on_the_wire(wire_cluster):
    """Refused ShareGroupHeartbeats carry Kafka 4.4.0's messages, none where Kafka sends none
    (tests/real/test_share_groups_real.py, same probe)."""
    topic, group = share.wire_setup(wire_cluster)
    assert share.heartbeat_errors(wire_cluster.bootstrap_servers, topic, group) == share.HEARTBEAT_ERRORS


def test_share_sessions_and_bad_requests_get_kafkas_errors(wire):
    """Share session epochs as Kafka's ``SharePartitionManager`` checks them, a malformed
    acknowledgement batch and a join without a subscription: each a clear error code; a truncated
    ShareFetch frame closes that connection only."""
    topic = wire.create_topic("work", partitions=1)
    topic_id = wire.call(lambda: next(iter(names_by_uuid(wire.cluster.brokers[1]))))
    raw, other = RawClient(wire.bootstrap_servers), RawClient(wire.bootstrap_servers)

    def fetch(epoch: int, acks=(), version: int = 1):
        req = ShareFetchRequest(
            version=version,
            group_id="g",
            member_id="m",
            share_session_epoch=epoch,
            max_wait_ms=0,
            min_bytes=1,
            max_bytes=1 << 20,
            max_records=5,
            batch_size=5,
            topics=[
                ShareFetchRequest.FetchTopic(
                    version=version,
                    topic_id=topic_id,
                    partitions=[
                        ShareFetchRequest.FetchTopic.FetchPartition(
                            version=version,
                            partition_index=0,
                            acknowledgement_batches=[
                                ShareFetchRequest.FetchTopic.FetchPartition.AcknowledgementBatch(
                                    version=version, first_offset=f, last_offset=last, acknowledge_types=list(types)
                                )
                                for f, last, types in acks
                            ],
                        )
                    ],
                )
            ],
            forgotten_topics_data=[],
        )
        return ShareFetchResponse.decode(raw.request(req, version), version=version, header=True)

    def acknowledge(epoch: int):
        req = ShareAcknowledgeRequest(version=1, group_id="g", member_id="m", share_session_epoch=epoch, topics=[])
        return ShareAcknowledgeResponse.decode(raw.request(req, 1), version=1, header=True)

    try:
        assert topic and fetch(3).error_code == Errors.ShareSessionNotFoundError.errno
        assert fetch(0, acks=[(0, 0, [1])]).error_code == Errors.InvalidRequestError.errno  # acks when opening
        assert acknowledge(0).error_code == Errors.InvalidShareSessionEpochError.errno
        assert fetch(0).error_code == 0  # opened: the next epoch is 1
        assert fetch(5).error_code == Errors.InvalidShareSessionEpochError.errno
        # 3 offsets, 2 types: that partition's acknowledgements are refused, the fetch goes on
        refused = fetch(1, acks=[(0, 2, [1, 1])])
        assert refused.error_code == 0
        assert refused.responses[0].partitions[0].acknowledge_error_code == Errors.InvalidRequestError.errno
        assert fetch(2, acks=[(0, 0, [4])]).responses[0].partitions[0].acknowledge_error_code == (
            Errors.InvalidRequestError.errno  # RENEW needs version 2
        )
        assert acknowledge(3).error_code == 0 and acknowledge(-1).error_code == 0  # closed
        assert acknowledge(4).error_code == Errors.ShareSessionNotFoundError.errno
        join = ShareGroupHeartbeatRequest(version=1, group_id="g", member_id="m", member_epoch=0)
        answer = ShareGroupHeartbeatResponse.decode(raw.request(join, 1), version=1, header=True)
        assert answer.error_code == Errors.InvalidRequestError.errno  # a join names its topics
        # a ShareFetch cut short: that connection closes, the other keeps working
        other.send_bytes(struct.pack(">hhih", 78, 1, 9, -1) + b"\x00\x01g")
        other.assert_closed()
        assert fetch(0).error_code == 0
    finally:
        raw.close()
        other.close()


def test_share_version_0_refuses_share_groups():
    """``share.version`` 0 (Kafka before 4.2 by default): share groups are not enabled, and the
    share group heartbeat and fetch answer UNSUPPORTED_VERSION, as Kafka's KafkaApis does."""
    with WireCluster(brokers=1, seed=1, features={"share.version": 0}) as wire:
        wire.create_topic("work", partitions=1)
        raw = RawClient(wire.bootstrap_servers)
        try:
            join = ShareGroupHeartbeatRequest(
                version=1, group_id="g", member_id="m", member_epoch=0, subscribed_topic_names=["work"]
            )
            answer = ShareGroupHeartbeatResponse.decode(raw.request(join, 1), version=1, header=True)
            fetch = ShareFetchRequest(
                version=1,
                group_id="g",
                member_id="m",
                share_session_epoch=0,
                max_wait_ms=0,
                min_bytes=1,
                max_bytes=1 << 20,
                max_records=5,
                batch_size=5,
                topics=[],
                forgotten_topics_data=[],
            )
            fetched = ShareFetchResponse.decode(raw.request(fetch, 1), version=1, header=True)
        finally:
            raw.close()
    assert answer.error_code == fetched.error_code == Errors.UnsupportedVersionError.errno


@pytest.mark.timeout(60)
def test_librdkafka_sees_a_batch_throttled_near_the_limit_on_the_wire(wire_cluster):
    """One batch of 8, every record RELEASEd: the wire's polls have Kafka 4.3.1's sizes."""
    topic = wire_cluster.create_topic("throttled", partitions=1)
    group = share.new_group()
    share.configure_with_admin(wire_cluster.bootstrap_servers, group, share.THROTTLE_CONFIGS)
    assert share.librdkafka_throttle(wire_cluster.bootstrap_servers, topic, group) == share.THROTTLE_SIZES


@pytest.mark.timeout(120)
def test_a_share_partition_leader_failover_with_librdkafka_on_the_wire():
    """course_lib/experiments/share_leader_failover.py: what a worker acknowledged stays acknowledged; what it held
    comes to the next worker with delivery count 1 again - as the simulator and Kafka 4.3.1 give
    (Java: tests/java_client/test_share_groups_wire.py)."""
    from course_lib.experiments import share_leader_failover as failover

    for wire in failover.wire_like_the_lab():
        assert failover.wire_run(wire, "confluent-kafka") == failover.EXPECTED


def test_a_share_partition_leader_failover_on_the_simulator():
    """The same, seeded, in virtual time, on three seeds."""
    from course_lib.experiments import share_leader_failover as failover

    for seed in range(3):
        assert failover.simulator_run(seed) == failover.EXPECTED, f"seed={seed}"


@pytest.mark.timeout(120)
def test_a_killed_or_frozen_share_consumer_on_the_wire_as_on_kafka():
    """tests/real/test_share_groups_real.py's crashes on the wire cluster: a killed librdkafka
    process's closed connections end its share session and its records come back at once (before
    the wire released share sessions on a disconnect: 9 852 ms, the lock); a frozen one's wait
    for the lock."""
    from course_lib.experiments.on_kafka import share_groups

    with WireCluster(brokers=3, seed=1, group_initial_rebalance_delay_ms=0) as wire:
        compared = share_groups.crashes_compared(wire)
    assert share_groups.crash_disagreements(compared) == []
    assert [c["wait"][1] for c in compared.values()] == ["at once", "after about the lock duration"]


@pytest.mark.timeout(90)
def test_a_handler_slower_than_the_lock_with_librdkafka_on_the_wire(wire_cluster):
    """course_lib/experiments/share_renew.py without RENEW, with confluent-kafka: the lock runs out under
    the work, the other worker gets the record (delivery count 2), and the holder's ACCEPT, once
    done, is refused - lesson 05c's slow handler (Java: tests/java_client/test_share_groups_wire.py)."""
    from course_lib.experiments import share_renew

    got = share_renew.client_run(wire_cluster, renew=False, client="confluent-kafka")
    assert got == share_renew.EXPECTED[False]


@pytest.mark.timeout(90)
def test_a_late_accept_is_refused_while_another_holds_the_record_and_skipped_once_archived_on_the_wire(
    share_client, wire_cluster
):
    """course_lib/experiments/share_late_acks.py with either client: lesson 05c's slow handler's
    refused ACCEPTs and the ones that reach an archived record without an error
    (tests/real/test_share_groups_real.py: the same on Kafka)."""
    from course_lib.experiments import share_late_acks

    assert share_late_acks.client_run(wire_cluster, share_client) == share_late_acks.EXPECTED


@pytest.mark.timeout(90)
def test_implicit_acknowledgement_accepts_the_batch_at_the_next_poll_on_the_wire(share_client, wire_cluster):
    """course_lib/experiments/share_implicit.py with either client: the next poll() accepts the
    previous batch, a record the handler failed on too - nothing comes back (the share-group
    app's implicit steps; tests/real/test_share_groups_real.py: the same on Kafka)."""
    from course_lib.experiments import share_implicit

    assert share_implicit.client_run(wire_cluster, share_client) == share_implicit.EXPECTED


@pytest.mark.timeout(120)
def test_records_of_one_partition_are_processed_out_of_order_by_several_workers_on_the_wire(share_client):
    """Lesson 05c's ordering runs with either client: one worker processes the partition in
    offset order, three of varying speed do not, and nothing is redelivered - as on the simulator
    (tests/real/test_share_groups_real.py: the same on Kafka)."""
    from course_lib.experiments.on_kafka import share_groups

    with WireCluster(brokers=3, seed=1, group_initial_rebalance_delay_ms=0) as wire:
        compared = share_groups.ordering_compared(wire, share_client)
    assert share_groups.ordering_disagreements(compared) == []


@pytest.mark.timeout(120)
def test_a_poison_message_on_the_wire_as_on_the_simulator(share_client):
    """Lesson 05c's poison message with its settings (job-3 RELEASEd every time, the limit 5), by
    either client: delivered with counts 1 to 5, then archived, every other record delivered
    once - the simulator's numbers, which the lesson prints (tests/real/test_share_groups_real.py:
    the same on Kafka)."""
    from course_lib.experiments.on_kafka import share_groups

    with WireCluster(brokers=3, seed=1, group_initial_rebalance_delay_ms=0) as wire:
        compared = share_groups.poison_compared(wire, share_client)
    assert share_groups.poison_disagreements(compared) == []


@pytest.mark.timeout(180)
def test_a_share_group_keeps_every_worker_busy_where_a_consumer_group_idles_on_the_wire(share_client):
    """Lesson 05c's "share group or consumer group?" with either share client: 4 instances on 2
    partitions, the share group's all busy and its busiest handling fewer records than the
    consumer group's, which leaves 2 idle - as on the simulator, whose run the lesson prints
    (tests/real/test_share_groups_real.py: the same on Kafka)."""
    from course_lib.experiments.on_kafka import share_groups

    with WireCluster(brokers=3, seed=1, group_initial_rebalance_delay_ms=0) as wire:
        compared = share_groups.choice_compared(wire, share_client)
    assert share_groups.choice_disagreements(compared) == [], compared


@pytest.mark.timeout(120)
def test_share_group_configs_isolation_and_reset_on_the_wire():
    """tests/real/test_share_groups_real.py's group configs, isolation levels and by_duration
    reset on the wire cluster, with the same expectations (measured on Kafka 4.3.1). Before the
    wire took GROUP resources every case was INVALID_REQUEST; before the simulator knew
    share.isolation.level and by_duration, they were INVALID_CONFIG; before it capped the span in
    flight, the fast worker got all 149 records past the stuck one."""
    with WireCluster(brokers=3, seed=1, group_initial_rebalance_delay_ms=0) as wire:
        servers = wire.bootstrap_servers
        assert share.group_config_outcomes(servers) == share.GROUP_CONFIG_OUTCOMES
        assert share.isolation_probe(servers, wire.create_topic("iso", partitions=1)) == share.ISOLATION_EXPECTED
        assert share.by_duration_probe(servers, wire.create_topic("dur", partitions=1)) == ["new-1", "new-2"]
        assert (
            share.default_reset_probe(servers, wire.create_topic("reset", partitions=1)) == share.DEFAULT_RESET_EXPECTED
        )
        assert (
            share.record_locks_probe(servers, wire.create_topic("locks", partitions=1)) == share.RECORD_LOCKS_EXPECTED
        )
