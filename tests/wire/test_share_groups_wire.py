"""Share groups (KIP-932) over the wire with confluent-kafka's ShareConsumer: workers share one
partition and acknowledge explicitly; a stalled worker's records come back when the lock runs
out; a poison record is archived at the delivery count limit (tests/share_protocol_support.py).
The simulator's share group invariants are checked after every event."""

from __future__ import annotations

import pytest
from kafka.protocol.api_key import ApiKey

import course_lib.wire.apis as apis
from course_lib.broker.share_invariants import ShareInvariants
from course_lib.wire.apis import SUPPORTED
from course_lib.wire.apis.common import build
from course_lib.wire.apis.schemas import ShareFetchRequest, ShareFetchResponse
from course_lib.wire.apis.topic_ids import topic_uuid
from tests import share_protocol_support as share


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
def test_librdkafka_share_consumers_on_the_wire(wire_cluster, monkeypatch):
    seen: dict = {}
    dispatch = apis.dispatch

    def recording(gw, header, request):
        seen.setdefault(header.request_api_key, set()).add(header.request_api_version)
        return dispatch(gw, header, request)

    monkeypatch.setattr(apis, "dispatch", recording)
    checker = wire_cluster.call(lambda: ShareInvariants.attach(wire_cluster.cluster))
    topic = wire_cluster.create_topic("work", partitions=1)
    group = share.new_group()
    wire_cluster.call(lambda: wire_cluster.cluster.alter_share_group_config(group, share.GROUP_CONFIGS))

    def produce() -> None:
        from confluent_kafka import Producer

        p = Producer({"bootstrap.servers": wire_cluster.bootstrap_servers})
        for v in share.values():
            p.produce(topic, value=v)
        assert p.flush(30) == 0

    got = share.librdkafka(wire_cluster.bootstrap_servers, topic, group, produce)
    print(
        "wire librdkafka share:",
        got.pop("seconds"),
        "s; versions:",
        {int(k): sorted(v) for k, v in seen.items() if k >= 76},
    )
    assert got == share.EXPECTED
    assert seen[ApiKey.ShareGroupHeartbeat] == {1} and ApiKey.ShareFetch in seen
    assert wire_cluster.call(lambda: checker.checks) > 100
