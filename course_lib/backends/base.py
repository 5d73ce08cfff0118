"""The Backend protocol, the timing profile every adapter carries, and their shared code.

See :mod:`course_lib.backend` for the contract an adapter fulfils.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Mapping, Protocol, Sequence, cast, runtime_checkable

from ..clusters.faults import FAULTS, Aim, AtProducer, Fault, backend_fault, missing_why
from ..clusters.parts import BrokerProcessFaults, CreatesTopics, TopicSpec, VirtualTime
from ..history import INFO, History, Nemesis

#: faults that act on brokers (processes) or on the network between clients and brokers
BROKER_FAULTS = frozenset(f.op for f in FAULTS if f.aim in (Aim.BROKER, Aim.PRODUCE))
#: faults that act on the learner's own client processes: every backend offers them
CLIENT_FAULTS = frozenset({Nemesis.CRASH_CLIENT, Nemesis.FREEZE_CLIENT})
#: faults inside the simulation: random fault schedules (the simulator on its virtual clock, the
#: wire cluster's simulation on the wall clock), isolation and faults timed against an
#: application's steps (the simulator's Backend only)
SIM_ONLY_FAULTS = frozenset(f.op for f in FAULTS) - BROKER_FAULTS


class MissingFault(RuntimeError):
    """A scenario needs a fault this backend cannot inject; the message says which and why."""


class ConditionTimeout(RuntimeError):
    """A step waited for a state of the cluster that did not come; says what it waited for and
    what it saw last."""


@dataclass(frozen=True)
class Timing:
    """How long things take on one backend, and what its clients need for that.

    Scenarios never read a number from here to decide *what* happens; the intent methods of
    :class:`Backend` (``settle``, ``until_isr_shrinks``, ...) do. The simulator's values are the
    virtual milliseconds its golden traces were recorded with (a condition wait would move its
    clock differently); a real cluster's are budgets for the same steps on a JVM.
    """

    #: a send's turn on the wire before the next send (each becomes a request of its own)
    request_gap_ms: float
    #: how long the leader gets to append and acknowledge (acks=0/1) one send before the next
    ack_gap_ms: float
    #: the interval of a timed stream of sends, and how long its last sends get to go out
    stream_step_ms: float
    stream_drain_ms: float
    #: how long a lost ACK's batch takes to be appended on every replica
    append_ms: float
    #: how long every replica takes to fetch what the leader acknowledged (acks=1 answers first)
    replicate_ms: float
    #: how long an election would take: waited to show that none happens (unclean disabled)
    election_ms: float
    #: how long after transaction_timeout_ms the coordinator has certainly aborted
    abort_margin_ms: float
    #: polls a reader makes to reach the end of a partition, and whether it stops once there
    read_polls: int
    read_stops_at_end: bool
    #: the longest any condition wait may take before it is an error (ms)
    condition_timeout_ms: float = 60_000
    #: faults needed to keep followers from fetching what the leader takes next (a real follower
    #: fetches within a millisecond; the simulator's lag by its network latency)
    holding_back_followers: tuple = ()
    #: how long a changed ISR must be seen unchanged before it counts (ms)
    isr_stable_ms: float = 0
    #: producer settings by purpose (kafka-python names), merged over the scenario's own
    producer_for: dict = field(default_factory=dict)

    def producer_config(self, purpose: str) -> dict:
        """Client settings this backend needs for ``purpose`` (see :data:`PRODUCER_PURPOSES`)."""
        if purpose not in PRODUCER_PURPOSES:
            raise ValueError(f"unknown producer purpose {purpose!r}; choose one of {sorted(PRODUCER_PURPOSES)}")
        return dict(self.producer_for.get(purpose, {}))


#: why a scenario may ask a backend for producer settings of its own
PRODUCER_PURPOSES = {
    "failover": "find a new leader quickly after the old one died",
    "metadata_refresh": "refresh metadata often, so sends held for a dead leader find the new one",
    "no_retry_before_crash": "do not retry a lost request before the application crashes",
}


class TopologyRole(Protocol):
    """Names, topics and what a scenario may observe of the cluster."""

    #: "simulator", "kafka" or "wire": a label for results and messages, never branched on
    kind: str
    history: History
    #: the underlying cluster object (simulated Cluster, LocalCluster, RemoteCluster, WireCluster)
    cluster: Any
    #: topics created under another name than asked (Kafka: prefix and run suffix) -> settings asked
    created_topics: dict[str, dict]

    def describe(self) -> str: ...

    #: ``create_topic(name, partitions=1, replication_factor=None, min_insync_replicas=None,
    #: unclean_leader_election_enable=None, config=None)``: :meth:`TopicSpec.of`'s keywords
    create_topic: Callable[..., str]

    def create_from(self, spec: TopicSpec) -> str: ...
    def delete_topic(self, name: str) -> None: ...
    def group_id(self, name: str) -> str: ...
    def transactional_id(self, name: str) -> str: ...
    @property
    def brokers(self) -> list[int]: ...
    def leader_of(self, topic: str, partition: int = 0) -> int | None: ...
    def isr_of(self, topic: str, partition: int = 0) -> list[int]: ...
    def replicas_of(self, topic: str, partition: int = 0) -> list[int]: ...
    def partitions_of(self, topic: str) -> int: ...
    def evidence(self, topic: str, partition: int = 0) -> dict: ...
    def end_offset(self, topic: str, partition: int = 0, read_committed: bool = False) -> int: ...
    def provenance(self) -> Provenance: ...


class ClientsRole(Protocol):
    """The learner's clients: kafka-python's classes and configuration names."""

    def producer(self, *, purpose: Any = None, **config) -> Any: ...
    def consumer(self, *topics: str, **config) -> Any: ...
    def every_broker(self) -> dict:
        """The client settings that make a new client know every broker, dead ones too (a client
        is otherwise bootstrapped from the brokers that are up)."""
        ...


class ClockRole(Protocol):
    """Time: primitives, and intents that each wait for a state of the cluster or a step."""

    #: this backend's timing profile
    timing: Timing

    @property
    def now_ms(self) -> float: ...
    def wait(self, ms: float) -> None: ...
    def wait_until(self, predicate: Callable[[], bool], timeout_ms: float = 60_000) -> bool: ...
    def at(self, delay_ms: float, action: Callable, *args) -> None: ...
    def app_time(self, ms: float) -> None: ...
    def poll_together(self, consumers: list, timeout_ms: int) -> list[dict]: ...
    def settle(self, topic: str, partition: int = 0) -> None: ...
    def until_replicated(self, topic: str, partition: int = 0) -> None: ...
    def until_isr_shrinks(self, topic: str, to: int = 1, partition: int = 0) -> list[int]: ...
    def until_leader_elected(self, topic: str, not_: int | None = None, partition: int = 0) -> int: ...
    def confirm_no_leader_elected(self, topic: str, not_: int | None = None, partition: int = 0) -> None: ...
    def until_appended(self, topic: str, records: int, partition: int = 0) -> None: ...
    def until_acknowledged(self, future: Any) -> None: ...
    def until_sent(self, producer: Any) -> None: ...
    def until_transaction_aborted(self, topic: str, transaction_timeout_ms: float, partition: int = 0) -> None: ...
    def read_to_end(self, consumer: Any, topic: str, end: int, partition: int = 0) -> Iterator[list]: ...
    def stream(self, sends: Sequence[Callable[[], Any]], midway: Sequence[Callable[[], Any]]) -> None: ...


class NemesisRole(BrokerProcessFaults, Protocol):
    """The faults: each call records exactly one nemesis operation of the same name."""

    #: the faults :meth:`require` accepts (names from :class:`course_lib.history.Nemesis`)
    faults: frozenset[str]
    #: the parts of the cluster this backend lacks -> why (:mod:`course_lib.clusters.parts`)
    missing_parts: Mapping[str, str]

    # the faults of the cluster's parts (rows of course_lib.clusters.faults.FAULTS), each with the
    # signature of what it aims at: a broker (BrokerProcessFaults), a producer's next produce
    lose_next_ack: AtProducer
    lose_next_request: AtProducer
    refuse_next_request: AtProducer

    def require(self, scenario: str, *faults: str) -> None: ...
    def hold_back_followers(self, topic: str, leader: int) -> list[int]: ...
    def crash_client(self, client: Any) -> None: ...
    def freeze_client(self, consumer: Any) -> None: ...
    def note(self, f: str, **value) -> None: ...
    # timed faults inside the simulation (Nemesis.SCHEDULE: the simulator, the wire cluster)
    def schedule_faults(
        self, rng: Any, duration_ms: float, kinds: tuple | None, faults: int, topic: str, producer: Any
    ) -> list: ...
    def lose_next_coordinator_response(self) -> None: ...


class FinalPhaseRole(Protocol):
    """Jepsen's last phase: heal every fault, read everything, release the clients."""

    def heal(self, timeout_ms: float = 60_000) -> None: ...
    def final_read(self, topic: str, isolation_level: str = "read_uncommitted") -> list: ...
    def close_clients(self) -> None: ...


