"""A local 3-broker Apache Kafka cluster (KRaft, combined mode) that the course starts itself.

No Docker, no downloads from the Apache site: the official broker jars come from Maven Central
(:mod:`course_lib.real.jars`). Every node is broker *and* controller; everything listens on
127.0.0.1 on free ports. Each node has three listeners:

- ``CLIENT`` - what producers and consumers use. It sits behind a :class:`KafkaProxy` and
  advertises the proxy's port, so clients always (re)connect through the proxy and a produce
  response can be lost on purpose;
- ``REPLICATION`` - broker-to-broker fetches, never proxied (losing an ACK must not also break
  replication);
- ``CONTROLLER`` - the KRaft quorum (static voters ``1@...,2@...,3@...``).

Faults are real signals to the real JVM: ``kill`` (SIGKILL: a crash; the controller fences the
broker after ``broker.session.timeout.ms``), ``stop`` (SIGTERM: controlled shutdown, leadership
moves first), ``pause``/``resume`` (SIGSTOP/SIGCONT: a stalled broker; it stays in the ISR until the
controller fences it after ``broker.session.timeout.ms`` (3 s here) or its leader drops it after
``replica.lag.time.max.ms`` (10 s here), whichever comes first), ``restart``.

Nothing outlives the notebook: JVMs run under :mod:`course_lib.real.watchdog` (they die with the
Python process even when a kernel is killed), every cluster is stopped at exit, and ``with
LocalCluster() as c:`` stops it on exceptions and Ctrl-C too.

    >>> with LocalCluster() as cluster:                          # doctest: +SKIP
    ...     cluster.create_topic("orders")
    ...     cluster.leader_of("orders", 0)
    2

Taught in notebooks/09_real_kafka_lab.
"""

from __future__ import annotations

import atexit
import base64
import errno
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
import weakref
from dataclasses import dataclass, field
from pathlib import Path

from course_lib.real import jars
from course_lib.real.connect import Namespaced
from course_lib.real.proxy import KafkaProxy
from course_lib.real.security import ClusterAuth

WATCHDOG = Path(__file__).with_name("watchdog.py")


class ClusterError(RuntimeError):
    """The local cluster could not do what was asked; the message says what to do."""


class PortInUse(ClusterError):
    pass


class StaleDataDir(ClusterError):
    pass


#: Broker settings chosen for a lab: small, fast to start, fast to notice failures.
LAB_BROKER_CONFIG: dict[str, object] = {
    "default.replication.factor": 3,
    "min.insync.replicas": 2,
    "offsets.topic.replication.factor": 3,
    "offsets.topic.num.partitions": 3,  # default 50: slow first consumer group on 2 cores
    "transaction.state.log.replication.factor": 3,
    "transaction.state.log.min.isr": 2,
    "transaction.state.log.num.partitions": 3,
    "share.coordinator.state.topic.replication.factor": 3,
    "share.coordinator.state.topic.min.isr": 2,
    "share.coordinator.state.topic.num.partitions": 1,
    "group.initial.rebalance.delay.ms": 0,
    # A follower that stops fetching leaves the ISR after replica.lag.time.max.ms (the leader
    # shrinks it) - but a *paused* or killed broker also stops heartbeating, and in KRaft the
    # controller fences it after broker.session.timeout.ms and drops it from every ISR. With
    # these values a paused follower leaves the ISR after ~3 s (fencing), a slow one after 10 s.
    "replica.lag.time.max.ms": 10000,
    "broker.heartbeat.interval.ms": 500,
    "broker.session.timeout.ms": 3000,  # a killed broker is fenced after ~3 s, not 9 s
    "transaction.abort.timed.out.transaction.cleanup.interval.ms": 5000,
    "unclean.leader.election.enable": "false",
    # the KRaft controller looks for leaderless partitions of unclean topics every 5 min by
    # default (an internal setting): every second here, so the lab sees the election happen
    "unclean.leader.election.interval.ms": 1000,
    "auto.leader.rebalance.enable": "false",  # leaders stay where the experiment put them
    "num.network.threads": 2,
    "num.io.threads": 2,
    "background.threads": 2,
    "num.replica.fetchers": 1,
}

