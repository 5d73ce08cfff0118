"""The simulated :class:`~course_lib.broker.cluster.Cluster` as a cluster of the seam: its parts
(:mod:`course_lib.clusters.parts`) implemented on the simulator itself, in-process and on its
virtual clock - every part but refused requests (its brokers check no CRC; its network loses a
request instead).

>>> sim = SimulatedCluster(brokers=3, seed=1)
>>> sim.create_topic("orders", min_insync_replicas=2)
'orders'
>>> sim.partition_info("orders")["isr_nodes"], [str(part) for part in sim.missing_parts()]
([1, 2, 3], ['refused requests'])
>>> sim.crash(1)
>>> sim.run_for(10_000)  # the controller fences broker 1 after broker_session_timeout_ms
>>> sim.leader_of("orders"), sim.stopped_brokers(), sim.revive(), sim.stopped_brokers()
(2, [1], [1], [])

Every fault it injects is recorded in the simulated cluster's own history, which is the run's
(:class:`~course_lib.backends.sim.SimBackend` reads it): one history per run, as on every other
cluster. The simulator's clients (:mod:`course_lib.client_adapters.simulated`) join it through
:meth:`SimulatedCluster.client_config`.
"""

from __future__ import annotations

from typing import Callable

from kafka import errors as Errors

from .schedules import apply_schedule
from ..clusters.faults import (
    BrokerFaultsHandedOn,
    Fault,
    MessageFaultsAtLeader,
    handed_on,
    mechanism_options,
    missing_why,
)
from ..clusters.parts import MIN_ISR, UNCLEAN, CreatesTopics, NamesAsGiven, Part, TopicSpec
from ..history import History, Op, OpName
from .cluster import Cluster, PartitionView


def _explains(op: Op) -> bool:
    """A line of the simulated cluster's history that explains an outcome (see the checker)."""
    return op.process == "controller" or op.f == OpName.TRUNCATE


def partition_info(view: PartitionView) -> dict:
    """The controller's view of a partition in kafka-python's ``describe_topics`` shape."""
    return {
        "partition_index": view.partition,
        "leader_id": -1 if view.leader is None else view.leader,
        "leader_epoch": view.leader_epoch,
        "replica_nodes": list(view.replicas),
        "isr_nodes": list(view.isr),
    }


