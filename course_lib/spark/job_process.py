"""One process of the streaming job (:mod:`course_lib.spark.job`) as the harness runs it: started
in its own process group, its milestone lines read as they come, SIGKILLed whole.

Its own module because both the harness (which starts the runs) and the faults
(:mod:`course_lib.spark.faults`, which kill them) work with it.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

from course_lib.spark.prerequisites import import_root


class JobProcess:
    """One process of the streaming job, with its trap and kill logic."""

    def __init__(
        self, cfg_path: Path, log_path: Path, env: dict[str, str] | None = None, *, argv: list[str] | None = None
    ):
        """``argv``: the command, if not the job's (``python -m course_lib.spark.job cfg_path``)."""
        self.log = open(log_path, "w")
        # Own session = own process group: one killpg takes the Python driver *and* its JVM.
        self.proc = subprocess.Popen(
            argv or [sys.executable, "-m", "course_lib.spark.job", str(cfg_path)],
            cwd=str(import_root()),
            stdout=subprocess.PIPE,
            stderr=self.log,
            text=True,
            start_new_session=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})},
        )
        self.lines: list[str] = []
        self.started = threading.Event()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            self.lines.append(line.rstrip())
            if line.startswith(("STARTED", "UNAVAILABLE")):
                self.started.set()

    def line(self, prefix: str) -> str | None:
        """The first line the job printed that starts with ``prefix``; of a job that has ended,
        from everything it printed."""
        if self.proc.poll() is not None:
            # Its last lines may still be in the pipe, not yet read: a loaded run once reported a
            # job that printed TRAPPED and killed itself as "trap not reached".
            self.reader.join(timeout=5)
        return next((l for l in self.lines if l.startswith(prefix)), None)

    def kill(self) -> None:
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass

    def wait(self, timeout_s: float) -> int | None:
        try:
            rc = self.proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            return None
        self.reader.join(timeout=5)
        return rc

    def close(self) -> None:
        self.kill()  # nothing of a run survives it (the JVM is in the same group)
        self.proc.wait()
        self.log.close()
