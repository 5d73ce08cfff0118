"""CreatePartitions as Kafka's controller answers it (``ReplicationControlManager.createPartitions``):
a topic grows to ``count`` partitions, the new ones with replicas (placed as the controller places
a new topic's, or as the request assigns them), an ISR of the unfenced replicas and the first of
them as leader; ``(error class or None, message)`` per topic. Partitions never shrink.

>>> from course_lib.broker import Cluster
>>> from course_lib.broker.topic_requests import create_topic_request
>>> cluster = Cluster(brokers=3, seed=1)
>>> create_topic_request(cluster, "orders", 1, 3, {})
(None, None)
>>> create_partitions_request(cluster, "orders", 3)
(None, None)
>>> cluster.controller.configs["orders"].partitions, cluster.controller.partitions[("orders", 2)].replicas
(3, (3, 1, 2))
>>> create_partitions_request(cluster, "orders", 2)[0].__name__
'InvalidPartitionsError'
>>> create_partitions_request(cluster, "nope", 2)[0].__name__
'UnknownTopicOrPartitionError'
"""

from __future__ import annotations

import dataclasses

from kafka import errors as Errors

from .manual_assignments import manual_assignment_error
from .protocol import PartitionState
from .topic_requests import UNKNOWN_TOPIC_MESSAGE


def create_partitions_request(
    cluster, topic: str, count: int, assignments: list | None = None, validate_only: bool = False
):
    """Grow ``topic`` to ``count`` partitions through the controller."""
    controller = cluster.controller
    config = controller.configs.get(topic)
    if config is None:
        return Errors.UnknownTopicOrPartitionError, UNKNOWN_TOPIC_MESSAGE
    if count == config.partitions:
        return Errors.InvalidPartitionsError, f"Topic already has {count} partition(s)."
    if count < config.partitions:
        return (
            Errors.InvalidPartitionsError,
            f"The topic {topic} currently has {config.partitions} partition(s); {count} would not be an increase.",
        )
    brokers = sorted(cluster.brokers)
    new = range(config.partitions, count)
    if assignments:
        if len(assignments) != len(new):
            return (
                Errors.InvalidReplicationAssignmentError,
                f"Attempted to add {len(new)} additional partition(s), but only {len(assignments)} assignment(s) "
                "were specified.",
            )
        for i, replicas in enumerate(assignments):
            message = manual_assignment_error(cluster, replicas, config.replication_factor)
            if message is None and all(b in controller.fenced for b in replicas):
                message = (
                    f"All brokers specified in the manual partition assignment for partition {config.partitions + i} "
                    "are fenced or in controlled shutdown."
                )
            if message is not None:
                return Errors.InvalidReplicationAssignmentError, message
        placed = [tuple(r) for r in assignments]
    else:
        # the placement of Controller.create_topic, continued: partition p of this topic
        offset = list(controller.configs).index(topic)
        placed = [
            tuple(brokers[(p + offset + i) % len(brokers)] for i in range(config.replication_factor)) for p in new
        ]
    if all(b in controller.fenced for b in brokers):
        return Errors.InvalidReplicationFactorError, "All brokers are currently fenced."
    if validate_only:
        return None, None
    controller.configs[topic] = dataclasses.replace(config, partitions=count)
    topic_id = controller.topic_ids[topic]
    for p, replicas in zip(new, placed):
        live = tuple(r for r in replicas if r not in controller.fenced)
        leader = live[0] if live else None
        controller.partitions[(topic, p)] = PartitionState(
            leader, 0, live or replicas[:1], replicas, 0, topic_id=topic_id
        )
    cluster.record("controller", "create_partitions", {"topic": topic, "count": count})
    controller._broadcast([(topic, p) for p in new])
    return None, None
