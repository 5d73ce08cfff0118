"""A Kafka-protocol-aware TCP proxy that can lose one produce acknowledgement for real.

The lost ACK is the classic way an at-least-once producer writes a duplicate: the broker appended
the batch and answered, the answer never arrived, the producer retried. Generic chaos proxies cut
bytes anywhere and break Kafka's framing; this one understands just enough of the protocol:

- every Kafka message is a 4-byte big-endian length followed by that many bytes;
- a request header starts ``api_key:int16, api_version:int16, correlation_id:int32``;
- a response header starts ``correlation_id:int32`` - so the proxy remembers, per connection,
  which api_key each correlation id belongs to (Produce is api_key 0).

``drop_next_produce_response()`` lets the broker append a batch, swallows its response and closes
the client's connection: kafka-python sees a disconnect, cannot know whether the write happened,
and retries. ``drop_next_request(api_key=0)`` swallows a request before the broker sees it (and
cuts the connection). ``spoil_next_produce_request()`` corrupts one produce request so the broker
refuses it with a retriable error while the requests behind it succeed: reordering for real.

Each broker's *client* listener sits behind one proxy and advertises the proxy's port, so clients
reconnect through it; replication between brokers uses another listener and never crosses it.
All proxies share one asyncio loop in a daemon thread, so they end with the Python process.

Taught in notebooks/09_real_kafka_lab.
"""

from __future__ import annotations

import asyncio
import struct
import threading
from collections import deque
from dataclasses import dataclass, field

from kafka.protocol.api_key import ApiKey

from course_lib.clusters.faults import mechanism_options
from course_lib.history import Nemesis

#: the Produce request's API key (0), as kafka-python's protocol names it
PRODUCE = ApiKey.Produce


class _LoopThread:
    """One asyncio loop in a daemon thread, shared by every proxy of the process."""

    _instance: "_LoopThread | None" = None
    _lock = threading.Lock()

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="kafka-proxy-loop", daemon=True)
        self.thread.start()

    @classmethod
    def get(cls) -> "_LoopThread":
        with cls._lock:
            if cls._instance is None or not cls._instance.thread.is_alive():
                cls._instance = cls()
            return cls._instance

    def run(self, coro, timeout: float = 30.0):
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)


@dataclass
class ProxyStats:
    connections: int = 0
    requests: dict[int, int] = field(default_factory=dict)  # api_key -> count forwarded
    dropped_responses: list[tuple[int, int]] = field(default_factory=list)  # (api_key, corr id)
    dropped_requests: list[tuple[int, int]] = field(default_factory=list)
    spoiled_requests: list[tuple[int, int]] = field(default_factory=list)


