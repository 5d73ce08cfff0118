"""One scenario, two backends: everything a scenario may ask of a cluster.

A scenario (:mod:`course_lib.scenarios`) is written once against :class:`Backend` and runs on the
simulator (:class:`SimBackend`, virtual time, seeded) or on real Apache Kafka (:class:`KafkaBackend`,
a :class:`~course_lib.real.cluster.LocalCluster` or a shared cluster reached with
:func:`~course_lib.real.connect.connect`). Both write one :class:`~course_lib.history.History`
that one checker reads.

>>> b = SimBackend.start(seed=1)
>>> topic = b.create_topic("orders", min_insync_replicas=2)
>>> topic, b.leader_of(topic), b.isr_of(topic)
('orders', 1, [1, 2, 3])
>>> b.crash(1)
>>> b.wait_until(lambda: b.leader_of(topic) not in (None, 1), timeout_ms=30_000)
True
>>> [op.f for op in b.history if op.process == "nemesis"]
['crash']

What a backend can break is data (:attr:`Backend.faults`); a scenario that needs a fault the
backend lacks fails at once with :class:`MissingFault`, which says which fault and why:

>>> b.require("some_scenario", "crash", "teleport")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
course_lib.backend.MissingFault: some_scenario needs the fault(s) ['teleport'], which the simulator ...

Names: a shared cluster namespaces every topic, group and transactional id with the learner's
prefix - exactly once, in the cluster object (``cluster.topic(name)``); the backend only adds a
per-run suffix on real Kafka so that reruns never meet old data. Time: ``wait(ms)`` is virtual ms
on the simulator and wall-clock ms on Kafka; where the real world needs longer than the
simulator (followers fetching, a JVM noticing a dead peer) the scenario says so with
``wait(ms, kafka_ms=...)``.
"""

from __future__ import annotations

import heapq
import itertools
import time
import warnings
from typing import Any, Callable, Protocol, runtime_checkable

from .history import FAIL, INFO, OK, History, Nemesis

#: faults that act on brokers (processes) or on the network between clients and brokers
BROKER_FAULTS = frozenset(
    {Nemesis.CRASH, Nemesis.RESTART, Nemesis.PAUSE, Nemesis.RESUME, Nemesis.LOSE_NEXT_ACK, Nemesis.LOSE_NEXT_REQUEST}
)
#: faults that act on the learner's own client processes: every backend offers them
CLIENT_FAULTS = frozenset({Nemesis.CRASH_CLIENT, Nemesis.FREEZE_CLIENT})
#: the simulator alone replays random fault schedules on its virtual clock
SIM_ONLY_FAULTS = frozenset({Nemesis.SCHEDULE, Nemesis.ISOLATE})


class MissingFault(RuntimeError):
    """A scenario needs a fault this backend cannot inject; the message says which and why."""


