"""One Java driver process: JSON lines to its stdin, answers matched by id from its stdout.

The process is always stopped: by :meth:`DriverProcess.close`, by leaving its ``with`` block, or
- if the object is dropped - by a weakref finalizer (and, if Python itself dies, the driver sees
its stdin close and exits). Every wait names what it waited for; a driver that dies mid-call
fails the call at once with its exit code and the end of its stderr (the JVM's own words).

Errors come back in two kinds:

- :class:`JavaException` - the Java client threw (``ConfigException``, ``TimeoutException``,
  ``ProducerFencedException``, ...): its class, message and cause chain, for comparing with
  kafka-python's error in the same place;
- :class:`DriverError` (:class:`DriverTimeout`, :class:`DriverDied`) - the driver itself failed.
"""

from __future__ import annotations

import collections
import itertools
import json
import signal
import subprocess
import threading
import weakref
from typing import Any

from course_lib.clusters import jars

from .build import MAIN_CLASS, driver_build

STDERR_LINES = 200  # kept for failure messages
DEFAULT_TIMEOUT_S = 120.0  # a bound on calls with no timeout of their own (Java's may be unbounded)


class DriverError(RuntimeError):
    """The driver process failed (not the Java client inside it)."""


class DriverTimeout(DriverError):
    """No answer in time; the message says to which call and what it was waiting for."""


class DriverDied(DriverError):
    """The driver process exited while a call was waiting (or before it was made)."""


class JavaException(Exception):
    """An exception the Java client threw: ``java_class`` is its full class name, ``causes`` its
    cause chain as ``(class, message)`` pairs, outermost first. An ``ExecutionException`` from a
    future is unwrapped, as kafka-python's ``future.get()`` raises the error itself."""

    def __init__(self, java_class: str, message: str | None, causes: list[tuple[str, str | None]] | None = None):
        super().__init__(java_class, message)
        self.java_class = java_class
        self.message = message
        self.causes = list(causes or [])

    @classmethod
    def from_json(cls, e: dict) -> JavaException:
        return cls(e["class"], e.get("message"), [(c["class"], c.get("message")) for c in e.get("causes", [])])

    @property
    def name(self) -> str:
        """The simple class name: ``ConfigException``."""
        return self.java_class.rsplit(".", 1)[-1]

    @property
    def chain(self) -> list[str]:
        """Simple class names of the exception and its causes, outermost first."""
        return [self.name, *(c.rsplit(".", 1)[-1] for c, _ in self.causes)]

    def __str__(self) -> str:
        text = f"{self.name}: {self.message}"
        for c, m in self.causes:
            text += f"\n  caused by {c.rsplit('.', 1)[-1]}: {m}"
        return text


