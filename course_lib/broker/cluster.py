"""The simulated cluster a notebook talks to: brokers, controller, network, one history.

>>> cluster = Cluster(brokers=3, seed=1)
>>> cluster.create_topic("orders", partitions=1, replication_factor=3, min_insync_replicas=2)
>>> cluster.leader_of("orders")
1
>>> cluster.crash(1)
>>> cluster.run_for(10_000)           # the controller notices after broker_session_timeout_ms
>>> cluster.leader_of("orders"), cluster.partition_state("orders")["leader_epoch"]
(2, 1)

Pass the cluster as ``bootstrap_servers`` to :class:`course_lib.clients.KafkaProducer`.

Code outside the broker (charts, the nemesis, experiments) reads the cluster only through
:meth:`Cluster.inspect` and :meth:`Cluster.inspect_broker`: frozen snapshots, so nothing outside
can change a broker's state by accident and the broker's internals may change freely.

>>> view = cluster.inspect("orders")
>>> view.leader, view.leader_epoch, view.isr, view.replicas
(2, 1, (2, 3), (1, 2, 3))
>>> view.replica(1).up, view.replica(2).role    # the controller decided; broker 2 hears it next
(False, 'follower')
>>> cluster.run_for(100)
>>> view = cluster.inspect("orders")
>>> view.replica(2).role, view.replica(2).epochs, view.hw, view.lso
('leader', ((1, 0),), 0, 0)
>>> cluster.inspect_broker(1)
BrokerView(broker_id=1, up=False, paused=False, fenced=True)

Taught in notebooks/01_replicated_log.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from kafka import errors as Errors

from ..history import INFO, OK, History, Nemesis, OpName, as_text
from ..sim import Network, Simulation
from .broker import Broker, node_name
from .controller import Controller
from .options import ClusterOptions
from .protocol import TopicConfig
from .share_config import check_group_config


@dataclass(frozen=True)
class ReplicaView:
    """One replica of a partition as its broker holds it now (the simulator never deletes from a
    log's head - no retention - so every log starts at offset 0)."""

    broker_id: int
    up: bool
    paused: bool
    role: str  # "leader" or "follower": what this broker believes, not the controller's view
    leo: int  # log end offset: the next offset this replica would write
    hw: int  # high watermark as this replica knows it (followers learn it one fetch late)
    epochs: tuple[tuple[int, int], ...]  # (leader epoch, start offset) - the leader epoch cache


@dataclass(frozen=True)
class PartitionView:
    """One partition: the controller's decision (leader, epoch, ISR, ELR) and every replica's log.

    ``hw`` and ``lso`` are the leader's (what consumers read below); ``None`` while the
    partition has no live leader."""

    topic: str
    partition: int
    leader: int | None
    leader_epoch: int
    replicas: tuple[int, ...]  # the controller's order
    isr: tuple[int, ...]
    elr: tuple[int, ...]
    last_known_leader: int | None
    replica_views: tuple[ReplicaView, ...]  # in ``replicas`` order
    hw: int | None
    lso: int | None
    time_ms: float

    def replica(self, broker_id: int) -> ReplicaView:
        for r in self.replica_views:
            if r.broker_id == broker_id:
                return r
        raise ValueError(
            f"broker {broker_id} holds no replica of {self.topic}-{self.partition}; replicas are {self.replicas}"
        )


@dataclass(frozen=True)
class BatchView:
    """One batch of a leader's log: its records' values, or a transaction marker."""

    base_offset: int
    values: tuple  # the records' values (empty for a COMMIT/ABORT marker)
    producer_id: int
    is_transactional: bool
    control: str | None  # "commit" / "abort" for a transaction marker, else None


@dataclass(frozen=True)
class InFlightView:
    """One record of a share-partition: its state, delivery count, holder and lock."""

    offset: int
    state: str  # AVAILABLE / ACQUIRED / ACKNOWLEDGED / ARCHIVED
    delivery_count: int
    member: str | None  # who holds it (ACQUIRED)
    lock_remaining_ms: float | None  # until its acquisition lock expires (ACQUIRED)


@dataclass(frozen=True)
class SharePartitionView:
    """A share group's state on one partition, as its leader holds it now (KIP-932)."""

    group: str
    topic: str
    partition: int
    leader: int
    start_offset: int  # everything below is acknowledged or archived
    high_watermark: int
    records: tuple[InFlightView, ...]  # the in-flight records, from the start offset up
    time_ms: float


@dataclass(frozen=True)
class BrokerView:
    broker_id: int
    up: bool  # the process runs (False after crash())
    paused: bool  # frozen by pause() (SIGSTOP)
    fenced: bool  # the controller has fenced it: out of every ISR, not elected


class Cluster:
    def __init__(self, brokers: int = 3, seed: int = 0, **options):
        if not isinstance(brokers, int) or brokers < 1:
            raise ValueError(f"brokers must be a positive integer, got {brokers!r}")
        self.options = ClusterOptions.from_kwargs(**options)
        self.seed = seed
        self.sim = Simulation(seed)
        self.network = Network(self.sim, self.options.latency_ms, self.options.jitter_ms, trace=self.options.trace)
        self.history = History(clock=lambda: self.sim.now)
        self.brokers: dict[int, Broker] = {}
        self.clients: list = []
        self.controller = Controller(self, self.options)
        for broker_id in range(1, brokers + 1):
            self.brokers[broker_id] = Broker(self, broker_id, self.options)
        self._client_ids: dict[str, int] = {}
        #: share group -> its group configs (``share.auto.offset.reset``, ...)
        self.share_group_configs: dict[str, dict] = {}
        #: the brokers' wall clock minus the simulated one: 0 (records carry simulated ms); the wire
        #: cluster sets it, its clients stamping records with the epoch ms
        self.wall_clock_offset_ms = 0.0

    def __repr__(self) -> str:
        up = [b for b, broker in self.brokers.items() if broker.alive]
        return f"<Cluster {len(self.brokers)} brokers, up={up}, t={self.sim.now:g} ms, seed={self.seed}>"

    # ---- topics -------------------------------------------------------------------------------
    def create_topic(
        self,
        name: str,
        partitions: int = 1,
        replication_factor: int | None = None,
        min_insync_replicas: int | None = None,
        unclean_leader_election_enable: bool | None = None,
    ) -> None:
        o = self.options
        if replication_factor is None:  # like Kafka's default.replication.factor, capped for small clusters
            replication_factor = min(o.default_replication_factor, len(self.brokers))
        config = TopicConfig(
            partitions=partitions,
            replication_factor=replication_factor,
            min_insync_replicas=o.min_insync_replicas if min_insync_replicas is None else min_insync_replicas,
            unclean_leader_election_enable=(
                o.unclean_leader_election_enable
                if unclean_leader_election_enable is None
                else unclean_leader_election_enable
            ),
        )
        if not isinstance(name, str) or not name:
            raise ValueError("topic name must be a non-empty string")
        if not isinstance(partitions, int) or partitions < 1:
            raise ValueError(f"partitions must be a positive integer, got {partitions!r}")
        if config.min_insync_replicas < 1:
            raise ValueError("min_insync_replicas must be >= 1")
        self.controller.create_topic(name, config)
        # let the decision reach every live replica before the learner's next step
        self.sim.run_until(
            lambda: all(
                (name, p) in b.partitions
                for b in self.brokers.values()
                if b.alive
                for p in range(partitions)
                if b.broker_id in self.controller.partitions[(name, p)].replicas
            ),
            1000,
        )

    def delete_topic(self, name: str) -> None:
        """Delete a topic, as Kafka's DeleteTopics does: the controller removes it from the
        metadata, each broker deletes its replicas when the update reaches it (a broker that is
        down, when it comes back), and clients then get ``UnknownTopicOrPartitionError``.
        Created again under the same name it is a new topic: a new topic id, offsets from 0.

        >>> cluster = Cluster(brokers=3, seed=1)
        >>> cluster.create_topic("orders")
        >>> cluster.delete_topic("orders")
        >>> cluster.leader_of("orders")
        Traceback (most recent call last):
        ...
        ValueError: no topic 'orders'; create it with cluster.create_topic('orders')
        """
        self.topic_config(name)  # a clear error for a topic that does not exist
        try:
            self.controller.delete_topic(name)
        except Errors.InvalidRequestError as exc:
            raise ValueError(str(exc)) from None
        # let the deletion reach every live broker before the learner's next step
        self.sim.run_until(
            lambda: all(name not in b.topic_configs for b in self.brokers.values() if b.alive and not b.paused), 1000
        )

    def alter_share_group_config(self, group: str, configs: dict) -> None:
        """Set share group configs, as ``kafka-configs --alter --entity-type groups`` does:
        ``share.auto.offset.reset``, ``share.record.lock.duration.ms``, ``share.delivery.count.limit``,
        ``share.partition.max.record.locks``, ``share.session.timeout.ms``, ``share.heartbeat.interval.ms``,
        and with ``kafka_version="4.4.0"`` the dead-letter queue's ``errors.deadletterqueue.topic.name``
        and ``errors.deadletterqueue.copy.record.enable`` (:mod:`.dead_letter_queue`); and a
        consumer group's (KIP-848) ``consumer.session.timeout.ms`` and ``consumer.heartbeat.interval.ms``.

        >>> cluster = Cluster(brokers=1)
        >>> cluster.alter_share_group_config("workers", {"share.auto.offset.reset": "earliest"})
        >>> cluster.alter_share_group_config("workers", {"share.delivery.count.limit": 1})
        Traceback (most recent call last):
        ...
        ValueError: share.delivery.count.limit must be in the range 2 to 10 inclusive.
        """
        for name, value in configs.items():
            check_group_config(name, value, self.options.kafka_version)
        self.share_group_configs.setdefault(group, {}).update(configs)

    def topic_config(self, topic: str) -> TopicConfig:
        try:
            return self.controller.configs[topic]
        except KeyError:
            raise ValueError(f"no topic {topic!r}; create it with cluster.create_topic({topic!r})") from None

    # ---- time -----------------------------------------------------------------------------------
    @property
    def now(self) -> float:
        return self.sim.now

    def run_for(self, ms: float) -> None:
        self.sim.run_for(ms)

    def run_until(self, predicate: Callable[[], bool], timeout_ms: float = 60_000) -> bool:
        return self.sim.run_until(predicate, timeout_ms)

    def at(self, delay_ms: float, action: Callable, *args) -> int:
        """Schedule a fault (or anything) ``delay_ms`` from now: ``cluster.at(50, cluster.crash, 1)``;
        returns the handle ``cluster.sim.cancel`` takes."""
        return self.sim.schedule(delay_ms, action, *args)

    # ---- faults (the nemesis) ------------------------------------------------------------------
    def broker(self, broker_id: int) -> Broker:
        try:
            return self.brokers[broker_id]
        except KeyError:
            raise ValueError(f"no broker {broker_id!r}; brokers are {sorted(self.brokers)}") from None

    def crash(self, broker_id: int) -> None:
        """Kill the broker process (SIGKILL): memory lost, log kept on disk."""
        self.broker(broker_id).crash()
        self.record("nemesis", Nemesis.CRASH, {"broker": broker_id})

    def restart(self, broker_id: int) -> None:
        self.broker(broker_id).restart()
        self.record("nemesis", Nemesis.RESTART, {"broker": broker_id})

    def pause(self, broker_id: int) -> None:
        """Freeze the broker (SIGSTOP): it stays in the ISR until replica_lag_time_max_ms."""
        self.broker(broker_id).pause()
        self.record("nemesis", Nemesis.PAUSE, {"broker": broker_id})

    def resume(self, broker_id: int) -> None:
        self.broker(broker_id).resume()
        self.record("nemesis", Nemesis.RESUME, {"broker": broker_id})

    def isolate(self, node: int | str) -> None:
        """Cut a broker (by id) or a client (by client_id) off from everyone."""
        name = node_name(node) if isinstance(node, int) else node
        self.network.isolate(name)
        self.record("nemesis", Nemesis.ISOLATE, {"node": name})

    def lose_next_ack(self, client_id: str | None = None, broker_id: int | None = None, close: bool = False) -> None:
        """Drop the next produce response (to ``client_id`` / from ``broker_id``, default any).

        ``close=False``: the client hears nothing and times out after ``request_timeout_ms``.
        ``close=True``: the connection also closes, so it retries at once (the real lab's proxy).
        """
        self.network.drop_next(
            src=None if broker_id is None else node_name(broker_id), dst=client_id, kind="produce_response", close=close
        )
        self.record("nemesis", Nemesis.LOSE_NEXT_ACK, {"client": client_id, "broker": broker_id})

    def lose_next_share_ack(self, client_id: str | None = None, broker_id: int | None = None) -> None:
        """Drop the next ShareAcknowledge answer (to ``client_id`` / from ``broker_id``): the
        acknowledgements were applied, the share consumer hears nothing (its commit_sync reports
        a timeout, the history an ``info`` outcome)."""
        self.network.drop_next(
            src=None if broker_id is None else node_name(broker_id), dst=client_id, kind="share_acknowledge_response"
        )
        self.record("nemesis", Nemesis.LOSE_NEXT_SHARE_ACK, {"client": client_id, "broker": broker_id})

    def lose_next_request(self, client_id: str | None = None, broker_id: int | None = None) -> None:
        self.network.drop_next(
            src=client_id, dst=None if broker_id is None else node_name(broker_id), kind="produce_request"
        )
        self.record("nemesis", Nemesis.LOSE_NEXT_REQUEST, {"client": client_id, "broker": broker_id})

    def heal(self) -> None:
        """Undo network faults (partitions, drops, delays). Crashed brokers stay down."""
        self.network.heal()
        self.record("nemesis", Nemesis.HEAL, None)

    def heal_all(self, timeout_ms: float = 60_000) -> bool:
        """Heal the network, resume and restart every broker, and wait until every partition has
        a leader whose whole log is committed (HW = LEO on all ISR members)."""
        self.heal()
        for broker_id, broker in sorted(self.brokers.items()):
            if broker.paused:
                self.resume(broker_id)
            if not broker.alive:
                self.restart(broker_id)
        return self.run_until(self._settled, timeout_ms)

    def _settled(self) -> bool:
        for tp, state in self.controller.partitions.items():
            if state.leader is None or len(state.isr) < len(state.replicas):
                return False
            leader = self.brokers[state.leader].partitions.get(tp)
            if (
                leader is None
                or leader.topic_id != state.topic_id
                or not leader.is_leader
                or leader.log.hw != leader.log.leo
            ):
                return False
            for r in state.replicas:
                replica = self.brokers[r].partitions.get(tp)
                # (a replica of a deleted topic of the same name does not count)
                if replica is None or replica.topic_id != state.topic_id or replica.log.leo != leader.log.leo:
                    return False
        return True

    # ---- reading the outcome ------------------------------------------------------------------
    def leader_of(self, topic: str, partition: int = 0) -> int | None:
        self.topic_config(topic)
        return self.controller.partitions[(topic, partition)].leader

    @property
    def broker_ids(self) -> list[int]:
        return sorted(self.brokers)

    @property
    def unclean_elections(self) -> int:
        """How many times the controller made an out-of-sync replica leader (unclean election)."""
        return self.controller.unclean_elections

    def inspect_broker(self, broker_id: int) -> BrokerView:
        broker = self.broker(broker_id)
        return BrokerView(broker_id, broker.alive, broker.paused, broker_id in self.controller.fenced)

    def inspect(self, topic: str, partition: int = 0) -> PartitionView:
        """A read-only snapshot of ``topic``-``partition`` now: the controller's view and each
        replica's log as that broker sees it."""
        config = self.topic_config(topic)
        if not isinstance(partition, int) or not 0 <= partition < config.partitions:
            raise ValueError(f"{topic} has partitions 0..{config.partitions - 1}, not {partition!r}")
        tp = (topic, partition)
        state = self.controller.partitions[tp]
        views = []
        for r in state.replicas:
            broker = self.brokers[r]
            p = broker.partitions.get(tp)
            views.append(
                ReplicaView(
                    broker_id=r,
                    up=broker.alive,
                    paused=broker.paused,
                    role="leader" if p and p.is_leader else "follower",
                    leo=p.log.leo if p else 0,
                    hw=p.log.hw if p else 0,
                    epochs=tuple(p.log.epochs) if p else (),
                )
            )
        leader = None  # the leader's replica while its broker runs: it answers consumers
        if state.leader is not None and self.brokers[state.leader].alive:
            leader = self.brokers[state.leader].partitions.get(tp)
        return PartitionView(
            topic=topic,
            partition=partition,
            leader=state.leader,
            leader_epoch=state.leader_epoch,
            replicas=tuple(state.replicas),
            isr=tuple(state.isr),
            elr=tuple(state.elr),
            last_known_leader=state.last_known_elr[0] if state.last_known_elr else None,
            replica_views=tuple(views),
            hw=None if leader is None else leader.log.hw,
            lso=None if leader is None else leader.readable_end(True),
            time_ms=self.sim.now,
        )

    def inspect_share_partition(self, group: str, topic: str, partition: int = 0) -> SharePartitionView | None:
        """A read-only snapshot of share group ``group``'s state on ``topic``-``partition`` at its
        leader; None while no leader holds one (no share consumer has fetched it yet, or the
        leader just changed and has not read the state back)."""
        self.inspect(topic, partition)  # a clear error for a wrong topic or partition
        state = self.controller.partitions[(topic, partition)]
        if state.leader is None or not self.brokers[state.leader].alive:
            return None
        sp = self.brokers[state.leader].shares.partitions.get((group, (topic, partition)))
        if sp is None or not sp.ready or not sp.current:
            return None
        now = self.sim.now
        return SharePartitionView(
            group,
            topic,
            partition,
            state.leader,
            sp.start,
            sp.partition.log.hw,
            tuple(
                InFlightView(
                    o,
                    r.state,
                    r.count,
                    r.member,
                    max(r.deadline - now, 0.0) if r.state == "ACQUIRED" else None,
                )
                for o, r in sorted(sp.records.items())
            ),
            now,
        )

    def partition_state(self, topic: str, partition: int = 0) -> dict:
        """Everything that explains a partition now: leader, epoch, ISR and each replica's
        LEO/HW/epochs as that broker sees it (:meth:`inspect` as plain data, for display)."""
        view = self.inspect(topic, partition)
        return {
            "topic": topic,
            "partition": partition,
            "leader": view.leader,
            "leader_epoch": view.leader_epoch,
            "isr": list(view.isr),
            "elr": list(view.elr),
            "last_known_leader": view.last_known_leader,
            "replicas": {
                r.broker_id: {
                    "up": r.up,
                    "paused": r.paused,
                    "leo": r.leo,
                    "hw": r.hw,
                    "epochs": list(r.epochs),
                    "role": r.role,
                }
                for r in view.replica_views
            },
            "time_ms": view.time_ms,
        }

    def state(self) -> dict:
        """A snapshot of the whole cluster for display."""
        return {
            "time_ms": self.sim.now,
            "brokers": {
                b: {"up": v.up, "paused": v.paused, "fenced": v.fenced}
                for b, v in ((b, self.inspect_broker(b)) for b in self.broker_ids)
            },
            "partitions": [self.partition_state(t, p) for (t, p) in sorted(self.controller.partitions)],
        }

    def leader_log(self, topic: str, partition: int = 0) -> tuple[BatchView, ...]:
        """The batches of the partition leader's log, oldest first (raises while it is offline)."""
        p = self._leader_replica(topic, partition)
        return tuple(
            BatchView(
                stored.base_offset,
                tuple(r.value for r in stored.batch.records),
                stored.batch.producer_id,
                stored.batch.is_transactional,
                stored.batch.control,
            )
            for stored in p.log.batches
        )

    def committed_records(
        self, topic: str, partition: int = 0, read_committed: bool = False
    ) -> list[tuple[int, bytes, bytes]]:
        """``(offset, key, value)`` a consumer can read now: below the leader's high watermark
        (``read_committed``: below the last stable offset, without aborted transactions)."""
        p = self._leader_replica(topic, partition)
        end = p.readable_end(read_committed)
        return [
            (offset, rec.key, rec.value)
            for offset, rec, stored in p.log.records(0, end)
            if not (
                read_committed and stored.batch.is_transactional and p.txn.is_aborted(stored.batch.producer_id, offset)
            )
        ]

    def aborted_records(self, topic: str, partition: int = 0) -> list[tuple[int, bytes, bytes]]:
        """Records of aborted transactions (what only read_uncommitted consumers see)."""
        p = self._leader_replica(topic, partition)
        return [
            (offset, rec.key, rec.value)
            for offset, rec, stored in p.log.records(0, p.log.hw)
            if stored.batch.is_transactional and p.txn.is_aborted(stored.batch.producer_id, offset)
        ]

    def _leader_replica(self, topic: str, partition: int):
        self.topic_config(topic)
        state = self.controller.partitions[(topic, partition)]
        if state.leader is None or not self.brokers[state.leader].alive:
            raise RuntimeError(
                f"{topic}-{partition} is offline (no live leader): restart a broker or call cluster.heal_all() first"
            )
        return self.brokers[state.leader].partitions[(topic, partition)]

    def final_read(self, topic: str, timeout_ms: float = 60_000, isolation_level: str = "read_uncommitted") -> list:
        """Jepsen's last step: heal everything, wait for the cluster to settle, read every
        partition in full and record the read in the history for the checker."""
        if isolation_level not in ("read_uncommitted", "read_committed"):
            raise ValueError(f"isolation_level must be 'read_uncommitted' or 'read_committed', got {isolation_level!r}")
        settled = self.heal_all(timeout_ms)
        committed = isolation_level == "read_committed"
        rows: list = []
        aborted: list = []
        for p in range(self.topic_config(topic).partitions):
            rows.extend([p, offset, as_text(value)] for offset, _, value in self.committed_records(topic, p, committed))
            aborted.extend(as_text(value) for _, _, value in self.aborted_records(topic, p))
        evidence = {"isolation_level": isolation_level, **({"aborted": aborted} if aborted else {})}
        self.history.record(
            "final-reader",
            OK if settled else INFO,
            OpName.FINAL_READ,
            rows,
            topic=topic,
            error=None if settled else "cluster did not settle before the final read",
            evidence=evidence,
        )
        return rows

    # ---- hooks --------------------------------------------------------------------------------
    def record(self, process: str, f: str, value) -> None:
        self.history.record(process, INFO, f, value)

    def on_truncate(self, broker, partition, removed) -> None:
        lost = [as_text(r.value) for b in removed if b.batch.control is None for r in b.batch.records]
        self.history.record(
            broker.node_id,
            INFO,
            OpName.TRUNCATE,
            lost,
            topic=partition.tp[0],
            partition=partition.tp[1],
            offset=removed[0].base_offset,
            evidence={"leo": partition.log.leo, "epochs": list(partition.log.epochs)},
        )

    def new_client_id(self, prefix: str) -> str:
        n = self._client_ids.get(prefix, 0) + 1
        self._client_ids[prefix] = n
        return f"{prefix}-{n}"
