"""Faults on a wire cluster: the simulator's nemesis, plus what a killed process does to sockets.

- ``crash(b)``: the simulated broker dies (memory lost, log kept) *and* its listener goes, as a
  SIGKILL would: connecting is refused, idle connections close at once, busy ones after what the
  broker had already written to them (:meth:`WireNemesis.crash`);
- ``restart(b)``: the broker recovers and listens again on the same port;
- ``pause(b)`` / ``resume(b)``: SIGSTOP / SIGCONT - sockets stay open, nothing is answered;
- ``lose_next_ack(broker_id=None, close=False)``: the next produce is appended but its answer is
  never sent (``close=True``: the connection closes instead, as the real lab's proxy does);
- ``lose_next_request(broker_id=None)``: the next produce request vanishes on its way, as on the
  simulator (the broker never sees it; over TCP the connection stalls until the client's request
  timeout);
- ``refuse_next_request(broker_id=None)``: the broker refuses the next produce request with a
  retriable error answered late, the requests behind it go through (the real lab proxy's fault);
- ``isolate(b)``: a network partition around the broker (its sockets stay open, nothing gets
  through); ``heal()`` undoes it and the network faults above;
- ``random_schedule(duration_s, ...)`` / ``run_schedule(schedule, ...)``: the simulator's seeded
  fault schedules (:mod:`course_lib.nemesis`), on the wall clock (:class:`ScheduleTarget`).

Every fault is recorded in the cluster's history, as on the simulator.
"""

from __future__ import annotations

import random
from typing import Any, Callable

from ..clusters.faults import FAULT
from ..history import Nemesis
from .gateway import Gateway


def _on_the_simulation(hook: str) -> Callable[..., None]:
    """The wire nemesis's method for a fault the simulated cluster injects itself (its method
    ``hook``): run on the simulation thread, with the caller's arguments."""

    def fault(self: WireNemesis, *args: Any, **how: Any) -> None:
        self.wire.call(lambda: getattr(self.wire.cluster, hook)(*args, **how))

    fault.__name__ = fault.__qualname__ = hook
    fault.__doc__ = f"The simulated cluster's ``{hook}``, on the simulation thread."
    return fault


