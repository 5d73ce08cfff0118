"""The parts a cluster may have, as protocols, and the one spelling of a topic (:class:`TopicSpec`).

A cluster always has a :class:`Topology` (topics, brokers, partition metadata, the address its
clients use). The other parts are optional, and each cluster says which it lacks and why
(``missing_parts()``: part -> one sentence), so a backend's faults follow from its cluster
(:mod:`course_lib.clusters.faults`: one row per fault, naming its part) and a scenario that needs
a missing one is told which part is missing:

- :class:`BrokerFaults` (``crash``, ``restart``, ``pause``, ``resume``): broker processes this
  program runs (a :class:`~course_lib.real.cluster.LocalCluster`, a
  :class:`~course_lib.wire.cluster.WireCluster`);
- :class:`MessageFaults` (``lose_next_ack``): a produce answer lost on its way (a proxy in front
  of real brokers, the simulated network);
- :class:`LostRequests` (``lose_next_request``): a produce request that never reaches the broker
  (the simulated network drops it; over TCP a connection cannot lose one request and carry on, so
  it stalls until the client's request timeout - the wire cluster - or the proxy in front of a
  real broker cuts it);
- :class:`RefusedRequests` (``refuse_next_request``): the broker refuses a produce request with
  a retriable error answered late, while the requests behind it are appended (the proxy in front
  of a real broker corrupts the batch's CRC; the wire cluster's gateway refuses it the same way;
  the simulated brokers check no CRC, so the simulator lacks it);
- :class:`FaultSchedules`: the simulator's seeded random fault schedules, started now;
- :class:`NetworkPartitions` and :class:`VirtualTime` (faults timed against an application's
  steps): the simulated cluster's own
  (:class:`~course_lib.broker.simulated_cluster.SimulatedCluster`).

Each cluster implements its parts itself; a typed test (``tests/test_seam_types.py``, checked
by mypy) assigns each cluster to each part it claims.

>>> spec = TopicSpec.of("orders", min_insync_replicas=2, unclean_leader_election_enable=False)
>>> spec.config
{'min.insync.replicas': '2', 'unclean.leader.election.enable': 'false'}
>>> spec.min_insync_replicas, spec.unclean_leader_election_enable
(2, False)
"""

from __future__ import annotations

import dataclasses
import inspect
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Callable, Concatenate, Mapping, ParamSpec, Protocol, runtime_checkable

from ..history import History

P = ParamSpec("P")

#: Kafka's topic config names for the two settings scenarios ask for by keyword
MIN_ISR = "min.insync.replicas"
UNCLEAN = "unclean.leader.election.enable"


def _kafka_value(value: object) -> str:
    """A topic config value as Kafka's admin API takes it: a string, booleans lower-case."""
    return str(value).lower() if isinstance(value, bool) else str(value)


@dataclass(frozen=True)
class TopicSpec:
    """A topic as asked: name, partition count, replication factor (None: the cluster's
    default) and topic configs under Kafka's names with Kafka's string values. Built once
    (:meth:`of`) and passed whole through every layer."""

    name: str
    partitions: int = 1
    replication_factor: int | None = None
    config: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def of(
        cls,
        name: str,
        partitions: int = 1,
        replication_factor: int | None = None,
        min_insync_replicas: int | None = None,
        unclean_leader_election_enable: bool | None = None,
        config: Mapping[str, object] | None = None,
    ) -> "TopicSpec":
        """The keyword form scenarios and notebooks use, converted to Kafka's names once."""
        settings = {k: _kafka_value(v) for k, v in (config or {}).items()}
        if min_insync_replicas is not None:
            settings[MIN_ISR] = _kafka_value(int(min_insync_replicas))
        if unclean_leader_election_enable is not None:
            settings[UNCLEAN] = _kafka_value(bool(unclean_leader_election_enable))
        return cls(name, partitions, replication_factor, settings)

    def named(self, name: str) -> "TopicSpec":
        """The same topic under another name (a shared cluster's prefix, a run's suffix)."""
        return dataclasses.replace(self, name=name)

    @property
    def min_insync_replicas(self) -> int | None:
        value = self.config.get(MIN_ISR)
        return None if value is None else int(value)

    @property
    def unclean_leader_election_enable(self) -> bool | None:
        value = self.config.get(UNCLEAN)
        return None if value is None else value.lower() == "true"

    def asked(self) -> dict:
        """What was asked, for a result's provenance (only what was given)."""
        asked = {"partitions": self.partitions, "replication_factor": self.replication_factor, **self.config}
        return {k: v for k, v in asked.items() if v is not None}


def _create_topic(of: Callable[P, TopicSpec]) -> Callable[Concatenate[Any, P], str]:
    """``create_topic(...)``: ``self.create_from(of(...))``, with ``of``'s keywords as its own (so
    the keyword list is written once, in :meth:`TopicSpec.of`)."""

    def create_topic(self, *args: P.args, **kwargs: P.kwargs) -> str:
        return self.create_from(of(*args, **kwargs))

    spec = inspect.signature(of)
    self_ = inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)
    create_topic.__signature__ = spec.replace(parameters=[self_, *spec.parameters.values()], return_annotation="str")  # type: ignore[attr-defined]
    create_topic.__doc__ = (
        "Create the topic :meth:`TopicSpec.of` describes and return the name to use (a shared "
        "cluster prefixes it; a real run adds its suffix); ``config``: more topic configs under "
        "Kafka's names."
    )
    return create_topic


class CreatesTopics:
    """The one keyword signature of ``create_topic`` (clusters and backends): it builds a
    :class:`TopicSpec` (:meth:`TopicSpec.of`'s keywords) and hands it to ``create_from``, which
    each class implements."""

    create_from: Callable[[TopicSpec], str]
    create_topic = _create_topic(TopicSpec.of)


