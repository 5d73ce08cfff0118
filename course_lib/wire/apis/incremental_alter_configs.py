"""IncrementalAlterConfigs: topic settings the simulator honours, changed through the controller
(course_lib/broker/topic_config_changes.py). Broker settings are the cluster's options, fixed
for its life: refused with INVALID_REQUEST and the reason.

The answer waits (a bounded while) until this broker has applied the change, so a produce or
DescribeConfigs right after it sees the new value."""

from __future__ import annotations

from kafka import errors as Errors
from kafka.protocol.admin import IncrementalAlterConfigsResponse

from ...broker.topic_config_changes import alter_topic_configs_request
from .common import _reply, code

TOPIC, BROKER = 2, 4
#: how long (simulated ms) the answer waits for this broker to apply the change
APPLY_WAIT_MS = 5_000


def incremental_alter_configs(gw, req) -> None:
    wire = gw.wire
    rows, changed = [], []
    for res in req.resources:
        if res.resource_type == TOPIC:
            ops = [(c.name, c.config_operation, c.value) for c in res.configs]
            error, message = alter_topic_configs_request(wire.cluster, res.resource_name, ops, req.validate_only)
            if error is None and not req.validate_only:
                changed.append(res.resource_name)
        elif res.resource_type == BROKER:
            error, message = (
                Errors.InvalidRequestError,
                "the simulated brokers' configs are fixed for the cluster's life",
            )
        else:
            error, message = Errors.InvalidRequestError, f"unsupported resource type {res.resource_type}"
        rows.append(
            {
                "error_code": code(error),
                "error_message": message,
                "resource_type": res.resource_type,
                "resource_name": res.resource_name,
            }
        )
    controller, broker = wire.cluster.controller, wire.cluster.brokers[gw.broker_id]

    def answer_when_applied(waited_ms: float = 0) -> None:
        if not gw.alive:
            return
        applied = all(broker.topic_configs.get(t) == controller.configs.get(t) for t in changed)
        if applied or waited_ms >= APPLY_WAIT_MS:
            return _reply(gw, IncrementalAlterConfigsResponse, throttle_time_ms=0, responses=rows)
        wire.cluster.sim.schedule(1, answer_when_applied, waited_ms + 1)

    answer_when_applied()
