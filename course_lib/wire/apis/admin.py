"""CreateTopics and DescribeConfigs: the controller's topics and their configuration."""

from __future__ import annotations

from kafka import errors as Errors
from kafka.protocol.admin import CreateTopicsResponse, DescribeConfigsResponse

from .common import NO_TOPIC_ID, _reply, code


def create_topics(gw, req) -> None:
    """Topics are created by the controller (in the simulator a direct call: it has no
    CreateTopics message); the answer waits until this broker has the new topic's metadata, so
    the client's next metadata request finds it."""
    wire = gw.wire
    rows = []
    created = []
    for topic in req.topics:
        configs = {c.name: c.value for c in topic.configs}
        error, message = wire.create_topic_now(
            topic.name,
            topic.num_partitions,
            topic.replication_factor,
            configs,
            validate_only=req.validate_only,
        )
        if error is None and not req.validate_only:
            created.append(topic.name)
        config = wire.cluster.controller.configs.get(topic.name)
        rows.append(
            {
                "name": topic.name,
                "topic_id": NO_TOPIC_ID,
                "error_code": code(error),
                "error_message": message,
                "topic_config_error_code": 0,
                "num_partitions": config.partitions if config and error is None else -1,
                "replication_factor": config.replication_factor if config and error is None else -1,
                "configs": [],
            }
        )
    broker = wire.cluster.brokers[gw.broker_id]

    def answer_when_known(waited_ms: float = 0) -> None:
        if not gw.alive:
            return
        if all(t in broker.topic_configs for t in created) or waited_ms >= req.timeout_ms:
            return _reply(gw, CreateTopicsResponse, throttle_time_ms=0, topics=rows)
        wire.cluster.sim.schedule(1, answer_when_known, waited_ms + 1)

    answer_when_known()


def describe_configs(gw, req) -> None:
    controller = gw.wire.cluster.controller
    options = gw.wire.cluster.options
    out = []
    for res in req.resources:
        if res.resource_type == 2:  # topic
            config = controller.configs.get(res.resource_name)
            if config is None:
                out.append(_config_result(res, Errors.UnknownTopicOrPartitionError, {}))
                continue
            values = {
                "min.insync.replicas": str(config.min_insync_replicas),
                "unclean.leader.election.enable": str(config.unclean_leader_election_enable).lower(),
                "cleanup.policy": "delete",
            }
        elif res.resource_type == 4:  # broker
            values = {
                "min.insync.replicas": str(options.min_insync_replicas),
                "default.replication.factor": str(options.default_replication_factor),
                "unclean.leader.election.enable": str(options.unclean_leader_election_enable).lower(),
                "replica.lag.time.max.ms": str(int(options.replica_lag_time_max_ms)),
                "group.initial.rebalance.delay.ms": str(int(options.group_initial_rebalance_delay_ms)),
            }
        else:
            out.append(_config_result(res, Errors.InvalidRequestError, {}))
            continue
        if res.configuration_keys is not None:
            values = {k: v for k, v in values.items() if k in res.configuration_keys}
        out.append(_config_result(res, None, values))
    _reply(gw, DescribeConfigsResponse, throttle_time_ms=0, results=out)


def _config_result(res, error, values: dict) -> dict:
    return {
        "error_code": code(error),
        "error_message": None,
        "resource_type": res.resource_type,
        "resource_name": res.resource_name,
        "configs": [
            {
                "name": k,
                "value": v,
                "read_only": False,
                "config_source": 1 if res.resource_type == 2 else 5,
                "is_default": False,
                "is_sensitive": False,
                "synonyms": [],
                "config_type": 0,
                "documentation": None,
            }
            for k, v in sorted(values.items())
        ],
    }