class KafkaProxy:
    """Forward ``127.0.0.1:port`` to a broker's client listener, with injectable message loss.

    >>> proxy = KafkaProxy(upstream_port=9092)            # doctest: +SKIP
    >>> proxy.drop_next_produce_response()                # doctest: +SKIP
    """

    def __init__(
        self, upstream_port: int, port: int = 0, upstream_host: str = "127.0.0.1", host: str = "127.0.0.1"
    ) -> None:
        self.upstream = (upstream_host, upstream_port)
        self.host = host
        self.stats = ProxyStats()
        self._lock = threading.Lock()
        self._drop_responses: dict[int, int] = {}  # api_key -> how many more to drop
        self._drop_requests: dict[int, int] = {}
        self._spoil_requests: deque[bool] = deque()  # one per request to refuse: is it followed?
        self._writers: set[asyncio.StreamWriter] = set()
        self._lt = _LoopThread.get()
        self._server = self._lt.run(asyncio.start_server(self._handle, host, port))
        self.port: int = self._server.sockets[0].getsockname()[1]

    # ---- fault controls (thread-safe; called from the notebook's thread) -----------------
    def drop_next_produce_response(self, count: int = 1) -> None:
        """Swallow the next ``count`` Produce responses, closing the client connection each time."""
        with self._lock:
            self._drop_responses[PRODUCE] = self._drop_responses.get(PRODUCE, 0) + count

    def spoil_next_produce_request(self, count: int = 1, followed: bool = False) -> None:
        """Fail the next ``count`` Produce requests, keeping the connection: the proxy corrupts the
        CRC of the request's record batch, so the broker refuses it (CORRUPT_MESSAGE, nothing
        appended), turns that error in the response into NOT_ENOUGH_REPLICAS, which producers
        retry (kafka-python does not retry a corrupt message), and delivers it late: once the
        answer to a produce request behind it has come, and, unless ``followed`` (the producer
        will send one behind it), after :data:`SPOILED_ANSWER_DELAY_S` at the latest. The requests
        sent meanwhile on the same connection are appended first: reordering for real."""
        with self._lock:
            self._spoil_requests.extend([followed] * count)

    def drop_next_request(self, api_key: int = PRODUCE, count: int = 1) -> None:
        """Swallow the next ``count`` requests of ``api_key`` (the broker never sees them)."""
        with self._lock:
            self._drop_requests[api_key] = self._drop_requests.get(api_key, 0) + count

    def arm(self, fault: str, followed: bool = False) -> None:
        """Arm the message fault ``fault`` (a history operation, :class:`~course_lib.history.Nemesis`)
        for the next produce: how this proxy loses an answer, loses a request, has one refused
        (``followed``: :meth:`spoil_next_produce_request`)."""
        MECHANISMS[fault](self, **mechanism_options(followed))

    def close(self) -> None:
        if self._server is None:
            return
        server, self._server = self._server, None

        async def shut_down() -> None:
            # on the loop's own thread: asyncio servers are not thread-safe, and closing one from
            # another thread raced with connections detaching (a TypeError in Server._wakeup)
            self._close_all()
            server.close()
            await server.wait_closed()

        try:
            self._lt.run(shut_down(), timeout=5)
        except Exception:  # already closing with the loop; nothing left to leak
            pass

    def __enter__(self) -> "KafkaProxy":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # ---- internals (run on the loop thread) -------------------------------------------
    def _close_all(self) -> None:
        for w in list(self._writers):
            w.close()

    def _take_spoil(self) -> bool | None:
        """None: this produce goes through; else it is refused, and whether a produce follows it."""
        with self._lock:
            return self._spoil_requests.popleft() if self._spoil_requests else None

    def _take(self, table: dict[int, int], api_key: int) -> bool:
        with self._lock:
            left = table.get(api_key, 0)
            if left <= 0:
                return False
            table[api_key] = left - 1
            return True

    async def _open_upstream(self, client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter):
        """The broker connection for a new client connection (this proxy's one broker)."""
        return await asyncio.open_connection(*self.upstream)

    async def _handle(self, client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter):
        self.stats.connections += 1
        try:
            up_r, up_w = await self._open_upstream(client_r, client_w)
        except (OSError, asyncio.IncompleteReadError, ValueError):
            # broker down (or a bad SOCKS request): the client sees a closed connection
            client_w.close()
            return
        self._writers.update((client_w, up_w))
        in_flight: dict[int, int] = {}  # correlation_id -> api_key, for this connection only
        spoiled_corrs: dict[int, bool] = {}  # refused request -> whether a produce follows it

        def close_both():
            client_w.close()
            up_w.close()

        async def requests():
            while True:
                frame = await _read_frame(client_r)
                if frame is None:
                    return
                api_key, _version, corr = struct.unpack_from(">hhi", frame, 4)
                if self._take(self._drop_requests, api_key):
                    self.stats.dropped_requests.append((api_key, corr))
                    return  # lost on the way: the broker never sees it, the client gets cut off
                followed = self._take_spoil() if api_key == PRODUCE else None
                if followed is not None:
                    spoiled = _spoil_batch_crc(frame)
                    if spoiled is not None:
                        frame = spoiled
                        spoiled_corrs[corr] = followed
                        self.stats.spoiled_requests.append((api_key, corr))
                in_flight[corr] = api_key
                self.stats.requests[api_key] = self.stats.requests.get(api_key, 0) + 1
                up_w.write(frame)
                await up_w.drain()

        async def responses():
            # A producer retries a batch only after the answer comes, and sends nothing of that
            # partition while the retry waits. Holding a refused request's answer back (and, in
            # order, the ones behind it) until the answer to a produce request behind it has come
            # lets the later sends be appended first - as when a lost request is noticed only at its
            # timeout. Released on that state alone when the fault says a produce follows; else
            # SPOILED_ANSWER_DELAY_S ends a hold no produce may end (an idempotent producer sends
            # none while one is in flight). A time alone failed: on a busy machine the request
            # behind came later than the time, and the order was kept.
            loop = asyncio.get_running_loop()
            held: list[bytes] = []
            release_at: float | None = None  # None: no hold, or one only a produce behind it ends
            reading: asyncio.Future | None = None  # kept across a timeout, so no answer is cut

            async def release():
                nonlocal release_at
                release_at = None
                for answer in held:
                    client_w.write(answer)
                held.clear()
                await client_w.drain()

            try:
                while True:
                    reading = reading or asyncio.ensure_future(_read_frame(up_r))
                    done, _ = await asyncio.wait(
                        {reading}, timeout=max(0.0, release_at - loop.time()) if release_at is not None else None
                    )
                    if not done:
                        await release()
                        continue
                    frame, reading = reading.result(), None
                    if frame is None:
                        return
                    (corr,) = struct.unpack_from(">i", frame, 4)
                    api_key = in_flight.pop(corr, -1)
                    refused = corr in spoiled_corrs
                    if refused:
                        followed = spoiled_corrs.pop(corr)
                        frame = _retriable_error(frame)
                    if self._take(self._drop_responses, api_key):
                        # The broker has done the work; the client will never hear about it.
                        self.stats.dropped_responses.append((api_key, corr))
                        return
                    if refused and not held and not followed:
                        release_at = loop.time() + SPOILED_ANSWER_DELAY_S
                    if refused or held:
                        held.append(frame)
                        if api_key == PRODUCE and not refused:
                            await release()
                        continue
                    client_w.write(frame)
                    await client_w.drain()
            finally:
                if reading is not None:
                    reading.cancel()

        tasks = [asyncio.ensure_future(requests()), asyncio.ensure_future(responses())]
        try:
            await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for t in tasks:
                t.cancel()
            close_both()
            self._writers.discard(client_w)
            self._writers.discard(up_w)


