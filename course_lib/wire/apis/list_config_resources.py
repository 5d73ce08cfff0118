"""ListConfigResources (KIP-1142; v0 was ListClientMetricsResources): the resources that take
configs. Kafka 4.3.1 lists every broker (as a broker and as a broker logger) and every topic,
internal ones aside, plus groups and client-metrics subscriptions that have configs - the
simulator has none of those. v0 asks for client-metrics resources only."""

from __future__ import annotations

from kafka.protocol.admin import ListConfigResourcesResponse

from .common import INTERNAL_TOPICS, _reply

#: ConfigResource.Type ids
TOPIC, BROKER, BROKER_LOGGER, CLIENT_METRICS, GROUP = 2, 4, 8, 16, 32


def list_config_resources(gw, req) -> None:
    broker = gw.wire.cluster.brokers[gw.broker_id]
    asked = set(req.resource_types or ()) if gw.version >= 1 else {CLIENT_METRICS}
    brokers = [str(b) for b in sorted(gw.wire.cluster.brokers)]
    found = {
        TOPIC: sorted(t for t in broker.topic_configs if t not in INTERNAL_TOPICS),
        BROKER: brokers,
        BROKER_LOGGER: brokers,
        CLIENT_METRICS: [],
        GROUP: [],
    }
    _reply(
        gw,
        ListConfigResourcesResponse,
        throttle_time_ms=0,
        error_code=0,
        config_resources=[
            {"resource_name": name, "resource_type": kind}
            for kind, names in found.items()
            if not asked or kind in asked
            for name in names
        ],
    )
