"""Broker faults are the instructor's: kill, stop, pause or restart a broker of the workshop's
:class:`~course_lib.real.cluster.LocalCluster` from another terminal.

The broker JVMs belong to the Python process that started the cluster (they die with it, see
:mod:`course_lib.real.watchdog`), so only that process can restart them. It therefore listens on
a Unix socket in the cluster's directory (only the instructor's user can open it) and runs the
requests there:

    python -m course_lib.workshop cluster --dir ~/workshop-kafka        # terminal 1, stays up
    python -m course_lib.workshop broker kill 2 --cluster-dir ~/workshop-kafka   # terminal 2
    python -m course_lib.workshop broker restart 2 --cluster-dir ~/workshop-kafka

One request per connection: a line ``ACTION [BROKER]``, answered by one JSON line.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import threading
from pathlib import Path

SOCKET_NAME = "control.sock"
STATE_NAME = "cluster.json"
ACTIONS = ("kill", "stop", "restart", "pause", "resume", "status")


class ControlError(RuntimeError):
    """The request could not be delivered or was refused (the message says why)."""


def socket_path(cluster_dir: str | Path) -> Path:
    return Path(cluster_dir).expanduser().resolve() / SOCKET_NAME


def _run(cluster, action: str, broker: int | None) -> str:
    if action == "status":
        rows = cluster.status()
        return "; ".join(
            f"broker {r['broker']}: {'paused' if r['paused'] else 'running' if r['running'] else 'down'}" for r in rows
        )
    if broker is None:
        raise ControlError(f"'{action}' needs a broker id: one of {sorted(cluster.nodes)}")
    if broker not in cluster.nodes:
        raise ControlError(f"no broker {broker}; brokers are {sorted(cluster.nodes)}")
    # the instructor's word "kill" is the cluster's crash (SIGKILL); stop / restart (waits until it
    # rejoined) / pause / resume are the cluster's own names
    getattr(cluster, {"kill": "crash"}.get(action, action))(broker)
    past = {"kill": "killed (SIGKILL)", "stop": "stopped (controlled shutdown)", "restart": "restarted and registered"}
    return f"broker {broker} {past.get(action, action + 'd')}"


class ControlServer:
    """Serve broker requests for ``cluster`` on ``cluster_dir/control.sock`` (a daemon thread)."""

    def __init__(self, cluster, cluster_dir: str | Path) -> None:
        self.cluster = cluster
        self.path = socket_path(cluster_dir)
        if len(str(self.path)) > 100:  # sun_path holds 108 bytes
            raise ControlError(f"{self.path} is too long for a Unix socket; choose a shorter --dir")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.unlink(missing_ok=True)
        self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._sock.bind(str(self.path))
        os.chmod(self.path, 0o600)  # the instructor's: learners on the same host cannot kill brokers
        self._sock.listen(4)
        self._lock = threading.Lock()  # one fault at a time
        self._thread = threading.Thread(target=self._loop, name="broker-control", daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        while True:
            try:
                conn, _ = self._sock.accept()
            except OSError:  # closed
                return
            with conn:
                try:
                    words = conn.makefile().readline().split()
                    action, broker = words[0], int(words[1]) if len(words) > 1 else None
                    if action not in ACTIONS:
                        raise ControlError(f"unknown action {action!r}; use one of {', '.join(ACTIONS)}")
                    with self._lock:
                        answer = {"ok": True, "message": _run(self.cluster, action, broker)}
                except Exception as e:  # answered, not raised: the server keeps serving
                    answer = {"ok": False, "message": f"{type(e).__name__}: {e}"}
                conn.sendall((json.dumps(answer) + "\n").encode())

    def close(self) -> None:
        # close() alone leaves accept() blocked on Linux, with the thread and the socket;
        # shutdown() wakes it with an OSError. A request being served finishes first.
        with contextlib.suppress(OSError):
            self._sock.shutdown(socket.SHUT_RDWR)
        self._sock.close()
        self._thread.join(timeout=130)  # the longest answer: a restart waits for the broker to rejoin
        self.path.unlink(missing_ok=True)


def request(cluster_dir: str | Path, action: str, broker: int | None = None, timeout_s: float = 120.0) -> str:
    """Ask the process that runs the cluster to act on a broker; returns its answer."""
    if action not in ACTIONS:
        raise ControlError(f"unknown action {action!r}; use one of {', '.join(ACTIONS)}")
    path = socket_path(cluster_dir)
    if not path.exists():
        raise ControlError(
            f"no workshop cluster runs in {path.parent} (no {SOCKET_NAME}): start it with "
            f"`python -m course_lib.workshop cluster --dir {path.parent}`"
        )
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(timeout_s)  # a restart waits until the broker has rejoined
        try:
            s.connect(str(path))
        except (ConnectionRefusedError, FileNotFoundError):
            raise ControlError(
                f"the cluster process of {path.parent} is gone (stale {SOCKET_NAME}); start it again"
            ) from None
        s.sendall(f"{action} {'' if broker is None else broker}\n".encode())
        answer = json.loads(s.makefile().readline())
    if not answer["ok"]:
        raise ControlError(answer["message"])
    return answer["message"]


def write_state(cluster_dir: str | Path, cluster) -> Path:
    """``cluster.json``: what the instructor needs next (the address for the provisioning step)."""
    path = Path(cluster_dir) / STATE_NAME
    path.write_text(
        json.dumps(
            {"bootstrap_servers": cluster.bootstrap_servers, "pid": os.getpid(), "brokers": sorted(cluster.nodes)},
            indent=1,
        )
    )
    return path
