"""The two clusters a differential's call sequences run on, as the call-sequence contract's
cluster side (:class:`~course_lib.client_adapters.call_sequences.SequenceCluster`): the simulated
cluster on its virtual clock, the wire cluster (the same brokers over TCP) on the wall clock.
Neither holds a client: the clients replay their calls through the contract.
"""

from __future__ import annotations

import time
from typing import Any, Callable, TypeVar

from ..broker import Cluster
from ..clusters.faults import at_broker
from ..wire.cluster import WireCluster

T = TypeVar("T")


class VirtualClock:
    """A simulated :class:`~course_lib.broker.Cluster`: its time passes only when waited on."""

    name = "the simulated cluster"
    #: how long :meth:`poll_until` polls before it gives up (virtual: costs little)
    POLL_BUDGET_MS = 120_000

    def __init__(self, cluster: Cluster):
        self._cluster = cluster

    def read(self, fn: Callable[[Any], T]) -> T:
        return fn(self._cluster)

    def wait_until(self, condition: Callable[[Any], bool], timeout_s: float) -> bool:
        return self._cluster.run_until(lambda: condition(self._cluster), timeout_s * 1000)

    def fault(self, name: str, broker: int) -> None:
        at_broker(self._cluster, name, broker, moment=lambda: self._cluster.run_for(100))

    def heal(self) -> bool:
        # the wall clock passes on the wire while a test heals: here the messages still on the
        # simulated network (an acks=0 produce, whose future is already done) must arrive too
        self._cluster.run_for(100)
        return self._cluster.heal_all(30_000)

    def poll_until(self, poll: Callable[[], bool], done: Callable[[], bool]) -> bool:
        deadline = self._cluster.now + self.POLL_BUDGET_MS
        while self._cluster.now < deadline:
            polled = poll()
            if done():
                return True
            if not polled:
                self._cluster.run_for(50)
        return False


class WallClock:
    """A :class:`~course_lib.wire.cluster.WireCluster`: its simulated cluster runs on a thread of
    its own, in real time; reads and faults go through that thread."""

    name = "the wire cluster"
    POLL_BUDGET_S = 60

    def __init__(self, wire: WireCluster):
        self._wire = wire

    def read(self, fn: Callable[[Any], T]) -> T:
        return self._wire.call(lambda: fn(self._wire.cluster))

    def wait_until(self, condition: Callable[[Any], bool], timeout_s: float) -> bool:
        return self._wire.wait_until(lambda: condition(self._wire.cluster), timeout_s)

    def fault(self, name: str, broker: int) -> None:
        at_broker(self._wire.nemesis, name, broker)  # what the wire cluster hands its faults to

    def heal(self) -> bool:
        self._wire.revive()
        return self._wire.wait_until(lambda: self._wire.cluster._settled(), 30)

    def poll_until(self, poll: Callable[[], bool], done: Callable[[], bool]) -> bool:
        deadline = time.monotonic() + self.POLL_BUDGET_S
        while time.monotonic() < deadline:
            polled = poll()
            if done():
                return True
            if not polled:
                time.sleep(0.05)  # nothing to poll: the wall clock passes (the sim's run_for)
        return False
