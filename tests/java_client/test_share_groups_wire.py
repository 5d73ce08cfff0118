"""The Java client 4.3.1's KafkaShareConsumer (KIP-932) on the simulated cluster: the same
workers, acknowledgements, lock timeout and delivery count limit as confluent-kafka's
(tests/wire/test_share_groups_wire.py, tests/share_protocol_support.py), over
ShareGroupHeartbeat v1, ShareFetch and ShareAcknowledge at the versions Java chooses."""

from __future__ import annotations

import pytest
from kafka.protocol.api_key import ApiKey

import course_lib.wire.apis as apis
from tests import share_protocol_support as share


@pytest.mark.timeout(180)
def test_java_share_consumers_on_the_wire(driver, wire_cluster, monkeypatch):
    seen: dict = {}
    dispatch = apis.dispatch

    def recording(gw, header, request):
        seen.setdefault(header.request_api_key, set()).add(header.request_api_version)
        return dispatch(gw, header, request)

    monkeypatch.setattr(apis, "dispatch", recording)
    topic = wire_cluster.create_topic("work", partitions=1)
    group = share.new_group()
    wire_cluster.call(lambda: wire_cluster.cluster.alter_share_group_config(group, share.GROUP_CONFIGS))

    servers = wire_cluster.bootstrap_servers
    got = share.java(
        driver,
        servers,
        topic,
        group,
        lambda: share.java_produce(driver, servers, topic),
        during=lambda: share.java_describe(driver, servers, group),
    )
    print(
        "wire java share:", got.pop("seconds"), "s; versions:", {int(k): sorted(v) for k, v in seen.items() if k >= 76}
    )
    assert got.pop("during") == share.DESCRIBED  # Admin.describeShareGroups
    assert got == share.EXPECTED
    assert seen[ApiKey.ShareGroupHeartbeat] == {1} and seen[ApiKey.ShareFetch] == {2}
    assert ApiKey.JoinGroup not in seen and ApiKey.ConsumerGroupHeartbeat not in seen
