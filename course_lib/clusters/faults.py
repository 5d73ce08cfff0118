"""Every fault of a cluster part, declared once: :data:`FAULTS`, one row per fault.

A row names the fault, the history operation it records, the part (:class:`~.parts.Part`) that
provides it, what it aims at and the part's method (hook) that injects it. Everything else
follows from the table: which faults a cluster offers (:func:`cluster_faults`), why a missing one
is missing (:func:`missing_why`), the backends' fault methods (:func:`backend_fault`), the
clusters' message faults (:func:`message_fault`) and the wire CLI's commands. So a fault is added
by adding a row (and the mechanism of each cluster that has its part), never a method per backend.

What a row aims at decides its methods' signature, declared once per aim: a broker's faults are
:class:`~.parts.BrokerProcessFaults` for a cluster's part, a backend and a schedule's target
alike; a message fault is :class:`~.parts.AtLeader` on a cluster, :class:`AtProducer` on a backend
(the part protocols and the backend's nemesis role declare each row by that type; the tests check
them against the table).

What stays written by hand is each cluster's *mechanism*: how the simulated network drops an
answer, how the proxy in front of real Kafka drops it, how the wire gateway refuses a request
(``tests/test_faults.py`` lists each such ``def`` and why it is one).

>>> [f.name for f in FAULTS if f.part is Part.BROKER_FAULTS]
['crash', 'restart', 'pause', 'resume']
>>> sorted(cluster_faults({Part.BROKER_FAULTS: "its brokers run elsewhere"}))
['isolate', 'lose_next_ack', 'lose_next_request', 'refuse_next_request', 'schedule', 'timed_faults']
>>> missing_why({Part.REFUSED_REQUESTS: "no CRC is checked"}, ["refuse_next_request", "explode"])
'refused requests are missing: no CRC is checked; explode is no fault of any cluster part'
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Callable, Mapping, Protocol, cast

from ..history import Nemesis
from .parts import AtLeader, BrokerProcessFaults, Part


class Aim(StrEnum):
    """What a fault aims at: it decides the arguments of the fault's methods."""

    #: ``(broker)``: a broker process
    BROKER = "a broker"
    #: ``(producer, topic, partition=0, close=False, followed=False)``: a producer's next produce
    #: to the partition (``close``: a lost answer's connection closes too, where the cluster can
    #: keep it open; ``followed``: the producer sends another produce request behind this one
    #: before its answer, so a refused request's answer waits for that one's, on no clock)
    PRODUCE = "a producer's next produce to a topic's partition"
    #: ``(node)``: a broker or a client on the simulated network
    NODE = "a node of the simulated network"
    #: a seeded random schedule of faults of every kind, started now
    SCHEDULE = "a random fault schedule"
    #: a moment of an application's run, on the virtual clock
    MOMENT = "a moment of an application's run"


@dataclass(frozen=True)
class Fault:
    """One fault: ``name`` (the backend's method, the CLI's command), ``op`` (the history
    operation it records, :class:`~course_lib.history.Nemesis`), the ``part`` that provides it,
    its ``aim`` and the part's method (``hook``) that injects it."""

    name: str
    op: str
    part: Part
    aim: Aim
    hook: str


#: every fault of a cluster part (the client faults, crash_client and freeze, are every backend's)
FAULTS: tuple[Fault, ...] = (
    Fault("crash", Nemesis.CRASH, Part.BROKER_FAULTS, Aim.BROKER, "crash"),
    Fault("restart", Nemesis.RESTART, Part.BROKER_FAULTS, Aim.BROKER, "restart"),
    Fault("pause", Nemesis.PAUSE, Part.BROKER_FAULTS, Aim.BROKER, "pause"),
    Fault("resume", Nemesis.RESUME, Part.BROKER_FAULTS, Aim.BROKER, "resume"),
    Fault("lose_next_ack", Nemesis.LOSE_NEXT_ACK, Part.MESSAGE_FAULTS, Aim.PRODUCE, "lose_next_ack"),
    Fault("lose_next_request", Nemesis.LOSE_NEXT_REQUEST, Part.LOST_REQUESTS, Aim.PRODUCE, "lose_next_request"),
    Fault(
        "refuse_next_request", Nemesis.REFUSE_NEXT_REQUEST, Part.REFUSED_REQUESTS, Aim.PRODUCE, "refuse_next_request"
    ),
    Fault("schedule_faults", Nemesis.SCHEDULE, Part.FAULT_SCHEDULES, Aim.SCHEDULE, "run_schedule"),
    Fault("isolate", Nemesis.ISOLATE, Part.NETWORK_PARTITIONS, Aim.NODE, "isolate"),
    Fault("lose_next_coordinator_response", Nemesis.TIMED_FAULTS, Part.VIRTUAL_TIME, Aim.MOMENT, "at"),
)

