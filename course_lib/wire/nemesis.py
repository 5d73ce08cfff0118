"""Faults on a wire cluster: the simulator's nemesis, plus what a killed process does to sockets.

- ``crash(b)``: the simulated broker dies (memory lost, log kept) *and* its listener and every
  connection to it go, as a SIGKILL would: clients get connection refused / reset;
- ``restart(b)``: the broker recovers and listens again on the same port;
- ``pause(b)`` / ``resume(b)``: SIGSTOP / SIGCONT - sockets stay open, nothing is answered;
- ``lose_next_ack(broker_id=None, close=False)``: the next produce is appended but its answer is
  never sent (``close=True``: the connection closes instead, as the real lab's proxy does);
- ``lose_next_request(broker_id=None)``: the next produce request vanishes on its way;
- ``isolate(b)``: a network partition around the broker (its sockets stay open, nothing gets
  through); ``heal()`` undoes it and the network faults above;
- ``random_schedule(duration_s, ...)``: seeded random faults on the wall clock.

Every fault is recorded in the cluster's history, as on the simulator.
"""

from __future__ import annotations

import random
import threading

#: what a random schedule draws from (crash and pause are undone after a while)
RANDOM_FAULTS = ("crash", "pause", "lose_next_ack", "lose_next_request")


class WireNemesis:
    def __init__(self, wire):
        self.wire = wire
        self._timers: list[threading.Timer] = []
        self.spoiled: dict[int, int] = {}  # broker -> produce requests still to refuse as corrupt

    # ---- processes --------------------------------------------------------------------------------
    def crash(self, broker_id: int) -> None:
        wire = self.wire

        def crash() -> None:
            wire.cluster.crash(broker_id)
            for gw in [n for n in wire.cluster.network.nodes.values() if getattr(n, "broker_id", None) == broker_id]:
                if hasattr(gw, "socket_closed"):
                    gw.socket_closed()
            # wait for the sockets to go: when crash() returns, connecting is refused
            wire.reactor.call(wire.reactor.kill_broker, broker_id)

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

    def pause(self, broker_id: int) -> None:
        self.wire.call(self.wire.cluster.pause, broker_id)

    def resume(self, broker_id: int) -> None:
        self.wire.call(self.wire.cluster.resume, broker_id)

    # ---- the network --------------------------------------------------------------------------------
    def lose_next_ack(self, broker_id: int | None = None, close: bool = False) -> None:
        self.wire.call(lambda: self.wire.cluster.lose_next_ack(broker_id=broker_id, close=close))

    def lose_next_request(self, broker_id: int | None = None) -> None:
        self.wire.call(lambda: self.wire.cluster.lose_next_request(broker_id=broker_id))

    def isolate(self, broker_id: int) -> None:
        """A network partition around the broker: its sockets stay open but nothing reaches it or
        leaves it (requests in flight are lost; clients find out by their request timeout)."""
        self.wire.call(self.wire.cluster.isolate, broker_id)

    def spoil_next_request(self, broker_id: int) -> None:
        """The next produce request to ``broker_id`` arrives corrupted: the broker refuses it and
        later requests on the connection go through while its (retriable) answer comes 300 ms
        late - exactly what the real lab's proxy does for a lost request
        (``course_lib.real.proxy``), without waiting for the client's request timeout."""

        def arm() -> None:
            self.spoiled[broker_id] = self.spoiled.get(broker_id, 0) + 1
            self.wire.cluster.record("nemesis", "lose_next_request", {"broker": broker_id, "spoiled": True})

        self.wire.call(arm)

    def take_spoiled(self, broker_id: int) -> bool:
        """On the simulation thread: whether this produce to ``broker_id`` is the spoiled one."""
        if self.spoiled.get(broker_id):
            self.spoiled[broker_id] -= 1
            return True
        return False

    def heal(self) -> None:
        self.wire.call(self.wire.cluster.heal)
        self.wire.call(self.spoiled.clear)

    def heal_all(self) -> None:
        """Heal the network, resume paused and restart crashed brokers."""
        self.heal()
        for broker_id, broker in sorted(self.wire.cluster.brokers.items()):
            if broker.paused:
                self.resume(broker_id)
            if not broker.alive:
                self.restart(broker_id)

    # ---- schedules ------------------------------------------------------------------------------------
    def random_schedule(
        self, duration_s: float, mean_interval_s: float = 2.0, seed: int | None = None, faults=RANDOM_FAULTS
    ) -> list[tuple[float, str, int]]:
        """Draw a seeded schedule of faults for the next ``duration_s`` seconds and start it.
        Crashes and pauses are undone after 0.5-3 s. Returns ``[(at_s, fault, broker), ...]``."""
        rng = random.Random(self.wire.seed if seed is None else seed)
        brokers = sorted(self.wire.ports)
        plan: list[tuple[float, str, int]] = []
        t = 0.0
        while True:
            t += rng.expovariate(1.0 / mean_interval_s)
            if t >= duration_s:
                break
            fault = rng.choice(list(faults))
            broker = rng.choice(brokers)
            plan.append((round(t, 3), fault, broker))
            undo = {"crash": "restart", "pause": "resume"}.get(fault)
            if undo:
                plan.append((round(t + rng.uniform(0.5, 3.0), 3), undo, broker))
        plan.sort()
        for at, fault, broker in plan:
            timer = threading.Timer(at, self._apply, (fault, broker))
            timer.daemon = True
            self._timers.append(timer)
            timer.start()
        return plan

    def _apply(self, fault: str, broker: int) -> None:
        if self.wire._stopping:
            return
        action = getattr(self, fault)
        action(broker) if fault not in ("lose_next_ack", "lose_next_request") else action(broker_id=broker)

    def cancel(self) -> None:
        """Stop a running schedule (stopping the cluster does this too)."""
        for timer in self._timers:
            timer.cancel()
        for timer in self._timers:
            if timer.is_alive():
                timer.join(1)
        self._timers.clear()