class WireNemesis:
    def __init__(self, wire):
        self.wire = wire
        self._targets: list[ScheduleTarget] = []  # the schedules started, to cancel
        #: broker (None: any) -> the produce requests still to refuse: whether one follows each
        self.refused: dict[int | None, list[bool]] = {}

    # ---- processes --------------------------------------------------------------------------------
    def crash(self, broker_id: int) -> None:
        """SIGKILL, with one meaning on every path (a backend, the CLI, a fault schedule): the
        listener goes at once (connecting is refused) and so does every idle connection; a
        connection waiting for an answer closes after what the broker had already sent it - the
        kernel sends a killed process's socket buffers before the FIN, so an ACK written just
        before the crash (``crash_leader_after_ack``) reaches the client."""
        wire = self.wire

        def crash() -> None:
            wire.cluster.crash(broker_id)  # tells each connection it talked to, after what it was sent
            wire.reactor.call(wire.reactor.refuse, broker_id)  # on return, connecting is refused
            for node in list(wire.cluster.network.nodes.values()):
                if isinstance(node, Gateway) and node.broker_id == broker_id and node.idle:
                    node.close()

        wire.call(crash)

    def restart(self, broker_id: int) -> None:
        wire = self.wire

        def restart() -> None:
            if wire.cluster.broker(broker_id).alive:
                return
            try:
                wire.reactor.call(wire.reactor.listen, broker_id, wire.ports[broker_id])
            except OSError as exc:
                raise RuntimeError(
                    f"broker {broker_id} cannot listen again on port {wire.ports[broker_id]}: {exc}"
                ) from exc
            wire.cluster.restart(broker_id)

        wire.call(restart)

    # ---- the simulation's own faults: a paused broker keeps its sockets open; a partition, a lost
    # answer or request is the simulated network's (``lose_next_ack(broker_id=None, close=False)``)
    pause = _on_the_simulation("pause")
    resume = _on_the_simulation("resume")
    isolate = _on_the_simulation("isolate")
    lose_next_ack = _on_the_simulation("lose_next_ack")
    lose_next_request = _on_the_simulation("lose_next_request")

    # ---- the gateway's fault -------------------------------------------------------------------------
    def refuse_next_request(self, broker_id: int | None = None, followed: bool = False) -> None:
        """The broker (``broker_id``; None: any) refuses the next produce request with a retriable
        error, and later requests on the connection go through while that answer comes late: after
        the answer to a produce behind it, or (unless ``followed``: the producer will send one)
        300 ms - what the real lab's proxy does (``course_lib.real.proxy``: it corrupts the batch's
        CRC and passes the refusal on as NOT_ENOUGH_REPLICAS)."""

        def arm() -> None:
            self.refused.setdefault(broker_id, []).append(followed)
            self.wire.cluster.record("nemesis", Nemesis.REFUSE_NEXT_REQUEST, {"broker": broker_id})

        self.wire.call(arm)

    def take_refused(self, broker_id: int) -> bool | None:
        """On the simulation thread: None if this produce to ``broker_id`` goes through, else it is
        one to refuse and whether a produce follows it (asked by the gateway's hook,
        :meth:`~course_lib.wire.gateway.Gateway._refused`)."""
        for key in (broker_id, None):
            if self.refused.get(key):
                return self.refused[key].pop(0)
        return None

    def heal(self) -> None:
        self.wire.call(self.wire.cluster.heal)
        self.wire.call(self.refused.clear)

    def heal_all(self) -> None:
        """Heal the network, resume paused and restart crashed brokers."""
        self.heal()
        for broker_id, broker in sorted(self.wire.cluster.brokers.items()):
            if broker.paused:
                self.resume(broker_id)
            if not broker.alive:
                self.restart(broker_id)

    # ---- schedules ------------------------------------------------------------------------------------
    def run_schedule(
        self, schedule: list, topic: str | None = None, client_id: str | None = None, on_fault=None
    ) -> list:
        """Start a :mod:`course_lib.nemesis` schedule now: each fault ``at_ms`` from now on the
        wall clock, healing itself as on the simulator. ``client_id``: the kafka-python client
        whose lost ACKs and requests these are (None: any client's); ``on_fault(f, value)`` is
        told each fault as it starts (a backend records them in its history)."""
        from ..broker.schedules import apply_schedule

        target = ScheduleTarget(self.wire, on_fault)
        self._targets.append(target)
        self.wire.call(lambda: apply_schedule(target, schedule, topic, client_id, origin_ms=target.now))
        return schedule

    def random_schedule(
        self,
        duration_s: float,
        mean_interval_s: float = 2.0,
        seed: int | None = None,
        kinds: tuple | None = None,
        topic: str | None = None,
    ) -> list:
        """Draw a seeded :func:`course_lib.nemesis.random_schedule` for the next ``duration_s``
        seconds (one fault per ``mean_interval_s`` on average) and start it. ``kinds`` (None:
        every kind; without a ``topic``, every kind that needs no leader to aim at). Returns the
        schedule (a list of :class:`~course_lib.nemesis.Fault`)."""
        from ..nemesis import FAULT_KINDS, NEEDS_TOPIC, random_schedule

        if kinds is None:
            kinds = FAULT_KINDS if topic is not None else tuple(k for k in FAULT_KINDS if k not in NEEDS_TOPIC)
        rng = random.Random(self.wire.seed if seed is None else seed)
        faults = max(1, round(duration_s / mean_interval_s))
        schedule = random_schedule(rng, duration_s * 1000, sorted(self.wire.ports), kinds, faults)
        return self.run_schedule(schedule, topic)

    def cancel(self) -> None:
        """Stop every running schedule: faults still to come do not start, and faults under way
        are not undone (``heal_all()`` does that; stopping the cluster does both)."""
        targets, self._targets = self._targets, []

        def cancel_all() -> None:
            for target in targets:
                target.cancel()

        if targets:
            self.wire.call(cancel_all)