#: the rows by name
FAULT: dict[str, Fault] = {f.name: f for f in FAULTS}

#: faults made of rows, injected one after another a moment apart (a call sequence names them)
COMPOSED: dict[str, tuple[str, ...]] = {"bounce": ("crash", "restart")}

#: the history operations each part makes possible (what a backend's ``require`` accepts)
PART_FAULTS: dict[Part, frozenset[str]] = {part: frozenset(f.op for f in FAULTS if f.part is part) for part in Part}


def cluster_faults(missing: Mapping[str, str]) -> frozenset[str]:
    """The faults of every part not in ``missing`` (a cluster's ``missing_parts()``)."""
    return frozenset(f.op for f in FAULTS if f.part not in missing)


def missing_why(missing: Mapping[str, str], faults) -> str:
    """Which parts ``faults`` need that are ``missing``, and why each is (one clause per part)."""
    asked = set(faults)
    parts = [part for part in Part if part in missing and PART_FAULTS[part] & asked]
    clauses = [f"{part} are missing: {missing[part]}" for part in parts]
    unknown = sorted(str(f) for f in asked - {f.op for f in FAULTS})
    clauses += [f"{f} is no fault of any cluster part" for f in unknown]
    return "; ".join(clauses)


def rows_of(name: str) -> tuple[Fault, ...]:
    """The rows the fault ``name`` is made of, in order: its own, or a composed fault's.

    >>> [f.name for f in rows_of("bounce")], [f.name for f in rows_of("pause")]
    (['crash', 'restart'], ['pause'])
    """
    if name in COMPOSED:
        return tuple(FAULT[row] for row in COMPOSED[name])
    if name in FAULT:
        return (FAULT[name],)
    raise ValueError(f"{name!r} is no fault; the faults are {sorted([*FAULT, *COMPOSED])}")


def at_broker(target: Any, name: str, broker: int, moment: Callable[[], None] = lambda: None) -> None:
    """Inject the fault ``name`` at ``broker`` through ``target``'s hooks: what runs the brokers
    (the simulated cluster, the wire nemesis). A fault aimed at a produce is armed in front of the
    broker itself (``broker_id=``), and a lost answer closes its connection, as the lab proxy
    closes it (a lost request's stays open). ``moment`` passes between a composed fault's rows."""
    for i, row in enumerate(rows_of(name)):
        if i:
            moment()
        hook = getattr(target, row.hook)
        if row.aim is Aim.PRODUCE:
            hook(broker_id=broker, **({"close": True} if row.part is Part.MESSAGE_FAULTS else {}))
        else:
            hook(broker)


# ---- the methods that follow from a row -------------------------------------------------------------
def _named(method, fault: Fault, what: str):
    method.__name__ = method.__qualname__ = fault.name
    method.__doc__ = f"``{fault.op}``: {what} (a row of :data:`course_lib.clusters.faults.FAULTS`)."
    return method


def backend_fault(name: str) -> Callable[..., None]:
    """A backend's method for the fault ``name`` (aimed at a broker or at a producer's next
    produce): it hands the row to the backend's one mechanism for that aim, ``_broker_fault(fault,
    broker)`` or ``_produce_fault(fault, producer, topic, partition, close, followed)``."""
    fault = FAULT[name]
    if fault.aim is Aim.BROKER:

        def at_broker(self, broker: int) -> None:
            self._broker_fault(fault, broker)

        method: Callable[..., None] = at_broker
    elif fault.aim is Aim.PRODUCE:

        def at_produce(
            self, producer: Any, topic: str, partition: int = 0, close: bool = False, followed: bool = False
        ) -> None:
            self._produce_fault(fault, producer, topic, partition, close, followed)

        method = at_produce
    else:
        raise ValueError(f"{name} aims at {fault.aim}: a backend has no method made from its row")
    return _named(method, fault, f"{fault.aim}, through the cluster's {fault.part} ({fault.hook})")


def message_fault(name: str) -> AtLeader:
    """A cluster's method for the message fault ``name``: ``(topic, partition=0, followed=False)``,
    armed in front of the partition's leader by the cluster's one mechanism, ``_message_fault(fault,
    topic, partition, followed)``; returns the leader's id. Typed as the bound method is (a class
    attribute of a callback protocol's type is not bound), so mypy checks each call and each
    cluster against the part's protocol."""
    fault = FAULT[name]
    if fault.aim is not Aim.PRODUCE:
        raise ValueError(f"{name} aims at {fault.aim}, not at a produce")

    def at_leader(self, topic: str, partition: int = 0, followed: bool = False) -> int:
        return self._message_fault(fault, topic, partition, followed)

    return cast(
        AtLeader, _named(at_leader, fault, "the next produce to the partition's leader; returns the leader's id")
    )


