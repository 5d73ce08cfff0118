"""The network between clients, brokers and the controller: latency, and the faults a
nemesis injects.

Links are FIFO, like the TCP connections Kafka uses: a message never overtakes an earlier one
on the same ``(src, dst)`` link, even with random jitter. Faults:

- ``drop_next(src, dst, kind)`` - lose the next matching message (``kind="produce_response"``
  is the lost ACK); with ``close=True`` the receiver also sees its connection close, which is
  what the real lab's proxy does;
- ``delay(src, dst, extra_ms)`` - a slow link;
- ``isolate(node)`` / ``cut(a, b)`` - silence, as in a network partition: requests vanish and
  the sender only finds out through its own timeouts;
- ``heal()`` - undo all of the above.

A message to a *crashed* node is different from one to an isolated node: the host is still up,
so the sender's connection is refused or reset and it hears about it after one latency
(``on_disconnect``), instead of waiting for a timeout.

Taught in notebooks/03_retries_ordering_duplicates.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Protocol, Union

#: a node a fault aims at: its name, any node a predicate accepts (e.g. every connection of one
#: client over the wire, :mod:`course_lib.wire.nemesis`), or None for any node
Endpoint = Union[str, Callable[[str], bool], None]


class Node(Protocol):
    node_id: str
    alive: bool

    def receive(self, src: str, msg: Any) -> None: ...

    def on_disconnect(self, peer: str) -> None: ...


def _is(endpoint: Endpoint, node: str) -> bool:
    if endpoint is None:
        return True
    return endpoint == node if isinstance(endpoint, str) else endpoint(node)


@dataclass
class DropRule:
    src: Endpoint
    dst: Endpoint
    kind: str | None
    count: int = 1
    close: bool = False

    def matches(self, src: str, dst: str, kind: str) -> bool:
        return _is(self.src, src) and _is(self.dst, dst) and (self.kind is None or self.kind == kind)


@dataclass
class Trigger:
    """Run ``action(msg)`` right after a matching message is sent (a nemesis hook)."""

    src: Endpoint
    dst: Endpoint
    kind: str | None
    action: object
    count: int = 1

    def matches(self, src: str, dst: str, kind: str) -> bool:
        return DropRule.matches(self, src, dst, kind)  # type: ignore[arg-type]  # same three fields


@dataclass(frozen=True, slots=True)
class TraceEntry:
    """One message on the wire, for space-time diagrams."""

    sent_ms: float
    delivered_ms: float | None
    src: str
    dst: str
    kind: str
    label: str
    fate: str  # delivered | dropped | partitioned | refused


class Network:
    """Delivers messages between registered nodes after ``latency_ms`` + up to ``jitter_ms``."""

    def __init__(self, sim, latency_ms: float = 1.0, jitter_ms: float = 0.5, trace: bool = False):
        if latency_ms < 0 or jitter_ms < 0:
            raise ValueError("latency_ms and jitter_ms must be >= 0")
        self.sim = sim
        self.latency_ms = latency_ms
        self.jitter_ms = jitter_ms
        self.loss_rate = 0.0  # probability of losing any message (random-fault schedules)
        self.nodes: dict[str, Node] = {}
        self._link_clock: dict[tuple[str, str], float] = {}
        self._extra_ms: dict[tuple[str, str], float] = {}
        self._rules: list[DropRule] = []
        self._isolated: set[str] = set()
        self._cut: set[tuple[str, str]] = set()
        self._peers: dict[str, set[str]] = {}  # dst -> nodes that opened a connection to it
        self._triggers: list[Trigger] = []
        self.trace: list[TraceEntry] | None = [] if trace else None
        self.dropped = 0

    def add(self, node: Node) -> None:
        if node.node_id in self.nodes:
            raise ValueError(f"a node named {node.node_id!r} is already on the network")
        self.nodes[node.node_id] = node

    # ---- faults -------------------------------------------------------------------------
    def drop_next(
        self,
        src: Endpoint = None,
        dst: Endpoint = None,
        kind: str | None = None,
        count: int = 1,
        close: bool = False,
    ) -> DropRule:
        """Lose the next ``count`` messages matching ``(src, dst, kind)``; None matches any, and
        a predicate every node it accepts."""
        rule = DropRule(src, dst, kind, count, close)
        self._rules.append(rule)
        return rule

    def armed_drops(self, kind: str | None = None) -> int:
        """How many messages (of ``kind``) the ``drop_next`` rules still wait to lose."""
        return sum(r.count for r in self._rules if kind is None or r.kind == kind)

    def after_send(
        self, action, src: str | None = None, dst: str | None = None, kind: str | None = None, count: int = 1
    ) -> Trigger:
        """Call ``action(msg)`` just after the next ``count`` matching messages leave
        (e.g. crash a leader right after it sends an ACK). The message itself is on its way."""
        trigger = Trigger(src, dst, kind, action, count)
        self._triggers.append(trigger)
        return trigger

    def delay(self, src: str, dst: str, extra_ms: float, both_ways: bool = True) -> None:
        self._extra_ms[(src, dst)] = extra_ms
        if both_ways:
            self._extra_ms[(dst, src)] = extra_ms

    def isolate(self, node_id: str) -> None:
        self._isolated.add(node_id)

    def cut(self, a: str, b: str) -> None:
        self._cut.update({(a, b), (b, a)})

    def heal(self) -> None:
        self._rules.clear()
        self._triggers.clear()
        self._isolated.clear()
        self._cut.clear()
        self._extra_ms.clear()
        self.loss_rate = 0.0

    def reachable(self, src: str, dst: str) -> bool:
        return src not in self._isolated and dst not in self._isolated and (src, dst) not in self._cut

    # ---- delivery -----------------------------------------------------------------------
    def send(self, src: str, dst: str, msg: Any) -> None:
        sim = self.sim
        link = (src, dst)
        last = self._link_clock.get(link)
        if last is None:  # a new connection: remember who to tell if dst dies
            self._peers.setdefault(dst, set()).add(src)
            last = 0.0
        if (self._isolated or self._cut) and not self.reachable(src, dst):
            return self._drop(src, dst, msg, "partitioned")
        if self._rules:
            kind = msg.kind
            for rule in self._rules:
                if rule.matches(src, dst, kind):
                    rule.count -= 1
                    if rule.count <= 0:
                        self._rules.remove(rule)
                    if rule.close:
                        self._notify_disconnect(dst, src)
                    return self._drop(src, dst, msg, "dropped")
        if self.loss_rate and sim.rng.random() < self.loss_rate:
            return self._drop(src, dst, msg, "dropped")
        delay = self.latency_ms
        if self._extra_ms:
            delay += self._extra_ms.get(link, 0.0)
        if self.jitter_ms:
            delay += sim.rng.random() * self.jitter_ms
        at = sim.now + delay
        if at < last:
            at = last
        self._link_clock[link] = at
        sim.schedule(at - sim.now, self._deliver, src, dst, msg, sim.now)
        if self._triggers:
            self._fire_triggers(src, dst, msg)

    def _fire_triggers(self, src: str, dst: str, msg: Any) -> None:
        for trigger in list(self._triggers):
            if trigger.matches(src, dst, msg.kind):
                trigger.count -= 1
                if trigger.count <= 0:
                    self._triggers.remove(trigger)
                self.sim.schedule(0, trigger.action, msg)

    def _deliver(self, src: str, dst: str, msg: Any, sent_ms: float) -> None:
        node = self.nodes[dst]
        if (self._isolated or self._cut) and not self.reachable(src, dst):
            return self._drop(src, dst, msg, "partitioned")
        if not node.alive:
            # The host answers for a dead process: connection refused / reset.
            self._notify_disconnect(src, dst)
            return self._drop(src, dst, msg, "refused")
        if self.trace is not None:
            self.trace.append(TraceEntry(sent_ms, self.sim.now, src, dst, msg.kind, _label(msg), "delivered"))
        node.receive(src, msg)

    def _drop(self, src: str, dst: str, msg: Any, fate: str) -> None:
        self.dropped += 1
        if self.trace is not None:
            self.trace.append(TraceEntry(self.sim.now, None, src, dst, msg.kind, _label(msg), fate))

    def _notify_disconnect(self, node_id: str, peer: str) -> None:
        """Tell ``node_id`` its connection to ``peer`` closed - after whatever ``peer`` had
        already sent it, as TCP delivers data before the FIN/RST."""
        node = self.nodes.get(node_id)
        if node is not None and node.alive and self.reachable(node_id, peer):
            link = (peer, node_id)
            at = max(self.sim.now + self.latency_ms, self._link_clock.get(link, 0.0))
            self._link_clock[link] = at
            self.sim.schedule(at - self.sim.now, _disconnected, node, peer)

    def close_connection(self, node_id: str, peer: str) -> None:
        """``node_id`` closes its connection to ``peer``: ``peer`` sees it close."""
        self._notify_disconnect(peer, node_id)

    def connections_closed(self, node_id: str) -> None:
        """``node_id``'s process died, or its program closed its sockets: every node it opened a
        connection to sees that connection close (its operating system sends the FIN)."""
        for dst in sorted(dst for dst, srcs in self._peers.items() if node_id in srcs):
            self._peers[dst].discard(node_id)
            self._notify_disconnect(dst, node_id)

    def node_down(self, node_id: str) -> None:
        """``node_id``'s process died: everyone connected to it sees the connection close."""
        for peer in sorted(self._peers.get(node_id, ())):
            self._notify_disconnect(peer, node_id)
        self._peers.pop(node_id, None)


def _disconnected(node, peer: str) -> None:
    if node.alive:
        node.on_disconnect(peer)


def _label(msg: Any) -> str:
    describe = getattr(msg, "describe", None)
    return describe() if describe else msg.kind