@runtime_checkable
class Backend(Protocol):
    """Everything a scenario may ask of a cluster (see the module docstring).

    Stable: the fidelity tests build on these names; add to it, do not rename.
    """

    #: "simulator" or "kafka"
    kind: str
    #: the faults :meth:`require` accepts (names from :class:`course_lib.history.Nemesis`)
    faults: frozenset[str]
    #: why the faults this backend lacks are missing (one sentence)
    missing_reason: str
    history: History
    #: the underlying cluster object (simulated Cluster, LocalCluster or RemoteCluster)
    cluster: Any
    #: topics created under another name than asked (Kafka: prefix and run suffix) -> settings asked
    created_topics: dict[str, dict]

    # ---- names and topics
    def create_topic(
        self,
        name: str,
        partitions: int = 1,
        replication_factor: int | None = None,
        min_insync_replicas: int | None = None,
        unclean_leader_election_enable: bool | None = None,
    ) -> str: ...
    def group_id(self, name: str) -> str: ...
    def transactional_id(self, name: str) -> str: ...

    # ---- clients (kafka-python's classes and configuration names)
    def producer(self, **config) -> Any: ...
    def consumer(self, *topics: str, **config) -> Any: ...

    # ---- observation
    @property
    def brokers(self) -> list[int]: ...
    def leader_of(self, topic: str, partition: int = 0) -> int | None: ...
    def isr_of(self, topic: str, partition: int = 0) -> list[int]: ...
    def replicas_of(self, topic: str, partition: int = 0) -> list[int]: ...
    def partitions_of(self, topic: str) -> int: ...
    def evidence(self, topic: str, partition: int = 0) -> dict: ...
    def end_offset(self, topic: str, partition: int = 0, read_committed: bool = False) -> int: ...

    # ---- time
    @property
    def now_ms(self) -> float: ...
    def wait(self, ms: float, kafka_ms: float | None = None) -> None: ...
    def wait_until(self, predicate: Callable[[], bool], timeout_ms: float = 60_000) -> bool: ...
    def at(self, delay_ms: float, action: Callable, *args) -> None: ...
    def pick(self, simulator: Any, kafka: Any) -> Any: ...

    # ---- the nemesis: each call records exactly one nemesis operation of the same name
    def require(self, scenario: str, *faults: str) -> None: ...
    def crash(self, broker: int) -> None: ...
    def restart(self, broker: int) -> None: ...
    def pause(self, broker: int) -> None: ...
    def resume(self, broker: int) -> None: ...
    def lose_next_ack(self, producer: Any, topic: str, partition: int = 0, close: bool = False) -> None: ...
    def lose_next_request(self, producer: Any, topic: str, partition: int = 0) -> None: ...
    def crash_client(self, client: Any) -> None: ...
    def freeze_client(self, consumer: Any) -> None: ...
    def note(self, f: str, **value) -> None: ...

    # ---- Jepsen's last phase
    def heal(self) -> None: ...
    def final_read(self, topic: str, isolation_level: str = "read_uncommitted") -> list: ...
    def close_clients(self) -> None: ...


class _Common:
    """What both adapters do the same way."""

    kind = ""
    faults: frozenset[str] = frozenset()
    missing_reason = ""
    history: History

    def require(self, scenario: str, *faults: str) -> None:
        missing = sorted(set(faults) - self.faults)
        if missing:
            raise MissingFault(
                f"{scenario} needs the fault(s) {missing}, which {self.describe()} does not "
                f"offer: {self.missing_reason}"
            )

    def describe(self) -> str:
        return f"the {self.kind}"

    def note(self, f: str, **value) -> None:
        """Record a nemesis step that is not a fault of the cluster (``wake`` of a client the
        scenario itself drives)."""
        self.history.record("nemesis", INFO, f, value)

    def pick(self, simulator: Any, kafka: Any) -> Any:
        """The value for this backend, where the real world differs from the simulated one in
        time (followers fetch within a millisecond, a JVM needs seconds to notice a dead peer) or
        in the client settings that timing needs. Scenarios use it for timing only."""
        return simulator if self.kind == "simulator" else kafka


