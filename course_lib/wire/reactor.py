"""The sockets of a wire cluster: one selector thread for every listener and connection.

Each simulated broker has a listening socket on its own free port of 127.0.0.1. The reactor
reads Kafka frames (a 4-byte size, then the request), decodes them with kafka-python's own
protocol classes and hands each request to the simulation thread (``on_request``); answers come
back as encoded bytes through :meth:`Reactor.write`. A frame that cannot be decoded closes that
connection and nothing else. All socket work happens on this one thread; other threads ask it
to do things with :meth:`Reactor.post`, which wakes it through a socket pair.
"""

from __future__ import annotations

import itertools
import logging
import selectors
import socket
import struct
import threading
from collections import deque
from concurrent.futures import Future
from typing import Any, Callable

log = logging.getLogger("course_lib.wire")

#: Kafka's socket.request.max.bytes default: a bigger frame is a protocol error
MAX_FRAME_BYTES = 100 * 1024 * 1024


def run_on(post: Callable[[Callable[[], None]], None], fn: Callable, *args, timeout_s: float) -> Any:
    """``fn(*args)`` run by the thread ``post`` hands work to; its result, or its error raised
    here (after at most ``timeout_s``)."""
    future: Future = Future()

    def run() -> None:
        try:
            future.set_result(fn(*args))
        except BaseException as exc:  # noqa: BLE001 - handed to the caller
            future.set_exception(exc)

    post(run)
    return future.result(timeout_s)


class Connection:
    """One client's TCP connection to one broker."""

    _ids = itertools.count(1)

    def __init__(self, sock: socket.socket, broker_id: int, peer: str):
        self.sock = sock
        self.broker_id = broker_id
        self.peer = peer
        self.conn_id = next(self._ids)
        self.inbuf = bytearray()
        self.outbuf: deque[bytes] = deque()
        self.closed = False
        self.gateway: Any = None  # the simulation side of this connection (set by the simulation thread)
        self.lock = threading.Lock()  # the simulation thread writes answers directly when it can

    def __repr__(self) -> str:
        return f"<Connection {self.conn_id} {self.peer} -> broker {self.broker_id}>"