#: how the proxy injects each message fault of :mod:`course_lib.clusters.faults`: a lost answer
#: closes the client's connection (it retries at once); a lost request cuts it too (a TCP
#: connection cannot lose one request and carry on); a refused one keeps it
MECHANISMS = {
    Nemesis.LOSE_NEXT_ACK: KafkaProxy.drop_next_produce_response,
    Nemesis.LOSE_NEXT_REQUEST: KafkaProxy.drop_next_request,  # a produce request
    Nemesis.REFUSE_NEXT_REQUEST: KafkaProxy.spoil_next_produce_request,
}


class SocksKafkaProxy(KafkaProxy):
    """The same proxy for a cluster run elsewhere: one SOCKS5 endpoint for every broker.

    A learner on a shared cluster cannot change what the brokers advertise, so a proxy per
    broker would be bypassed after the first metadata answer. kafka-python can send every
    connection through a SOCKS5 proxy (``proxy_url='socks5://host:port'``): then each
    connection tells this proxy which broker it wants, and the Kafka framing behind the SOCKS
    handshake - SASL login included, passed through untouched - is relayed with the same
    fault controls. Only this learner's clients use it; the brokers and the other learners
    never see a difference.
    """

    def __init__(self, port: int = 0, host: str = "127.0.0.1") -> None:
        super().__init__(upstream_port=0, port=port, host=host)

    @property
    def url(self) -> str:
        return f"socks5://{self.host}:{self.port}"

    async def _open_upstream(self, client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter):
        # RFC 1928: greeting (version 5, methods) -> choose "no authentication"
        version, n = await client_r.readexactly(2)
        methods = await client_r.readexactly(n)
        if version != 5 or 0 not in methods:
            client_w.write(b"\x05\xff")
            raise ValueError("not a SOCKS5 client offering 'no authentication'")
        client_w.write(b"\x05\x00")
        # CONNECT request: version, command 1, reserved, address type, address, port
        version, command, _, atyp = await client_r.readexactly(4)
        if atyp == 1:
            host = ".".join(str(b) for b in await client_r.readexactly(4))
        elif atyp == 3:
            (length,) = await client_r.readexactly(1)
            host = (await client_r.readexactly(length)).decode()
        elif atyp == 4:
            import ipaddress

            host = str(ipaddress.IPv6Address(await client_r.readexactly(16)))
        else:
            raise ValueError(f"SOCKS address type {atyp} unknown")
        (port,) = struct.unpack(">H", await client_r.readexactly(2))
        if version != 5 or command != 1:
            client_w.write(b"\x05\x07\x00\x01" + bytes(6))  # command not supported
            raise ValueError("only SOCKS5 CONNECT is supported")
        try:
            upstream = await asyncio.open_connection(host, port)
        except OSError:
            client_w.write(b"\x05\x05\x00\x01" + bytes(6))  # connection refused
            raise
        client_w.write(b"\x05\x00\x00\x01" + bytes(6))  # succeeded (bound address unused)
        await client_w.drain()
        return upstream