# ---- the simulator ---------------------------------------------------------------------------
class SimBackend(_Common):
    """The simulated cluster (:class:`course_lib.broker.Cluster`): seeded, virtual time, every fault."""

    kind = "simulator"
    faults = BROKER_FAULTS | CLIENT_FAULTS | SIM_ONLY_FAULTS
    missing_reason = "not simulated"

    def __init__(self, cluster) -> None:
        self.cluster = cluster
        self.history = cluster.history
        self.created_topics: dict[str, dict] = {}  # names are used as asked: nothing to record

    @classmethod
    def start(cls, seed: int = 0, brokers: int = 3, **options) -> SimBackend:
        """A fresh 3-broker simulated cluster (``options``: :class:`~course_lib.broker.ClusterOptions`)."""
        from .broker import Cluster

        return cls(Cluster(brokers=brokers, seed=seed, **options))

    def describe(self) -> str:
        return "the simulator"

    def __repr__(self) -> str:
        return f"<SimBackend {self.cluster!r}>"

    # names: one learner, one process: names are used as given
    def create_topic(
        self, name, partitions=1, replication_factor=None, min_insync_replicas=None, unclean_leader_election_enable=None
    ) -> str:
        self.cluster.create_topic(
            name,
            partitions=partitions,
            replication_factor=replication_factor,
            min_insync_replicas=min_insync_replicas,
            unclean_leader_election_enable=unclean_leader_election_enable,
        )
        return name

    def group_id(self, name: str) -> str:
        return name

    def transactional_id(self, name: str) -> str:
        return name

    def producer(self, **config):
        from .clients import KafkaProducer

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # scenarios set enable_idempotence explicitly when it matters
            return KafkaProducer(bootstrap_servers=self.cluster, **config)

    def consumer(self, *topics, **config):
        from .clients import KafkaConsumer

        return KafkaConsumer(*topics, bootstrap_servers=self.cluster, **config)

    @property
    def brokers(self) -> list[int]:
        return sorted(self.cluster.brokers)

    def leader_of(self, topic, partition=0):
        return self.cluster.leader_of(topic, partition)

    def isr_of(self, topic, partition=0):
        return sorted(self.cluster.partition_state(topic, partition)["isr"])

    def replicas_of(self, topic, partition=0) -> list[int]:
        return list(self.cluster.partition_state(topic, partition)["replicas"])  # the controller's order

    def partitions_of(self, topic) -> int:
        return self.cluster.topic_config(topic).partitions

    def evidence(self, topic, partition=0) -> dict:
        s = self.cluster.partition_state(topic, partition)
        leader = s["leader"]
        hw = s["replicas"][leader]["hw"] if leader is not None else None
        return {"leader": leader, "leader_epoch": s["leader_epoch"], "isr": sorted(s["isr"]), "hw": hw}

    def end_offset(self, topic, partition=0, read_committed=False) -> int:
        return self.cluster._leader_replica(topic, partition).readable_end(read_committed)

    @property
    def now_ms(self) -> float:
        return self.cluster.now

    def wait(self, ms, kafka_ms=None) -> None:
        if ms > 0:
            self.cluster.run_for(ms)

    def wait_until(self, predicate, timeout_ms=60_000) -> bool:
        return self.cluster.run_until(predicate, timeout_ms)

    def at(self, delay_ms: float, action: Callable, *args) -> None:
        """Schedule ``action`` ``delay_ms`` from now on the virtual clock."""
        self.cluster.at(delay_ms, action, *args)

    def crash(self, broker):
        self.cluster.crash(broker)

    def restart(self, broker):
        self.cluster.restart(broker)

    def pause(self, broker):
        self.cluster.pause(broker)

    def resume(self, broker):
        self.cluster.resume(broker)

    def lose_next_ack(self, producer, topic, partition=0, close=False):
        self.cluster.lose_next_ack(producer.node_id, close=close)

    def lose_next_request(self, producer, topic, partition=0):
        self.cluster.lose_next_request(producer.node_id)

    def crash_client(self, client):
        client.crash()  # the simulated client records crash_client itself

    def freeze_client(self, consumer):
        consumer._heartbeat_gen += 1  # its heartbeat timer stops; it polls no more
        self.history.record("nemesis", INFO, Nemesis.FREEZE_CLIENT, {"client": consumer.node_id})

    def heal(self) -> None:
        self.cluster.heal_all()

    def final_read(self, topic, isolation_level="read_uncommitted"):
        return self.cluster.final_read(topic, isolation_level=isolation_level)

    def close_clients(self) -> None:
        """Nothing to release: simulated clients end with the simulation."""


# ---- real Kafka ---------------------------------------------------------------------------------
_run_ids = itertools.count(1)