@runtime_checkable
class Backend(TopologyRole, ClientsRole, ClockRole, NemesisRole, FinalPhaseRole, Protocol):
    """Everything a scenario may ask of a cluster (the contract: :mod:`course_lib.backend`), in
    five roles. Stable: the fidelity tests build on these names; add to it, do not rename."""


@dataclass(frozen=True)
class Provenance:
    """What a result says about where it ran: the backend's label, the cluster object (for a
    learner who wants to look further), the suffix of a result's repr, notes to add."""

    label: str
    target: Any
    where: str
    notes: dict


class Common(CreatesTopics):
    """What every adapter does the same way, from the primitives each adapter provides."""

    kind = ""
    faults: frozenset[str] = frozenset()
    missing_parts: Mapping[str, str] = {}
    history: History
    cluster: Any
    timing: Timing

    # ---- the primitives each adapter provides (declared here, defined there)
    wait: Callable[[float], None]
    wait_until: Callable[..., bool]
    at: Callable[..., None]
    leader_of: Callable[..., int | None]
    isr_of: Callable[..., list[int]]
    replicas_of: Callable[..., list[int]]
    end_offset: Callable[..., int]

    # ---- the faults of the cluster's parts: each method is built from its row of the one table
    # (course_lib.clusters.faults.FAULTS) and hands it to this backend's mechanism for its aim
    crash = backend_fault("crash")
    restart = backend_fault("restart")
    pause = backend_fault("pause")
    resume = backend_fault("resume")
    lose_next_ack = backend_fault("lose_next_ack")
    lose_next_request = backend_fault("lose_next_request")
    refuse_next_request = backend_fault("refuse_next_request")
    # how each adapter reaches a broker, and a producer's next produce (defined there)
    _broker_fault: Callable[[Fault, int], None]
    _produce_fault: Callable[[Fault, Any, str, int, bool, bool], None]

    def describe(self) -> str:
        return f"the {self.kind}"

    def require(self, scenario: str, *faults: str) -> None:
        missing = sorted(str(f) for f in set(faults) - self.faults)  # plain names in the message
        if missing:
            raise MissingFault(
                f"{scenario} needs the fault(s) {missing}, which {self.describe()} does not "
                f"offer: {missing_why(self.missing_parts, missing)}"
            )

    def note(self, f: str, **value) -> None:
        """Record a nemesis step that is not a fault of the cluster (``wake`` of a client the
        scenario itself drives)."""
        self.history.record("nemesis", INFO, f, value)

    # ---- clients
    def _producer_config(self, purpose: Any, config: dict) -> dict:
        return {**config, **self.timing.producer_config(purpose)} if purpose else config

    # ---- conditions: wait for a state, or fail saying what was awaited and what was seen
    def until(
        self, what: str, observe: Callable[[], Any], done: Callable[[Any], bool], timeout_ms: float | None = None
    ):
        """Observe until ``done(observed)``; return the observation. After ``timeout_ms`` (the
        profile's bound) raise :class:`ConditionTimeout` naming ``what`` and the last observation."""
        seen: list = []

        def check() -> bool:
            seen[:] = [observe()]
            return done(seen[0])

        bound = self.timing.condition_timeout_ms if timeout_ms is None else timeout_ms
        if not self.wait_until(check, bound):
            last = repr(seen[0]) if seen else "nothing (every observation failed)"
            raise ConditionTimeout(f"waited {bound / 1000:g} s on {self.describe()} for {what}; last saw {last}")
        return seen[0]

    def until_isr_shrinks(self, topic: str, to: int = 1, partition: int = 0) -> list[int]:
        """Wait until the partition's ISR has ``to`` members (the controller fenced the others)."""
        return self.until(
            f"the ISR of {topic}-{partition} to shrink to {to} member(s)",
            lambda: self.isr_of(topic, partition),
            lambda isr: len(isr) == to,
        )

    def until_leader_elected(self, topic: str, not_: int | None = None, partition: int = 0) -> int:
        """Wait until the partition has a leader other than ``not_``; return it."""
        return self.until(
            f"a leader of {topic}-{partition} other than {not_}",
            lambda: self.leader_of(topic, partition),
            lambda leader: leader is not None and leader != not_,
        )

    def confirm_no_leader_elected(self, topic: str, not_: int | None = None, partition: int = 0) -> None:
        """Wait as long as an election would take (:attr:`Timing.election_ms`); the partition must
        still have no leader other than ``not_``."""
        self.wait(self.timing.election_ms)
        leader = self.leader_of(topic, partition)
        if leader is not None and leader != not_:
            raise ConditionTimeout(f"{topic}-{partition} elected {leader} although no election should happen")

    def read_to_end(self, consumer: Any, topic: str, end: int, partition: int = 0) -> Iterator[list]:
        """Poll ``consumer`` until it is past ``end`` of the partition; yield each poll's records."""
        for _ in range(self.timing.read_polls):
            for records in consumer.poll(timeout_ms=200).values():
                yield records
            if self.timing.read_stops_at_end and consumer.position((topic, partition)) >= end:
                return

    def stream(self, sends: Sequence[Callable[[], Any]], midway: Sequence[Callable[[], Any]]) -> None:
        """Run ``sends`` one every ``stream_step_ms``, ``midway`` actions at the half, then let
        the last sends go out."""
        step = self.timing.stream_step_ms
        for i, send in enumerate(sends):
            self.at(i * step, send)
        for action in midway:
            self.at(len(sends) / 2 * step, action)
        self.wait(len(sends) * step + self.timing.stream_drain_ms)

    def hold_back_followers(self, topic: str, leader: int) -> list[int]:
        """Keep the followers from fetching what the leader takes next (pausing them where this
        backend needs that, see :attr:`Timing.holding_back_followers`); returns the paused ones."""
        if not self.timing.holding_back_followers:
            return []
        followers = [r for r in self.replicas_of(topic) if r != leader]
        for f in followers:
            self.pause(f)
        return followers

    def poll_together(self, consumers: list, timeout_ms: int) -> list[dict]:
        """Poll each consumer as separate application processes would (here: one after another)."""
        return [c.poll(timeout_ms=timeout_ms) for c in consumers]

    def lose_next_coordinator_response(self) -> None:
        """The next response of any group or transaction coordinator is lost: a fault timed against
        an application's steps, so only a cluster with virtual time has it (else MissingFault says
        why a wall clock cannot time it)."""
        self.require("losing a coordinator response", Nemesis.TIMED_FAULTS)
        cast(VirtualTime, self.cluster).lose_next_coordinator_response()