class Reactor:
    def __init__(
        self,
        host: str,
        on_frame: Callable[[Connection, memoryview], None],
        on_open: Callable[[Connection], None],
        on_close: Callable[[Connection], None],
    ):
        self.host = host
        self._on_frame, self._on_open, self._on_close = on_frame, on_open, on_close
        self._selector = selectors.DefaultSelector()
        self._wake_r, self._wake_w = socket.socketpair()
        self._wake_r.setblocking(False)
        self._selector.register(self._wake_r, selectors.EVENT_READ, None)
        self._posted: deque[Callable[[], None]] = deque()
        self._lock = threading.Lock()
        self.listeners: dict[int, socket.socket] = {}
        self.connections: set[Connection] = set()
        self._stopping = False
        self._thread = threading.Thread(target=self._run, name="wire-reactor", daemon=True)

    # ---- called from any thread ---------------------------------------------------------------
    def start(self) -> None:
        self._thread.start()

    def post(self, fn: Callable[[], None]) -> None:
        """Run ``fn`` on the reactor thread (soon)."""
        with self._lock:
            self._posted.append(fn)
        try:
            self._wake_w.send(b"x")
        except (BlockingIOError, OSError):
            pass  # already awake / shutting down

    def call(self, fn: Callable, *args, timeout_s: float = 10.0):
        """Run ``fn(*args)`` on the reactor thread and wait for its result (or error)."""
        if threading.current_thread() is self._thread or not self._thread.is_alive():
            return fn(*args)
        return run_on(self.post, fn, *args, timeout_s=timeout_s)

    def write(self, conn: Connection, data: bytes) -> None:
        """Send ``data`` on ``conn``: at once from the calling thread when nothing is queued (no
        thread hand-off on the common path), the rest by the reactor when the socket is full."""
        with conn.lock:
            if conn.closed:
                return
            if not conn.outbuf:
                try:
                    sent = conn.sock.send(data)
                except (BlockingIOError, InterruptedError):
                    sent = 0
                except OSError:
                    sent = len(data)  # the reactor sees the broken socket on its next read
                if sent == len(data):
                    return
                data = data[sent:]
            conn.outbuf.append(data)
        self.post(lambda: self._flush(conn))

    def stop(self) -> None:
        """Stop the thread and close every socket - the wake-up pair and the selector whatever
        happens on the way (a test counts the file descriptors)."""
        self._stopping = True
        self.post(lambda: None)
        try:
            if self._thread.is_alive():
                self._thread.join(10)
            for sock in list(self.listeners.values()):
                sock.close()
            self.listeners.clear()
            for conn in list(self.connections):
                self._close(conn, notify=False)
        finally:
            self._selector.close()
            self._wake_r.close()
            self._wake_w.close()

    # ---- listeners (call on the reactor thread, or before start) ----------------------------------
    def listen(self, broker_id: int, port: int = 0) -> int:
        """Open broker ``broker_id``'s listener; port 0 picks a free one (a restart passes the
        old port, which the clients know from metadata)."""
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((self.host, port))
        except OSError:
            sock.close()
            raise
        sock.listen(64)
        sock.setblocking(False)
        self.listeners[broker_id] = sock
        self._selector.register(sock, selectors.EVENT_READ, ("listener", broker_id))
        return sock.getsockname()[1]

    def refuse(self, broker_id: int) -> None:
        """The broker's listener goes: new connections are refused (open ones stay)."""
        sock = self.listeners.pop(broker_id, None)
        if sock is not None:
            self._selector.unregister(sock)
            sock.close()

    def kill_broker(self, broker_id: int) -> None:
        """SIGKILL: the listener goes (new connections are refused) and every connection to the
        broker is reset."""
        self.refuse(broker_id)
        for conn in [c for c in self.connections if c.broker_id == broker_id]:
            self._close(conn, reset=True)

    def close(self, conn: Connection, reset: bool = False, last_words: bytes = b"") -> None:
        """Close ``conn`` (``reset``: RST, as for a killed process); ``last_words`` are sent
        first, in the same TCP segment as the end of the stream where Linux allows (TCP_CORK), so
        the client reads both at once, as from Kafka after a failed login."""
        if last_words and not conn.closed:
            self._send_last(conn, last_words)
        self._close(conn, reset=reset)

    def _send_last(self, conn: Connection, data: bytes) -> None:
        with conn.lock:
            data = b"".join(conn.outbuf) + data
            conn.outbuf.clear()
            try:
                if hasattr(socket, "TCP_CORK"):  # held until the close, which adds the FIN to it
                    conn.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_CORK, 1)
                conn.sock.send(data)  # a short answer: one send fits an empty socket buffer
            except OSError:
                pass  # the client is gone already

    # ---- the loop ------------------------------------------------------------------------------
    def _run(self) -> None:
        while not self._stopping:
            try:
                events = self._selector.select(timeout=1.0)
            except OSError:
                if self._stopping:
                    break
                raise
            for key, mask in events:
                data = key.data
                try:
                    if data is None:
                        self._drain_wakeups()
                    elif isinstance(data, Connection):
                        if mask & selectors.EVENT_READ:
                            self._read(data)
                        if mask & selectors.EVENT_WRITE and not data.closed:
                            self._flush(data)
                    else:
                        self._accept(key.fileobj, data[1])  # type: ignore[arg-type]  # a listener socket
                except Exception:  # noqa: BLE001 - one bad connection must not stop the server
                    log.exception("wire reactor: error on %r", data)
                    if isinstance(data, Connection):
                        self._close(data)
            self._run_posted()

    def _drain_wakeups(self) -> None:
        try:
            while self._wake_r.recv(4096):
                pass
        except (BlockingIOError, InterruptedError):
            pass

    def _run_posted(self) -> None:
        while True:
            with self._lock:
                if not self._posted:
                    return
                fn = self._posted.popleft()
            try:
                fn()
            except Exception:  # noqa: BLE001
                log.exception("wire reactor: posted call failed")

    def _accept(self, listener: socket.socket, broker_id: int) -> None:
        try:
            sock, addr = listener.accept()
        except (BlockingIOError, InterruptedError):
            return
        sock.setblocking(False)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        conn = Connection(sock, broker_id, f"{addr[0]}:{addr[1]}")
        self.connections.add(conn)
        self._selector.register(sock, selectors.EVENT_READ, conn)
        self._on_open(conn)

    def _read(self, conn: Connection) -> None:
        try:
            chunk = conn.sock.recv(1 << 16)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            chunk = b""
        if not chunk:
            return self._close(conn)
        buf = conn.inbuf
        buf += chunk
        pos = 0
        while len(buf) - pos >= 4:
            (size,) = struct.unpack_from(">i", buf, pos)
            if size < 0 or size > MAX_FRAME_BYTES:
                log.warning("wire: %r sent a frame of %d bytes: closing the connection", conn, size)
                return self._close(conn)
            if len(buf) - pos - 4 < size:
                break
            frame = bytes(buf[pos + 4 : pos + 4 + size])
            pos += 4 + size
            self._on_frame(conn, memoryview(frame))
            if conn.closed:
                return
        del buf[:pos]

    def _flush(self, conn: Connection) -> None:
        with conn.lock:
            if conn.closed:
                return
            while conn.outbuf:
                data = conn.outbuf[0]
                try:
                    sent = conn.sock.send(data)
                except (BlockingIOError, InterruptedError):
                    sent = 0
                except OSError:
                    broken = True
                    break
                if sent < len(data):
                    conn.outbuf[0] = data[sent:]
                    self._selector.modify(conn.sock, selectors.EVENT_READ | selectors.EVENT_WRITE, conn)
                    return
                conn.outbuf.popleft()
            else:
                broken = False
                self._selector.modify(conn.sock, selectors.EVENT_READ, conn)
        if broken:
            self._close(conn)

    def _close(self, conn: Connection, reset: bool = False, notify: bool = True) -> None:
        with conn.lock:
            if conn.closed:
                return
            conn.closed = True
        self.connections.discard(conn)
        try:
            self._selector.unregister(conn.sock)
        except (KeyError, ValueError):
            pass
        if reset:  # RST instead of FIN, as the kernel does for a killed process's sockets
            try:
                conn.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            except OSError:
                pass
        conn.sock.close()
        if notify:
            self._on_close(conn)
