"""A local 3-broker Apache Kafka cluster (KRaft, combined mode) that the course starts itself.

No Docker, no downloads from the Apache site: the official broker jars come from Maven Central
(:mod:`course_lib.clusters.jars`). Every node is broker *and* controller; everything listens on
127.0.0.1 on free ports. Each node has three listeners:

- ``CLIENT`` - what producers and consumers use. It sits behind a :class:`KafkaProxy` and
  advertises the proxy's port, so clients always (re)connect through the proxy and a produce
  response can be lost on purpose;
- ``REPLICATION`` - broker-to-broker fetches, never proxied (losing an ACK must not also break
  replication);
- ``CONTROLLER`` - the KRaft quorum (static voters ``1@...,2@...,3@...``).

Faults are real signals to the real JVM: ``crash`` (SIGKILL: a crash; the controller fences the
broker after ``broker.session.timeout.ms``), ``stop`` (SIGTERM: controlled shutdown, leadership
moves first), ``pause``/``resume`` (SIGSTOP/SIGCONT: a stalled broker; it stays in the ISR until the
controller fences it after ``broker.session.timeout.ms`` (3 s here) or its leader drops it after
``replica.lag.time.max.ms`` (10 s here), whichever comes first), ``restart``.

The JVM processes are supervised by :mod:`course_lib.real.processes`; the metadata (topics,
leaders, ISR) is read through :mod:`course_lib.real.admin`, as on a remote cluster.

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
import os
import signal
import threading
import time
import weakref
from pathlib import Path

from course_lib.clusters import CreatesTopics, Fault, MessageFaultsAtLeader, Part, TopicSpec
from course_lib.clusters.lab import LAB_BROKER_CONFIG
from course_lib.clusters.parts import MIN_ISR
from course_lib.clusters import jars
from course_lib.real.admin import ClusterAdmin, ClusterMetadata
from course_lib.real.broker_metadata import wait_known_everywhere
from course_lib.real.connect import Namespaced
from course_lib.real.errors import ClusterError, PortInUse, StaleDataDir
from course_lib.real.processes import JVM_OPTS, KafkaProcesses, Node, accepts, new_cluster_id
from course_lib.real.proxy import KafkaProxy
from course_lib.real.security import ClusterAuth

# the errors live in course_lib.real.errors; importable from here as before
__all__ = ["LocalCluster", "ClusterError", "PortInUse", "StaleDataDir", "LAB_BROKER_CONFIG"]

_live_clusters: "weakref.WeakSet[LocalCluster]" = weakref.WeakSet()


def _stop_all_at_exit() -> None:
    for c in list(_live_clusters):
        c.stop()


atexit.register(_stop_all_at_exit)


class LocalCluster(CreatesTopics, MessageFaultsAtLeader, Namespaced, ClusterMetadata):
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
    ``kafka_version``: which Apache Kafka release the nodes run, one of
    :data:`~course_lib.clusters.jars.SUPPORTED_KAFKA_VERSIONS` (default: ``$COURSE_KAFKA_VERSION``,
    else :data:`~course_lib.clusters.jars.KAFKA_VERSION`); fixed when the cluster is made.
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
        kafka_version: str | None = None,
    ) -> None:
        if brokers < 1:
            raise ValueError("a cluster needs at least one broker")
        #: what :meth:`like` makes another cluster with (its own ports, folder and cluster id)
        self._made_with = dict(
            brokers=brokers,
            heap_mb=heap_mb,
            proxies=proxies,
            broker_config=broker_config,
            start_timeout_s=start_timeout_s,
            progress=progress,
            fast_start=fast_start,
            controllers=controllers,
            auth=auth,
            listen_host=listen_host,
            advertised_host=advertised_host,
            kafka_version=kafka_version,
        )
        if controllers not in (0, 1, 3):
            raise ValueError(f"controllers must be 0 (combined broker+controller nodes), 1 or 3, got {controllers!r}")
        self.n = brokers
        self.n_controllers = controllers
        self.kafka_version = jars.check_kafka_version(kafka_version) if kafka_version else jars.kafka_version()
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
        root = (
            Path(data_dir)
            if data_dir
            else jars.cache_dir() / "clusters" / f"{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}-{self.cluster_id[:6]}"
        )
        self.processes = KafkaProcesses(
            root.expanduser().resolve(),
            brokers=brokers,
            controllers=controllers,
            own_dir=data_dir is None,
            wipe=wipe,
            base_port=base_port,
            heap_mb=heap_mb,
            jvm_opts=self.jvm_opts,
            cluster_id=self.cluster_id,
            advertise_proxies=proxies,
            auth=auth,
            listen_host=self.listen_host,
            advertised_host=self.advertised_host,
        )
        self.root, self.log_dir, self.tag = self.processes.root, self.processes.log_dir, self.processes.tag
        self.metadata = ClusterAdmin(self.admin, attempts=10, attempt_s=2.0)
        self.started = False
        self.timings_s: dict[str, float] = {}
        self._lock = threading.RLock()

    @property
    def nodes(self) -> dict[int, Node]:
        """The brokers' processes by id (in combined mode they are the controllers too)."""
        return self.processes.nodes

    @property
    def controllers(self) -> dict[int, Node]:
        """Dedicated controller processes by id (101, ...), if any."""
        return self.processes.controllers

    # ---- life cycle ------------------------------------------------------------------------
    def like(self) -> "LocalCluster":
        """Another cluster made as this one was - the same release, brokers, controllers and
        configs - in a folder and on ports of its own, not started: the fidelity matrix gives
        each client's Kafka column one, so the columns run side by side."""
        return LocalCluster(**self._made_with)

    def __enter__(self) -> "LocalCluster":
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def start(self) -> "LocalCluster":
        """Format storage, start every node and wait until the cluster serves a test topic.

        Free ports are chosen where nothing takes them by accident (``free_port``); if another
        process still took one before a broker bound it, the cluster starts again on new ports
        (twice at most) - with a ``base_port`` the ports are the caller's, and the error is theirs."""
        for attempt in range(3):
            try:
                return self._start_once()
            except PortInUse:
                if self.processes.base_port is not None or attempt == 2:
                    raise
                self.processes.discard_data()  # formatted by the failed attempt: ours alone
        raise AssertionError("unreachable")

    def _start_once(self) -> "LocalCluster":
        if self.started:
            return self
        t0 = time.monotonic()
        java = jars.java_executable()
        classpath = jars.kafka_classpath(progress=self.progress, version=self.kafka_version)
        self.timings_s["jars"] = time.monotonic() - t0
        self.processes.prepare_dirs()
        self.processes.allocate(self.config)
        _live_clusters.add(self)
        self.started = True
        try:
            self.processes.format_storage(java, classpath)
            self.timings_s["format"] = time.monotonic() - t0
            if self.use_proxies:
                for node in self.nodes.values():
                    node.proxy = KafkaProxy(node.client_port, port=node.proxy_port, host=self.listen_host)
            for node in self.processes.all():
                self.processes.launch(node)
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
            self.processes.signal_and_wait(self._node(broker_id), signal.SIGTERM, timeout_s)
            return
        with self._lock:
            if not self.started:
                return
            self.started = False
            # Whole cluster: its data is thrown away, so a controlled shutdown buys nothing
            # and the last nodes of a quorum can wait a long time for each other. Kill.
            self.processes.kill_all()
            _live_clusters.discard(self)

    def __del__(self):  # a forgotten cluster object still must not leak JVMs
        try:
            self.stop()
        except Exception:
            pass

    # ---- the cluster's parts (course_lib.clusters): every one but the simulator's own ----------
    label = "kafka"
    description = "real Kafka (LocalCluster)"
    #: how long a new topic may take to get its leaders and full ISR
    topic_timeout_s = 30.0

    def missing_parts(self) -> dict[str, str]:
        missing = {
            part: "not available on real Kafka (the simulator replays fault schedules in virtual time)"
            for part in (Part.FAULT_SCHEDULES, Part.NETWORK_PARTITIONS, Part.VIRTUAL_TIME)
        }
        if not self.use_proxies:
            no_proxies = "this LocalCluster runs without proxies (proxies=False): no message can be lost"
            missing.update(dict.fromkeys((Part.MESSAGE_FAULTS, Part.LOST_REQUESTS, Part.REFUSED_REQUESTS), no_proxies))
        return missing

    def broker_ids(self) -> list[int]:
        return sorted(self.nodes)

    def paused_brokers(self) -> list[int]:
        return [node_id for node_id, node in sorted(self.nodes.items()) if node.paused]

    def stopped_brokers(self) -> list[int]:
        return [node_id for node_id, node in sorted(self.nodes.items()) if not node.running()]

    # ---- faults ---------------------------------------------------------------------------
    def crash(self, broker_id: int) -> None:
        """SIGKILL the broker: a crash. Nothing is flushed; it is fenced after the session timeout."""
        self.processes.signal_and_wait(self._node(broker_id), signal.SIGKILL, 10)

    def pause(self, broker_id: int) -> None:
        """SIGSTOP: the broker freezes but its connections stay open - a GC pause or a hung disk."""
        self.processes.freeze(self._node(broker_id))

    def resume(self, broker_id: int) -> None:
        self.processes.thaw(self._node(broker_id))

    def restart(self, broker_id: int, timeout_s: float = 60.0, wait: bool = True) -> None:
        """Stop the broker cleanly if it runs, start it again and (``wait``) wait until it has
        registered; :meth:`wait_registered` waits for several restarted at once."""
        node = self._node(broker_id)
        if node.running():
            self.stop(broker_id)
        self.processes.launch(node)
        if wait:
            self.wait_registered([broker_id], timeout_s)

    def wait_registered(self, broker_ids: list[int], timeout_s: float = 60.0) -> None:
        """Wait until every broker of ``broker_ids`` runs and is registered (unfenced)."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            for broker_id in broker_ids:
                self.processes.check_alive(self._node(broker_id))
            try:
                if set(broker_ids) <= set(self.live_broker_ids()):
                    return
            except ClusterError:  # metadata briefly unavailable while it rejoins
                pass
            time.sleep(0.3)
        logs = ", ".join(str(self._node(b).log_path) for b in broker_ids)
        raise ClusterError(f"broker(s) {broker_ids} did not rejoin within {timeout_s:.0f} s; see {logs}")

    def proxy(self, broker_id: int) -> KafkaProxy:
        node = self._node(broker_id)
        if node.proxy is None:
            raise ClusterError(
                "this cluster was started with proxies=False, so messages cannot "
                "be dropped; use LocalCluster(proxies=True)"
            )
        return node.proxy

    def _leader(self, topic: str, partition: int) -> int:
        leader = self.leader_of(topic, partition)
        if leader is None or leader < 0:
            raise ClusterError(f"{topic}-{partition} has no leader right now")
        return leader

    def _message_fault(self, fault: Fault, topic: str, partition: int, followed: bool = False) -> int:
        """Arm the proxy of the partition's current leader (:data:`course_lib.real.proxy.MECHANISMS`):
        a lost ACK's batch is appended, the client never hears so; a lost request never reaches the
        broker; a refused one is answered with a retriable error once the answer to a produce behind
        it has come (``followed``), else 300 ms late, while later requests on the connection are
        appended. Returns the leader's id."""
        leader = self._leader(topic, partition)
        self.proxy(leader).arm(fault.op, followed)
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
        return self.processes.client_facing_port(node)

    def client_auth(self) -> dict:
        """kafka-python SASL arguments of the instructor (``{}`` on an open cluster)."""
        return self.auth.admin_client_kwargs() if self.auth else {}

    def client_config(self) -> dict:
        """kafka-python keyword arguments every client of this cluster needs: the address and,
        on an authenticated cluster, the instructor's login (as ``RemoteCluster.client_config``)."""
        return {"bootstrap_servers": self.bootstrap_servers, **self.client_auth()}

    def admin(self, **kwargs):
        from .admin_client import AdminClient

        kwargs.setdefault("request_timeout_ms", 15000)
        kwargs = {**self.client_auth(), **kwargs}
        return AdminClient(bootstrap_servers=self.live_bootstrap_servers(), client_id="course-admin", **kwargs)

    def create_from(self, spec: TopicSpec) -> str:
        """Create the topic (namespaced once by :meth:`topic`; RF=3 and min.insync.replicas=2 by
        default), wait for its leaders with a full ISR, and return the name to use."""
        return self._create(spec, self.topic_timeout_s)

    def _create(self, spec: TopicSpec, timeout_s: float) -> str:
        rf = spec.replication_factor or int(self.config["default.replication.factor"])
        min_isr = spec.min_insync_replicas or int(self.config["min.insync.replicas"])
        full = TopicSpec(self.topic(spec.name), spec.partitions, rf, {**spec.config, MIN_ISR: str(min_isr)})
        name = self.metadata.create_from(full, timeout_s)
        if not self.auth:  # (a secured listener would want a login first: the admin's answer must do)
            # every running broker knows its leaders, the group coordinators too (broker_metadata)
            live = [n for n in self.nodes.values() if n.running() and not n.paused]
            host = "127.0.0.1" if self.processes.advertise_proxies else self._local_host  # the broker itself
            addresses = [f"{host}:{n.client_port}" for n in live]
            wait_known_everywhere(addresses, name, full.partitions, timeout_s)
        return name

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
        return self.processes.log_tail(broker_id, tail_lines)

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
        return self.processes.pids()

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

    # ---- internals ------------------------------------------------------------------------
    def _node(self, broker_id: int) -> Node:
        return self.processes.broker(broker_id)

    def _wait_ready(self, timeout_s: float) -> None:
        """Ready means: all brokers registered, and a RF=n topic accepts and returns a record."""
        from tqdm.auto import tqdm

        deadline = time.monotonic() + timeout_s
        steps = tqdm(total=3, desc="Starting Kafka", disable=not self.progress, leave=False)
        try:
            while True:  # 1. every broker registered and unfenced
                for node in self.processes.all():
                    self.processes.check_alive(node)
                upstream = "127.0.0.1" if self.use_proxies else self._local_host
                if not all(accepts(node.client_port, upstream) for node in self.nodes.values()):
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
            self._create(TopicSpec("__course_ready"), timeout_s=max(1.0, deadline - time.monotonic()))
            steps.update(1)
            self._smoke_test(deadline)  # 3. a real produce + consume round trip
            steps.update(1)
        finally:
            steps.close()

    def _smoke_test(self, deadline: float) -> None:
        from kafka import TopicPartition

        from course_lib.client_adapters import library_consumer, library_producer

        marker = f"ready-{self.cluster_id}".encode()
        last: Exception | None = None
        while True:
            try:
                p = library_producer(
                    "kafka-python",
                    self.bootstrap_servers,
                    {"acks": "all", "request_timeout_ms": 10000, "max_block_ms": 10000, **self.client_auth()},
                )
                try:
                    p.send("__course_ready", marker, partition=0).get(timeout=15)
                finally:
                    p.close(timeout=5)
                c = library_consumer(
                    "kafka-python",
                    self.bootstrap_servers,
                    {"enable_auto_commit": False, "consumer_timeout_ms": 10000, **self.client_auth()},
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
