"""ElectLeaders as Kafka's controller answers it (``ReplicationControlManager.electLeader``), one
partition at a time: ``(error class or None, message)``.

- **preferred**: the first replica becomes leader if it is in the ISR and not fenced; already
  leader: ELECTION_NOT_NEEDED; not electable: PREFERRED_LEADER_NOT_AVAILABLE.
- **unclean**: only for a partition without a leader (else ELECTION_NOT_NEEDED). A clean choice
  (ISR, or the ELR once the ISR is empty) comes first; failing that any live replica is elected
  *uncleanly* - whatever it lacks of the old leader's log is lost, which is why an operator must
  ask for it. None alive: ELIGIBLE_LEADERS_NOT_AVAILABLE.

>>> from course_lib.broker import Cluster
>>> from course_lib.broker.topic_requests import create_topic_request
>>> cluster = Cluster(brokers=3, seed=1)
>>> create_topic_request(cluster, "orders", 1, 3, {})
(None, None)
>>> cluster.run_for(1000)
>>> elect_leaders_request(cluster, PREFERRED, [("orders", 0), ("orders", 5)])
[(('orders', 0), <class 'kafka.errors.ElectionNotNeededError'>, None), (('orders', 5), <class 'kafka.errors.UnknownTopicOrPartitionError'>, 'No such partition as orders-5')]
"""

from __future__ import annotations

from dataclasses import replace

from kafka import errors as Errors

from ..history import OpName

#: ElectLeaders' election types (ElectionType)
PREFERRED, UNCLEAN = 0, 1


def elect_leaders_request(cluster, election_type: int, partitions: list) -> list[tuple]:
    """``[(tp, error class or None, message)]`` for ``partitions``, elected leaders broadcast."""
    controller = cluster.controller
    out: list[tuple] = []
    changed = []
    for tp in partitions:
        state = controller.partitions.get(tuple(tp))
        if state is None:
            out.append((tp, Errors.UnknownTopicOrPartitionError, f"No such partition as {tp[0]}-{tp[1]}"))
            continue
        new, error = (_preferred if election_type == PREFERRED else _unclean)(controller, tuple(tp), state)
        if new is not None:
            controller.partitions[tuple(tp)] = replace(new, partition_epoch=state.partition_epoch + 1)
            changed.append(tuple(tp))
        out.append((tp, error, None))
    controller._broadcast(changed)
    return out


def _preferred(controller, tp, state):
    preferred = state.replicas[0]
    if state.leader == preferred:
        return None, Errors.ElectionNotNeededError
    if preferred not in state.isr or preferred in controller.fenced:
        return None, Errors.PreferredLeaderNotAvailableError
    return _elected(controller, tp, state, replace(state, leader=preferred), unclean=False), None


def _unclean(controller, tp, state):
    if state.leader is not None:
        return None, Errors.ElectionNotNeededError
    clean = controller._change(tp, state, state.isr, reason="ElectLeaders")
    if clean.leader is not None:
        return clean, None
    live = next((r for r in state.replicas if r not in controller.fenced), None)
    if live is None:
        return None, Errors.EligibleLeadersNotAvailableError
    new = replace(state, leader=live, isr=(live,), elr=(), last_known_elr=())
    controller.unclean_elections += 1
    return _elected(controller, tp, state, new, unclean=True), None


def _elected(controller, tp, old, new, unclean: bool):
    new = replace(new, leader_epoch=old.leader_epoch + 1)
    controller.cluster.record(
        "controller",
        OpName.ELECT,
        {
            "partition": tp[1],
            "topic": tp[0],
            "leader": new.leader,
            "leader_epoch": new.leader_epoch,
            "isr": list(new.isr),
            "elr": list(new.elr),
            "unclean": unclean,
            "from_elr": False,
            "reason": "ElectLeaders " + ("unclean" if unclean else "preferred"),
        },
    )
    return new
