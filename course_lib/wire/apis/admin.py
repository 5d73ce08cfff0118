"""CreateTopics and DescribeConfigs: the controller's topics and their configuration, the
brokers', and a group's (:mod:`course_lib.broker.group_configs`)."""

from __future__ import annotations

from kafka import errors as Errors
from kafka.protocol.admin import CreateTopicsResponse, DescribeConfigsResponse

from ...broker import acls
from ...broker.broker_config import broker_config_names
from ...broker.group_configs import described_group, text
from ..authorization import authorized, cluster_authorized
from ...broker.topic_configs import catalogue, describe_broker, describe_topic
from .common import NO_TOPIC_ID, _reply, code
from .describe_log_dirs import log_dir


def create_topics(gw, req) -> None:
    """Topics are created by the controller (in the simulator a direct call: it has no
    CreateTopics message); the answer waits until this broker has the new topic's metadata, so
    the client's next metadata request finds it."""
    wire = gw.wire
    rows = []
    created = []
    # KafkaApis/ControllerApis.handleCreateTopics: CREATE on the cluster, else on each topic
    may_create = cluster_authorized(gw, acls.CREATE)
    for topic in req.topics:
        configs = {c.name: c.value for c in topic.configs}
        if not (may_create or authorized(gw, acls.CREATE, acls.TOPIC, topic.name)):
            rows.append(
                {
                    "name": topic.name,
                    "topic_id": NO_TOPIC_ID,
                    "error_code": Errors.TopicAuthorizationFailedError.errno,
                    "error_message": "Authorization failed.",
                    "topic_config_error_code": 0,
                    "num_partitions": -1,
                    "replication_factor": -1,
                    "configs": [],
                }
            )
            continue
        error, message = wire.create_topic_now(
            topic.name,
            topic.num_partitions,
            topic.replication_factor,
            configs,
            validate_only=req.validate_only,
            assignments=[(a.partition_index, list(a.broker_ids)) for a in topic.assignments],
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
    for row in rows:  # ReplicationControlManager.createTopic: a topic created by one who may not
        # DESCRIBE_CONFIGS it is answered without its configs, partitions and replication factor
        if row["error_code"] == 0 and not authorized(gw, acls.DESCRIBE_CONFIGS, acls.TOPIC, row["name"]):
            row.update(topic_config_error_code=Errors.TopicAuthorizationFailedError.errno, num_partitions=-1)
            row.update(replication_factor=-1, configs=[])
    broker = wire.cluster.brokers[gw.broker_id]

    def answer_when_known(waited_ms: float = 0) -> None:
        if not gw.alive:
            return
        if all(t in broker.topic_configs for t in created) or waited_ms >= req.timeout_ms:
            return _reply(gw, CreateTopicsResponse, throttle_time_ms=0, topics=rows)
        wire.cluster.sim.schedule(1, answer_when_known, waited_ms + 1)

    answer_when_known()


def describe_configs(gw, req) -> None:
    """Every config the modelled Kafka release describes for a topic or a broker (the catalogue of
    :mod:`course_lib.broker.topic_configs`), each with its source and default flag: a topic's own
    settings, the brokers' settings the cluster was given (its options, its listeners), else
    Kafka's defaults. kafka-python's admin filters on the source (``config_filter='modified'``)."""
    wire = gw.wire
    controller = wire.cluster.controller
    out = []
    for res in req.resources:
        if res.resource_type == TOPIC and not authorized(gw, acls.DESCRIBE_CONFIGS, acls.TOPIC, res.resource_name):
            out.append(_config_result(gw, req, res, Errors.TopicAuthorizationFailedError, []))
            continue
        if res.resource_type == BROKER and not cluster_authorized(gw, acls.DESCRIBE_CONFIGS):
            out.append(_config_result(gw, req, res, Errors.ClusterAuthorizationFailedError, []))
            continue
        if res.resource_type == GROUP and not authorized(gw, acls.DESCRIBE_CONFIGS, acls.GROUP, res.resource_name):
            out.append(_config_result(gw, req, res, Errors.GroupAuthorizationFailedError, []))
            continue
        if res.resource_type == TOPIC:
            config = controller.configs.get(res.resource_name)
            if config is None:
                out.append(_config_result(gw, req, res, Errors.UnknownTopicOrPartitionError, []))
                continue
            rows = describe_topic(config, wire.cluster.options, set(wire.broker_config))
        elif res.resource_type == BROKER:
            if not res.resource_name.isdigit() or int(res.resource_name) not in wire.cluster.brokers:
                message = (
                    f"Unexpected broker id, expected {gw.broker_id} or empty string, but received {res.resource_name}"
                )
                out.append(_config_result(gw, req, res, Errors.InvalidRequestError, [], message))
                continue
            rows = describe_broker(_broker_static(wire, int(res.resource_name)), wire.cluster.options.kafka_version)
        elif res.resource_type == GROUP and not res.resource_name:
            out.append(_config_result(gw, req, res, Errors.InvalidRequestError, [], "Group name must not be empty"))
            continue
        elif res.resource_type == GROUP:  # configured or not, existing or not: Kafka's ConfigHelper
            configs = wire.cluster.share_group_configs.get(res.resource_name, {})
            rows = described_group(wire.cluster.options, configs, set(wire.broker_config))
        else:
            out.append(_config_result(gw, req, res, Errors.InvalidRequestError, []))
            continue
        if res.configuration_keys is not None:
            rows = [r for r in rows if r["name"] in res.configuration_keys]
        out.append(_config_result(gw, req, res, None, rows))
    _reply(gw, DescribeConfigsResponse, throttle_time_ms=0, results=out)


#: DescribeConfigs' resource types
TOPIC, BROKER, GROUP = 2, 4, 32


def _broker_static(wire, broker_id: int) -> dict:
    """What this broker's server.properties would say: its identity and listener, and every
    cluster option given a value other than Kafka's default (by Kafka's name)."""
    listener = f"PLAINTEXT://{wire.host}:{wire.ports.get(broker_id, -1)}"
    static = {
        "node.id": str(broker_id),
        "broker.id": str(broker_id),
        "process.roles": "broker,controller",
        "listeners": listener,
        "advertised.listeners": listener,
        "log.dirs": log_dir(broker_id),
        "log.dir": log_dir(broker_id),
    }
    options = wire.cluster.options
    catalogue_broker = catalogue(options.kafka_version)["broker"]
    for name, field in broker_config_names().items():
        spec = catalogue_broker.get(name)
        if spec is None:
            continue
        value = text(getattr(options, field))
        if value != spec["default"] or name in wire.broker_config:
            static[name] = value
    return static


def _config_result(gw, req, res, error, rows: list, message: str | None = None) -> dict:
    synonyms = gw.version >= 1 and req.include_synonyms
    return {
        "error_code": code(error),
        "error_message": message,
        "resource_type": res.resource_type,
        "resource_name": res.resource_name,
        "configs": [
            {
                **row,
                # a config's synonyms: its own value at its source, then the default under it
                "synonyms": [{"name": n, "value": v, "source": s} for n, v, s in _synonyms(row)] if synonyms else [],
                "documentation": None,
            }
            for row in rows
        ],
    }


def _synonyms(row: dict) -> list:
    """A row's synonyms (name, value, source): those it brings (a group config's), else its own
    value where it is not a default."""
    if "synonyms" in row:
        return row["synonyms"]
    return [] if row["is_default"] else [(row["name"], row["value"], row["config_source"])]