def _scheduled(name: str) -> Callable[..., None]:
    """A schedule's fault aimed at a broker: the wire nemesis's (on the simulation thread already),
    then told to the schedule's ``on_fault``."""
    fault = FAULT[name]

    def start(self: ScheduleTarget, broker_id: int) -> None:
        getattr(self.wire.nemesis, fault.hook)(broker_id)
        self._record(fault.op, {"broker": broker_id})

    start.__name__ = start.__qualname__ = name
    return start


def _lost_on_the_network(name: str, side: str, kind: str) -> Callable[..., None]:
    """A schedule's message fault aimed at a client: the next message of ``kind`` whose ``side``
    (``src`` or ``dst``) is one of the client's connections is dropped; recorded in the wire
    cluster's history and told to ``on_fault``."""
    fault = FAULT[name]

    def lose(self: ScheduleTarget, client_id: str | None = None) -> None:
        self.cluster.network.drop_next(**{side: self._connections_of(client_id)}, kind=kind)
        self.cluster.record("nemesis", fault.op, {"client": client_id})
        self._record(fault.op, {"client": client_id})

    lose.__name__ = lose.__qualname__ = name
    return lose


class ScheduleTarget:
    """The wire cluster as :func:`course_lib.broker.schedules.apply_schedule` sees it, on the simulation
    thread: the simulated :class:`~course_lib.broker.Cluster` (leaders, ISR, the network's slow
    links and partitions, pause/resume are the simulator's own), with what a fault means for TCP:

    - ``crash`` and ``restart``: :meth:`WireNemesis.crash` and :meth:`WireNemesis.restart`;
    - ``lose_next_ack`` / ``lose_next_request`` for a client: the next produce answer to, or
      request from, any of that kafka-python client's connections (the gateway nodes whose
      requests carry its ``client_id``) is lost; the connection stalls, as a TCP connection that
      lost a segment for good does, until the client's ``request_timeout_ms`` closes it.
    """

    def __init__(self, wire, on_fault=None):
        self.wire = wire
        self.cluster = wire.cluster
        self._on_fault = on_fault
        self._handles: list[int] = []
        self.cancelled = False

    # ---- what apply_schedule reads: the simulated cluster's own state
    @property
    def network(self):
        return self.cluster.network

    @property
    def options(self):
        return self.cluster.options

    @property
    def broker_ids(self):
        return self.cluster.broker_ids

    def leader_of(self, topic: str, partition: int = 0):
        return self.cluster.leader_of(topic, partition)

    def inspect(self, topic: str, partition: int = 0):
        return self.cluster.inspect(topic, partition)

    def inspect_broker(self, broker_id: int):
        return self.cluster.inspect_broker(broker_id)

    @property
    def now(self) -> float:
        return self.cluster.now

    def at(self, delay_ms: float, action, *args) -> None:
        self._handles.append(self.cluster.sim.schedule(delay_ms, self._run, action, args))

    def _run(self, action, args) -> None:
        if not self.cancelled and not self.wire._stopping:
            action(*args)

    def cancel(self) -> None:
        self.cancelled = True
        for handle in self._handles:
            self.cluster.sim.cancel(handle)
        self._handles.clear()

    def _record(self, f: str, value) -> None:
        if self._on_fault is not None:
            self._on_fault(f, value)

    # ---- the faults: the wire nemesis's for a broker (a crash kills its sockets), the simulated
    # network's for a client's connections; each told to ``on_fault`` as it starts
    crash = _scheduled("crash")
    restart = _scheduled("restart")
    pause = _scheduled("pause")
    resume = _scheduled("resume")
    isolate = _scheduled("isolate")
    lose_next_ack = _lost_on_the_network("lose_next_ack", "dst", "produce_response")
    lose_next_request = _lost_on_the_network("lose_next_request", "src", "produce_request")

    def heal(self) -> None:
        self.cluster.heal()
        self._record(Nemesis.HEAL, None)

    def _connections_of(self, client_id: str | None):
        """The network nodes of ``client_id``'s connections, present and future (None: any node)."""
        if client_id is None:
            return None
        nodes = self.cluster.network.nodes

        def of_the_client(node: str) -> bool:
            return getattr(nodes.get(node), "client_id", None) == client_id

        return of_the_client