def _spoil_batch_crc(frame: bytes) -> bytes | None:
    """The frame with the CRC of its first v2 record batch inverted, or None if none is found.

    A v2 batch starts ``baseOffset:int64, batchLength:int32, partitionLeaderEpoch:int32,
    magic:int8 (=2), crc:uint32`` and the CRC-32C covers everything after the CRC. Rather than
    parse every Produce request version, look for the spot where those fields are consistent.
    """
    from kafka.record.util import calc_crc32c

    for start in range(4, len(frame) - 61):
        if frame[start + 16] != 2:
            continue
        (length,) = struct.unpack_from(">i", frame, start + 8)
        end = start + 12 + length
        if length < 49 or end > len(frame):
            continue
        (crc,) = struct.unpack_from(">I", frame, start + 17)
        if calc_crc32c(frame[start + 21 : end]) == crc:
            return frame[: start + 17] + struct.pack(">I", crc ^ 0xFFFFFFFF) + frame[start + 21 :]
    return None


CORRUPT_MESSAGE, NOT_ENOUGH_REPLICAS = 2, 19
SPOILED_ANSWER_DELAY_S = 0.3


def _retriable_error(frame: bytes) -> bytes:
    """A Produce response with its CORRUPT_MESSAGE partition error turned into NOT_ENOUGH_REPLICAS.

    The partition entry is ``index:int32, error_code:int16``; the first small index followed by
    error 2 after the header is it (a one-partition request, as the lab's producers send)."""
    for i in range(8, len(frame) - 6):
        (index, code) = struct.unpack_from(">ih", frame, i)
        if code == CORRUPT_MESSAGE and 0 <= index < 10_000:
            return frame[: i + 4] + struct.pack(">h", NOT_ENOUGH_REPLICAS) + frame[i + 6 :]
    return frame


async def _read_frame(reader: asyncio.StreamReader) -> bytes | None:
    """One length-prefixed Kafka message (prefix included), or None when the peer is gone."""
    try:
        head = await reader.readexactly(4)
        (size,) = struct.unpack(">i", head)
        return head + await reader.readexactly(size)
    except (asyncio.IncompleteReadError, ConnectionError, OSError):
        return None
