"""The lost-ACK proxy against a fake broker: framing, correlation ids, dropping one response.

No JVM needed: a tiny framed echo server plays the broker.
"""

import socket
import struct
import threading

import pytest

from course_lib.real.proxy import KafkaProxy


def _request(api_key: int, corr: int, body: bytes = b"x") -> bytes:
    payload = struct.pack(">hhi", api_key, 9, corr) + body
    return struct.pack(">i", len(payload)) + payload


def _recv_frame(sock: socket.socket) -> bytes | None:
    head = _recv_exact(sock, 4)
    if head is None:
        return None
    (size,) = struct.unpack(">i", head)
    return _recv_exact(sock, size)


def _recv_exact(sock, n):
    buf = b""
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            return None
        buf += chunk
    return buf


@pytest.fixture
def fake_broker():
    """Answers every request with a response carrying the same correlation id."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen()
    seen = []

    def serve():
        while True:
            try:
                conn, _ = srv.accept()
            except OSError:
                return
            threading.Thread(target=handle, args=(conn,), daemon=True).start()

    def handle(conn):
        with conn:
            while (frame := _recv_frame(conn)) is not None:
                api_key, _v, corr = struct.unpack_from(">hhi", frame)
                seen.append((api_key, corr))
                resp = struct.pack(">i", corr) + b"ok"
                conn.sendall(struct.pack(">i", len(resp)) + resp)

    server = threading.Thread(target=serve, daemon=True)
    server.start()
    yield srv.getsockname()[1], seen
    # close() alone leaves accept() blocked on Linux (and the thread and socket with it);
    # shutdown() wakes it with an OSError
    srv.shutdown(socket.SHUT_RDWR)
    srv.close()
    server.join(5)
    assert not server.is_alive()


#: every way a socket reports that its peer closed the connection: an end of stream (FIN), or a
#: reset (RST - the peer closed with our request unread in its buffer, as the proxy does when it
#: cannot reach the broker), or a broken pipe (our send came after the reset)
_CLOSED_ERRORS = (ConnectionResetError, BrokenPipeError, ConnectionAbortedError)


def _closed(sock: socket.socket, request: bytes | None = None) -> bool:
    """Send ``request`` (if given), then read: True if the peer closed the connection, however the
    socket says so; False if a frame came. A timeout (nothing came, nothing closed) raises."""
    try:
        if request is not None:
            sock.sendall(request)
        return _recv_frame(sock) is None
    except _CLOSED_ERRORS:
        return True


def _client(port):
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    return s


def test_forwards_frames_unchanged(fake_broker):
    port, seen = fake_broker
    with KafkaProxy(port) as proxy, _client(proxy.port) as c:
        c.sendall(_request(3, 1) + _request(0, 2))  # two frames in one TCP segment
        assert struct.unpack(">i", _recv_frame(c)[:4])[0] == 1
        assert struct.unpack(">i", _recv_frame(c)[:4])[0] == 2
    assert seen == [(3, 1), (0, 2)]


def test_drops_only_the_next_produce_response_and_cuts_the_connection(fake_broker):
    port, seen = fake_broker
    with KafkaProxy(port) as proxy:
        proxy.drop_next_produce_response()
        with _client(proxy.port) as c:
            c.sendall(_request(3, 1))  # metadata: passes
            assert struct.unpack(">i", _recv_frame(c)[:4])[0] == 1
            # produce: the broker answers, the client never hears
            assert _closed(c, _request(0, 2))
        assert (0, 2) in seen, "the broker must have received (and applied) the produce"
        assert proxy.stats.dropped_responses == [(0, 2)]
        with _client(proxy.port) as c:  # armed once: the retry gets its answer
            c.sendall(_request(0, 3))
            assert struct.unpack(">i", _recv_frame(c)[:4])[0] == 3


def test_drop_next_request_never_reaches_the_broker(fake_broker):
    port, seen = fake_broker
    with KafkaProxy(port) as proxy:
        proxy.drop_next_request(api_key=0)
        with _client(proxy.port) as c:
            assert _closed(c, _request(0, 7))
        assert (0, 7) not in seen
        assert proxy.stats.dropped_requests == [(0, 7)]


def test_broker_down_closes_the_client_connection():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        dead = s.getsockname()[1]  # bound, not listening: connections are refused
        with KafkaProxy(dead) as proxy, _client(proxy.port) as c:
            assert _closed(c, _request(3, 1))


@pytest.mark.parametrize("how", ["end of stream", "reset", "answer"])
def test_closed_knows_every_way_a_socket_reports_a_closed_connection(how):
    """The tests above ask :func:`_closed`: a peer that closes cleanly (FIN) or with a reset (RST,
    as a proxy closing with a request unread does, seen under load) is closed; one that answers is not."""
    with socket.socket() as srv:
        srv.bind(("127.0.0.1", 0))
        srv.listen()
        with _client(srv.getsockname()[1]) as c:
            peer, _ = srv.accept()
            with peer:
                if how == "reset":  # linger 0: close() sends RST instead of FIN
                    peer.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                if how == "answer":
                    peer.sendall(struct.pack(">i", 4) + struct.pack(">i", 1))
            assert _closed(c) == (how != "answer")
