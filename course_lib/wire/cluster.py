"""A simulated Kafka cluster that real clients reach over TCP.

>>> from kafka import KafkaProducer
>>> with WireCluster(brokers=3, seed=1) as wire:
...     wire.create_topic("orders", min_insync_replicas=2)
...     producer = KafkaProducer(bootstrap_servers=wire.bootstrap_servers, acks="all")
...     producer.send("orders", b"hello").get(timeout=10).offset
...     producer.close()
...     wire.call(lambda: wire.cluster.committed_records("orders"))
'orders'
0
[(0, None, b'hello')]

One thread (``wire-sim``) owns the :class:`~course_lib.broker.cluster.Cluster` and runs it
against the wall clock: virtual ms = wall ms since start. The reactor thread (sockets) hands it
decoded requests; everything else - Python callers, the nemesis, the CLI - reaches the simulation
through :meth:`WireCluster.call`, which runs a function on that thread and returns its result.

A wire cluster is a cluster of the seam (:mod:`course_lib.clusters`) with every part but network
partitions and virtual time: :meth:`WireCluster.lab` starts one with the lab's broker profile, and
``open_backend(wire)`` runs scenarios on it with kafka-python.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from typing import Any, Callable, Mapping


from ..broker.acls import Authorizer
from ..broker.broker_config import options_from_broker_config
from ..broker.cluster import Cluster
from ..broker.topic_requests import create_topic_request, delete_topic_request
from ..broker.simulated_cluster import partition_info
from ..clusters import BrokerFaultsHandedOn, CreatesTopics, Fault, MessageFaultsAtLeader, NamesAsGiven, Part, TopicSpec
from ..clusters.faults import mechanism_options
from ..clusters.lab import simulator_options
from ..history import History, Nemesis, Op, OpName
from . import apis
from .gateway import Gateway
from .reactor import Connection, Reactor, run_on
from .sasl import DEFAULT_MECHANISMS, SaslConfig, bare_token

log = logging.getLogger("course_lib.wire")

#: how long the simulation thread sleeps at most when nothing is due (it wakes on any request)
IDLE_WAIT_S = 0.05
#: a lost ACK's connection closes, as the lab proxy closes it (the nemesis can keep it open)
_AS_THE_PROXY = {Nemesis.LOSE_NEXT_ACK: {"close": True}}


class WireClusterError(RuntimeError):
    pass


def _explains(op: Op) -> bool:
    """A line of the simulated cluster's history that explains an outcome (see the checker)."""
    return op.process == "controller" or op.f == OpName.TRUNCATE


