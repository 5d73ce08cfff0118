"""The simulation side of one TCP connection: a node on the simulator's network.

A client's connection to broker *b* becomes a node (``wire-<b>-<n>``) that sends the
simulator's own protocol messages to ``broker-<b>`` and gets their answers back, so every
latency, drop rule, partition and crash of :mod:`course_lib.sim.network` applies to it as to the
simulator's own clients. Like a Kafka broker (which mutes a connection while a request is in
progress), it handles one request at a time and answers in order; ``acks=0`` produces get none.
"""

from __future__ import annotations

import logging
from collections import deque
from typing import Any, Callable

from kafka.protocol.api_key import ApiKey

from kafka import errors as Errors

from ..broker.protocol import PartitionResult, ProduceRequest, ProduceResponse, node_name

#: the Produce request's API key (0), as kafka-python's protocol names it
PRODUCE = ApiKey.Produce

#: course_lib.real.proxy.SPOILED_ANSWER_DELAY_S: how late the answer to a refused request that no
#: produce follows comes at the latest (hold_answers)
SPOILED_ANSWER_DELAY_MS = 300

log = logging.getLogger("course_lib.wire")


class Gateway:
    def __init__(self, wire, conn, node_id: str):
        self.wire = wire
        self.conn = conn
        self.node_id = node_id
        self.broker_id = conn.broker_id
        self.broker = node_name(conn.broker_id)
        self.alive = True
        self._queue: deque = deque()
        self._busy = False
        self._corr = 0
        self._pending: dict[int, Callable[[Any], None]] = {}
        self._current: tuple | None = None  # (header, request) being handled
        self.version = 0  # API version of the request being handled
        self._held: list | None = None  # answers written later (see hold_answers)
        self._fallback: int | None = None  # the timer that ends a hold no produce ends (hold_answers)
        self.client_id = None
        #: the SASL login of this connection (None: the cluster has no users, PLAINTEXT)
        self.authenticator = wire.sasl.authenticator() if wire.sasl is not None else None

    def __repr__(self) -> str:
        return f"<Gateway {self.node_id} busy={self._busy} queued={len(self._queue)}>"

    @property
    def idle(self) -> bool:
        """No request in progress: no answer of the broker can be on its way to this connection."""
        return not self._busy

    # ---- requests from the socket -------------------------------------------------------------
    def submit(self, header, request) -> None:
        self._queue.append((header, request))
        if self.client_id is None:
            self.client_id = header.client_id
        self._next()

    def _next(self) -> None:
        from .apis import dispatch

        while self.alive and not self._busy and self._queue:
            self._busy = True
            self._current = self._queue.popleft()
            header, request = self._current
            try:
                dispatch(self, header, request)
            except Exception:  # noqa: BLE001 - a request we cannot handle closes its connection only
                log.exception(
                    "wire: %s failed on %s v%d", self.node_id, type(request).__name__, header.request_api_version
                )
                self.close()

    def reply(self, response, version: int | None = None) -> None:
        """Send the answer to the request in progress (at its version unless told), then start the next one."""
        if not self.alive or self._current is None:
            return
        header = self._current[0]
        self.reply_as(response, header, header.request_api_version if version is None else version)

    def reply_as(self, response, header, version: int) -> None:
        """Answer ``header``'s request with ``response`` encoded at ``version``."""
        response.API_VERSION = version
        response.with_header(correlation_id=header.correlation_id)
        data = bytes(response.encode(header=True, framed=True))
        if self._held is not None:
            self._held.append(data)
            if header.request_api_key == PRODUCE and len(self._held) > 1:
                self._release()  # a produce behind the held one is handled: its state, not a time
        else:
            self.wire.reactor.write(self.conn, data)
        self._done()

    def hold_answers(self, ms: float | None) -> None:
        """Answers from now on are held, and written in order once a produce request behind the one
        in progress has been handled, or after ``ms`` if none comes (an idempotent producer sends
        none while one is in flight; None: the producer will send one): the lab proxy's refused
        request, whose answer comes late while the requests behind it are appended. Released on a
        state, not only a time: with a time alone, a busy machine sent the request behind it too
        late, and the client's retry kept the order."""
        if self._held is None:
            self._held = []
            self._fallback = None if ms is None else self.wire.cluster.sim.schedule(ms, self._release)

    def _release(self) -> None:
        self.wire.cluster.sim.cancel(self._fallback)
        held, self._held, self._fallback = self._held or [], None, None
        if self.alive:
            for data in held:
                self.wire.reactor.write(self.conn, data)

    def no_reply(self) -> None:
        """acks=0: the request is done without an answer."""
        self._done()

    def _done(self) -> None:
        self._current = None
        self._busy = False
        self._next()

    # ---- the simulated network ------------------------------------------------------------------
    def next_corr(self) -> int:
        self._corr += 1
        return self._corr

    def ask(self, msg, on_answer: Callable[[Any], None]) -> None:
        """Send ``msg`` (a simulator message with a ``corr``) to this connection's broker."""
        self._pending[msg.corr] = on_answer
        self._send(msg)

    def tell(self, msg) -> None:
        """Send without expecting an answer (acks=0)."""
        self._send(msg)

    def _send(self, msg) -> None:
        """The request path from the API handlers to the broker: the message faults of the
        connection act here, so no handler knows of them - a lost request or answer is the
        simulated network's (its drop rules on this link), a refused one this gateway's."""
        if isinstance(msg, ProduceRequest) and self._refused(msg):
            return
        self.wire.cluster.network.send(self.node_id, self.broker, msg)

    def _refused(self, request: ProduceRequest) -> bool:
        """``refuse_next_request``'s hook: whether the nemesis armed this broker to refuse this
        produce (which carries the batches that decoded and were authorized). If so the broker
        never sees it; it is answered here with a retriable error, and that answer and those behind
        it are held (:meth:`hold_answers`) while the requests behind it are appended - the lab
        proxy's refused request (``course_lib.real.proxy``: the broker refuses a spoiled CRC).
        An ``acks=0`` request has no answer to carry the error: its connection closes, as Kafka
        closes it after a failed ``acks=0`` produce."""
        followed = self.wire.nemesis.take_refused(self.broker_id)
        if followed is None:
            return False
        if request.acks == 0:
            self.close()
            return True
        self.hold_answers(None if followed else SPOILED_ANSWER_DELAY_MS)
        refusal = PartitionResult(Errors.NotEnoughReplicasError)
        self.receive(self.broker, ProduceResponse(request.corr, dict.fromkeys(request.batches, refusal)))
        return True

    def receive(self, src: str, msg) -> None:
        callback = self._pending.pop(getattr(msg, "corr", -1), None)
        if callback is not None and self.alive:
            callback(msg)

    def on_disconnect(self, peer: str) -> None:
        """The broker closed the connection (acks=0 error, a dropped answer with close=True)."""
        if peer == self.broker:
            self.close()

    def close(self, last_words: bytes = b"") -> None:
        if self.alive:
            self.alive = False
            self._pending.clear()
            self._queue.clear()
            self.wire.reactor.post(lambda: self.wire.reactor.close(self.conn, last_words=last_words))

    def reply_and_close(self, response) -> None:
        """Answer the request in progress and close the connection right behind the answer, in one
        step of the reactor, as Kafka does after a failed login (the client reads both at once)."""
        if not self.alive or self._current is None:
            return
        header = self._current[0]
        response.API_VERSION = header.request_api_version
        response.with_header(correlation_id=header.correlation_id)
        data = bytes(response.encode(header=True, framed=True))
        self.close(last_words=data)

    def socket_closed(self) -> None:
        """The client went away (closed its socket, or its process died and its operating system
        did): forget everything in progress; the share sessions it carried end, and the brokers
        release what their members held."""
        self.alive = False
        self._pending.clear()
        self._queue.clear()
        self.wire.share_sessions.closed(self.node_id)
        self.wire.cluster.network.connections_closed(self.node_id)