def mechanism_options(followed: bool) -> dict[str, bool]:
    """The options handed to a message fault's mechanism: only those asked for, so a mechanism
    without such an option (a lost answer has nothing to wait for) is never given one unasked,
    and one asked for it anyway fails with a TypeError that names it.

    >>> mechanism_options(False), mechanism_options(True)
    ({}, {'followed': True})
    """
    return {"followed": True} if followed else {}


class MessageFaultsAtLeader:
    """The message faults of a cluster that arms each in front of a partition's leader (the
    proxy of real Kafka, the wire cluster's network): one method per row aimed at a produce, all
    handed to the cluster's mechanism ``_message_fault(fault, topic, partition, followed) -> leader``."""

    _message_fault: Callable[[Fault, str, int, bool], int]

    lose_next_ack = message_fault("lose_next_ack")
    lose_next_request = message_fault("lose_next_request")
    refuse_next_request = message_fault("refuse_next_request")


class AtNode(Protocol):
    """The signature of a cluster's fault aimed at one node (a broker, or a client on the
    simulated network): :attr:`Aim.BROKER` and :attr:`Aim.NODE` rows. Typed as the bound method."""

    def __call__(self, node: Any, /) -> None: ...


def handed_on(name: str) -> AtNode:
    """A cluster's method for the fault ``name`` aimed at a node, for a cluster that does not run
    its brokers itself but hands each fault to what does: the object named by the cluster's
    ``_faults_run_by`` (the simulation for the simulated cluster, the wire nemesis for the wire
    cluster), whose method is the row's hook."""
    fault = FAULT[name]
    if fault.aim not in (Aim.BROKER, Aim.NODE):
        raise ValueError(f"{name} aims at {fault.aim}, not at a node")

    def at_node(self, node: Any, /) -> None:
        getattr(getattr(self, self._faults_run_by), fault.hook)(node)

    return cast(AtNode, _named(at_node, fault, f"{fault.aim}, handed to what runs the brokers"))


class BrokerFaultsHandedOn:
    """The broker faults of a cluster that hands them, row by row, to the object that runs its
    brokers, named by ``_faults_run_by``. A restart is not among them: each cluster waits for the
    restarted broker to register in its own way (a virtual clock, a wall clock)."""

    _faults_run_by: str

    crash = handed_on("crash")
    pause = handed_on("pause")
    resume = handed_on("resume")


def refused(name: str) -> AtNode:
    """A cluster's method for the fault ``name`` aimed at a node, for a cluster whose brokers run
    elsewhere: it raises the cluster's ``_refused_fault(fault)`` (why, and what to use instead)."""
    fault = FAULT[name]

    def refuse(self, node: Any, /) -> None:
        raise self._refused_fault(fault)

    return cast(AtNode, _named(refuse, fault, f"{fault.aim}: refused, the brokers run elsewhere"))


class BrokerFaultsElsewhere:
    """The broker faults of a cluster whose brokers this program does not run (a shared cluster):
    every row aimed at a broker raises ``_refused_fault(fault)``."""

    _refused_fault: Callable[[Fault], Exception]

    crash = refused("crash")
    restart = refused("restart")
    pause = refused("pause")
    resume = refused("resume")


# ---- a backend's message faults, and what a fault schedule acts on ----------------------------------
class AtProducer(Protocol):
    """The signature of a backend's fault aimed at a producer's next produce (:attr:`Aim.PRODUCE`):
    every such row's method (:func:`backend_fault`) has it."""

    def __call__(
        self, producer: Any, topic: str, partition: int = 0, close: bool = False, followed: bool = False
    ) -> None: ...


class FaultTarget(BrokerProcessFaults, Protocol):
    """What :func:`course_lib.broker.schedules.apply_schedule` acts on, on the simulation's thread: the
    simulated :class:`~course_lib.broker.Cluster` itself, or the wire cluster's
    :class:`~course_lib.wire.nemesis.ScheduleTarget` (the same faults over TCP). Its broker faults
    are every part's (:class:`~.parts.BrokerProcessFaults`); its message faults aim at a client's
    connections (None: any client's). ``tests/test_seam_types.py`` has mypy check both against it."""

    @property
    def network(self) -> Any: ...
    @property
    def options(self) -> Any: ...
    @property
    def broker_ids(self) -> Any: ...
    @property
    def now(self) -> float: ...
    def at(self, delay_ms: float, action: Callable, /, *args) -> Any: ...
    def leader_of(self, topic: str, partition: int = 0, /) -> int | None: ...
    def inspect(self, topic: str, partition: int = 0, /) -> Any: ...
    def inspect_broker(self, broker_id: int, /) -> Any: ...
    def isolate(self, node: int | str, /) -> None: ...
    def heal(self) -> None: ...
    def lose_next_ack(self, client_id: str | None = None, /) -> None: ...
    def lose_next_request(self, client_id: str | None = None, /) -> None: ...
