"""Fixtures for the wire front end: a seeded wire cluster per test, a check that it leaves no
thread or socket behind."""

import contextlib
import gc
import logging
import os
import threading
import time

import pytest

import course_lib.wire.apis as apis
from course_lib.judge.result import Result
from course_lib.wire import WireCluster
from course_lib.wire.pytest_plugin import wire_cluster  # noqa: F401 - the plugin's fixture, tested here


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def fd_targets() -> dict:
    out = {}
    for fd in os.listdir("/proc/self/fd"):
        try:
            out[fd] = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            pass
    return out


def wire_threads() -> list:
    return [t for t in threading.enumerate() if t.name.startswith("wire-")]


@pytest.fixture
def no_leaks():
    """Every thread and socket a test starts is gone when it ends (kafka-python's own threads and
    sockets are closed by the test; the check waits briefly for them to wind down)."""
    # kafka-python logs a reset connection with its traceback; pytest's log capture would keep
    # that traceback - and the client's socket in it - alive past the test
    kafka_log = logging.getLogger("kafka")
    level = kafka_log.level
    kafka_log.setLevel(logging.CRITICAL)
    threads, fds, targets = set(threading.enumerate()), open_fds(), fd_targets()
    try:
        yield
    finally:
        kafka_log.setLevel(level)
    deadline = time.monotonic() + 30  # a bound, not a wait: a loaded machine winds down slower
    while time.monotonic() < deadline:
        gc.collect()  # sockets of clients the test dropped (refused connection attempts)
        extra = [t for t in threading.enumerate() if t not in threads and t.is_alive()]
        if not extra and open_fds() <= fds:
            break
        time.sleep(0.05)
    assert not extra, f"threads left running: {extra}"
    new = {fd: t for fd, t in fd_targets().items() if targets.get(fd) != t}
    # a client an earlier test left running opens sockets too: name the threads that predate this one
    older = sorted(t.name for t in threads if t.is_alive() and t is not threading.main_thread())
    assert open_fds() <= fds, (
        f"file descriptors left open: {open_fds()} > {fds}: {new}; threads older than the test: {older}"
    )


@pytest.fixture
def wire(no_leaks):
    """3 brokers, seed 1, groups assign at once (group.initial.rebalance.delay.ms=0 as the lab)."""
    w = WireCluster(brokers=3, seed=1, group_initial_rebalance_delay_ms=0).start()
    try:
        yield w
    finally:
        w.stop()


def record_versions(monkeypatch) -> dict:
    """api key -> the set of versions clients sent from now on (until the test ends)."""
    seen: dict = {}
    dispatch = apis.dispatch

    def recording(gw, header, request):
        seen.setdefault(header.request_api_key, set()).add(header.request_api_version)
        return dispatch(gw, header, request)

    monkeypatch.setattr(apis, "dispatch", recording)
    return seen


@contextlib.contextmanager
def versions_sent(monkeypatch):
    """:func:`record_versions` for a block."""
    yield record_versions(monkeypatch)


def with_versions(monkeypatch, client: str) -> Result:
    """The share experiment on the wire (course_lib/experiments/share_group_experiments.py) with ``client``,
    and the versions of each api it sent: what tests/wire and tests/java_client store once per
    test run for notebook 09's protocol matrix."""
    from course_lib.experiments.share_group_experiments import on_the_wire

    with versions_sent(monkeypatch) as seen:
        got = on_the_wire(client)
    got.numbers["versions"] = {int(k): sorted(v) for k, v in seen.items()}
    return got
