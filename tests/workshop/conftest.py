"""Fixtures of the workshop tests."""

import contextlib
import os
import signal
import subprocess
import sys
import time

import pytest

INSTRUCTOR_PASSWORD = "pw"


@pytest.fixture
def cluster_command(tmp_path):
    """``with cluster_command(*options) as bootstrap:`` runs ``python -m course_lib.workshop cluster
    --dir tmp_path --brokers 1 *options`` in its own process, as the instructor does, until its
    "Kafka runs: --bootstrap ..." line; yields that address; then SIGTERM, and it must exit 0."""

    @contextlib.contextmanager
    def run(*options: str):
        env = {**os.environ, "KAFKA_INSTRUCTOR_PASSWORD": INSTRUCTOR_PASSWORD}
        cmd = [sys.executable, "-m", "course_lib.workshop", "cluster", "--dir", str(tmp_path), "--brokers", "1"]
        proc = subprocess.Popen([*cmd, *options], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        try:
            deadline = time.monotonic() + 180
            seen = [""]
            while "Kafka runs" not in seen[-1] and time.monotonic() < deadline and proc.poll() is None:
                seen.append(proc.stdout.readline())
            assert "Kafka runs: --bootstrap " in seen[-1], "".join(seen[-20:])
            yield seen[-1].split("--bootstrap ")[1].split()[0]
            proc.send_signal(signal.SIGTERM)
            assert proc.wait(timeout=60) == 0
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()

    return run
