"""What the browser tests share: Debian's chromium under Playwright, free ports on 127.0.0.1,
and starting/stopping a Jupyter server (Voila or JupyterLab) with everything it started."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
ARTIFACTS = ROOT / "artifacts"  # screenshots and server logs (git-ignored)
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]
TIMEOUT_MS = 90_000


def skip_reason(tool: str) -> str | None:
    """Why the browser tests cannot run here (None: they can); ``tool`` is the server's script."""
    if not Path(CHROMIUM).exists():
        return f"{CHROMIUM} not found (apt-get install -y chromium)"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "the playwright package is not installed (pip install -e '.[browser]')"
    if shutil.which(tool, path=str(Path(sys.executable).parent)) is None:
        return f"{tool} is not installed in this environment (pip install -e '.[lab]')"
    return None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """A server process in its own session (so stopping it also stops its kernels), logging to
    ``artifacts/<name>.log``; ``url`` answers once :meth:`wait` returns."""

    def __init__(self, name: str, argv: list[str], url: str, env: dict | None = None):
        ARTIFACTS.mkdir(exist_ok=True)
        self.name, self.url = name, url
        self.log = open(ARTIFACTS / f"{name}.log", "w")
        self.proc = subprocess.Popen(
            argv,
            cwd=ROOT,
            stdout=self.log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            env={**os.environ, **(env or {})},
        )

    def wait(self, seconds: float = 60) -> None:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                pytest.fail(f"{self.name} exited with {self.proc.returncode}; see artifacts/{self.name}.log")
            try:
                urllib.request.urlopen(self.url, timeout=2).close()
                return
            except OSError:
                time.sleep(0.5)
        pytest.fail(f"{self.name} did not answer within {seconds:g} s; see artifacts/{self.name}.log")

    def stop(self) -> None:
        try:
            os.killpg(self.proc.pid, signal.SIGTERM)  # the server and the kernels it started
        except ProcessLookupError:
            pass
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=10)
        self.log.close()


def launch_chromium(playwright):
    return playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
