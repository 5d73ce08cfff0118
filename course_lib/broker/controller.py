"""The controller (KRaft's active controller): broker liveness, leader election, ISR changes.

- Brokers heartbeat every ``broker_heartbeat_interval_ms``; one silent for
  ``broker_session_timeout_ms`` is *fenced*: removed from every ISR and replaced as leader by
  the first live replica still in the ISR. The leader epoch goes up by one with every leader
  change, which is what lets followers and clients reject a deposed leader.
- Eligible Leader Replicas (KIP-966, on by default since Kafka 4.1; ``eligible_leader_replicas_enable``):
  a replica that leaves the ISR while the ISR is below the effective min ISR
  (``min(min.insync.replicas, replicas)``) becomes an ELR member. Because the leader's HW does
  not advance under min ISR, an ELR member holds every committed record, so once the ISR is
  empty the controller may elect it *cleanly*. With ELR the ISR may become empty (the last
  member is fenced too); without it the last member stays in the ISR. A broker that comes back
  as a new incarnation (a restart after SIGKILL: an unclean shutdown) is removed from the ISR
  and the ELR first - its log may have lost its unflushed tail.
- No live ISR member and no usable ELR member: the partition goes offline (leader ``None``) -
  unless ``unclean.leader.election.enable`` lets an out-of-sync replica lead, which keeps the
  partition available and silently drops whatever that replica never received (and clears the ELR).
- Leaders ask to change the ISR (AlterPartition); the controller refuses a request from a stale
  leader epoch or partition epoch, and never adds a fenced broker.
- Every decision is sent to the brokers over the network, so a broker cut off from the
  controller keeps acting on old information - as a real one does.
- Topics are created and deleted here (``ReplicationControlManager.createTopics`` /
  ``deleteTopic``). Each topic gets an id; deleting it removes it from the metadata at once
  (KRaft's RemoveTopicRecord) and every broker deletes its replicas as the update reaches it - a
  broker that was down does so when its snapshot shows the topic gone, or back under another id.

All partition changes go through one function, :meth:`Controller._change`, written after
Kafka's ``PartitionChangeBuilder`` (metadata/controller, Kafka 4.x): ELR bookkeeping first, then
the election, then the ISR. When the ISR empties, the controller remembers the last leader
(``last_known_elr``); once the ISR and the ELR are both empty it elects that broker again when
it is back (``canElectLastKnownLeader``, an election Kafka flags unclean). Not modelled: the
unclean-recovery manager (not in Kafka 4.x) and controlled shutdown (every crash is a SIGKILL).

The controller itself is modelled as always available (a healthy KRaft quorum); brokers and the
network around it fail.

Taught in notebooks/02_acks_and_durability.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Callable, ClassVar

from kafka import errors as Errors

from ..history import OpName
from .reassignments import complete_reassignment
from .broker import node_name
from .group_coordinator import OFFSETS_TOPIC
from .protocol import (
    AlterPartition,
    AlterPartitionResponse,
    BrokerHeartbeat,
    PartitionState,
    PartitionUpdate,
    TopicConfig,
)
from .txn_coordinator import TXN_TOPIC

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
        self.unclean_elections = 0  # how many times an out-of-sync replica was made leader
        #: tp -> (target replicas, replicas before) of the ongoing reassignments (.reassignments)
        self.reassignments: dict[tuple, tuple] = {}
        self.next_producer_id = 1000
        self.producer_epochs: dict[str, tuple[int, int]] = {}  # transactional id -> (pid, epoch)
        self.topic_ids: dict[str, int] = {}
        # Kafka's topic ids are random UUIDs; a counter is as unique and keeps runs seeded
        self.next_topic_id = 1
        self.topics_deleted = 0
        cluster.network.add(self)
        self.sim.schedule(options.broker_heartbeat_interval_ms / 2, self._check_sessions)

    # ---- topics -------------------------------------------------------------------------------
    def create_topic(self, name: str, config: TopicConfig, placement: list[tuple] | None = None) -> None:
        """``placement``: each partition's replicas as a manual assignment gives them, else spread
        over the brokers; the first live replica leads."""
        if name in self.configs:
            raise ValueError(f"topic {name!r} already exists")
        brokers = sorted(self.cluster.brokers)
        if config.replication_factor > len(brokers):
            raise Errors.InvalidReplicationFactorError(
                f"replication_factor={config.replication_factor} but the cluster has only {len(brokers)} brokers"
            )
        self.configs[name] = config
        topic_id = self.topic_ids[name] = self.next_topic_id
        self.next_topic_id += 1
        offset = len(self.configs) - 1  # spread leaders of different topics over brokers
        for p in range(config.partitions):
            replicas = (
                placement[p]
                if placement
                else tuple(brokers[(p + offset + i) % len(brokers)] for i in range(config.replication_factor))
            )
            live = tuple(r for r in replicas if r not in self.fenced)
            leader = live[0] if live else None
            self.partitions[(name, p)] = PartitionState(leader, 0, live or replicas[:1], replicas, 0, topic_id=topic_id)
        self._broadcast([(name, p) for p in range(config.partitions)])

    def delete_topic(self, name: str) -> None:
        """Kafka's ``ReplicationControlManager.deleteTopic``: one RemoveTopicRecord. The topic is
        gone from the controller's metadata at once; brokers delete their replicas when the
        update reaches them. Raises ``UnknownTopicOrPartitionError`` for a topic that does not
        exist (what DeleteTopics answers)."""
        if name not in self.configs:
            raise Errors.UnknownTopicOrPartitionError(f"topic {name!r} does not exist")
        if name in (OFFSETS_TOPIC, TXN_TOPIC):
            # Kafka lets an authorized admin delete them; the simulator's coordinators need them
            raise Errors.InvalidRequestError(f"the simulator does not delete the internal topic {name!r}")
        config = self.configs.pop(name)
        topic_id = self.topic_ids.pop(name)
        for p in range(config.partitions):
            del self.partitions[(name, p)]
        self.topics_deleted += 1
        self.cluster.record("controller", "delete_topic", {"topic": name, "topic_id": topic_id})
        self._broadcast([], deleted=(name,))

    def ensure_internal_topic(self, name: str) -> None:
        """Create ``__consumer_offsets`` / ``__transaction_state`` on first use."""
        if name not in self.configs:
            rf = min(3, len(self.cluster.brokers))
            self.create_topic(name, TopicConfig(1, rf, min(2, rf), False))

    # ---- liveness -----------------------------------------------------------------------------
    def receive(self, src: str, msg) -> None:
        handler = self.HANDLERS.get(type(msg))
        if handler is None:
            raise AssertionError(f"controller got an unknown message {msg.kind!r}")
        handler(self, src, msg)

    def _heartbeat(self, src: str, msg: BrokerHeartbeat) -> None:
        broker_id = msg.broker_id
        self.last_heartbeat[broker_id] = self.sim.now
        if self.incarnations.setdefault(broker_id, msg.incarnation) != msg.incarnation:
            # restarted before its session expired: the old incarnation is fenced first
            if broker_id not in self.fenced:
                self.fence(broker_id, reason="it restarted (new incarnation)")
            self.incarnations[broker_id] = msg.incarnation
            self._unclean_shutdown(broker_id)
        if broker_id in self.fenced:
            self._unfence(broker_id)
        if msg.metadata_version < self.metadata_version:
            self._send_snapshot(broker_id)

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
        self._update_all(
            lambda state: broker_id in state.isr or state.leader == broker_id,
            lambda tp, state: self._change(
                tp, state, _without(state.isr, broker_id), unacceptable=broker_id, reason=f"leader {broker_id} fenced"
            ),
            membership_changed=True,
        )

    def _unclean_shutdown(self, broker_id: int) -> None:
        """A new incarnation registered (Kafka's ``handleBrokerUncleanShutdown``): its log may
        miss what it had acknowledged but not flushed, so it leaves every ISR and ELR."""
        if not self.options.eligible_leader_replicas_enable:
            return  # without ELR Kafka keeps the last ISR member, whatever its shutdown was
        self._update_all(
            lambda state: broker_id in state.isr or broker_id in state.elr,
            lambda tp, state: self._change(
                tp,
                state,
                _without(state.isr, broker_id),
                unacceptable=broker_id,
                unclean_shutdown=broker_id,
                reason=f"broker {broker_id} restarted uncleanly",
            ),
        )

    def _unfence(self, broker_id: int) -> None:
        self.fenced.discard(broker_id)
        self.cluster.record("controller", "unfence", {"broker": broker_id})
        self._update_all(
            lambda state: broker_id in state.replicas and state.leader is None,
            lambda tp, state: self._change(tp, state, state.isr, reason=f"broker {broker_id} is back"),
            membership_changed=True,
        )

    def live_brokers(self) -> tuple:
        return tuple(b for b in sorted(self.cluster.brokers) if b not in self.fenced)

    def _update_all(self, affected, change, membership_changed: bool = False) -> None:
        changed = []
        for tp, state in sorted(self.partitions.items()):
            if affected(state):
                new = change(tp, state)
                if new != state:
                    self.partitions[tp] = replace(new, partition_epoch=state.partition_epoch + 1)
                    changed.append(tp)
        self._broadcast(changed, membership_changed)

    def effective_min_isr(self, tp, state: PartitionState) -> int:
        return min(self.configs[tp[0]].min_insync_replicas, len(state.replicas))

    def _change(
        self,
        tp,
        state: PartitionState,
        target_isr: tuple,
        unacceptable: int | None = None,
        unclean_shutdown: int | None = None,
        reason: str = "",
    ) -> PartitionState:
        """Kafka's ``PartitionChangeBuilder.build()``: the ELR, the leader and the ISR that follow
        from a wanted ISR. Without ``eligible_leader_replicas_enable`` it is the pre-4.1 builder."""
        elr_on = self.options.eligible_leader_replicas_enable
        elr = state.elr
        if elr_on:  # maybePopulateTargetElr
            if len(target_isr) >= self.effective_min_isr(tp, state):
                elr = ()
            else:
                candidates = set(elr) | set(state.isr)
                elr = tuple(
                    r for r in state.replicas if r in candidates and r not in target_isr and r != unclean_shutdown
                )

        def acceptable(r) -> bool:
            return r != unacceptable and r not in self.fenced

        def valid(r) -> bool:  # isValidNewLeader: in the ISR, or in the ELR once the ISR is empty
            return (r in target_isr or (not target_isr and r in elr)) and acceptable(r)

        unclean = False
        last_leader = state.last_known_elr[0] if len(state.last_known_elr) == 1 else None
        leader: int | None
        if state.leader is not None and valid(state.leader):
            leader = state.leader
        else:
            leader = next((r for r in state.replicas if valid(r)), None)
            if (
                leader is None
                and elr_on
                and not target_isr
                and not elr
                and last_leader is not None
                and acceptable(last_leader)
            ):
                # canElectLastKnownLeader: ISR and ELR both empty, the last leader is back. Kafka
                # flags this election unclean (the broker may have lost an unflushed tail).
                leader, unclean = last_leader, True
            elif leader is None and self.configs[tp[0]].unclean_leader_election_enable:
                leader = next((r for r in state.replicas if acceptable(r)), None)
                unclean = leader is not None
        isr = tuple(target_isr)
        from_elr = leader is not None and not target_isr and leader in elr
        if from_elr:
            isr, elr = (leader,), tuple(r for r in elr if r != leader)
        elif unclean:
            isr, elr = (leader,), ()
        if not isr and not elr_on:
            isr = state.isr  # without ELR the ISR never becomes empty: its last member stays
        last_known = state.last_known_elr if elr_on else ()
        if elr_on and not isr and state.isr and state.leader is not None:
            last_known = (state.leader,)  # maybeUpdateLastKnownLeader: first time leaderless
        elif leader is not None:
            last_known = ()
        new = replace(state, leader=leader, isr=isr, elr=elr, last_known_elr=last_known)
        if leader != state.leader:
            new = replace(new, leader_epoch=state.leader_epoch + 1)
            self.unclean_elections += unclean
            self.cluster.record(
                "controller",
                OpName.ELECT,
                {
                    "partition": tp[1],
                    "topic": tp[0],
                    "leader": leader,
                    "leader_epoch": new.leader_epoch,
                    "isr": list(isr),
                    "elr": list(elr),
                    "unclean": unclean,
                    "from_elr": from_elr,
                    "reason": reason,
                },
            )
        return new

    # ---- ISR changes ----------------------------------------------------------------------------
    def _alter_partition(self, src: str, msg: AlterPartition) -> None:
        state = self.partitions.get(msg.tp)
        if state is None or state.topic_id != msg.topic_id:
            return  # the topic was deleted: no answer, the leader's replica is being deleted too
        error = None
        if msg.leader != state.leader or msg.leader_epoch != state.leader_epoch:
            error = Errors.FencedLeaderEpochError
        elif msg.partition_epoch != state.partition_epoch:
            error = Errors.InvalidUpdateVersionError
        elif any(r in self.fenced and r not in state.isr for r in msg.isr):
            error = Errors.IneligibleReplicaError
        if error is None:
            new = self._change(msg.tp, state, tuple(msg.isr), reason="AlterPartition")
            state = self.partitions[msg.tp] = replace(new, partition_epoch=state.partition_epoch + 1)
            self.cluster.record(
                "controller",
                "isr",
                {
                    "topic": msg.tp[0],
                    "partition": msg.tp[1],
                    "isr": list(msg.isr),
                    "leader": msg.leader,
                    **({"elr": list(state.elr)} if state.elr else {}),
                },
            )
        self.cluster.network.send(self.node_id, src, AlterPartitionResponse(msg.tp, error, state))
        if error is None:
            self._broadcast([msg.tp])
            complete_reassignment(self, msg.tp)  # a new replica joined the ISR: maybe the last

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
    def _broadcast(self, tps, membership_changed: bool = False, deleted: tuple = ()) -> None:
        """Send the new state of ``tps`` - and the live brokers, which change on their own when a
        broker is fenced or comes back (KRaft's broker registration records) - and the topics
        ``deleted``."""
        if not tps and not membership_changed and not deleted:
            return
        self.metadata_version += 1
        update = PartitionUpdate(
            {tp: self.partitions[tp] for tp in tps},
            dict(self.configs),
            self.metadata_version,
            live_brokers=self.live_brokers(),
            deleted=deleted,
        )
        for broker_id in sorted(self.cluster.brokers):
            self.cluster.network.send(self.node_id, node_name(broker_id), update)

    def _send_snapshot(self, broker_id: int) -> None:
        snapshot = PartitionUpdate(
            dict(sorted(self.partitions.items())),
            dict(self.configs),
            self.metadata_version,
            full=True,
            live_brokers=self.live_brokers(),
        )
        self.cluster.network.send(self.node_id, node_name(broker_id), snapshot)

    #: message class -> how the controller handles it
    HANDLERS: ClassVar[dict[type, Callable[[Any, str, Any], None]]] = {
        BrokerHeartbeat: _heartbeat,
        AlterPartition: _alter_partition,
    }


def _without(members: tuple, broker_id: int) -> tuple:
    return tuple(r for r in members if r != broker_id)
