"""Processes found by a mark in their environment, which every child inherits - also a child that
its parent started in a session of its own and that was re-parented to init when the parent died.

The suite marks itself (:data:`RUN_MARK`, :func:`install`, called by tests/conftest.py) and
checks at its end that no process with that mark is still running: a JVM, the hub's proxy, a
Spark worker left behind is listed, stopped, and the run fails. Fixtures find what they started
the same way (the hub's proxy by the hub's port). As a plugin of its own (``pytest -p
tests.process_support``) it checks any run, which is how tests/test_process_support.py tests it.
"""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path

import pytest

#: a mark in the environment of every process a test run starts
RUN_MARK = "COURSE_TEST_RUN"
#: how long the check lets the run's processes end on their own (xdist's workers and their
#: children winding down) before it names and stops them; a run that checks the check sets less
WIND_DOWN = "COURSE_WIND_DOWN_S"


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
        while time.monotonic() < deadline and any(map(running, pids)):
            time.sleep(0.1)


def running(pid: int) -> bool:
    """Whether ``pid`` still runs: not gone, not a zombie (dead, its parent yet to reap it - the
    check's own children are reaped only when it exits)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def stop_shared_java_driver() -> None:
    """Stop the Java client's driver that this process shares between tests
    (:func:`course_lib.client_adapters.for_java.driver`), if one was started: it lives until the
    process exits, which an xdist worker does before the check, and a plain run after it."""
    java = sys.modules.get("course_lib.client_adapters.for_java")
    if java is not None:
        java.stop_driver()


class OutliveCheck:
    """At the end of the run, no process it started is still running."""

    @pytest.hookimpl(trylast=True)  # after xdist has stopped its workers
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        stop_shared_java_driver()  # a run without xdist: it lives in this very process
        mark = f"{RUN_MARK}={os.environ[RUN_MARK]}"
        deadline = time.monotonic() + float(os.environ.get(WIND_DOWN, 15))
        while (left := processes_with(mark)) and time.monotonic() < deadline:
            time.sleep(0.2)
        if not left:
            return
        listed = [f"{pid}: {command_line(pid)}" for pid in left]
        stop(left)
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            reporter.write_sep("=", f"{len(left)} processes started by the tests outlived them (now stopped)", red=True)
            for line in listed:
                reporter.write_line(line)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def install(config: pytest.Config) -> None:
    """Mark this run's environment (a nested run marks its own) and check it at the end; in the
    controlling process only, not in an xdist worker."""
    if hasattr(config, "workerinput"):
        return
    os.environ[RUN_MARK] = f"{os.getpid()}-{time.time_ns()}"
    config.pluginmanager.register(OutliveCheck(), "course-outlive-check")


def pytest_configure(config: pytest.Config) -> None:
    """Loaded as a plugin (``-p tests.process_support``): check this run."""
    install(config)
