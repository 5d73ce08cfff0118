"""How the simulated ``KafkaConsumer`` is a member of its consumer group: a strategy the
constructor picks once, from ``group_protocol``, as the Java client picks its membership manager:

- ``"classic"`` (kafka-python's only protocol): JoinGroup/SyncGroup rebalances, heartbeats, a
  generation - :class:`.classic_membership.ClassicMembership`;
- ``"consumer"`` (KIP-848, the Java client's ``group.protocol=consumer``): one
  ConsumerGroupHeartbeat, the coordinator's assignment, incremental reconciliation, member
  epochs - :class:`.consumer_protocol.ConsumerProtocolMembership`.

The consumer keeps what both protocols share and what the rest of it reads - the member id, the
generation (the member epoch under KIP-848), whether it is joining or must rejoin, the heartbeat
generation that stops stale heartbeat timers - and tells its membership what the application did
(subscribed, polled, committed, closed); the membership decides what that means for the group.
The committed offsets both protocols use are :mod:`.group_offsets`.

>>> from course_lib.broker import Cluster
>>> from course_lib.clients import KafkaConsumer
>>> cluster = Cluster(brokers=1, seed=0)
>>> type(KafkaConsumer(bootstrap_servers=cluster, group_id="g")._membership).__name__
'ClassicMembership'
>>> type(KafkaConsumer(bootstrap_servers=cluster, group_id="g", group_protocol="consumer")._membership).__name__
'ConsumerProtocolMembership'
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, Callable, ClassVar, Protocol

from ..broker.protocol import CoordinatorRequest, GroupRequest, OffsetCommitRequest
from ..history import INFO, OpName


class Member(Protocol):
    """What a membership reads and changes of its consumer (``KafkaConsumer`` provides it)."""

    config: dict
    node_id: str
    alive: bool
    _sim: Any
    _history: Any
    _group: Any  # the group_id setting (None: no group)
    _member_id: str
    _generation: int  # the member epoch under KIP-848
    _joining: bool
    _needs_join: bool
    _left_group: bool  # left after max_poll_interval_ms; rejoins only from poll()
    _heartbeat_gen: int  # bumped to stop the heartbeat timers scheduled before
    _last_poll_ms: float
    _polling: bool
    _subscription: tuple
    _pattern: Any
    _partitions: dict
    _listener: Any
    _assigned_pending: Any

    def _advance(self, from_poll: bool = False) -> None: ...
    def _later(self, fn: Callable) -> None: ...
    def _set_assignment(self, tps) -> None: ...
    def _matching_topics(self, pattern) -> tuple: ...
    def _send_coordinator(self, request: CoordinatorRequest, on_result, timeout_ms=None) -> None: ...
    def _call_coordinator(self, request: CoordinatorRequest, timeout_ms=None) -> Any: ...
    def _commit_request(self, offsets) -> OffsetCommitRequest: ...
    def commit(self, offsets=None, timeout_ms=None) -> None: ...


class GroupMembership(ABC):
    """One consumer's part in its group under one protocol (see the module docstring)."""

    #: KIP-1082: a consumer group member makes its member id itself and keeps it for the consumer's
    #: life; a classic member gets one from the coordinator and forgets it when it leaves
    KEEPS_MEMBER_ID: ClassVar[bool] = False

    def __init__(self, consumer: Member) -> None:
        self.consumer = consumer

    # ---- what the application did ------------------------------------------------------------------
    @abstractmethod
    def join(self) -> None:
        """Join (or rejoin) the group; the consumer's ``_advance`` decides when."""

    @abstractmethod
    def subscribed(self) -> None:
        """``subscribe()`` set a new subscription: tell the group."""

    @abstractmethod
    def polled(self) -> None:
        """After each ``poll()``: watch ``max_poll_interval_ms`` from now."""

    @abstractmethod
    def check_poll(self) -> None:
        """At the start of ``poll()``: raise what the background membership work ran into."""

    @abstractmethod
    def revoke_before_rejoin(self) -> None:
        """Inside the ``poll()`` that rejoins: give the partitions up (revoked or lost)."""

    @abstractmethod
    def check_commit(self) -> None:
        """Before a commit is sent: refuse it as the real client does when the member cannot commit."""

    @abstractmethod
    def call(self, request: GroupRequest, timeout_ms=None):
        """A blocking request to the group coordinator (a commit, ``committed()``), with the
        protocol's errors turned into the ones the application sees."""

    @abstractmethod
    def leaves_on_close(self) -> bool:
        """Whether ``close()`` tells the coordinator that the member leaves."""

    @abstractmethod
    def leave(self) -> None:
        """Tell the coordinator the member leaves (not waiting for an answer, as both clients do)."""

    @abstractmethod
    def generation_shown(self) -> int:
        """The generation ``group_metadata()`` shows."""

    # ---- shared by both protocols -------------------------------------------------------------------
    def record_left(self, reason: str) -> None:
        """The history's note that this member left the group (and why), with the partitions it
        held, its generation and its member id."""
        c = self.consumer
        c._history.record(
            c.node_id,
            INFO,
            OpName.LEFT_GROUP,
            sorted([list(tp) for tp in c._partitions]),
            evidence={"reason": reason, "generation": c._generation, "member_id": c._member_id},
        )

    def record_poll_timeout(self, idle_ms: float) -> None:
        """The history's note that this member left for want of a poll()."""
        max_poll = self.consumer.config["max_poll_interval_ms"]
        self.record_left(f"no poll() for {idle_ms:g} ms > max_poll_interval_ms={max_poll:g}")
