"""Requests that expect one answer: correlation ids, timeouts, who takes each answer, and the
blocking "ask the coordinator, retry while it moves" loop every client needs.

A client keeps *one* correlation table, ``_pending`` (correlation id -> :class:`InFlight`), as
kafka-python keeps one per connection: every request waiting for an answer is in it, whatever
its kind, until its answer comes, it times out or its connection closes. Who takes the answer:

- the client's :attr:`Requests._RESPONSE_HANDLERS`, a table like the broker's ``HANDLERS``
  (:mod:`course_lib.broker.broker`): the type of the request answered -> ``handler(client,
  in_flight, answer)``. It is keyed by the request, not by the answer, because a timeout or a
  closed connection brings no answer message and the same handler must hear of it;
- otherwise the callback the request was sent with (a coordinator call, a lookup that a
  blocking method waits for): ``on_response(answer)``.

``answer`` is the response message, or an error class when none will come
(``RequestTimedOutError``, ``KafkaConnectionError``).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Callable, ClassVar, NamedTuple

from kafka import errors as Errors

from ..broker.broker import node_name
from ..broker.protocol import CoordinatorRequest, FindCoordinatorRequest

#: answers meaning "ask again, maybe somewhere else"
COORDINATOR_MOVED = (
    Errors.NotCoordinatorError,
    Errors.CoordinatorNotAvailableError,
    Errors.KafkaConnectionError,
    Errors.RequestTimedOutError,
    Errors.ConcurrentTransactionsError,
)


class InFlight(NamedTuple):
    """One request waiting for its answer, in the client's correlation table."""

    node: str  # where it went: a closed connection to it fails the request
    request: Any
    on_response: Callable[[Any], None] | None = None  # None: the client's _RESPONSE_HANDLERS take it
    context: Any = None  # what the handler needs besides the answer (a produce request's batches)


#: how a client takes the answer to one kind of request: ``handler(client, in_flight, answer)``
ResponseHandler = Callable[[Any, InFlight, Any], None]