class DriverProcess:
    """A running driver: ``request(op, **fields)`` sends one command and returns its result.

    ``log_level``: of the Java client's own logging (SLF4J simple, to stderr, kept for failures).
    ``kafka_version``: whose kafka-clients the driver runs (default: ``$COURSE_KAFKA_VERSION``,
    see :func:`course_lib.clusters.jars.kafka_version`).
    Thread-safe: calls from several threads run concurrently in the driver.
    """

    def __init__(self, log_level: str = "warn", heap: str = "256m", build_root=None, kafka_version: str | None = None):
        self._build = driver_build(root=build_root, kafka_version=kafka_version)
        java = jars.java_executable()
        cmd = [
            java,
            f"-Xmx{heap}",
            # a driver is short-lived and runs light loads: C1 alone and one GC thread cost a
            # 2-core machine less CPU than the JVM's defaults, as for the lab's brokers
            "-XX:TieredStopAtLevel=1",
            "-XX:+UseSerialGC",
            f"-Dorg.slf4j.simpleLogger.defaultLogLevel={log_level}",
            "-cp",
            self._build.classpath,
            MAIN_CLASS,
        ]
        proc = subprocess.Popen(
            cmd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            encoding="utf-8",  # what Driver.java speaks, whatever the locale
            errors="replace",
            bufsize=1,
        )
        self.pid = proc.pid
        self._ids = itertools.count(1)
        # what the reader threads share; they hold no reference to self, so a dropped
        # DriverProcess is collected and its finalizer stops the JVM
        self._chan = _Channel(proc)
        self._proc = proc
        self._closed = False
        self._readers = [
            threading.Thread(target=self._chan.read_stdout, name=f"java-driver-{self.pid}-stdout", daemon=True),
            threading.Thread(target=self._chan.read_stderr, name=f"java-driver-{self.pid}-stderr", daemon=True),
        ]
        for t in self._readers:
            t.start()
        self._finalizer = weakref.finalize(self, _stop, proc)
        try:
            self.info = self.request("ping", what="the JVM to start", timeout=DEFAULT_TIMEOUT_S)
        except BaseException:
            self.close()
            raise

    @property
    def built_now(self) -> bool:
        """Whether starting this driver compiled it (False: the classes came from the cache)."""
        return self._build.built_now

    # ---- requests -----------------------------------------------------------------------
    def request(self, op: str, *, what: str | None = None, timeout: float | None = None, **fields: Any) -> Any:
        """Send ``op`` and wait up to ``timeout`` s (default :data:`DEFAULT_TIMEOUT_S`) for its answer.

        Raises :class:`JavaException` if the client threw, :class:`DriverTimeout` or
        :class:`DriverDied` if the driver did not answer."""
        timeout = DEFAULT_TIMEOUT_S if timeout is None else timeout
        label = op if what is None else f"{op} ({what})"
        rid = next(self._ids)
        slot: list = [threading.Event(), None]
        with self._chan.lock:
            if self._closed or self._proc.poll() is not None:
                raise self._died(label)
            self._chan.pending[rid] = slot
            try:
                assert self._proc.stdin is not None
                self._proc.stdin.write(json.dumps({"id": rid, "op": op, **fields}) + "\n")
                self._proc.stdin.flush()
            except (BrokenPipeError, OSError):
                del self._chan.pending[rid]
                raise self._died(label) from None
        if not slot[0].wait(timeout):
            with self._chan.lock:
                self._chan.pending.pop(rid, None)
            raise DriverTimeout(
                f"the Java driver (pid {self.pid}) did not answer {label} within {timeout:g} s{self._stderr_tail()}"
            )
        answer = slot[1]
        if answer is None:  # set by the reader when the process's stdout closed
            raise self._died(label)
        if not answer["ok"]:
            raise JavaException.from_json(answer["error"])
        return answer["result"]

    def _died(self, label: str) -> DriverDied:
        try:
            rc = self._proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            rc = None
        state = "was closed" if self._closed and rc in (0, None) else f"exited with code {rc}"
        return DriverDied(f"the Java driver (pid {self.pid}) {state} during {label}{self._stderr_tail()}")

    def _stderr_tail(self, lines: int = 30) -> str:
        tail = list(self._chan.stderr)[-lines:]
        return ("; its stderr ends:\n" + "\n".join(tail)) if tail else "; it wrote nothing to stderr"

    @property
    def stderr(self) -> str:
        """The driver's last stderr lines (the Java client's warnings and errors)."""
        return "\n".join(self._chan.stderr)

    def pending_calls(self) -> int:
        """How many calls are waiting for their answer."""
        with self._chan.lock:
            return len(self._chan.pending)

    # ---- lifecycle ------------------------------------------------------------------------
    def alive(self) -> bool:
        return self._proc.poll() is None

    def close(self, timeout: float = 60.0) -> None:
        """Ask the driver to exit (it closes clients still open), kill it if it does not, and
        wait for its output readers; idempotent."""
        if self._closed:
            return
        if self.alive():
            try:
                self.request("exit", what="the driver to close its clients and exit", timeout=timeout)
            except DriverError:
                pass  # killed below
        self._closed = True
        self._finalizer()  # kills if still running, closes the pipes, reaps
        for t in self._readers:
            t.join(timeout=10)

    def kill(self) -> None:
        """Kill the JVM at once (SIGKILL), as a crash would: calls under way fail with DriverDied."""
        self._proc.kill()
        self._proc.wait(timeout=30)

    def stop_process(self) -> None:
        """Stop the JVM (SIGSTOP), as a machine that is gone looks to the brokers: nothing runs,
        nothing closes; :meth:`kill` or :meth:`close` ends it."""
        self._proc.send_signal(signal.SIGSTOP)

    def __enter__(self) -> DriverProcess:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class _Channel:
    """The pipes of one driver and the calls waiting for answers (shared with the readers)."""

    def __init__(self, proc: subprocess.Popen):
        self.proc = proc
        self.lock = threading.Lock()
        self.pending: dict[int, list] = {}  # id -> [Event, answer or None]
        self.stderr: collections.deque[str] = collections.deque(maxlen=STDERR_LINES)

    def read_stdout(self) -> None:
        stream = self.proc.stdout
        assert stream is not None
        with stream:
            for line in stream:
                try:
                    answer = json.loads(line)
                except ValueError:
                    self.stderr.append(f"(not JSON on stdout) {line.rstrip()}")
                    continue
                with self.lock:
                    slot = self.pending.pop(answer.get("id"), None)
                if slot is not None:  # else: its caller gave up waiting
                    slot[1] = answer
                    slot[0].set()
        # stdout closed: the process is gone; wake every caller still waiting (answer None)
        with self.lock:
            pending, self.pending = self.pending, {}
        for slot in pending.values():
            slot[0].set()

    def read_stderr(self) -> None:
        stream = self.proc.stderr
        assert stream is not None
        with stream:
            for line in stream:
                self.stderr.append(line.rstrip())


def _stop(proc: subprocess.Popen) -> None:
    """Stop the JVM (it is given a moment after its stdin closes) and reap it."""
    try:
        if proc.stdin:
            proc.stdin.close()
    except OSError:
        pass
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=30)
    # stdout and stderr: each reader closes its own at end of file
