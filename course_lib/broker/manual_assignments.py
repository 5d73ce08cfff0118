"""Manual replica assignments, as Kafka's controller validates them
(``ReplicationControlManager.createTopic`` and ``createPartitions``): the replicas a request
names for each partition, the first live one the leader.

>>> from course_lib.broker import Cluster
>>> cluster = Cluster(brokers=3, seed=1)
>>> topic_assignment_error(cluster, -1, -1, [(0, [3, 1, 2]), (1, [1, 2, 3])]) is None
True
>>> topic_assignment_error(cluster, 2, -1, [(0, [3, 1, 2])])[1]
'A manual partition assignment was specified, but numPartitions was not set to -1.'
>>> topic_assignment_error(cluster, -1, -1, [(1, [3, 1, 2])])[1]
'partitions should be a consecutive 0-based integer sequence'
"""

from __future__ import annotations

from kafka import errors as Errors


def topic_assignment_error(cluster, partitions: int, replication_factor: int, assignments: list):
    """``(error class, message)`` why CreateTopics refuses a new topic's ``assignments``
    (``[(partition, broker ids)]`` in request order), or None: the count and the replication
    factor must be left to the assignments (-1); each partition is assigned once, its replicas
    valid (:func:`manual_assignment_error`, as many as the first partition's) and not all fenced;
    the partitions are numbered 0..n-1."""
    if replication_factor != -1:
        return Errors.InvalidRequestError, (
            "A manual partition assignment was specified, but replication factor was not set to -1."
        )
    if partitions != -1:
        return (
            Errors.InvalidRequestError,
            "A manual partition assignment was specified, but numPartitions was not set to -1.",
        )
    seen: set[int] = set()
    first_size = None
    for partition, replicas in assignments:
        if partition in seen:
            return Errors.InvalidReplicationAssignmentError, (
                f"Found multiple manual partition assignments for partition {partition}"
            )
        message = manual_assignment_error(cluster, replicas, first_size)
        if message is None and all(b in cluster.controller.fenced for b in replicas):
            message = (
                f"All brokers specified in the manual partition assignment for partition {partition} "
                "are fenced or in controlled shutdown."
            )
        if message is not None:
            return Errors.InvalidReplicationAssignmentError, message
        seen.add(partition)
        first_size = len(replicas)
    if seen != set(range(len(seen))):
        return Errors.InvalidReplicationAssignmentError, "partitions should be a consecutive 0-based integer sequence"
    return None


def manual_assignment_error(cluster, replicas, replication_factor: int | None) -> str | None:
    """Why the controller refuses a partition's manual replica assignment, or None: Kafka's
    ``ReplicationControlManager.validateManualPartitionAssignment`` - an empty list; else the
    broker ids in ascending order, the first that is not registered or that repeats; else a
    replica count unlike the topic's other partitions'.

    >>> from course_lib.broker import Cluster
    >>> cluster = Cluster(brokers=3, seed=1)
    >>> manual_assignment_error(cluster, [4, 1, 0], 3)
    'The manual partition assignment includes broker 0, but no such broker is registered.'
    >>> manual_assignment_error(cluster, [2, 1, 1], 3)
    'The manual partition assignment includes the broker 1 more than once.'
    >>> manual_assignment_error(cluster, [3, 1, 2], 3) is None
    True
    """
    if not replicas:
        return "The manual partition assignment includes an empty replica list."
    previous = None
    for broker in sorted(replicas):
        if broker not in cluster.brokers:
            return f"The manual partition assignment includes broker {broker}, but no such broker is registered."
        if broker == previous:
            return f"The manual partition assignment includes the broker {broker} more than once."
        previous = broker
    if replication_factor is not None and len(replicas) != replication_factor:
        return (
            f"The manual partition assignment includes a partition with {len(replicas)} replica(s), but this is "
            f"not consistent with previous partitions, which have {replication_factor} replica(s)."
        )
    return None