class NamesAsGiven:
    """A cluster of one learner in one process: topics, group ids and transactional ids are used
    as given (a shared cluster prefixes them instead)."""

    def topic(self, name: str) -> str:
        return name

    def group_id(self, name: str) -> str:
        return name

    def transactional_id(self, name: str) -> str:
        return name


class Part(StrEnum):
    """The optional parts of a cluster (the topology is not optional)."""

    BROKER_FAULTS = "broker faults"
    MESSAGE_FAULTS = "message faults"
    LOST_REQUESTS = "lost requests"
    REFUSED_REQUESTS = "refused requests"
    FAULT_SCHEDULES = "fault schedules"
    NETWORK_PARTITIONS = "network partitions"
    VIRTUAL_TIME = "virtual time"


@runtime_checkable
class Topology(Protocol):
    """What every cluster has: its address, topics, brokers and partition metadata.

    Partition metadata is kafka-python's ``describe_topics`` shape: ``leader_id`` (-1 while there
    is no leader), ``leader_epoch``, ``replica_nodes``, ``isr_nodes``."""

    #: the backend's ``kind`` on this cluster ("kafka", "wire"): a label, never branched on
    label: str
    #: how messages name this cluster ("real Kafka (LocalCluster)")
    description: str

    @property
    def bootstrap_servers(self) -> str: ...
    def client_config(self) -> dict: ...
    def missing_parts(self) -> dict[str, str]: ...
    def create_from(self, spec: TopicSpec) -> str: ...
    def delete_topic(self, name: str, timeout_s: float = 30.0) -> None: ...
    def group_id(self, name: str) -> str: ...
    def transactional_id(self, name: str) -> str: ...
    def broker_ids(self) -> list[int]: ...
    def live_broker_ids(self) -> list[int]: ...
    def partitions_of(self, topic: str) -> list[int]: ...
    def partition_info(self, topic: str, partition: int = 0) -> dict: ...
    def record_events_into(self, history: History) -> None:
        """From now on, write the cluster's own events that explain an outcome (elections,
        ISR changes, truncations) into ``history`` - the run's: one history per run."""
        ...


# ---- the faults: what a fault aims at (course_lib.clusters.faults.Aim) decides its signature ----------
class BrokerProcessFaults(Protocol):
    """The faults aimed at a broker process, with the one signature ``(broker_id)``: a cluster's
    broker faults, a backend's (its nemesis role) and a fault schedule's target all have these."""

    def crash(self, broker_id: int, /) -> None: ...
    def restart(self, broker_id: int, /) -> None: ...
    def pause(self, broker_id: int, /) -> None: ...
    def resume(self, broker_id: int, /) -> None: ...


class AtLeader(Protocol):
    """The signature of a cluster's message fault: armed in front of the partition's leader for
    its next produce; returns the leader's id. ``followed``: the producer sends another produce
    request behind it before its answer (only a refused request's answer waits for that one's)."""

    def __call__(self, topic: str, partition: int = 0, followed: bool = False) -> int: ...


class BrokerFaults(BrokerProcessFaults, Protocol):
    """Broker processes this program runs: it may crash, restart, pause and resume them (a
    restart may take ``timeout_s=`` and ``wait=False`` too), and see which are down."""

    def wait_registered(self, broker_ids: list[int], timeout_s: float = 60.0) -> None: ...
    def paused_brokers(self) -> list[int]: ...
    def stopped_brokers(self) -> list[int]: ...
    def live_bootstrap_servers(self) -> str: ...
    def revive(self) -> list[int]: ...


class MessageFaults(Protocol):
    """The partition leader's next produce answer is lost on its way (the batch is appended, the
    client never hears so)."""

    lose_next_ack: AtLeader


class LostRequests(Protocol):
    """The next produce request to the partition's leader never reaches it: the client hears
    nothing until its request timeout."""

    lose_next_request: AtLeader


class RefusedRequests(Protocol):
    """The partition leader refuses the next produce request with a retriable error
    (``NOT_ENOUGH_REPLICAS``) answered late, and appends the requests behind it first (after the
    answer to the one behind it if ``followed``, else a fixed time late)."""

    refuse_next_request: AtLeader


class FaultSchedules(Protocol):
    """The simulator's seeded fault schedules (:mod:`course_lib.nemesis`), started now."""

    def run_schedule(
        self,
        schedule: list,
        topic: str | None = None,
        client_id: str | None = None,
        on_fault: Callable[[str, Any], None] | None = None,
    ) -> list: ...
    def cancel_schedules(self) -> None: ...
    def heal_network(self) -> None: ...


class NetworkPartitions(Protocol):
    """A network this program simulates: a node cut off from everyone until the network heals."""

    def isolate(self, node: int | str, /) -> None: ...
    def heal_network(self) -> None: ...


class VirtualTime(Protocol):
    """A clock this program moves (the simulator's): time passes only when asked, so a fault can
    be timed exactly against an application's steps."""

    @property
    def now_ms(self) -> float: ...
    def run_for(self, ms: float) -> None: ...
    def run_until(self, predicate: Callable[[], bool], timeout_ms: float = 60_000) -> bool: ...
    def at(self, delay_ms: float, action: Callable, *args) -> Any: ...
    def lose_next_coordinator_response(self) -> None: ...


def client_config(cluster) -> dict:
    """The kafka-python keyword arguments of any cluster handle (``client_config()`` if it has
    one: address and login; else just its address)."""
    if hasattr(cluster, "client_config"):
        return cluster.client_config()
    return {"bootstrap_servers": cluster.bootstrap_servers}