JVM_OPTS = [
    "-Xms128m",
    "-XX:+UseG1GC",
    "-XX:MaxGCPauseMillis=20",
    "-Djava.awt.headless=true",
    "-Dorg.slf4j.simpleLogger.showDateTime=true",
    "-Dorg.slf4j.simpleLogger.dateTimeFormat=HH:mm:ss.SSS",
    "-Dorg.slf4j.simpleLogger.defaultLogLevel=info",
    "-Dlog4j2.statusLoggerLevel=OFF",
]

_live_clusters: "weakref.WeakSet[LocalCluster]" = weakref.WeakSet()


def _stop_all_at_exit() -> None:
    for c in list(_live_clusters):
        c.stop()


atexit.register(_stop_all_at_exit)


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nobody listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def port_is_free(port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError as e:
            if e.errno == errno.EADDRINUSE:
                return False
            raise
    return True


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


class LocalCluster(Namespaced):
    """A throwaway 3-broker Kafka cluster on 127.0.0.1; see the module docstring.

    ``data_dir``: where the nodes keep their logs (Kafka data) - by default a fresh directory
    under the course cache that is deleted on :meth:`stop`; broker log files stay in
    :attr:`log_dir` for reading afterwards. ``base_port``: use fixed ports ``base_port ..
    base_port+4*brokers-1`` instead of free ones (for firewalled lab machines).
    ``proxies=False`` lets clients talk to brokers directly (no lost-ACK faults, a bit faster).
    ``listen_host``/``advertised_host``: the address the client listeners (or their proxies) bind
    and the one they give clients in metadata (default: the listen address) - a workshop cluster
    on its own VM listens on ``0.0.0.0`` and advertises the VM's name.
    ``controllers=0``: every node is broker and controller (combined mode: killing two of three
    brokers also kills the controller quorum). ``controllers=1`` (or 3): the KRaft controller(s)
    run as process(es) of their own, so metadata - fencing, elections, ISR changes - keeps working
    while brokers die; the lab uses it for the scenarios that kill two brokers.
    """

    def __init__(
        self,
        brokers: int = 3,
        *,
        data_dir: str | Path | None = None,
        wipe: bool = False,
        base_port: int | None = None,
        heap_mb: int = 512,
        proxies: bool = True,
        broker_config: dict | None = None,
        start_timeout_s: float = 120.0,
        progress: bool = True,
        fast_start: bool = True,
        controllers: int = 0,
        auth: ClusterAuth | None = None,
        listen_host: str = "127.0.0.1",
        advertised_host: str | None = None,
    ) -> None:
        if brokers < 1:
            raise ValueError("a cluster needs at least one broker")
        if controllers not in (0, 1, 3):
            raise ValueError(f"controllers must be 0 (combined broker+controller nodes), 1 or 3, got {controllers!r}")
        self.n = brokers
        self.n_controllers = controllers
        # Where clients reach the brokers. Replication and the controller quorum stay on 127.0.0.1
        # (every node runs on this machine); only the CLIENT listener (or its proxy) moves.
        if listen_host in ("0.0.0.0", "::", "") and not advertised_host:
            raise ValueError(
                f"listening on every interface ({listen_host!r}) needs advertised_host: the name or "
                "address the clients (the hub) reach this machine by"
            )
        self.listen_host = listen_host or "0.0.0.0"
        self.advertised_host = advertised_host or listen_host
        # the address this process itself connects to (readiness checks): any local one will do
        self._local_host = "127.0.0.1" if self.listen_host in ("0.0.0.0", "::") else self.listen_host
        self.heap_mb = heap_mb
        self.use_proxies = proxies
        # auth: SASL SCRAM + ACLs for a shared workshop cluster (course_lib.real.security).
        self.auth = auth
        self.config = {**LAB_BROKER_CONFIG, **(auth.broker_properties() if auth else {}), **(broker_config or {})}
        if brokers < 3:  # a 1- or 2-broker cluster cannot host RF=3 internal topics
            for k in (
                "default.replication.factor",
                "offsets.topic.replication.factor",
                "transaction.state.log.replication.factor",
                "share.coordinator.state.topic.replication.factor",
            ):
                self.config[k] = brokers
            for k in ("min.insync.replicas", "transaction.state.log.min.isr", "share.coordinator.state.topic.min.isr"):
                self.config[k] = min(int(self.config[k]), brokers)
        self.start_timeout_s = start_timeout_s
        # C1-only JIT: three JVMs warming up on a 2-core laptop start in ~10 s instead of
        # 15-35 s; peak broker throughput is lower, which a lab does not notice.
        self.jvm_opts = [*JVM_OPTS, *(["-XX:TieredStopAtLevel=1"] if fast_start else [])]
        self.progress = progress
        self.base_port = base_port
        self.cluster_id = new_cluster_id()
        self.tag = f"course-kafka-{self.cluster_id}"  # on every JVM's command line, for pgrep
        self._own_dir = data_dir is None
        root = (
            Path(data_dir)
            if data_dir
            else jars.cache_dir() / "clusters" / f"{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}-{self.cluster_id[:6]}"
        )
        self.root = root.expanduser().resolve()
        self.log_dir = self.root / "logs"
        self._wipe = wipe
        self.nodes: dict[int, Node] = {}  # the brokers (in combined mode also the controllers)
        self.controllers: dict[int, Node] = {}  # dedicated controller processes, if any
        self.started = False
        self.timings_s: dict[str, float] = {}
        self._lock = threading.RLock()

    # ---- life cycle ------------------------------------------------------------------------
    def __enter__(self) -> "LocalCluster":
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def start(self) -> "LocalCluster":
        """Format storage, start every node and wait until the cluster serves a test topic."""
        if self.started:
            return self
        t0 = time.monotonic()
        java = jars.java_executable()
        classpath = jars.kafka_classpath(progress=self.progress)
        self.timings_s["jars"] = time.monotonic() - t0
        self._prepare_dirs()
        self._allocate_nodes()
        _live_clusters.add(self)
        self.started = True
        try:
            self._format_storage(java, classpath)
            self.timings_s["format"] = time.monotonic() - t0
            if self.use_proxies:
                for node in self.nodes.values():
                    node.proxy = KafkaProxy(node.client_port, port=node.proxy_port, host=self.listen_host)
            self._java, self._classpath = java, classpath
            for node in self._processes():
                self._launch(node)
            self._wait_ready(self.start_timeout_s)
        except BaseException:  # includes KeyboardInterrupt: never leave half a cluster running
            self.stop()
            raise
        self.timings_s["start"] = time.monotonic() - t0
        return self

    def stop(self, broker_id: int | None = None, timeout_s: float = 30.0) -> None:
        """Without ``broker_id``: stop the whole cluster and delete its data. With it: a clean
        (SIGTERM, controlled) shutdown of that one broker; it can be :meth:`restart`-ed."""
        if broker_id is not None:
            self._signal_and_wait(self._node(broker_id), signal.SIGTERM, timeout_s)
            return
        with self._lock:
            if not self.started:
                return
            self.started = False
            # Whole cluster: its data is thrown away, so a controlled shutdown buys nothing
            # and the last nodes of a quorum can wait a long time for each other. Kill.
            for node in self._processes():
                self._kill_node(node, signal.SIGKILL)
            for node in self._processes():
                if node.watchdog is not None:
                    try:
                        node.watchdog.wait(timeout=10)
                    except subprocess.TimeoutExpired:
                        node.watchdog.kill()
                if node.proxy is not None:
                    node.proxy.close()
            _live_clusters.discard(self)
            if self._own_dir:
                shutil.rmtree(self.root / "data", ignore_errors=True)
            (self.root / "cluster.pid").unlink(missing_ok=True)

    def __del__(self):  # a forgotten cluster object still must not leak JVMs
        try:
            self.stop()
        except Exception:
            pass

    # ---- faults ---------------------------------------------------------------------------
    def kill(self, broker_id: int) -> None:
        """SIGKILL the broker: a crash. Nothing is flushed; it is fenced after the session timeout."""
        self._signal_and_wait(self._node(broker_id), signal.SIGKILL, 10)

    def pause(self, broker_id: int) -> None:
        """SIGSTOP: the broker freezes but its connections stay open - a GC pause or a hung disk."""
        node = self._node(broker_id)
        self._require_running(node)
        os.kill(node.pid, signal.SIGSTOP)
        node.paused = True

    def resume(self, broker_id: int) -> None:
        node = self._node(broker_id)
        if node.pid is not None and node.running():
            os.kill(node.pid, signal.SIGCONT)
        node.paused = False

    def restart(self, broker_id: int, timeout_s: float = 60.0, wait: bool = True) -> None:
        """Stop the broker cleanly if it runs, start it again and (``wait``) wait until it has
        registered; :meth:`wait_registered` waits for several restarted at once."""
        node = self._node(broker_id)
        if node.running():
            self.stop(broker_id)
        self._launch(node)
        if wait:
            self.wait_registered([broker_id], timeout_s)

    def wait_registered(self, broker_ids: list[int], timeout_s: float = 60.0) -> None:
        """Wait until every broker of ``broker_ids`` runs and is registered (unfenced)."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            for broker_id in broker_ids:
                self._check_alive(self._node(broker_id))
            try:
                if set(broker_ids) <= set(self.live_broker_ids()):
                    return
            except ClusterError:  # metadata briefly unavailable while it rejoins
                pass
            time.sleep(0.3)
        logs = ", ".join(str(self._node(b).log_path) for b in broker_ids)
        raise ClusterError(f"broker(s) {broker_ids} did not rejoin within {timeout_s:.0f} s; see {logs}")

    def start_broker(self, broker_id: int, timeout_s: float = 60.0) -> None:
        """Start a broker that was killed or stopped (same as :meth:`restart`)."""
        self.restart(broker_id, timeout_s)

    def proxy(self, broker_id: int) -> KafkaProxy:
        node = self._node(broker_id)
        if node.proxy is None:
            raise ClusterError(
                "this cluster was started with proxies=False, so messages cannot "
                "be dropped; use LocalCluster(proxies=True)"
            )
        return node.proxy

    def drop_next_produce_response(self, topic: str, partition: int = 0, count: int = 1) -> int:
        """Arm the proxy of the partition's current leader to lose the next produce ACK(s).

        Returns the leader's id. The broker appends the batch; the client never hears so.
        """
        leader = self.leader_of(topic, partition)
        if leader is None or leader < 0:
            raise ClusterError(f"{topic}-{partition} has no leader right now")
        self.proxy(leader).drop_next_produce_response(count)
        return leader

    def spoil_next_produce_request(self, topic: str, partition: int = 0) -> int:
        """Arm the proxy of the partition's current leader to corrupt the next produce request, so
        the broker refuses it (CORRUPT_MESSAGE, retriable) while later requests on the same
        connection are appended. Returns the leader's id."""
        leader = self.leader_of(topic, partition)
        if leader is None or leader < 0:
            raise ClusterError(f"{topic}-{partition} has no leader right now")
        self.proxy(leader).spoil_next_produce_request()
        return leader

    # ---- what clients need ----------------------------------------------------------------
    @property
    def bootstrap_servers(self) -> str:
        """``host:port,...`` for kafka-python (the proxies' ports when proxies are on)."""
        return ",".join(f"{self.advertised_host}:{self._client_facing_port(n)}" for n in self.nodes.values())

    def live_bootstrap_servers(self) -> str:
        """Like :attr:`bootstrap_servers` but only brokers that run and are not paused.

        kafka-python bootstraps from one address at a time and waits a whole request timeout on
        a frozen broker, so the cluster's own admin calls (and tests) avoid paused ones.
        """
        nodes = [n for n in self.nodes.values() if n.running() and not n.paused]
        return ",".join(f"{self.advertised_host}:{self._client_facing_port(n)}" for n in nodes)

    def _client_facing_port(self, node: Node) -> int:
        return node.proxy_port if self.use_proxies else node.client_port

    def client_auth(self) -> dict:
        """kafka-python SASL arguments of the instructor (``{}`` on an open cluster)."""
        return self.auth.admin_client_kwargs() if self.auth else {}

    def client_config(self) -> dict:
        """kafka-python keyword arguments every client of this cluster needs: the address and,
        on an authenticated cluster, the instructor's login (as ``RemoteCluster.client_config``)."""
        return {"bootstrap_servers": self.bootstrap_servers, **self.client_auth()}

    def admin(self, **kwargs):
        from kafka.admin import KafkaAdminClient

        kwargs.setdefault("request_timeout_ms", 15000)
        kwargs = {**self.client_auth(), **kwargs}
        return KafkaAdminClient(bootstrap_servers=self.live_bootstrap_servers(), client_id="course-admin", **kwargs)

    def create_topic(
        self,
        name: str,
        partitions: int = 1,
        replication_factor: int | None = None,
        min_insync_replicas: int | None = None,
        config: dict | None = None,
        timeout_s: float = 30.0,
    ) -> str:
        """Create ``name`` (namespaced once by :meth:`topic`; RF=3 and min.insync.replicas=2 by
        default), wait for its leaders with a full ISR, and return the name to use."""
        from kafka.admin import NewTopic

        name = self.topic(name)
        rf = replication_factor or int(self.config["default.replication.factor"])
        cfg = {"min.insync.replicas": str(min_insync_replicas or self.config["min.insync.replicas"])}
        cfg.update({k: str(v) for k, v in (config or {}).items()})
        admin = self.admin()
        try:
            admin.create_topics([NewTopic(name, partitions, rf, topic_configs=cfg)])
        finally:
            admin.close()
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            parts = self._partitions(name)
            if (
                parts
                and len(parts) == partitions
                and all(p["leader_id"] >= 0 and len(p["isr_nodes"]) == rf for p in parts)
            ):
                return name
            time.sleep(0.2)
        raise ClusterError(f"topic {name!r} has no leader with a full ISR after {timeout_s} s")

    def _admin_read(self, fn, attempts: int = 10, attempt_s: float = 2.0):
        """Run a metadata read, retrying on a fresh connection if a broker does not answer.

        The admin client may pick any broker it knows, including a paused one (still in the
        metadata until fenced); kafka-python then waits up to 10 s for the connection to be set
        up. Each attempt runs in a helper thread and is abandoned after ``attempt_s``.
        """
        last: BaseException | None = None
        for _ in range(attempts):
            box: dict = {}

            def work():
                try:
                    admin = self.admin(request_timeout_ms=1000)
                    try:
                        box["value"] = fn(admin)
                    finally:
                        admin.close()
                except Exception as e:
                    box["error"] = e

            t = threading.Thread(target=work, name="course-admin-read", daemon=True)
            t.start()
            t.join(attempt_s)
            if "value" in box:
                return box["value"]
            last = box.get("error") or TimeoutError(f"no answer within {attempt_s} s")
            if "error" in box:
                time.sleep(0.2)
        raise ClusterError(f"cluster metadata unavailable after {attempts} attempts: {last!r}")

    def _partitions(self, topic: str) -> list[dict]:
        (t,) = self._admin_read(lambda a: a.describe_topics([topic]))
        if t.get("error_code", 0) != 0:
            return []
        return sorted(t["partitions"], key=lambda p: p["partition_index"])

    def partitions_of(self, topic: str) -> list[int]:
        return [p["partition_index"] for p in self._partitions(topic)]

    def partition_info(self, topic: str, partition: int = 0) -> dict:
        for p in self._partitions(topic):
            if p["partition_index"] == partition:
                return p
        raise ClusterError(f"no partition {topic}-{partition}")

    def leader_of(self, topic: str, partition: int = 0) -> int:
        """The id of the partition's leader as the controller sees it now (-1 if none)."""
        return self.partition_info(topic, partition)["leader_id"]

    def isr_of(self, topic: str, partition: int = 0) -> list[int]:
        """The in-sync replicas of the partition, as the controller sees them now."""
        return sorted(self.partition_info(topic, partition)["isr_nodes"])

    def live_broker_ids(self) -> list[int]:
        """Brokers currently registered (unfenced) in the cluster metadata."""
        return sorted(
            b["broker_id"]
            for b in self._admin_read(lambda a: a.describe_cluster())["brokers"]
            if not b.get("is_fenced")
        )

    def controller_id(self) -> int:
        """The active KRaft controller (pausing it also stalls metadata changes)."""
        return self._admin_read(lambda a: a.describe_cluster())["controller_id"]

    def wait_for_leader(
        self, topic: str, partition: int = 0, *, not_in: tuple[int, ...] = (), timeout_s: float = 60.0
    ) -> int:
        """Wait until the partition has a leader that is not one of ``not_in``; return its id."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            try:
                leader = self.leader_of(topic, partition)
                if leader >= 0 and leader not in not_in:
                    return leader
            except Exception:  # metadata briefly unavailable during the election
                pass
            time.sleep(0.1)
        raise ClusterError(f"{topic}-{partition} got no new leader within {timeout_s} s")

    def broker_log(self, broker_id: int, tail_lines: int | None = 40) -> str:
        """The last lines of a broker's (or a dedicated controller's, ids 101...) log file."""
        node = self.controllers.get(broker_id) or self._node(broker_id)
        lines = node.log_path.read_text(errors="replace").splitlines()
        return "\n".join(lines[-tail_lines:] if tail_lines else lines)

    def status(self) -> list[dict]:
        """One row per broker: id, running, paused, pid, ports, log file."""
        return [
            {
                "broker": n.node_id,
                "running": n.running(),
                "paused": n.paused,
                "pid": n.pid,
                "client_port": self._client_facing_port(n),
                "log": str(n.log_path),
            }
            for n in self.nodes.values()
        ]

    def jvm_pids(self) -> list[int]:
        return [n.pid for n in self._processes() if n.pid is not None and n.running()]

    def revive(self) -> list[int]:
        """Resume every paused broker and restart every stopped one; returns the restarted ids."""
        for node in self.nodes.values():
            if node.paused:
                self.resume(node.node_id)
        restarted = [node.node_id for node in self.nodes.values() if not node.running()]
        for broker_id in restarted:
            self.restart(broker_id, wait=False)
        if restarted:
            self.wait_registered(restarted)
        return restarted

    def _processes(self) -> list[Node]:
        return [*self.controllers.values(), *self.nodes.values()]

    # ---- internals ------------------------------------------------------------------------
    def _node(self, broker_id: int) -> Node:
        if broker_id not in self.nodes:
            raise ClusterError(f"no broker {broker_id}; brokers are {sorted(self.nodes) or 'not started'}")
        return self.nodes[broker_id]

    def _require_running(self, node: Node) -> None:
        if not node.running() or node.pid is None:
            raise ClusterError(f"broker {node.node_id} is not running; start it with cluster.restart({node.node_id})")

    def _prepare_dirs(self) -> None:
        data = self.root / "data"
        pidfile = self.root / "cluster.pid"
        if pidfile.exists():
            try:
                owner = int(pidfile.read_text().split()[0])
            except (ValueError, IndexError):
                owner = -1
            if owner > 0 and owner != os.getpid() and _pid_alive(owner):
                raise StaleDataDir(
                    f"{self.root} belongs to a cluster still run by process {owner}. Stop that "
                    f"cluster (cluster.stop() in its notebook, or restart that kernel) or choose "
                    f"another data_dir."
                )
        if data.exists() and any(data.iterdir()):
            if self._wipe or self._own_dir:
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
        if self._own_dir:
            _prune_old_cluster_dirs(self.root.parent, keep=5)

    def _allocate_nodes(self) -> None:
        count = 4 * self.n + self.n_controllers
        if self.base_port is not None:
            ports = list(range(self.base_port, self.base_port + count))
            busy = [p for p in ports if not port_is_free(p)]
            if busy:
                raise PortInUse(
                    f"port(s) {busy} on 127.0.0.1 are already in use (another cluster still "
                    f"running? `ss -ltnp` shows who). Stop it, or pick another base_port, or "
                    f"leave base_port unset to use free ports."
                )
        else:
            ports = []
            while len(ports) < count:  # distinct free ports (the OS may hand one out twice)
                p = free_port()
                if p not in ports:
                    ports.append(p)
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
        client_host = "127.0.0.1" if self.use_proxies else self.listen_host
        for n in self.nodes.values():
            advertised = self._client_facing_port(n)
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
                **self.config,
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
                **self.config,
            }
            n.config_path.write_text("".join(f"{k}={v}\n" for k, v in props.items()))

    def _format_storage(self, java: str, classpath: str) -> None:
        procs = []
        for n in self._processes():  # one JVM per node, in parallel: ~3 s instead of ~9 s
            cmd = [
                java,
                "-Xmx256m",
                "-XX:TieredStopAtLevel=1",
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

    def _launch(self, node: Node) -> None:
        role = "controller" if node.node_id in self.controllers else "broker"
        with open(node.log_path, "a") as log:
            log.write(f"=== starting {role} {node.node_id} at {time.strftime('%H:%M:%S')} ===\n")
        cmd = [
            sys.executable,
            str(WATCHDOG),
            str(os.getpid()),
            str(node.log_path),
            "--",
            self._java,
            f"-Xmx{self.heap_mb}m",
            *self.jvm_opts,
            f"-Dcourse.cluster={self.tag}",
            "-cp",
            self._classpath,
            "kafka.Kafka",
            str(node.config_path),
        ]
        # A new session: Ctrl-C in a terminal reaches Python (which cleans up), not the JVMs.
        wd = subprocess.Popen(cmd, stdout=subprocess.PIPE, stdin=subprocess.DEVNULL, start_new_session=True, text=True)
        line = wd.stdout.readline()
        wd.stdout.close()
        if not line.strip().isdigit():
            wd.kill()
            raise ClusterError(f"could not start {role} {node.node_id}; see {node.log_path}")
        node.watchdog, node.pid, node.paused = wd, int(line), False

    def _check_alive(self, node: Node) -> None:
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

    def _wait_ready(self, timeout_s: float) -> None:
        """Ready means: all brokers registered, and a RF=n topic accepts and returns a record."""
        from tqdm.auto import tqdm

        deadline = time.monotonic() + timeout_s
        steps = tqdm(total=3, desc="Starting Kafka", disable=not self.progress, leave=False)
        try:
            while True:  # 1. every broker registered and unfenced
                for node in self._processes():
                    self._check_alive(node)
                upstream = "127.0.0.1" if self.use_proxies else self._local_host
                if not all(_accepts(node.client_port, upstream) for node in self.nodes.values()):
                    self._deadline(deadline, "brokers to open their client ports")
                    time.sleep(0.3)  # JVMs still starting: don't make kafka-python back off
                    continue
                try:
                    if len(self.live_broker_ids()) == self.n:
                        break
                    last = "not all registered"
                except Exception as e:  # not listening yet
                    last = repr(e)
                self._deadline(deadline, f"brokers to register (last: {last})")
                time.sleep(0.3)
            self.timings_s["registered"] = time.monotonic() - (deadline - timeout_s)
            steps.update(1)
            self.create_topic("__course_ready", timeout_s=max(1.0, deadline - time.monotonic()))
            steps.update(1)
            self._smoke_test(deadline)  # 3. a real produce + consume round trip
            steps.update(1)
        finally:
            steps.close()

    def _smoke_test(self, deadline: float) -> None:
        from kafka import KafkaConsumer, KafkaProducer, TopicPartition

        marker = f"ready-{self.cluster_id}".encode()
        while True:
            try:
                p = KafkaProducer(
                    bootstrap_servers=self.bootstrap_servers,
                    acks="all",
                    request_timeout_ms=10000,
                    max_block_ms=10000,
                    **self.client_auth(),
                )
                try:
                    p.send("__course_ready", marker, partition=0).get(timeout=15)
                finally:
                    p.close(timeout=5)
                c = KafkaConsumer(
                    bootstrap_servers=self.bootstrap_servers,
                    enable_auto_commit=False,
                    consumer_timeout_ms=10000,
                    **self.client_auth(),
                )
                try:
                    tp = TopicPartition("__course_ready", 0)
                    c.assign([tp])
                    c.seek_to_beginning(tp)
                    if any(r.value == marker for r in c):
                        return
                finally:
                    c.close()
            except Exception as e:  # leaders still settling: retry until the deadline
                last = e
            else:
                last = None
            self._deadline(deadline, f"a test record to round-trip (last error: {last!r})")
            time.sleep(0.5)

    def _deadline(self, deadline: float, what: str) -> None:
        if time.monotonic() > deadline:
            logs = ", ".join(str(n.log_path) for n in self.nodes.values())
            raise ClusterError(f"timed out waiting for {what}. Broker logs: {logs}")

    def _kill_node(self, node: Node, sig: int) -> None:
        if node.pid is None or not node.running():
            return
        try:
            if node.paused:
                os.kill(node.pid, signal.SIGCONT)  # a stopped process cannot act on SIGTERM
            os.kill(node.pid, sig)
        except ProcessLookupError:
            pass
        node.paused = False

    def _signal_and_wait(self, node: Node, sig: int, timeout_s: float) -> None:
        self._kill_node(node, sig)
        if node.watchdog is None:
            return
        try:
            node.watchdog.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:  # controlled shutdown stuck: fall back to a crash
            self._kill_node(node, signal.SIGKILL)
            node.watchdog.wait(timeout=10)


def _accepts(port: int, host: str = "127.0.0.1") -> bool:
    try:
        socket.create_connection((host, port), timeout=0.5).close()
        return True
    except OSError:
        return False


def _pid_alive(pid: int) -> bool:
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
                if _pid_alive(int(pidfile.read_text().split()[0])):
                    continue
            except (ValueError, IndexError):
                pass
        shutil.rmtree(d, ignore_errors=True)