class Requests:
    """Mixed into a client that has ``_sim``, ``_network``, ``_cluster``, ``node_id``, ``alive``
    and ``config``; the module docstring says who takes which answer."""

    #: request type -> its handler (see the module docstring); a client's own table, empty here
    _RESPONSE_HANDLERS: ClassVar[dict[type, ResponseHandler]] = {}

    config: dict  # the client's resolved configuration (set by the client before _attach)
    _pending: dict[int, InFlight]  # the correlation table: correlation id -> request in flight

    def _attach(self, kind: str) -> None:
        """Join the simulated cluster named by ``bootstrap_servers`` as a network node."""
        from ..broker.cluster import Cluster
        from .config import ConfigurationError

        cluster = self.config["bootstrap_servers"]
        if not isinstance(cluster, Cluster):
            name = f"Kafka{kind.title()}"
            raise ConfigurationError(
                f"the simulator's {name} needs bootstrap_servers=<a course_lib Cluster>, got {cluster!r}. "
                f"For a real cluster use kafka-python: from kafka import {name}."
            )
        self._cluster, self._sim, self._network, self._history = cluster, cluster.sim, cluster.network, cluster.history
        client_id = self.config["client_id"]
        self.node_id = (
            client_id if client_id and not client_id.startswith("kafka-python-") else cluster.new_client_id(kind)
        )
        self.config["client_id"] = self.node_id
        self.alive = True
        self._closed = False
        self._init_requests()
        self._network.add(self)  # a client is a node: node_id, receive, on_disconnect
        cluster.clients.append(self)

    def _init_requests(self) -> None:
        # bootstrap_servers names every broker; after the first metadata answer the client knows
        # only the brokers it listed (the live ones) - kafka-python 3.0.12 has no
        # metadata.recovery.strategy=rebootstrap (Java's default since 4.0, KIP-899): if all of
        # them die it asks them, in vain, until one comes back
        self._known_brokers: tuple = tuple(sorted(self._cluster.brokers))
        self._pending = {}
        self._corr = 0
        self._coordinators: dict[tuple, int | None] = {}  # (key type, key) -> broker id

    def _next_corr(self) -> int:
        self._corr += 1
        return self._corr

    def _send(self, node: str, msg, on_response, timeout_ms=None) -> int:
        """Send ``msg``; ``on_response`` takes its answer, or the error class when none comes within
        ``timeout_ms`` (default ``request_timeout_ms``)."""
        self._pending[msg.corr] = InFlight(node, msg, on_response)
        self._network.send(self.node_id, node, msg)
        self._sim.schedule(timeout_ms or self.config["request_timeout_ms"], self._request_expired, msg.corr)
        return msg.corr

    def _take_answer(self, in_flight: InFlight, answer) -> None:
        """Hand ``answer`` (a response, or an error class) to whoever takes it (module docstring)."""
        handler = self._RESPONSE_HANDLERS.get(type(in_flight.request))
        if handler is not None:
            handler(self, in_flight, answer)
        else:  # a request outside the table was sent with its callback
            assert in_flight.on_response is not None, f"nobody takes the answer to {type(in_flight.request).__name__}"
            in_flight.on_response(answer)

    def _request_expired(self, corr) -> None:
        in_flight = self._pending.pop(corr, None)
        if in_flight is not None and self.alive:
            self._take_answer(in_flight, Errors.RequestTimedOutError)

    def receive(self, src: str, msg) -> None:
        """A response arrived; one whose request is no longer in the table (it timed out, or its
        connection closed) is ignored, as kafka-python ignores it."""
        in_flight = self._pending.pop(getattr(msg, "corr", -1), None)
        if in_flight is not None:
            self._take_answer(in_flight, msg)

    def on_disconnect(self, peer: str) -> None:
        """The connection to ``peer`` closed: every request on it fails, in the order it was sent."""
        for corr in [c for c, in_flight in self._pending.items() if in_flight.node == peer]:
            self._take_answer(self._pending.pop(corr), Errors.KafkaConnectionError)

    def _any_broker(self) -> str:
        return node_name(self._sim.rng.choice(self._known_brokers))

    def _learn_brokers(self, brokers) -> None:
        """A metadata answer lists the live brokers: from now on they are the ones to ask."""
        if brokers:
            self._known_brokers = tuple(brokers)

    # ---- coordinators ----------------------------------------------------------------------------
    def _ask_coordinator(self, request: CoordinatorRequest, on_result, timeout_ms=None) -> None:
        """Send ``request`` to its group/transaction coordinator (finding it first);
        ``on_result(error, result)``. A coordinator that moved is forgotten, to be found again."""
        where = request.coordinator_key
        key_type, key = where
        coordinator = self._coordinators.get(where)
        if coordinator is None:

            def found(resp):
                if isinstance(resp, type) or resp.error is not None:
                    return on_result(resp if isinstance(resp, type) else resp.error, None)
                self._coordinators[where] = resp.broker_id
                self._ask_coordinator(request, on_result, timeout_ms)

            self._send(self._any_broker(), FindCoordinatorRequest(self._next_corr(), key, key_type), found)
            return

        def answered(resp):
            error, result = (resp, None) if isinstance(resp, type) else (resp.error, resp.result)
            if error in COORDINATOR_MOVED and error is not Errors.ConcurrentTransactionsError:
                self._coordinators[where] = None
            on_result(error, result)

        self._send(node_name(coordinator), replace(request, corr=self._next_corr()), answered, timeout_ms)

    def _call_coordinator(self, request: CoordinatorRequest, timeout_ms=None):
        """Blocking: retry while the coordinator moves or is busy; other errors are raised. Without
        ``timeout_ms`` it keeps trying for three request timeouts (kafka-python would wait forever)."""
        deadline = self._sim.now + (timeout_ms or 3 * self.config["request_timeout_ms"])
        last = Errors.KafkaTimeoutError
        while self._sim.now < deadline:
            box: dict = {}
            self._ask_coordinator(request, lambda e, r: box.update(error=e, result=r))
            self._sim.run_until(lambda: "error" in box, max(deadline - self._sim.now, 1))
            if "error" not in box:
                break
            if box["error"] is None:
                return box["result"]
            last = box["error"]
            if last not in COORDINATOR_MOVED:
                raise last(f"{request.api}: {last.__name__}")
            self._sim.run_for(self.config["retry_backoff_ms"])
        raise Errors.KafkaTimeoutError(f"{request.api} did not complete in time (last error: {last.__name__})")
