"""Requests that expect one answer: correlation ids, timeouts, callbacks, and the blocking
"ask the coordinator, retry while it moves" loop both clients need."""

from __future__ import annotations

from dataclasses import replace

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


class Requests:
    """Mixed into a client that has ``_sim``, ``_network``, ``_cluster``, ``node_id``, ``alive``
    and ``config``. Callbacks get the response message, or an error class on timeout/disconnect."""

    config: dict  # the client's resolved configuration (set by the client before _attach)
    _pending: dict  # correlation id -> (deadline handle, callback)

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
        self._network.add(self)  # type: ignore[arg-type]  # a client is a node: node_id, receive, on_disconnect
        cluster.clients.append(self)

    def _init_requests(self) -> None:
        # bootstrap_servers names every broker; after the first metadata answer the client knows
        # only the brokers it listed (the live ones) - kafka-python 3.0.12 has no
        # metadata.recovery.strategy=rebootstrap (Java's default since 4.0, KIP-899): if all of
        # them die it asks them, in vain, until one comes back
        self._known_brokers: tuple = tuple(sorted(self._cluster.brokers))
        self._pending: dict[int, tuple] = {}
        self._corr = 0
        self._coordinators: dict[tuple, int | None] = {}  # (key type, key) -> broker id

    def _next_corr(self) -> int:
        self._corr += 1
        return self._corr

    def _send(self, node: str, msg, on_response, timeout_ms=None) -> int:
        self._pending[msg.corr] = (node, on_response)
        self._network.send(self.node_id, node, msg)
        self._sim.schedule(timeout_ms or self.config["request_timeout_ms"], self._request_expired, msg.corr)
        return msg.corr

    def _request_expired(self, corr) -> None:
        entry = self._pending.pop(corr, None)
        if entry is not None and self.alive:
            entry[1](Errors.RequestTimedOutError)

    def _answer(self, msg) -> bool:
        entry = self._pending.pop(getattr(msg, "corr", -1), None)
        if entry is None:
            return False
        entry[1](msg)
        return True

    def _fail_requests_to(self, peer: str) -> None:
        for corr in [c for c, (node, _) in self._pending.items() if node == peer]:
            _, callback = self._pending.pop(corr)
            callback(Errors.KafkaConnectionError)

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