class KafkaBackend(_Common):
    """Real Kafka through kafka-python: a :class:`LocalCluster` (every fault) or a cluster reached
    with :func:`connect` (client faults only: its brokers run elsewhere).

    One backend object is one run: a fresh history, and topic, group and transactional ids with a
    per-run suffix (the cluster adds the learner's prefix).
    """

    kind = "kafka"

    def __init__(self, cluster) -> None:
        self.cluster = cluster
        self.run_id = f"{int(time.time()) % 100000}{next(_run_ids):03d}"
        t0 = time.monotonic()
        self.history = History(clock=lambda: (time.monotonic() - t0) * 1000)
        self._names = itertools.count(1)
        self._clients: list = []
        self._timeline: list = []  # (due, seq, action, args): run by wait()
        #: every topic this run created -> the settings the scenario asked for (Kafka's names)
        self.created_topics: dict[str, dict] = {}
        self._seq = itertools.count()
        local = hasattr(cluster, "nodes") and hasattr(cluster, "kill")
        # message faults: the LocalCluster's proxies, or the learner's own proxy (connect())
        proxies = (local and getattr(cluster, "use_proxies", False)) or getattr(cluster, "message_faults", False)
        self.faults = (
            CLIENT_FAULTS
            | (frozenset({Nemesis.CRASH, Nemesis.RESTART, Nemesis.PAUSE, Nemesis.RESUME}) if local else frozenset())
            | (frozenset({Nemesis.LOSE_NEXT_ACK, Nemesis.LOSE_NEXT_REQUEST}) if proxies else frozenset())
        )
        if not local:
            self.missing_reason = (
                f"its brokers run elsewhere ({cluster.bootstrap_servers}, e.g. a shared workshop cluster): "
                f"this notebook cannot signal their processes (broker faults are the instructor's: "
                f"python -m course_lib.workshop broker ...); use LocalCluster() for these"
            )
        elif not proxies:
            self.missing_reason = "this LocalCluster runs without proxies (proxies=False): no message can be lost"
        else:
            self.missing_reason = "not available on real Kafka (the simulator replays fault schedules in virtual time)"

    @classmethod
    def fresh(cls, target) -> KafkaBackend:
        """A new run on the same cluster (``target``: a cluster or another KafkaBackend)."""
        return cls(target.cluster if isinstance(target, KafkaBackend) else target)

    def describe(self) -> str:
        return f"real Kafka ({type(self.cluster).__name__})"

    def __repr__(self) -> str:
        return f"<KafkaBackend {self.cluster!r} run {self.run_id}>"

    # ---- names: the cluster adds the learner prefix, once; we add the run suffix
    def _unique(self, name: str) -> str:
        return f"{name}-{self.run_id}"

    def create_topic(
        self, name, partitions=1, replication_factor=None, min_insync_replicas=None, unclean_leader_election_enable=None
    ) -> str:
        config = {}
        if unclean_leader_election_enable is not None:
            config["unclean.leader.election.enable"] = str(bool(unclean_leader_election_enable)).lower()
        full = self.cluster.create_topic(
            self._unique(name),
            partitions=partitions,
            replication_factor=replication_factor,
            min_insync_replicas=min_insync_replicas,
            config=config,
        )
        asked = {
            "partitions": partitions,
            "replication_factor": replication_factor,
            "min.insync.replicas": min_insync_replicas,
            **config,
        }
        self.created_topics[full] = {k: v for k, v in asked.items() if v is not None}
        return full

    def group_id(self, name: str) -> str:
        return self.cluster.group_id(self._unique(name))

    def transactional_id(self, name: str) -> str:
        return self.cluster.transactional_id(self._unique(name))

    def _process(self, role: str, config: dict) -> str:
        return config.get("client_id") or f"{role}-{next(self._names)}"

    def producer(self, **config):
        from .real.recording import RecordingProducer

        p = RecordingProducer(self, self._process("producer", config), **config)
        self._clients.append(p)
        # Fetch the metadata of this run's topics now, as the simulated producer does when it is
        # created: a first send after a pause would otherwise ask a frozen broker and wait.
        for topic in self.created_topics:
            p.partitions_for(topic)
        return p

    def consumer(self, *topics, **config):
        from .real.recording import RecordingConsumer

        c = RecordingConsumer(self, self._process("consumer", config), *topics, **config)
        self._clients.append(c)
        return c

    # ---- observation
    @property
    def brokers(self) -> list[int]:
        nodes = getattr(self.cluster, "nodes", None)
        return sorted(nodes) if nodes else self.cluster.live_broker_ids()

    def leader_of(self, topic, partition=0):
        leader = self.cluster.leader_of(topic, partition)
        return None if leader is None or leader < 0 else leader

    def isr_of(self, topic, partition=0):
        return sorted(self.cluster.isr_of(topic, partition))

    def replicas_of(self, topic, partition=0) -> list[int]:
        return list(self.cluster.partition_info(topic, partition).get("replica_nodes") or self.isr_of(topic, partition))

    def partitions_of(self, topic) -> int:
        return len(self.cluster.partitions_of(topic))

    def evidence(self, topic, partition=0) -> dict:
        info = self.cluster.partition_info(topic, partition)
        leader = info["leader_id"]
        return {
            "leader": None if leader < 0 else leader,
            "leader_epoch": info.get("leader_epoch", -1),
            "isr": sorted(info["isr_nodes"]),
        }

    def end_offset(self, topic, partition=0, read_committed=False) -> int:
        from .real.recording import end_offset

        return end_offset(self.cluster, topic, partition, read_committed)

    # ---- time: wall clock
    @property
    def now_ms(self) -> float:
        return self.history.clock()

    def wait(self, ms, kafka_ms=None) -> None:
        """Sleep ``kafka_ms`` (else ``ms``), running the actions :meth:`at` scheduled, when due."""
        ms = ms if kafka_ms is None else kafka_ms
        end = time.monotonic() + max(ms, 0) / 1000
        while self._timeline and self._timeline[0][0] <= end:
            due, _, action, args = heapq.heappop(self._timeline)
            time.sleep(max(0.0, due - time.monotonic()))
            action(*args)
        time.sleep(max(0.0, end - time.monotonic()))

    def at(self, delay_ms: float, action: Callable, *args) -> None:
        """Schedule ``action`` ``delay_ms`` from now; it runs during the next :meth:`wait` that
        reaches its time (in this thread: scheduled actions never race each other)."""
        heapq.heappush(self._timeline, (time.monotonic() + delay_ms / 1000, next(self._seq), action, args))

    def wait_until(self, predicate, timeout_ms=60_000) -> bool:
        deadline = time.monotonic() + timeout_ms / 1000
        while True:
            try:
                if predicate():
                    return True
            except Exception:  # metadata briefly unavailable (an election, a restarting broker)
                pass
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.1)

    # ---- the nemesis
    def _broker_fault(self, f: str, broker: int, action: Callable[[int], Any]) -> None:
        self.require(f, f)
        action(broker)
        self.history.record("nemesis", INFO, f, {"broker": broker})

    def crash(self, broker):
        self._broker_fault(Nemesis.CRASH, broker, self.cluster.kill)

    def restart(self, broker):
        self._broker_fault(Nemesis.RESTART, broker, self.cluster.restart)

    def pause(self, broker):
        self._broker_fault(Nemesis.PAUSE, broker, self.cluster.pause)

    def resume(self, broker):
        self._broker_fault(Nemesis.RESUME, broker, self.cluster.resume)

    def lose_next_ack(self, producer, topic, partition=0, close=True):
        """The leader's proxy swallows the next produce response and cuts the connection (a real
        client always sees the connection go: ``close`` is accepted for the simulator's sake)."""
        self.require(Nemesis.LOSE_NEXT_ACK, Nemesis.LOSE_NEXT_ACK)
        leader = self.cluster.drop_next_produce_response(topic, partition)
        self.history.record("nemesis", INFO, Nemesis.LOSE_NEXT_ACK, {"client": producer.node_id, "broker": leader})

    def lose_next_request(self, producer, topic, partition=0):
        """The leader's proxy spoils the next produce request so the broker refuses it (a retriable
        CORRUPT_MESSAGE); requests behind it on the connection go through - as a lost request
        followed by its retry does."""
        self.require(Nemesis.LOSE_NEXT_REQUEST, Nemesis.LOSE_NEXT_REQUEST)
        leader = self.cluster.spoil_next_produce_request(topic, partition)
        self.history.record("nemesis", INFO, Nemesis.LOSE_NEXT_REQUEST, {"client": producer.node_id, "broker": leader})

    def crash_client(self, client):
        client.crash()  # the recording client records crash_client itself

    def freeze_client(self, consumer):
        """A frozen consumer leaves its group after max.poll.interval.ms; closing it (without a
        commit) has the same effect without the wait."""
        self.history.record("nemesis", INFO, Nemesis.FREEZE_CLIENT, {"client": consumer.node_id})
        consumer.close_quietly()

    def heal(self, timeout_ms: float = 60_000) -> None:
        """Resume and restart every broker, then wait until every partition of this run has its
        full ISR back (a just-restarted leader may answer with a stale end offset before)."""
        if not (self.faults & BROKER_FAULTS) or not hasattr(self.cluster, "nodes"):
            return  # nothing of ours to heal (a shared cluster's lost ACKs need no healing)
        for node_id, node in sorted(self.cluster.nodes.items()):
            if node.paused:
                self.resume(node_id)
        stopped = [node_id for node_id, node in sorted(self.cluster.nodes.items()) if not node.running()]
        for node_id in stopped:  # start them all, then wait once: JVMs start in parallel
            self._broker_fault(Nemesis.RESTART, node_id, lambda b: self.cluster.restart(b, wait=False))
        if stopped:
            self.cluster.wait_registered(stopped)
        for topic in self._topics():
            if not self.wait_until(lambda t=topic: len(self.isr_of(t)) == len(self.brokers), timeout_ms):
                raise RuntimeError(f"{topic}-0 did not get its full ISR back within {timeout_ms / 1000:g} s")

    def _topics(self) -> list[str]:
        return sorted({op.topic for op in self.history if op.topic and op.f == "send"})

    def final_read(self, topic, isolation_level="read_uncommitted"):
        from .real.recording import final_read

        self.heal()
        return final_read(self, topic, isolation_level)

    def close_clients(self) -> None:
        """Close every client this run opened and did not close (after an error, too)."""
        for c in self._clients:
            c.close_quietly()


def open_backend(target=None, seed: int = 0, **sim_options) -> SimBackend | KafkaBackend:
    """The backend a scenario run uses.

    ``target``: ``None`` or ``"simulator"`` (a fresh simulated cluster from ``seed`` and
    ``sim_options``), a cluster object (``LocalCluster`` / ``connect()``), or a backend (a new run
    on the same cluster). ``sim_options`` matter to the simulator only: a real cluster's settings
    are its broker configuration.
    """
    if target is None or target == "simulator":
        return SimBackend.start(seed=seed, **sim_options)
    if isinstance(target, SimBackend):
        return SimBackend.start(seed=seed, **sim_options)
    if isinstance(target, KafkaBackend):
        return KafkaBackend.fresh(target)
    if hasattr(target, "bootstrap_servers"):
        return KafkaBackend(target)
    raise TypeError(f"backend must be 'simulator', a LocalCluster, a connect() handle or a Backend, got {target!r}")


__all__ = [
    "Backend",
    "SimBackend",
    "KafkaBackend",
    "MissingFault",
    "open_backend",
    "BROKER_FAULTS",
    "CLIENT_FAULTS",
    "SIM_ONLY_FAULTS",
    "OK",
    "FAIL",
    "INFO",
]
