"""The JVM processes of a local Kafka cluster: ports, property files, storage, launch, signals, logs.

:class:`KafkaProcesses` knows nothing of topics or clients: it allocates ports, writes each node's
``server.properties``, formats KRaft storage, starts every node's JVM under
:mod:`course_lib.real.watchdog` (so it dies with this Python process) and sends it signals -
SIGKILL (a crash), SIGTERM (a controlled shutdown), SIGSTOP/SIGCONT (a frozen process).
:class:`~course_lib.real.cluster.LocalCluster` builds the faults and the lab on top of it.

Ports are free ones unless a ``base_port`` is given:

>>> port = free_port(); port_is_free(port)
True
>>> len(new_cluster_id())                 # 16 random bytes, URL-safe base64, no padding
22
"""

from __future__ import annotations

import base64
import errno
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from course_lib.clusters.class_sharing import ClassSharing
from course_lib.real.errors import ClusterError, PortInUse, StaleDataDir
from course_lib.real.proxy import KafkaProxy
from course_lib.real.security import ClusterAuth

WATCHDOG = Path(__file__).with_name("watchdog.py")

JVM_OPTS = [
    "-Xms128m",
    # one GC thread, not G1's concurrent ones: a lab's heap is small and its loads light, and on
    # 2 cores four idle nodes then cost less CPU (bench/jvm_cpu.py)
    "-XX:+UseSerialGC",
    "-Djava.awt.headless=true",
    "-Dorg.slf4j.simpleLogger.showDateTime=true",
    "-Dorg.slf4j.simpleLogger.dateTimeFormat=HH:mm:ss.SSS",
    "-Dorg.slf4j.simpleLogger.defaultLogLevel=info",
    "-Dlog4j2.statusLoggerLevel=OFF",
]


