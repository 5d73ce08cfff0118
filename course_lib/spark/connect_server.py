"""A Spark Connect server from the installed pyspark, with Spark's Kafka connector on it.

For a workshop one Spark server runs the learners' streaming queries: the learners' kernels are
thin Spark Connect clients (no JVM, no connector jars of their own). The pyspark wheel already
holds the server (``jars/spark-connect_2.13-<version>.jar``); this module starts it with
``spark-submit --class org.apache.spark.sql.connect.service.SparkConnectServer``, the connector
jars of the Maven step (:func:`course_lib.spark.session.cached_connector_jars`) and a gRPC port
bound to one address (127.0.0.1 unless told otherwise).

Instructor, on the machine that runs Spark (it must see the learners' work directories at the
same path, see :mod:`course_lib.spark.remote`)::

    python -m course_lib.spark.connect_server --host 0.0.0.0 --port 15002 --driver-memory 4g

Tests start one on a free port of 127.0.0.1 with :class:`SparkConnectServer` (a context manager).
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from course_lib.real import watchdog
from course_lib.real.processes import free_port
from course_lib.spark.session import (
    SparkUnavailable,
    cached_connector_jars,
    check_java,
    check_pyspark,
    jvm_scratch_conf,
)

SERVER_CLASS = "org.apache.spark.sql.connect.service.SparkConnectServer"
DEFAULT_PORT = 15002  # Spark Connect's own default
WATCHDOG = Path(watchdog.__file__)
#: Runs the server's Python workers with the installed pyspark (see the script).
WORKER_PYTHON = Path(__file__).with_name("worker_python.sh")


def port_in_use(host: str, port: int) -> bool:
    """True if something already holds ``host:port`` (we could not bind it)."""
    with socket.socket() as s:
        try:
            s.bind((host, port))
        except OSError:
            return True
    return False


def answers(host: str, port: int, timeout_s: float = 1.0) -> bool:
    """True if a TCP connection to ``host:port`` is accepted within ``timeout_s``."""
    try:
        with socket.create_connection((host, port), timeout=timeout_s):
            return True
    except OSError:
        return False


class SparkConnectServer:
    """One Spark Connect server process (and its Python workers), started and stopped as a group.

    ``master`` is where the server runs the queries (``local[2]`` here; a ``spark://`` URL on a
    real cluster). ``python`` runs the ``foreachBatch`` functions the clients send: it must have
    pyspark with its ``connect`` extra (the course's ``[spark]`` extra), same minor Python version
    as the clients (cloudpickle). The server does *not* need the course package: the pipeline's
    ``foreachBatch`` writer travels by value (see :mod:`course_lib.spark.pipeline`).
    """

    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int | None = None,
        *,
        master: str = "local[2]",
        driver_memory: str = "1g",
        jars: list[str] | None = None,
        conf: dict[str, str] | None = None,
        python: str | None = None,
        log_path: str | os.PathLike | None = None,
        env: dict[str, str] | None = None,
    ):
        self.host = host
        self.port = port
        self.master = master
        self.driver_memory = driver_memory
        self.jars = jars
        self.conf = dict(conf or {})
        self.python = python or sys.executable
        self._log_path = Path(log_path) if log_path else None
        self._own_dir: Path | None = None
        self.env = env
        self.proc: subprocess.Popen | None = None

    @property
    def log_path(self) -> Path:
        """The server's log: the one given, else ``server.log`` in a temporary folder made on first
        use (so a server that never starts leaves none) and removed by :meth:`stop`."""
        if self._log_path is None:
            # (not "spark-*": the name of the temporary folders Spark's JVM makes for itself)
            self._own_dir = Path(tempfile.mkdtemp(prefix="course-connect-server-"))
            self._log_path = self._own_dir / "server.log"
        return self._log_path

    @property
    def scratch_path(self) -> Path:
        """The server JVM's temporary files (``spark.local.dir``, ``java.io.tmpdir``), beside its
        log: a killed server's are removed by :meth:`stop`, never left in the system's /tmp."""
        return self.log_path.parent / "jvm-tmp"

    # -- what clients use ------------------------------------------------------------------
    @property
    def url(self) -> str:
        """``sc://host:port`` for ``SPARK_REMOTE`` (0.0.0.0 is advertised as 127.0.0.1 here)."""
        host = "127.0.0.1" if self.host in ("0.0.0.0", "") else self.host
        return f"sc://{host}:{self.port}"

    def command(self) -> list[str]:
        """The spark-submit command line (shown to an instructor by ``--dry-run``)."""
        import pyspark

        spark_submit = Path(pyspark.__file__).parent / "bin" / "spark-submit"
        jars = self.jars if self.jars is not None else cached_connector_jars()
        if not jars:
            raise SparkUnavailable(
                "Spark's Kafka connector jars are not available for the Spark Connect server "
                f"({cached_connector_jars.last_error}). Run the Maven step once while online: "
                "`python -m course_lib.real fetch --spark`."
            )
        local = self.master.startswith("local")
        conf = {
            "spark.connect.grpc.binding.address": self.host,
            "spark.connect.grpc.binding.port": str(self.port),
            "spark.ui.enabled": "false",
            # With a local master the executors live in the server's JVM: keep Spark's own
            # ports on loopback (only the gRPC port above faces the learners). On a cluster,
            # Spark's defaults (this machine's name) let the executors reach the driver.
            **({"spark.driver.host": "127.0.0.1", "spark.driver.bindAddress": "127.0.0.1"} if local else {}),
            # Session defaults for every learner's session (each may still set its own).
            "spark.sql.shuffle.partitions": "2",
            "spark.sql.session.timeZone": "UTC",
            "spark.default.parallelism": "2",
            "spark.ui.showConsoleProgress": "false",
            "spark.pyspark.python": str(WORKER_PYTHON),
            **jvm_scratch_conf(self.scratch_path),
            **self.conf,
        }
        cmd = [str(spark_submit), "--class", SERVER_CLASS, "--name", "Spark Connect server (course)"]
        cmd += ["--master", self.master, "--driver-memory", self.driver_memory, "--jars", ",".join(jars)]
        for key, value in conf.items():
            cmd += ["--conf", f"{key}={value}"]
        return cmd

    # -- lifecycle ---------------------------------------------------------------------------
    def start(self, timeout_s: float = 180.0) -> "SparkConnectServer":
        """Start the server and return once its gRPC port accepts connections.

        Raises :class:`SparkUnavailable` naming what to fix: no Java, no pyspark, no connector
        jars, the port already taken, or the server exiting (with the end of its log).
        """
        check_java()
        check_pyspark()
        if self.port is None:
            self.port = free_port(self.host if self.host != "0.0.0.0" else "127.0.0.1")
        elif port_in_use(self.host, self.port):
            raise SparkUnavailable(
                f"port {self.port} on {self.host} is already in use, so the Spark Connect server "
                f"cannot listen there. Stop what holds it (`ss -ltnp 'sport = :{self.port}'`) or "
                "choose another port (--port, or port=None for a free one)."
            )
        cmd = self.command()
        self.scratch_path.mkdir(parents=True, exist_ok=True)
        env = {**os.environ, **(self.env or {})}
        env.update(
            {
                "PYSPARK_PYTHON": str(WORKER_PYTHON),
                "COURSE_SPARK_WORKER_PYTHON": self.python,
                # Python workers of foreachBatch turn timestamps into naive datetimes in the
                # process's local zone: make that UTC, as the session time zone.
                "TZ": "UTC",
                "SPARK_LOCAL_IP": env.get("SPARK_LOCAL_IP", "127.0.0.1"),
            }
        )
        # A SPARK_REMOTE in this process's environment must not turn the server into a client.
        env.pop("SPARK_REMOTE", None)
        env.pop("SPARK_CONNECT_MODE_ENABLED", None)
        self.log_path.write_text("")
        # Under the course's JVM watchdog, so the server dies with this Python process (a test
        # that crashes, a kernel restart); in its own process group, so stop() takes the
        # watchdog, the JVM and the JVM's Python workers at once.
        self.proc = subprocess.Popen(
            [sys.executable, str(WATCHDOG), str(os.getpid()), str(self.log_path), "--", *cmd],
            stdout=subprocess.DEVNULL,
            stdin=subprocess.DEVNULL,
            env=env,
            start_new_session=True,
            cwd=self.log_path.parent,
        )
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                tail = self.log_tail()
                self.proc = None
                raise SparkUnavailable(
                    f"the Spark Connect server exited during start-up (log: {self.log_path}):\n{tail}"
                )
            if answers("127.0.0.1" if self.host == "0.0.0.0" else self.host, self.port, 0.5):
                return self
            time.sleep(0.5)
        self.stop()
        raise SparkUnavailable(
            f"the Spark Connect server did not listen on {self.host}:{self.port} within {timeout_s:.0f} s "
            f"(log: {self.log_path}). The machine may be overloaded; try a longer timeout."
        )

    def log_tail(self, lines: int = 15) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"

    def stop(self, timeout_s: float = 30.0) -> None:
        """SIGTERM the whole process group, SIGKILL what is left after ``timeout_s``; then remove the
        JVM's temporary files, and the log's folder if this server made it."""
        proc, self.proc = self.proc, None
        for sig, wait_s in ((signal.SIGTERM, timeout_s), (signal.SIGKILL, 10.0)):
            if proc is None:
                break
            try:
                os.killpg(proc.pid, sig)
            except ProcessLookupError:
                break
            if _group_gone(proc, wait_s):
                break
        if self._log_path is not None:  # (else nothing was made)
            shutil.rmtree(self._own_dir or self.scratch_path, ignore_errors=True)

    def __enter__(self) -> "SparkConnectServer":
        return self.start() if self.proc is None else self

    def __exit__(self, *exc) -> None:
        self.stop()


def _group_gone(proc: subprocess.Popen, timeout_s: float) -> bool:
    """Wait until the leader has exited and no process of its group is left."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        proc.poll()
        try:
            os.killpg(proc.pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.2)
    return False


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m course_lib.spark.connect_server",
        description="Run a Spark Connect server with Spark's Kafka connector for the course's Spark lab.",
    )
    p.add_argument("--host", default="127.0.0.1", help="address to bind (0.0.0.0: every interface)")
    p.add_argument("--port", type=int, default=DEFAULT_PORT, help="gRPC port (0: a free one)")
    p.add_argument("--master", default="local[*]", help="where queries run (local[*] or spark://host:7077)")
    p.add_argument("--driver-memory", default="2g")
    p.add_argument("--log", default=None, help="server log file (default: a temporary directory)")
    p.add_argument("--dry-run", action="store_true", help="print the spark-submit command and exit")
    a = p.parse_args(argv)
    server = SparkConnectServer(a.host, a.port or None, master=a.master, driver_memory=a.driver_memory, log_path=a.log)
    try:
        if a.dry_run:
            server.port = server.port or DEFAULT_PORT
            print(" ".join(server.command()))
            server.stop()  # nothing runs; this removes the folder the command names
            return 0
        server.start()
    except SparkUnavailable as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"Spark Connect server ready: SPARK_REMOTE={server.url}  (log: {server.log_path}); Ctrl-C stops it")
    try:
        while server.proc is not None and server.proc.poll() is None:
            time.sleep(1)
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
