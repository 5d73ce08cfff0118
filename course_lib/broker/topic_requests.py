"""CreateTopics and DeleteTopics as Kafka's controller answers them, one topic at a time:
``(error class or None, message)``. The wire front end and the simulator's admin client both
answer with these, so kafka-python over the wire and the simulator's own client see the same
errors for the same request.

>>> from course_lib.broker import Cluster
>>> cluster = Cluster(brokers=3, seed=1)
>>> create_topic_request(cluster, "orders", 1, -1, {"min.insync.replicas": "2"})
(None, None)
>>> delete_topic_request(cluster, "orders")
(None, None)
>>> [(name, error.__name__) for name, error, _ in delete_topics_request(cluster, ["orders", "x", "x"])]
[('orders', 'UnknownTopicOrPartitionError'), ('x', 'InvalidRequestError')]

Replicas may go to fenced brokers (Kafka places them on every registered broker and puts only the
unfenced ones in the ISR), but not when all of them are fenced:

>>> for b in (1, 2, 3):
...     cluster.crash(b)
>>> cluster.run_for(20_000)
>>> create_topic_request(cluster, "late", 1, 3, {})
(<class 'kafka.errors.InvalidReplicationFactorError'>, 'All brokers are currently fenced.')
"""

from __future__ import annotations

from kafka import errors as Errors

from .manual_assignments import topic_assignment_error
from .protocol import TopicConfig
from .topic_configs import MODELLED, note_not_modelled, validate_topic_configs

TOPIC_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-")
#: Kafka's ``Errors.UNKNOWN_TOPIC_OR_PARTITION.message()``: what DeleteTopics says of a topic it has not
UNKNOWN_TOPIC_MESSAGE = "This server does not host this topic-partition."


def create_topic_request(
    cluster,
    name: str,
    partitions: int,
    replication_factor: int,
    configs: dict,
    validate_only: bool = False,
    assignments: list | None = None,
):
    """Create ``name`` through the controller (``-1``: the broker's default for partitions and
    replication factor), its replicas where ``assignments`` (``[(partition, broker ids)]``) puts
    them if given; ``(error class or None, message)``."""
    o = cluster.options
    if name in cluster.controller.configs:
        return Errors.TopicAlreadyExistsError, f"Topic '{name}' already exists."
    if not valid_topic_name(name):
        return Errors.InvalidTopicError, f"{name!r} is not a valid topic name (letters, digits, '.', '_', '-')"
    placement = None
    if assignments:
        refused = topic_assignment_error(cluster, partitions, replication_factor, assignments)
        if refused is not None:
            return refused
        placement = [tuple(replicas) for _, replicas in sorted(assignments)]
        partitions, replication_factor = len(placement), len(placement[0])
    if partitions == -1:  # CreateTopics without a count, or an auto-created topic: num.partitions
        partitions = o.num_partitions
    if replication_factor == -1:
        replication_factor = min(o.default_replication_factor, len(cluster.brokers))
    if partitions < 1:
        return Errors.InvalidPartitionsError, "num_partitions must be >= 1"
    if not 1 <= replication_factor <= len(cluster.brokers):
        return (
            Errors.InvalidReplicationFactorError,
            f"replication factor {replication_factor} is not between 1 and the {len(cluster.brokers)} brokers",
        )
    invalid = validate_topic_configs(configs, cluster.options.kafka_version)
    if invalid is not None:
        return invalid
    try:
        min_isr = int(configs.get("min.insync.replicas", o.min_insync_replicas))
        unclean = str(configs.get("unclean.leader.election.enable", o.unclean_leader_election_enable)).lower()
    except ValueError as exc:
        return Errors.InvalidConfigurationError, str(exc)
    if min_isr < 1:
        return Errors.InvalidConfigurationError, "min.insync.replicas must be >= 1"
    if all(b in cluster.controller.fenced for b in cluster.brokers):
        # StripedReplicaPlacer: a fenced broker may hold a follower replica, never the first one
        return Errors.InvalidReplicationFactorError, "All brokers are currently fenced."
    if validate_only:
        return None, None
    for config_name in configs:
        if config_name not in MODELLED:
            note_not_modelled(config_name)
    overrides = tuple(sorted((k, str(v)) for k, v in configs.items()))
    cluster.controller.create_topic(
        name, TopicConfig(partitions, replication_factor, min_isr, unclean == "true", overrides), placement
    )
    return None, None


def valid_topic_name(name: str) -> bool:
    """Kafka's ``Topic.validate``: 1-249 of letters, digits, '.', '_', '-', and not '.' or '..'."""
    return bool(name) and len(name) <= 249 and name not in (".", "..") and all(ch in TOPIC_CHARS for ch in name)


def delete_topics_request(cluster, names: list) -> list[tuple]:
    """DeleteTopics of ``names``, as Kafka's ``ControllerApis.deleteTopics``: a name given twice
    is ``INVALID_REQUEST`` (answered once), every other one deleted or refused;
    ``[(name, error class or None, message)]`` in request order (Kafka shuffles them)."""
    out: list[tuple] = []
    for name in names:
        if names.count(name) > 1:
            if all(row[0] != name for row in out):
                out.append((name, Errors.InvalidRequestError, "Duplicate topic name."))
        else:
            out.append((name, *delete_topic_request(cluster, name)))
    return out


def delete_topic_request(cluster, name: str):
    """Delete ``name`` through the controller; ``(error class or None, message)``."""
    try:
        cluster.controller.delete_topic(name)
    except Errors.UnknownTopicOrPartitionError:
        return Errors.UnknownTopicOrPartitionError, UNKNOWN_TOPIC_MESSAGE
    except Errors.InvalidRequestError as exc:
        return Errors.InvalidRequestError, exc.args[0]
    return None, None
