"""IncrementalAlterConfigs: topic settings the simulator honours, changed through the controller
(course_lib/broker/topic_config_changes.py), and a share group's settings (a GROUP resource, as
``kafka-configs --entity-type groups`` sends them; SET and DELETE, checked against Kafka's names
and bounds: INVALID_CONFIG and the reason). Broker settings are the cluster's options, fixed for
its life: refused with INVALID_REQUEST and the reason - but for the cluster-wide default (an
empty broker name, ``--entity-default``) of the dynamic configs the simulator models (KIP-1191's).

The answer waits (a bounded while) until this broker has applied the change, so a produce or
DescribeConfigs right after it sees the new value."""

from __future__ import annotations

from kafka import errors as Errors
from kafka.protocol.admin import IncrementalAlterConfigsResponse

from ...broker import acls
from ...broker.broker_config import alter_cluster_default_configs
from ...broker.share_config import check_group_config, parse_group_config
from ...broker.topic_config_changes import alter_topic_configs_request
from ..authorization import authorized, cluster_authorized
from .common import _reply, code, kafka_message

TOPIC, BROKER, GROUP = 2, 4, 32
#: AlterConfigOp types a group config takes (APPEND and SUBTRACT are for list configs)
SET, DELETE = 0, 1
OP_NAMES = {2: "APPEND", 3: "SUBTRACT"}
#: how long (simulated ms) the answer waits for this broker to apply the change
APPLY_WAIT_MS = 5_000


def incremental_alter_configs(gw, req) -> None:
    wire = gw.wire
    rows, changed = [], []
    for res in req.resources:
        refusal = _refusal(gw, res)
        if refusal is not None:  # ApiError without a message: the error's own
            error, message = refusal, kafka_message(refusal)
        elif res.resource_type == TOPIC:
            ops = [(c.name, c.config_operation, c.value) for c in res.configs]
            error, message = alter_topic_configs_request(wire.cluster, res.resource_name, ops, req.validate_only)
            if error is None and not req.validate_only:
                changed.append(res.resource_name)
        elif res.resource_type == GROUP:
            ops = [(c.name, c.config_operation, c.value) for c in res.configs]
            error, message = alter_group_configs(wire.cluster, res.resource_name, ops, req.validate_only)
        elif res.resource_type == BROKER and res.resource_name == "":  # --entity-default
            ops = [(c.name, c.config_operation, c.value) for c in res.configs]
            name, message = alter_cluster_default_configs(wire.cluster.options, ops, req.validate_only)
            error = getattr(Errors, name) if name else None
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


def _refusal(gw, res):
    """KafkaApis (``AuthHelper``): ALTER_CONFIGS on the topic, the group, or the cluster for a
    broker's configs; the resource's authorization error, else None."""
    if res.resource_type == TOPIC and not authorized(gw, acls.ALTER_CONFIGS, acls.TOPIC, res.resource_name):
        return Errors.TopicAuthorizationFailedError
    if res.resource_type == GROUP and not authorized(gw, acls.ALTER_CONFIGS, acls.GROUP, res.resource_name):
        return Errors.GroupAuthorizationFailedError
    if res.resource_type == BROKER and not cluster_authorized(gw, acls.ALTER_CONFIGS):
        return Errors.ClusterAuthorizationFailedError
    return None


def alter_group_configs(cluster, group: str, ops: list, validate_only: bool) -> tuple:
    """(error, message) of altering ``group``'s configs by ``ops`` [(name, op, value)]; all or nothing.

    >>> from course_lib.broker.cluster import Cluster
    >>> cluster = Cluster(brokers=1)
    >>> alter_group_configs(cluster, "g", [("share.delivery.count.limit", SET, "4")], False)
    (None, None)
    >>> cluster.share_group_configs["g"]
    {'share.delivery.count.limit': 4}
    >>> error, message = alter_group_configs(cluster, "g", [("share.delivery.count.limit", SET, "1")], False)
    >>> error.__name__, message
    ('InvalidConfigurationError', 'share.delivery.count.limit must be in the range 2 to 10 inclusive.')
    >>> alter_group_configs(cluster, "g", [("share.delivery.count.limit", DELETE, None)], False)
    (None, None)
    >>> alter_group_configs(cluster, "g", [("share.no.such", DELETE, None)], False)  # nothing left to check
    (None, None)
    >>> cluster.share_group_configs["g"]
    {}
    """
    sets, deletes = {}, []
    version = cluster.options.kafka_version
    try:
        for name, op, value in ops:
            if op == DELETE:  # Kafka checks the configs left, so deleting an unknown name is fine
                deletes.append(name)
            elif op == SET:
                typed = parse_group_config(name, value)
                check_group_config(name, typed, version)
                sets[name] = typed
            else:
                raise ValueError(f"Can't {OP_NAMES.get(op, op)} to key {name} because its type is not LIST.")
    except ValueError as e:
        return Errors.InvalidConfigurationError, str(e)
    if not validate_only:
        configs = cluster.share_group_configs.setdefault(group, {})
        for name in deletes:
            configs.pop(name, None)
        cluster.alter_share_group_config(group, sets)
    return None, None
