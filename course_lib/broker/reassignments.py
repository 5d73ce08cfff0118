"""Partition reassignments as Kafka's controller runs them (``ReplicationControlManager.
alterPartitionReassignments``, ``PartitionReassignmentReplicas``): moving a partition's replicas
is replication, so it changes the ISR.

1. The target replicas are *added*: the replica set becomes target + the ones being removed, and
   the new replicas start fetching from the leader (each broker creates the replica it is given).
2. Each new replica joins the ISR once it has caught up, as any follower does (AlterPartition).
3. When every target replica is in the ISR the reassignment completes: the replica set becomes the
   target, the ISR keeps only target replicas, a leader that is being removed hands over to a
   target replica in the ISR, and the removed replicas are deleted by their brokers.

The simulator bumps the leader epoch at steps 1 and 3 (Kafka only when a replica is removed) so the
leader learns its new followers in one place (``Partition.become_leader``).

>>> from course_lib.broker import Cluster
>>> from course_lib.broker.topic_requests import create_topic_request
>>> cluster = Cluster(brokers=3, seed=1)
>>> create_topic_request(cluster, "orders", 1, 1, {})
(None, None)
>>> cluster.run_for(1000)
>>> first = cluster.controller.partitions[("orders", 0)].replicas[0]
>>> target = [b for b in (1, 2, 3) if b != first][:1]
>>> [(tp, e) for tp, e, _ in alter_partition_reassignments_request(cluster, [(("orders", 0), target)])]
[(('orders', 0), None)]
>>> cluster.run_for(5000)
>>> cluster.controller.partitions[("orders", 0)].replicas == tuple(target), list_reassignments(cluster, None)
(True, {})
"""

from __future__ import annotations

from dataclasses import replace

from kafka import errors as Errors


def alter_partition_reassignments_request(cluster, requests: list, allow_rf_change: bool = True) -> list[tuple]:
    """``requests``: ``[(tp, target replicas or None to cancel)]`` -> ``[(tp, error or None, message)]``."""
    controller = cluster.controller
    out = []
    changed = []
    for tp, target in requests:
        tp = tuple(tp)
        state = controller.partitions.get(tp)
        if state is None:
            out.append((tp, Errors.UnknownTopicOrPartitionError, None))
            continue
        ongoing = controller.reassignments.get(tp)
        if target is None:  # cancel: back to the replicas the partition had
            if ongoing is None:
                out.append((tp, Errors.NoReassignmentInProgressError, None))
                continue
            target = list(ongoing[1])
        error = _invalid(cluster, state, list(target), allow_rf_change, ongoing)
        if error is not None:
            out.append((tp, *error))
            continue
        original = ongoing[1] if ongoing is not None else state.replicas
        target = tuple(target)
        if target == state.replicas and ongoing is None:
            out.append((tp, None, None))  # already so: nothing to move
            continue
        replicas = target + tuple(r for r in original if r not in target)
        controller.reassignments[tp] = (target, tuple(original))
        controller.partitions[tp] = replace(
            state,
            replicas=replicas,
            leader_epoch=state.leader_epoch + 1,
            partition_epoch=state.partition_epoch + 1,
        )
        cluster.record("controller", "reassign", {"topic": tp[0], "partition": tp[1], "target": list(target)})
        changed.append(tp)
        out.append((tp, None, None))
    controller._broadcast(changed)
    for tp in changed:
        complete_reassignment(controller, tp)
    return out


def _invalid(cluster, state, target: list, allow_rf_change: bool, ongoing):
    if not target:
        return Errors.InvalidReplicationAssignmentError, "The replica list cannot be empty."
    if len(set(target)) != len(target):
        return (
            Errors.InvalidReplicationAssignmentError,
            f"Duplicate replica ids in partition reassignment replica list: {target}",
        )
    unknown = [r for r in target if r not in cluster.brokers]
    if unknown:
        return (
            Errors.InvalidReplicationAssignmentError,
            f"The manual partition assignment includes broker {unknown[0]}, but no such broker is registered.",
        )
    current = len(ongoing[1]) if ongoing is not None else len(state.replicas)
    if not allow_rf_change and len(target) != current:
        return (
            Errors.InvalidReplicationFactorError,
            f"The replication factor is changed from {current} to {len(target)} but "
            "allowReplicationFactorChange is false",
        )
    return None


def complete_reassignment(controller, tp) -> None:
    """Finish ``tp``'s reassignment once every target replica is in the ISR (the controller calls
    this after each ISR change)."""
    ongoing = controller.reassignments.get(tp)
    state = controller.partitions.get(tp)
    if ongoing is None or state is None:
        return
    target = ongoing[0]
    if not all(r in state.isr for r in target):
        return
    isr = tuple(r for r in state.isr if r in target)
    leader = state.leader if state.leader in target else next((r for r in target if r in isr), None)
    del controller.reassignments[tp]
    controller.partitions[tp] = replace(
        state,
        replicas=target,
        isr=isr,
        elr=tuple(r for r in state.elr if r in target),
        leader=leader,
        leader_epoch=state.leader_epoch + 1,
        partition_epoch=state.partition_epoch + 1,
    )
    controller.cluster.record(
        "controller", "reassigned", {"topic": tp[0], "partition": tp[1], "replicas": list(target)}
    )
    controller._broadcast([tp])


def list_reassignments(cluster, tps) -> dict:
    """``{tp: (replicas, adding, removing)}`` of the ongoing reassignments (of ``tps``, or all)."""
    controller = cluster.controller
    out = {}
    for tp, (target, original) in sorted(controller.reassignments.items()):
        if tps is not None and tp not in tps:
            continue
        replicas = controller.partitions[tp].replicas
        out[tp] = (
            list(replicas),
            [r for r in target if r not in original],
            [r for r in original if r not in target],
        )
    return out
