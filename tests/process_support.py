"""Processes found by a mark in their environment, which every child inherits - also a child that
its parent started in a session of its own and that was re-parented to init when the parent died.

The suite marks itself (``COURSE_TEST_RUN``, tests/conftest.py) and checks at its end that no
process with that mark is still running; fixtures find what they started the same way (the hub's
proxy by the hub's port)."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path


def processes_with(mark: str, prefix: bool = False) -> list[int]:
    """PIDs of the running processes (not this one) whose environment holds ``mark``
    (``NAME=value``), or with ``prefix`` a variable that starts with it."""
    needle = mark.encode()
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit() or int(proc.name) == os.getpid():
            continue
        try:
            environ = (proc / "environ").read_bytes().split(b"\0")
        except OSError:  # gone, or not ours to read
            continue
        if needle in environ or (prefix and any(item.startswith(needle) for item in environ)):
            found.append(int(proc.name))
    return found


def command_line(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return "(gone)"


def stop(pids: list[int], grace_s: float = 10) -> None:
    """SIGTERM, then SIGKILL whatever still runs after ``grace_s``."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pid in pids:
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + grace_s
        while time.monotonic() < deadline and any(Path(f"/proc/{pid}/environ").exists() for pid in pids):
            time.sleep(0.1)