class WireCluster(CreatesTopics, BrokerFaultsHandedOn, MessageFaultsAtLeader, NamesAsGiven):
    """A seeded simulated cluster with one 127.0.0.1 listener per broker.

    ``options`` are :class:`~course_lib.broker.options.ClusterOptions` (e.g.
    ``group_initial_rebalance_delay_ms=0``); ``topics`` maps names to
    :meth:`create_topic` keyword arguments, created before the listeners open. ``users`` (name ->
    password) makes every listener SASL_PLAINTEXT with ``sasl_mechanisms`` enabled
    (:mod:`course_lib.wire.sasl`; ``.sasl.client_config(user)`` is what a client needs).
    ``config`` takes the same settings by Kafka's broker config names (``{"num.partitions": 4,
    "auto.create.topics.enable": "false"}``, :mod:`course_lib.broker.broker_config`).
    """

    #: the nemesis runs the brokers' faults on the simulation's thread (a crash closes sockets)
    _faults_run_by = "nemesis"

    def __init__(
        self,
        brokers: int = 3,
        seed: int = 0,
        host: str = "127.0.0.1",
        base_port: int | None = None,
        users: dict[str, str] | None = None,
        sasl_mechanisms: tuple[str, ...] = DEFAULT_MECHANISMS,
        config: Mapping[str, object] | None = None,
        **options,
    ):
        #: what :meth:`like` makes another cluster with (its own listeners)
        self._made_with = dict(
            brokers=brokers,
            seed=seed,
            host=host,
            users=users,
            sasl_mechanisms=sasl_mechanisms,
            config=config,
            **options,
        )
        from_config = options_from_broker_config(config or {})
        #: the broker configs given by Kafka's names: DescribeConfigs reports them as set
        #: (STATIC_BROKER_CONFIG) even where they equal Kafka's default, as server.properties does
        self.broker_config = {name: str(value) for name, value in (config or {}).items()}
        both = sorted(set(from_config) & set(options))
        if both:
            raise ValueError(f"{both} given twice, as a keyword argument and in config: give each setting once")
        options.update(from_config)
        self.sasl = SaslConfig(users, sasl_mechanisms) if users is not None else None
        #: what the listeners decode (SaslHandshake and SaslAuthenticate with users only)
        self.supported = {**apis.SUPPORTED, **apis.SASL_SUPPORTED} if self.sasl else apis.SUPPORTED
        self.host = host
        self.base_port = base_port
        self.cluster = Cluster(brokers=brokers, seed=seed, **options)
        o = self.cluster.options
        #: the cluster's ACLs and the decisions made with them (None: no authorizer configured,
        #: every client may do everything; :mod:`course_lib.wire.authorization`)
        self.authorizer = (
            Authorizer(o.super_users, o.allow_everyone_if_no_acl_found) if o.authorizer_class_name else None
        )
        self.seed = seed
        self.ports: dict[int, int] = {}
        self.groups = apis.GroupDirectory()
        self.share_sessions = apis.ShareSessions()
        self.reactor = Reactor(host, self._on_frame, self._on_open, self._on_close)
        self._inbox: queue.SimpleQueue = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._run, name="wire-sim", daemon=True)
        self._stopping = False
        self._started = False
        self._conn_count = 0
        self.requests_handled = 0
        from .nemesis import WireNemesis

        self.nemesis = WireNemesis(self)

    #: the backend's kind, and how messages name this cluster
    label = "wire"
    description = "the simulated cluster (course_lib.wire)"
    #: how long creating or deleting a topic may take to reach every live broker
    topic_timeout_s = 30.0

    @classmethod
    def lab(cls, brokers: int = 3, seed: int = 0, **options) -> "WireCluster":
        """A wire cluster with the lab's broker profile (:mod:`course_lib.clusters.lab`: min ISR 2, a
        killed broker fenced after 3 s, groups assigned at once), not started yet."""
        return cls(brokers=brokers, seed=seed, **{**simulator_options(), **options})

    def like(self) -> "WireCluster":
        """Another cluster made as this one was (the same seed and options, topics not copied) on
        listeners of its own, not started."""
        return WireCluster(**self._made_with)

    # ---- lifecycle --------------------------------------------------------------------------------
    def start(self) -> "WireCluster":
        if self._started:
            return self
        c = self.cluster
        # let every broker register with the controller and learn the cluster (virtual time, at once)
        c.run_until(lambda: all(b.live_brokers for b in c.brokers.values()), 60_000)
        for broker_id in sorted(c.brokers):
            self.ports[broker_id] = self._listen(broker_id)
        self._started = True
        self.reactor.start()
        self._thread.start()
        return self

    def _listen(self, broker_id: int) -> int:
        """``base_port + broker_id - 1`` when asked for and free, else any free port."""
        if self.base_port:
            wanted = self.base_port + broker_id - 1
            try:
                return self.reactor.listen(broker_id, wanted)
            except OSError as exc:
                log.warning("wire: port %d for broker %d is in use (%s): taking a free one", wanted, broker_id, exc)
        return self.reactor.listen(broker_id)

    def stop(self) -> None:
        """Stop both threads and close every socket."""
        if self._stopping:
            return
        if not self._started:  # never started: only the reactor's wake-up sockets to close
            self._stopping = True
            self.reactor.stop()
            return
        self.nemesis.cancel()
        self._stopping = True
        self._inbox.put(None)
        self._thread.join(10)
        self.reactor.stop()

    def __enter__(self) -> "WireCluster":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def __repr__(self) -> str:
        return f"<WireCluster {self.bootstrap_servers or 'not started'} seed={self.seed}>"

    @property
    def bootstrap_servers(self) -> str:
        return ",".join(f"{self.host}:{port}" for _, port in sorted(self.ports.items()))

    # ---- reaching the simulation --------------------------------------------------------------------
    def call(self, fn: Callable[..., Any], *args, timeout_s: float = 30.0) -> Any:
        """Run ``fn(*args)`` on the simulation thread and return its result (or raise its error)."""
        if not self._started or threading.current_thread() is self._thread:
            return fn(*args)
        if self._stopping:
            raise RuntimeError("the wire cluster is stopped")
        return run_on(self._inbox.put, fn, *args, timeout_s=timeout_s)

    def wait_until(self, predicate: Callable[[], bool], timeout_s: float = 30.0, interval_s: float = 0.01) -> bool:
        """Poll ``predicate`` (run on the simulation thread) until it holds or the time is up."""
        deadline = time.monotonic() + timeout_s
        while True:
            if self.call(predicate):
                return True
            if time.monotonic() >= deadline:
                return False
            time.sleep(interval_s)

    def create_from(self, spec: TopicSpec) -> str:
        """Create a topic and wait until every live broker knows it (as ``Cluster.create_topic``)."""
        name = spec.name
        error, message = self.call(
            self.create_topic_now, name, spec.partitions, spec.replication_factor or -1, dict(spec.config)
        )
        if error is not None:
            raise error(message)

        def known() -> bool:
            return all(name in b.topic_configs for b in self.cluster.brokers.values() if b.alive)

        if not self.wait_until(known, self.topic_timeout_s):
            raise TimeoutError(f"topic {name!r} did not reach every live broker within {self.topic_timeout_s} s")
        return name

    def create_topic_now(
        self,
        name: str,
        partitions: int,
        replication_factor: int,
        configs: dict,
        validate_only: bool = False,
        assignments: list | None = None,
    ):
        """On the simulation thread: ``(error class or None, message)`` - what CreateTopics answers."""
        return create_topic_request(
            self.cluster, name, partitions, replication_factor, configs, validate_only, assignments
        )

    def delete_topic(self, name: str, timeout_s: float = 30.0) -> None:
        """Delete a topic and wait until every live broker has deleted it (as ``Cluster.delete_topic``);
        ``UnknownTopicOrPartitionError`` if there is none."""
        error, message = self.call(self.delete_topic_now, name)
        if error is not None:
            raise error(message)

        def gone() -> bool:
            return all(name not in b.topic_configs for b in self.cluster.brokers.values() if b.alive and not b.paused)

        if not self.wait_until(gone, timeout_s):
            raise TimeoutError(f"the deletion of topic {name!r} did not reach every live broker within {timeout_s} s")

    def delete_topic_now(self, name: str):
        """On the simulation thread: ``(error class or None, message)`` - what DeleteTopics answers."""
        return delete_topic_request(self.cluster, name)

    # ---- the cluster's parts (course_lib.clusters) ---------------------------------------------
    def client_config(self) -> dict:
        return {"bootstrap_servers": self.bootstrap_servers}

    def missing_parts(self) -> dict[str, str]:
        return {
            Part.NETWORK_PARTITIONS: "isolation is not a Backend operation over the wire yet "
            "(WireCluster.nemesis.isolate does it)",
            Part.VIRTUAL_TIME: "faults timed against a pipeline's steps need the simulator's clock "
            "(run_pipeline's timed actions run only inside wait() on a wall clock)",
        }

    def record_events_into(self, history: History) -> None:
        """The simulated cluster's controller events (elections, ISR changes, fencing) and
        truncations go into ``history`` too, as they happen - the events a checker's explanation
        names (the cluster's nemesis lines are the backend's to record)."""
        self.call(lambda: self.cluster.history.copy_into(history, _explains))

    def broker_ids(self) -> list[int]:
        return list(self.cluster.broker_ids)

    def live_broker_ids(self) -> list[int]:
        """Brokers the controller has not fenced (as the metadata of a real cluster lists them)."""
        cluster = self.cluster
        return self.call(lambda: [b for b in cluster.broker_ids if not cluster.inspect_broker(b).fenced])

    def partitions_of(self, topic: str) -> list[int]:
        return list(range(self.call(lambda: self.cluster.topic_config(topic).partitions)))

    def partition_info(self, topic: str, partition: int = 0) -> dict:
        """The controller's view, in kafka-python's ``describe_topics`` shape (ValueError: unknown)."""
        return partition_info(self.call(lambda: self.cluster.inspect(topic, partition)))

    def leader_of(self, topic: str, partition: int = 0) -> int:
        """The partition's leader as the controller sees it now (-1 if none)."""
        return self.partition_info(topic, partition)["leader_id"]

    def isr_of(self, topic: str, partition: int = 0) -> list[int]:
        return sorted(self.partition_info(topic, partition)["isr_nodes"])

    # broker faults: what a killed, stopped or restarted process does to its sockets
    def _brokers_where(self, which: Callable[[Any], bool]) -> list[int]:
        cluster = self.cluster
        return self.call(lambda: [b for b in sorted(cluster.brokers) if which(cluster.inspect_broker(b))])

    def paused_brokers(self) -> list[int]:
        return self._brokers_where(lambda seen: seen.up and seen.paused)

    def stopped_brokers(self) -> list[int]:
        return self._brokers_where(lambda seen: not seen.up)

    def live_bootstrap_servers(self) -> str:
        """Like :attr:`bootstrap_servers` but only brokers that run and are not paused."""
        live = self._brokers_where(lambda seen: seen.up and not seen.paused)
        return ",".join(f"{self.host}:{self.ports[b]}" for b in live if b in self.ports)

    def restart(self, broker_id: int, timeout_s: float = 60.0, wait: bool = True) -> None:
        """Restart the broker (a running one is stopped first, as a real lab does) and
        (``wait``) wait until it has registered again."""
        if broker_id not in self.stopped_brokers():
            self.nemesis.crash(broker_id)
        self.nemesis.restart(broker_id)
        if wait:
            self.wait_registered([broker_id], timeout_s)

    def wait_registered(self, broker_ids: list[int], timeout_s: float = 60.0) -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if set(broker_ids) <= set(self.live_broker_ids()):
                return
            time.sleep(0.05)
        raise WireClusterError(f"brokers {broker_ids} did not register within {timeout_s} s")

    def revive(self) -> list[int]:
        """Heal the network, resume every paused broker, restart every crashed one and wait until
        they registered; returns the restarted ids."""
        down = self.stopped_brokers()
        self.nemesis.heal_all()
        if down:
            self.wait_registered(down)
        return down

    # message faults: the simulated network's, and the lab proxy's refused request
    def _leader(self, topic: str, partition: int) -> int:
        leader = self.leader_of(topic, partition)
        if leader < 0:
            raise WireClusterError(f"{topic}-{partition} has no leader right now")
        return leader

    def _message_fault(self, fault: Fault, topic: str, partition: int, followed: bool = False) -> int:
        """Arm the nemesis at the partition's leader (its hook of the fault's name): a lost ACK's
        batch is appended and its connection closes (as the lab proxy does); a lost request is
        dropped on the simulated network (the connection stalls until the client's request
        timeout); a refused one is answered with a retriable error, late (after the answer to the
        produce behind it, if ``followed``). Returns the leader."""
        leader = self._leader(topic, partition)
        how = {**_AS_THE_PROXY.get(fault.op, {}), **mechanism_options(followed)}
        getattr(self.nemesis, fault.hook)(broker_id=leader, **how)
        return leader

    # fault schedules: the simulator's, on the simulation thread at wall-clock ms
    def run_schedule(self, schedule: list, topic=None, client_id=None, on_fault=None) -> list:
        return self.nemesis.run_schedule(schedule, topic, client_id, on_fault)

    def cancel_schedules(self) -> None:
        self.nemesis.cancel()

    def heal_network(self) -> None:
        self.nemesis.heal()

    # ---- the simulation thread ------------------------------------------------------------------------
    def _run(self) -> None:
        sim = self.cluster.sim
        start_wall = time.monotonic()
        start_virtual = sim.now
        self.cluster.wall_clock_offset_ms = time.time() * 1000.0 - start_virtual
        inbox = self._inbox
        while not self._stopping:
            now = start_virtual + (time.monotonic() - start_wall) * 1000.0
            if now > sim.now:
                try:
                    sim.run(until=now)
                except Exception:  # noqa: BLE001 - keep serving; the failure is in the log
                    log.exception("wire: a simulation event failed")
            while True:
                try:
                    item = inbox.get_nowait()
                except queue.Empty:
                    break
                self._handle(item)
            due = sim.peek()
            now = start_virtual + (time.monotonic() - start_wall) * 1000.0
            wait = min(max((due - now) / 1000.0, 0.0), IDLE_WAIT_S)
            try:
                item = inbox.get(timeout=wait) if wait > 0 else inbox.get_nowait()
            except queue.Empty:
                continue
            self._handle(item)

    def _handle(self, item) -> None:
        if item is None:
            return
        try:
            item()
        except Exception:  # noqa: BLE001
            log.exception("wire: handling %r failed", item)

    # ---- from the reactor thread ------------------------------------------------------------------------
    def _on_open(self, conn: Connection) -> None:
        self._inbox.put(lambda: self._open_gateway(conn))

    def _open_gateway(self, conn: Connection) -> None:
        self._conn_count += 1
        gw = Gateway(self, conn, f"wire-{conn.broker_id}-{self._conn_count}")
        conn.gateway = gw
        broker = self.cluster.brokers[conn.broker_id]
        if not broker.alive or conn.closed:  # crashed while the connection was being accepted
            gw.alive = False
            self.reactor.post(lambda: self.reactor.close(conn, reset=True))
            return
        self.cluster.network.add(gw)

    def _on_close(self, conn: Connection) -> None:
        self._inbox.put(lambda: conn.gateway is not None and conn.gateway.socket_closed())

    def _on_frame(self, conn: Connection, frame: memoryview) -> None:
        """Decode on the reactor thread; a frame that does not decode closes its connection."""
        token = bare_token(conn, frame)  # after a SaslHandshake v0: a SASL token with no header
        if token is not None:
            self._inbox.put(lambda: self._request(conn, token.header, token))
            return
        try:
            api_key = int.from_bytes(frame[0:2], "big", signed=True)
            version = int.from_bytes(frame[2:4], "big", signed=True)
            supported = self.supported.get(api_key)
            request_cls = apis.REQUEST_CLASSES.get(api_key)
            if supported is None or not supported[0] <= version <= supported[1] or request_cls is None:
                header = apis.loose_header(frame, api_key, version)
                request = apis.Unsupported(header)
            else:
                request = request_cls.decode(frame, version=version, header=True)
                header = request.header
        except Exception as exc:  # noqa: BLE001 - malformed input: close this connection only
            log.warning("wire: malformed request from %s (%s): closing the connection", conn.peer, exc)
            self.reactor.close(conn)
            return
        self._inbox.put(lambda: self._request(conn, header, request))

    def _request(self, conn: Connection, header, request) -> None:
        gw = conn.gateway
        if gw is None or not gw.alive:
            return
        self.requests_handled += 1
        gw.submit(header, request)