class SimulatedCluster(CreatesTopics, BrokerFaultsHandedOn, MessageFaultsAtLeader, NamesAsGiven):
    """A seeded simulated cluster (``options``: :class:`~course_lib.broker.options.ClusterOptions`)
    with the parts topology, broker faults, message faults, lost requests, fault schedules,
    network partitions and virtual time. ``cluster`` is the simulation itself."""

    #: the backend's kind on this cluster, and how messages name it
    label = "simulator"
    description = "the simulator"
    #: the simulation runs the brokers: crash, pause, resume and isolate are its own
    _faults_run_by = "cluster"

    def __init__(self, brokers: int = 3, seed: int = 0, **options) -> None:
        self.cluster = Cluster(brokers=brokers, seed=seed, **options)
        self.seed = seed
        self._schedules: list[int] = []  # the handles of fault starts still to come

    def __repr__(self) -> str:
        return f"<SimulatedCluster {self.cluster!r}>"

    @property
    def history(self) -> History:
        """The simulated cluster's own history: the run's."""
        return self.cluster.history

    # ---- topology -------------------------------------------------------------------------------
    @property
    def bootstrap_servers(self) -> str:
        """No address: the simulator's clients run in-process and join the cluster object itself
        (:meth:`client_config`)."""
        return ""

    def client_config(self) -> dict:
        """What a simulated client needs to join: the cluster object as ``bootstrap_servers``."""
        return {"bootstrap_servers": self.cluster}

    def missing_parts(self) -> dict[str, str]:
        return {
            Part.REFUSED_REQUESTS: "the simulated brokers check no batch CRC, so none refuses a "
            "request as the lab proxy makes Kafka do; the simulated network loses one instead "
            "(lose_next_request)"
        }

    def record_events_into(self, history: History) -> None:
        """The simulated cluster writes its events into its own history; a run on it reads that
        one (nothing to copy). Another history gets what explains an outcome (elections, ISR
        changes, fencing, truncations) as it happens."""
        if history is not self.cluster.history:
            self.cluster.history.copy_into(history, _explains)

    def create_from(self, spec: TopicSpec) -> str:
        """The spec in the simulated cluster's terms (the topic configs it models)."""
        unmodelled = sorted(set(spec.config) - {MIN_ISR, UNCLEAN})
        if unmodelled:
            raise ValueError(f"the simulator models the topic configs {MIN_ISR} and {UNCLEAN} only, not {unmodelled}")
        self.cluster.create_topic(
            spec.name,
            partitions=spec.partitions,
            replication_factor=spec.replication_factor,
            min_insync_replicas=spec.min_insync_replicas,
            unclean_leader_election_enable=spec.unclean_leader_election_enable,
        )
        return spec.name

    def delete_topic(self, name: str, timeout_s: float = 30.0) -> None:
        """Delete ``name``; every live broker has dropped it on return (the virtual clock moves
        until then). ``UnknownTopicOrPartitionError`` if there is none, as from Kafka."""
        try:
            self.cluster.topic_config(name)
        except ValueError:
            raise Errors.UnknownTopicOrPartitionError(f"no topic {name!r} to delete") from None
        self.cluster.delete_topic(name)

    def broker_ids(self) -> list[int]:
        return list(self.cluster.broker_ids)

    def live_broker_ids(self) -> list[int]:
        """Brokers the controller has not fenced (as a real cluster's metadata lists them)."""
        return [b for b in self.cluster.broker_ids if not self.cluster.inspect_broker(b).fenced]

    def partitions_of(self, topic: str) -> list[int]:
        return list(range(self.cluster.topic_config(topic).partitions))

    def inspect(self, topic: str, partition: int = 0) -> PartitionView:
        """The simulator's own snapshot of the partition (every replica's log, HW and LSO)."""
        return self.cluster.inspect(topic, partition)

    def partition_info(self, topic: str, partition: int = 0) -> dict:
        return partition_info(self.cluster.inspect(topic, partition))

    def leader_of(self, topic: str, partition: int = 0) -> int | None:
        """The controller's leader of the partition (None while there is none)."""
        return self.cluster.leader_of(topic, partition)

    # ---- broker faults: the simulated processes ---------------------------------------------------
    def restart(self, broker_id: int, timeout_s: float = 60.0, wait: bool = True) -> None:
        """Restart a crashed broker and (``wait``) run the virtual clock until it has registered."""
        self.cluster.restart(broker_id)
        if wait:
            self.wait_registered([broker_id], timeout_s)

    def wait_registered(self, broker_ids: list[int], timeout_s: float = 60.0) -> None:
        if not self.run_until(lambda: set(broker_ids) <= set(self.live_broker_ids()), timeout_s * 1000):
            raise RuntimeError(f"brokers {broker_ids} did not register within {timeout_s} virtual s")

    def _brokers_where(self, which: Callable) -> list[int]:
        return [b for b in self.cluster.broker_ids if which(self.cluster.inspect_broker(b))]

    def paused_brokers(self) -> list[int]:
        return self._brokers_where(lambda seen: seen.up and seen.paused)

    def stopped_brokers(self) -> list[int]:
        return self._brokers_where(lambda seen: not seen.up)

    def live_bootstrap_servers(self) -> str:
        """No addresses (see :attr:`bootstrap_servers`)."""
        return ""

    def revive(self, timeout_ms: float = 60_000) -> list[int]:
        """Heal the network, resume every paused broker, restart every crashed one and run the
        virtual clock until every partition has its full ISR and a committed log (at most
        ``timeout_ms``); returns the restarted ids."""
        down = self.stopped_brokers()
        self.cluster.heal_all(timeout_ms)
        return down

    # ---- message faults: the simulated network's ----------------------------------------------------
    def _message_fault(self, fault: Fault, topic: str, partition: int, followed: bool = False) -> int:
        """The next produce answer (a lost ACK) or request to the partition's leader is dropped on
        the simulated network, from or to any client; returns the leader now (-1: none). A refused
        request is a part this cluster lacks: it says why."""
        if fault.part in self.missing_parts():
            raise ValueError(missing_why(self.missing_parts(), [fault.op]))
        leader = self.leader_of(topic, partition)
        getattr(self.cluster, fault.hook)(None, leader, **mechanism_options(followed))
        return -1 if leader is None else leader

    # ---- fault schedules, network partitions: on the virtual clock ---------------------------------
    def run_schedule(self, schedule: list, topic=None, client_id=None, on_fault=None, origin_ms: float = 0.0) -> list:
        """Schedule ``schedule``'s faults ``at_ms`` after ``origin_ms`` of the virtual clock (0: its
        start, as the seeded trials count), each healing itself. The simulated cluster records
        each fault in its own history, the run's: there is no ``on_fault`` to tell."""
        if on_fault is not None:
            raise ValueError(
                "the simulated cluster records each fault in its own history (the run's): pass no on_fault"
            )
        self._schedules += apply_schedule(self.cluster, schedule, topic, client_id, origin_ms=origin_ms)
        return schedule

    def cancel_schedules(self) -> None:
        """Faults still to come do not start (faults under way heal as planned)."""
        for handle in self._schedules:
            self.cluster.sim.cancel(handle)
        self._schedules.clear()

    def heal_network(self) -> None:
        self.cluster.heal()

    #: cut a broker (by id) or a client (by client id) off from everyone
    isolate = handed_on("isolate")

    # ---- virtual time -----------------------------------------------------------------------------
    @property
    def now_ms(self) -> float:
        return self.cluster.now

    def run_for(self, ms: float) -> None:
        self.cluster.run_for(ms)

    def run_until(self, predicate: Callable[[], bool], timeout_ms: float = 60_000) -> bool:
        return self.cluster.run_until(predicate, timeout_ms)

    def at(self, delay_ms: float, action: Callable, *args) -> int:
        return self.cluster.at(delay_ms, action, *args)

    def lose_next_coordinator_response(self) -> None:
        """The next response of any group or transaction coordinator is lost (unrecorded: part of
        a timed fault plan, as a schedule's own steps are)."""
        self.cluster.network.drop_next(None, None, "coordinator_response")
