"""The controller (KRaft's active controller): broker liveness, leader election, ISR changes.

- Brokers heartbeat every ``broker_heartbeat_interval_ms``; one silent for
  ``broker_session_timeout_ms`` is *fenced*: removed from every ISR (never the last member) and
  replaced as leader by the first live replica still in the ISR. The leader epoch goes up by
  one with every leader change, which is what lets followers and clients reject a deposed
  leader.
- No live ISR member: the partition goes offline (leader ``None``) - unless
  ``unclean.leader.election.enable`` lets an out-of-sync replica lead, which keeps the
  partition available and silently drops whatever that replica never received.
- Leaders ask to change the ISR (AlterPartition); the controller refuses a request from a stale
  leader epoch or partition epoch, and never adds a fenced broker.
- Every decision is sent to the brokers over the network, so a broker cut off from the
  controller keeps acting on old information - as a real one does.

The controller itself is modelled as always available (a healthy KRaft quorum); brokers and the
network around it fail.

Taught in notebooks/02_acks_and_durability.
"""
from __future__ import annotations

from dataclasses import replace

from kafka import errors as Errors

from .broker import node_name
from .protocol import AlterPartitionResponse, PartitionState, PartitionUpdate, TopicConfig

CONTROLLER = "controller"


class Controller:
    node_id = CONTROLLER
    alive = True

    def __init__(self, cluster, options):
        self.cluster = cluster
        self.sim = cluster.sim
        self.options = options
        self.partitions: dict[tuple, PartitionState] = {}
        self.configs: dict[str, TopicConfig] = {}
        self.last_heartbeat: dict[int, float] = {}
        self.incarnations: dict[int, int] = {}
        self.metadata_version = 0
        self.fenced: set[int] = set()
        self.next_producer_id = 1000
        self.producer_epochs: dict[str, tuple[int, int]] = {}  # transactional id -> (pid, epoch)
        cluster.network.add(self)
        self.sim.schedule(options.broker_heartbeat_interval_ms / 2, self._check_sessions)

    # ---- topics -------------------------------------------------------------------------------
    def create_topic(self, name: str, config: TopicConfig) -> None:
        if name in self.configs:
            raise ValueError(f"topic {name!r} already exists")
        brokers = sorted(self.cluster.brokers)
        if config.replication_factor > len(brokers):
            raise Errors.InvalidReplicationFactorError(
                f"replication_factor={config.replication_factor} but the cluster has only "
                f"{len(brokers)} brokers")
        self.configs[name] = config
        offset = len(self.configs) - 1  # spread leaders of different topics over brokers
        for p in range(config.partitions):
            replicas = tuple(brokers[(p + offset + i) % len(brokers)] for i in range(config.replication_factor))
            live = tuple(r for r in replicas if r not in self.fenced)
            leader = live[0] if live else None
            self.partitions[(name, p)] = PartitionState(leader, 0, live or replicas[:1], replicas, 0)
        self._broadcast([(name, p) for p in range(config.partitions)])

    def ensure_internal_topic(self, name: str) -> None:
        """Create ``__consumer_offsets`` / ``__transaction_state`` on first use."""
        if name not in self.configs:
            rf = min(3, len(self.cluster.brokers))
            self.create_topic(name, TopicConfig(1, rf, min(2, rf), False))

    # ---- liveness -----------------------------------------------------------------------------
    def receive(self, src: str, msg) -> None:
        if msg.kind == "heartbeat":
            broker_id = msg.broker_id
            self.last_heartbeat[broker_id] = self.sim.now
            if self.incarnations.setdefault(broker_id, msg.incarnation) != msg.incarnation:
                # restarted before its session expired: the old incarnation is fenced first
                if broker_id not in self.fenced:
                    self.fence(broker_id, reason="it restarted (new incarnation)")
                self.incarnations[broker_id] = msg.incarnation
            if broker_id in self.fenced:
                self._unfence(broker_id)
            if msg.metadata_version < self.metadata_version:
                self._send_snapshot(broker_id)
        elif msg.kind == "alter_partition":
            self._alter_partition(src, msg)
        else:
            raise AssertionError(f"controller got an unknown message {msg.kind!r}")

    def on_disconnect(self, peer: str) -> None:
        """Liveness comes from heartbeats, not connections."""

    def _check_sessions(self) -> None:
        now = self.sim.now
        timeout = self.options.broker_session_timeout_ms
        for broker_id in sorted(self.cluster.brokers):
            if broker_id not in self.fenced and now - self.last_heartbeat.get(broker_id, 0.0) > timeout:
                self.fence(broker_id, reason=f"no heartbeat for {timeout:g} ms")
        self.sim.schedule(self.options.broker_heartbeat_interval_ms / 2, self._check_sessions)

    def fence(self, broker_id: int, reason: str) -> None:
        self.fenced.add(broker_id)
        self.cluster.record("controller", "fence", {"broker": broker_id, "reason": reason})
        changed = []
        for tp, state in sorted(self.partitions.items()):
            if broker_id not in state.replicas:
                continue
            isr = tuple(r for r in state.isr if r != broker_id) or state.isr
            new = replace(state, isr=isr)
            if state.leader == broker_id:
                new = self._elect(tp, new, reason=f"leader {broker_id} fenced")
            if new != state:
                self.partitions[tp] = replace(new, partition_epoch=state.partition_epoch + 1)
                changed.append(tp)
        self._broadcast(changed)

    def _unfence(self, broker_id: int) -> None:
        self.fenced.discard(broker_id)
        self.cluster.record("controller", "unfence", {"broker": broker_id})
        changed = []
        for tp, state in sorted(self.partitions.items()):
            if broker_id in state.replicas and state.leader is None:
                new = self._elect(tp, state, reason=f"broker {broker_id} is back")
                if new != state:
                    self.partitions[tp] = replace(new, partition_epoch=state.partition_epoch + 1)
                    changed.append(tp)
        self._broadcast(changed)

    def _elect(self, tp, state: PartitionState, reason: str) -> PartitionState:
        live_isr = [r for r in state.replicas if r in state.isr and r not in self.fenced]
        unclean = False
        if live_isr:
            leader, isr = live_isr[0], state.isr
        elif self.configs[tp[0]].unclean_leader_election_enable and \
                any(r not in self.fenced for r in state.replicas):
            leader = next(r for r in state.replicas if r not in self.fenced)
            isr, unclean = (leader,), True
        else:
            leader, isr = None, state.isr
        if leader == state.leader:
            return state
        self.cluster.record("controller", "elect", {
            "partition": tp[1], "topic": tp[0], "leader": leader, "leader_epoch": state.leader_epoch + 1,
            "isr": list(isr), "unclean": unclean, "reason": reason})
        return replace(state, leader=leader, leader_epoch=state.leader_epoch + 1, isr=isr)

    # ---- ISR changes ----------------------------------------------------------------------------
    def _alter_partition(self, src: str, msg) -> None:
        state = self.partitions[msg.tp]
        error = None
        if msg.leader != state.leader or msg.leader_epoch != state.leader_epoch:
            error = Errors.FencedLeaderEpochError
        elif msg.partition_epoch != state.partition_epoch:
            error = Errors.InvalidUpdateVersionError
        elif any(r in self.fenced and r not in state.isr for r in msg.isr):
            error = Errors.IneligibleReplicaError
        if error is None:
            state = self.partitions[msg.tp] = replace(state, isr=tuple(msg.isr),
                                                      partition_epoch=state.partition_epoch + 1)
            self.cluster.record("controller", "isr", {"topic": msg.tp[0], "partition": msg.tp[1],
                                                      "isr": list(msg.isr), "leader": msg.leader})
        self.cluster.network.send(self.node_id, src, AlterPartitionResponse(msg.tp, error, state))
        if error is None:
            self._broadcast([msg.tp])

    # ---- producer ids ---------------------------------------------------------------------------
    def allocate_producer_id(self, transactional_id: str | None = None) -> tuple[int, int]:
        """A new producer id, or for a transactional id the same id with a bumped epoch.

        (Real brokers get blocks of ids from the controller; one counter has the same effect.)
        """
        if transactional_id is not None and transactional_id in self.producer_epochs:
            pid, epoch = self.producer_epochs[transactional_id]
            self.producer_epochs[transactional_id] = (pid, epoch + 1)
            return pid, epoch + 1
        pid = self.next_producer_id
        self.next_producer_id += 1
        if transactional_id is not None:
            self.producer_epochs[transactional_id] = (pid, 0)
        return pid, 0

    # ---- propagation ------------------------------------------------------------------------------
    def _broadcast(self, tps) -> None:
        if not tps:
            return
        self.metadata_version += 1
        update = PartitionUpdate({tp: self.partitions[tp] for tp in tps}, dict(self.configs),
                                 self.metadata_version)
        for broker_id in sorted(self.cluster.brokers):
            self.cluster.network.send(self.node_id, node_name(broker_id), update)

    def _send_snapshot(self, broker_id: int) -> None:
        snapshot = PartitionUpdate(dict(sorted(self.partitions.items())), dict(self.configs),
                                   self.metadata_version, full=True)
        self.cluster.network.send(self.node_id, node_name(broker_id), snapshot)