def _ephemeral_range() -> tuple[int, int]:
    """The ports the kernel hands to outgoing connections (Linux; the usual range elsewhere)."""
    try:
        low, high = Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()
        return int(low), int(high)
    except (OSError, ValueError):
        return 32768, 60999


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port on ``host`` that nobody listens on right now, chosen *below* the ephemeral range.

    Why not ``bind(0)``: the kernel takes that port from the range it also gives every outgoing
    connection, so between this call and the server's own bind a client connecting anywhere (a
    broker to its peers, a test's consumer) can take it - a busy suite saw a broker fail with
    "Address already in use". Ports below the range are only ever taken on purpose."""
    low, _ = _ephemeral_range()
    rng = random.SystemRandom()
    for _ in range(200):
        port = rng.randrange(10_000, low) if low > 11_000 else rng.randrange(low, 65_536)
        if port_is_free(port, host):
            return port
    with socket.socket() as s:  # everything below the range is taken: let the OS choose
        s.bind((host, 0))
        return s.getsockname()[1]


def port_is_free(port: int, host: str = "127.0.0.1") -> bool:
    with socket.socket() as s:
        try:
            s.bind((host, port))
        except OSError as e:
            if e.errno == errno.EADDRINUSE:
                return False
            raise
    return True


def accepts(port: int, host: str = "127.0.0.1") -> bool:
    """Whether something accepts TCP connections on ``host``:``port``."""
    try:
        socket.create_connection((host, port), timeout=0.5).close()
        return True
    except OSError:
        return False


def new_cluster_id() -> str:
    """A KRaft cluster id: 16 random bytes, URL-safe base64 without padding (as Kafka's Uuid)."""
    while True:
        cid = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
        if not cid.startswith("-"):  # Kafka avoids ids that look like command-line flags
            return cid


@dataclass
class Node:
    """One Kafka process (a broker, a controller or both), with its ports, files and watchdog."""

    node_id: int
    client_port: int
    replication_port: int
    controller_port: int
    proxy_port: int
    config_path: Path
    log_path: Path
    data_dir: Path
    watchdog: subprocess.Popen | None = None
    pid: int | None = None  # the JVM's pid (not the watchdog's)
    paused: bool = False
    proxy: KafkaProxy | None = field(default=None, repr=False)

    def running(self) -> bool:
        return self.watchdog is not None and self.watchdog.poll() is None


class KafkaProcesses:
    """The broker (and dedicated controller) JVMs of one local cluster under ``root``.

    ``brokers`` nodes get ids 1..n; ``controllers`` dedicated KRaft controllers (0: every broker
    is also a controller) get ids 101, 102, ... ``advertise_proxies``: brokers advertise their
    proxy's port to clients (so every client connection goes through the proxy). ``listen_host``/
    ``advertised_host``: where the CLIENT listeners bind and what they advertise (see LocalCluster)."""

    def __init__(
        self,
        root: Path,
        *,
        brokers: int,
        controllers: int,
        own_dir: bool,
        wipe: bool,
        base_port: int | None,
        heap_mb: int,
        jvm_opts: list[str],
        cluster_id: str,
        advertise_proxies: bool,
        auth: ClusterAuth | None,
        listen_host: str = "127.0.0.1",
        advertised_host: str = "127.0.0.1",
    ) -> None:
        self.root = root
        self.listen_host, self.advertised_host = listen_host, advertised_host
        self.log_dir = root / "logs"
        self.n, self.n_controllers = brokers, controllers
        self.own_dir, self.wipe = own_dir, wipe
        self.base_port = base_port
        self.heap_mb, self.jvm_opts = heap_mb, jvm_opts
        self.cluster_id = cluster_id
        self.tag = f"course-kafka-{cluster_id}"  # on every JVM's command line, for pgrep
        self.advertise_proxies = advertise_proxies
        self.auth = auth
        self.nodes: dict[int, Node] = {}  # the brokers (in combined mode also the controllers)
        self.controllers: dict[int, Node] = {}  # dedicated controller processes, if any
        self.java: str | None = None
        self.classpath: str | None = None
        #: the nodes' shared-class archive (known once the storage is formatted)
        self.sharing: ClassSharing | None = None

    def all(self) -> list[Node]:
        """Every process: dedicated controllers first, then brokers."""
        return [*self.controllers.values(), *self.nodes.values()]

    def broker(self, broker_id: int) -> Node:
        if broker_id not in self.nodes:
            raise ClusterError(f"no broker {broker_id}; brokers are {sorted(self.nodes) or 'not started'}")
        return self.nodes[broker_id]

    def client_facing_port(self, node: Node) -> int:
        return node.proxy_port if self.advertise_proxies else node.client_port

    # ---- before the first start ---------------------------------------------------------------
    def prepare_dirs(self) -> None:
        """Claim ``root`` for this process (refusing one a live cluster uses) and empty its data."""
        data = self.root / "data"
        pidfile = self.root / "cluster.pid"
        if pidfile.exists():
            try:
                owner = int(pidfile.read_text().split()[0])
            except (ValueError, IndexError):
                owner = -1
            if owner > 0 and owner != os.getpid() and pid_alive(owner):
                raise StaleDataDir(
                    f"{self.root} belongs to a cluster still run by process {owner}. Stop that "
                    f"cluster (cluster.stop() in its notebook, or restart that kernel) or choose "
                    f"another data_dir."
                )
        if data.exists() and any(data.iterdir()):
            if self.wipe or self.own_dir:
                shutil.rmtree(data)
            else:
                raise StaleDataDir(
                    f"{data} holds data of an earlier cluster (it did not shut down, or you "
                    f"reused the directory). Its cluster id will not match a new one. Delete it, "
                    f"pass LocalCluster(data_dir=..., wipe=True) to delete it for you, or choose "
                    f"another data_dir."
                )
        data.mkdir(parents=True, exist_ok=True)
        self.log_dir.mkdir(parents=True, exist_ok=True)
        pidfile.write_text(f"{os.getpid()}\n")
        if self.own_dir:
            _prune_old_cluster_dirs(self.root.parent, keep=5)

    def allocate(self, broker_config: dict) -> None:
        """Choose every node's ports and write its property file (``broker_config`` on top)."""
        ports = self._ports(4 * self.n + self.n_controllers)
        for i, nid in enumerate(range(1, self.n + 1)):
            c, r, k, x = ports[4 * i : 4 * i + 4]
            self.nodes[nid] = Node(
                nid,
                client_port=c,
                replication_port=r,
                controller_port=k,
                proxy_port=x,
                config_path=self.root / f"broker-{nid}.properties",
                log_path=self.log_dir / f"broker-{nid}.log",
                data_dir=self.root / "data" / f"broker-{nid}",
            )
        for i in range(self.n_controllers):  # ids 101, 102, ...: never confused with a broker's
            nid, k = 101 + i, ports[4 * self.n + i]
            self.controllers[nid] = Node(
                nid,
                client_port=0,
                replication_port=0,
                controller_port=k,
                proxy_port=0,
                config_path=self.root / f"controller-{nid}.properties",
                log_path=self.log_dir / f"controller-{nid}.log",
                data_dir=self.root / "data" / f"controller-{nid}",
            )
        voters = ",".join(
            f"{n.node_id}@127.0.0.1:{n.controller_port}" for n in (self.controllers or self.nodes).values()
        )
        common = {
            "controller.quorum.voters": voters,
            "controller.listener.names": "CONTROLLER",
            "listener.security.protocol.map": (
                self.auth.listener_protocols()
                if self.auth
                else "CLIENT:PLAINTEXT,REPLICATION:PLAINTEXT,CONTROLLER:PLAINTEXT"
            ),
        }
        combined = not self.controllers
        # behind a proxy the broker's own client listener is only the proxy's upstream (127.0.0.1)
        client_host = "127.0.0.1" if self.advertise_proxies else self.listen_host
        for n in self.nodes.values():
            advertised = self.client_facing_port(n)
            props = {
                "process.roles": "broker,controller" if combined else "broker",
                "node.id": n.node_id,
                **common,
                "listeners": f"CLIENT://{client_host}:{n.client_port},REPLICATION://127.0.0.1:{n.replication_port}"
                + (f",CONTROLLER://127.0.0.1:{n.controller_port}" if combined else ""),
                "advertised.listeners": (
                    f"CLIENT://{self.advertised_host}:{advertised},REPLICATION://127.0.0.1:{n.replication_port}"
                ),
                "inter.broker.listener.name": "REPLICATION",
                "log.dirs": str(n.data_dir),
                **broker_config,
            }
            n.config_path.write_text("".join(f"{k}={v}\n" for k, v in props.items()))
        for n in self.controllers.values():
            # the controller decides topic defaults, fencing and elections: it gets the lab config too
            props = {
                "process.roles": "controller",
                "node.id": n.node_id,
                **common,
                "listeners": f"CONTROLLER://127.0.0.1:{n.controller_port}",
                "log.dirs": str(n.data_dir),
                **broker_config,
            }
            n.config_path.write_text("".join(f"{k}={v}\n" for k, v in props.items()))

    def _ports(self, count: int) -> list[int]:
        if self.base_port is not None:
            ports = list(range(self.base_port, self.base_port + count))
            busy = [p for p in ports if not port_is_free(p)]
            if busy:
                raise PortInUse(
                    f"port(s) {busy} on 127.0.0.1 are already in use (another cluster still "
                    f"running? `ss -ltnp` shows who). Stop it, or pick another base_port, or "
                    f"leave base_port unset to use free ports."
                )
            return ports
        ports = []
        while len(ports) < count:  # distinct free ports (the OS may hand one out twice)
            p = free_port()
            if p not in ports:
                ports.append(p)
        return ports

    def format_storage(self, java: str, classpath: str) -> None:
        """Format every node's KRaft storage with the cluster id (one JVM per node, in parallel:
        ~3 s instead of ~9 s); remembers ``java`` and ``classpath`` for :meth:`launch`."""
        self.java, self.classpath = java, classpath
        self.sharing = ClassSharing(java, classpath)
        procs = []
        for n in self.all():
            cmd = [
                java,
                "-Xmx256m",
                "-XX:TieredStopAtLevel=1",
                *self.sharing.options(),
                "-cp",
                classpath,
                "kafka.tools.StorageTool",
                "format",
                "-t",
                self.cluster_id,
                "-c",
                str(n.config_path),
                *(self.auth.format_arguments() if self.auth else []),
            ]
            procs.append((n, subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)))
        for n, p in procs:
            out, _ = p.communicate(timeout=120)
            with open(n.log_path, "a") as log:
                log.write(f"=== storage format ===\n{out}")
            if p.returncode != 0:
                raise ClusterError(f"formatting storage of broker {n.node_id} failed:\n{out[-2000:]}")

    # ---- running ------------------------------------------------------------------------------
    def launch(self, node: Node) -> None:
        """Start the node's JVM under the watchdog (returns once the JVM's pid is known)."""
        if self.java is None or self.classpath is None or self.sharing is None:
            raise ClusterError("storage is not formatted yet: start the cluster first (cluster.start())")
        role = "controller" if node.node_id in self.controllers else "broker"
        with open(node.log_path, "a") as log:
            log.write(f"=== starting {role} {node.node_id} at {time.strftime('%H:%M:%S')} ===\n")
        cmd = [
            sys.executable,
            str(WATCHDOG),
            str(os.getpid()),
            str(node.log_path),
            "--",
            self.java,
            f"-Xmx{self.heap_mb}m",
            *self.jvm_opts,
            *self.sharing.options(),
            f"-Dcourse.cluster={self.tag}",
            "-cp",
            self.classpath,
            "kafka.Kafka",
            str(node.config_path),
        ]
        # A new session: Ctrl-C in a terminal reaches Python (which cleans up), not the JVMs.
        wd = subprocess.Popen(cmd, stdout=subprocess.PIPE, stdin=subprocess.DEVNULL, start_new_session=True, text=True)
        assert wd.stdout is not None  # stdout=PIPE
        line = wd.stdout.readline()
        wd.stdout.close()
        if not line.strip().isdigit():
            wd.kill()
            raise ClusterError(f"could not start {role} {node.node_id}; see {node.log_path}")
        node.watchdog, node.pid, node.paused = wd, int(line), False

    def check_alive(self, node: Node) -> None:
        """Raise (with the reason from its log) if the node's process has exited."""
        if node.running():
            return
        log = node.log_path.read_text(errors="replace") if node.log_path.exists() else ""
        if "Address already in use" in log[-20000:]:
            raise PortInUse(
                f"broker {node.node_id} could not bind one of its ports "
                f"({node.client_port}, {node.replication_port}, "
                f"{node.controller_port}): another process took it. Start the "
                f"cluster again (new free ports are chosen). Log: {node.log_path}"
            )
        tail = "\n".join(log.splitlines()[-25:])
        raise ClusterError(f"broker {node.node_id} exited during start-up. Last lines of {node.log_path}:\n{tail}")

    def require_running(self, node: Node) -> int:
        """The node's JVM pid (raises if it does not run)."""
        if not node.running() or node.pid is None:
            raise ClusterError(f"broker {node.node_id} is not running; start it with cluster.restart({node.node_id})")
        return node.pid

    def freeze(self, node: Node) -> None:
        """SIGSTOP: the process stops but keeps its connections open."""
        os.kill(self.require_running(node), signal.SIGSTOP)
        node.paused = True

    def thaw(self, node: Node) -> None:
        """SIGCONT (nothing if the process is gone)."""
        if node.pid is not None and node.running():
            os.kill(node.pid, signal.SIGCONT)
        node.paused = False

    def signal(self, node: Node, sig: int) -> None:
        """Send ``sig`` to a running node (a frozen one is thawed first: it could not act on it)."""
        if node.pid is None or not node.running():
            return
        try:
            if node.paused:
                os.kill(node.pid, signal.SIGCONT)  # a stopped process cannot act on SIGTERM
            os.kill(node.pid, sig)
        except ProcessLookupError:
            pass
        node.paused = False

    def signal_and_wait(self, node: Node, sig: int, timeout_s: float) -> None:
        """:meth:`signal`, then wait for the process to end (SIGKILL if it takes ``timeout_s``)."""
        self.signal(node, sig)
        if node.watchdog is None:
            return
        try:
            node.watchdog.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:  # controlled shutdown stuck: fall back to a crash
            self.signal(node, signal.SIGKILL)
            node.watchdog.wait(timeout=10)

    def kill_all(self) -> None:
        """SIGKILL every process and wait for it; close the proxies; give ``root`` up. The first
        cluster of a classpath leaves its classes to the next ones first (:mod:`.class_sharing`)."""
        self._leave_classes()
        for node in self.all():
            self.signal(node, signal.SIGKILL)
        for node in self.all():
            if node.watchdog is not None:
                try:
                    node.watchdog.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    node.watchdog.kill()
            if node.proxy is not None:
                node.proxy.close()
        if self.own_dir:
            self.discard_data()
        (self.root / "cluster.pid").unlink(missing_ok=True)

    def _leave_classes(self) -> None:
        # a broker has loaded the most by now; a paused JVM could not answer the dump
        if self.sharing is None or not self.sharing.recording:
            return
        live = [n for n in self.all() if n.pid is not None and n.running() and not n.paused]
        brokers = [n for n in live if n.node_id in self.nodes] or live
        if brokers:
            self.sharing.record(brokers[-1].pid)  # type: ignore[arg-type]  # pid set: running

    def discard_data(self) -> None:
        """Delete every node's data (the cluster is stopped)."""
        shutil.rmtree(self.root / "data", ignore_errors=True)

    def pids(self) -> list[int]:
        return [n.pid for n in self.all() if n.pid is not None and n.running()]

    def log_tail(self, node_id: int, tail_lines: int | None = 40) -> str:
        """The last lines of a broker's (or a dedicated controller's, ids 101...) log file."""
        node = self.controllers.get(node_id) or self.broker(node_id)
        lines = node.log_path.read_text(errors="replace").splitlines()
        return "\n".join(lines[-tail_lines:] if tail_lines else lines)


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _prune_old_cluster_dirs(parent: Path, keep: int) -> None:
    """Keep the logs of the last few clusters; older ones (not in use) are deleted."""
    dirs = sorted((d for d in parent.iterdir() if d.is_dir()), key=lambda d: d.stat().st_mtime)
    for d in dirs[:-keep]:
        pidfile = d / "cluster.pid"
        if pidfile.exists():
            try:
                if pid_alive(int(pidfile.read_text().split()[0])):
                    continue
            except (ValueError, IndexError):
                pass
        shutil.rmtree(d, ignore_errors=True)
