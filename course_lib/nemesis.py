"""Random fault schedules (Jepsen's "nemesis"), drawn from one seed.

A schedule is a list of :class:`Fault` - what happens, to whom, when, for how long - so a failing
trial can be printed, read and replayed. Faults heal themselves after their duration; the
trial then heals everything and does a final read.

>>> import random
>>> schedule = random_schedule(random.Random(3), duration_ms=3000, brokers=[1, 2, 3])
>>> [str(f) for f in schedule][:2]
['t=778.1 ms: slow_link broker 1 for 928.6 ms', 't=1622.9 ms: slow_link broker 3 for 2010.1 ms']

``shrink_isr_then_crash_leader`` is the schedule that makes ``min.insync.replicas`` matter:
the ISR shrinks to the leader alone (which takes ``broker_session_timeout_ms``), the leader keeps
acknowledging what its min ISR allows, then the leader dies.

A schedule is applied by the cluster that runs it (``run_schedule``): the simulator's mechanism is
:func:`course_lib.broker.schedules.apply_schedule`, which the wire cluster shares.

Taught in notebooks/02_acks_and_durability (loss over many seeded trials).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from enum import StrEnum

from .history import Nemesis


class FaultKind(StrEnum):
    """What a scheduled fault does. Faults that are also a nemesis operation carry its name
    (:class:`~course_lib.history.Nemesis`): one spelling in schedules, histories and lessons."""

    # The order is part of every seeded schedule (``rng.choice`` picks by position): append only.
    CRASH = Nemesis.CRASH
    CRASH_LEADER = "crash_leader"
    CRASH_LEADER_AFTER_ACK = "crash_leader_after_ack"
    PAUSE = Nemesis.PAUSE
    ISOLATE = Nemesis.ISOLATE
    LOSE_NEXT_ACK = Nemesis.LOSE_NEXT_ACK
    LOSE_NEXT_REQUEST = Nemesis.LOSE_NEXT_REQUEST
    SLOW_LINK = "slow_link"
    SHRINK_ISR_THEN_CRASH_LEADER = "shrink_isr_then_crash_leader"


FAULT_KINDS = tuple(FaultKind)
#: faults aimed at one broker drawn from the schedule's brokers (the others find their target)
TARGETED = frozenset({FaultKind.CRASH, FaultKind.PAUSE, FaultKind.ISOLATE, FaultKind.SLOW_LINK})
#: faults that last ``duration_ms`` and then heal themselves
LASTING = frozenset(FAULT_KINDS) - {FaultKind.LOSE_NEXT_ACK, FaultKind.LOSE_NEXT_REQUEST}
#: faults that find their target as the leader of the schedule's topic
NEEDS_TOPIC = frozenset(
    {FaultKind.CRASH_LEADER, FaultKind.CRASH_LEADER_AFTER_ACK, FaultKind.SHRINK_ISR_THEN_CRASH_LEADER}
)


def fault_kind(kind: str) -> FaultKind:
    """``kind`` as a :class:`FaultKind` (raises ``ValueError`` naming the known kinds).

    >>> fault_kind("lose_next_ack") is FaultKind.LOSE_NEXT_ACK
    True
    """
    try:
        return FaultKind(kind)
    except ValueError:
        raise ValueError(f"unknown fault kind {kind!r}; kinds are {[str(k) for k in FAULT_KINDS]}") from None


@dataclass(frozen=True)
class Fault:
    at_ms: float
    kind: FaultKind
    target: int | None = None  # broker id (None: the current leader / any link)
    duration_ms: float = 0.0

    def __str__(self) -> str:
        who = "" if self.target is None else f" broker {self.target}"
        lasting = f" for {self.duration_ms:g} ms" if self.duration_ms else ""
        return f"t={self.at_ms:g} ms: {self.kind}{who}{lasting}"


def random_schedule(
    rng: random.Random, duration_ms: float, brokers: list[int], kinds: tuple | None = FAULT_KINDS, faults: int = 4
) -> list[Fault]:
    """``faults`` faults drawn from ``kinds`` (None: every kind); the same ``rng`` state gives the
    same schedule."""
    kinds = tuple(fault_kind(k) for k in (FAULT_KINDS if kinds is None else kinds))
    out = []
    for _ in range(faults):  # the draws, in this order, are what a seed means: keep them
        kind = rng.choice(kinds)
        at = round(rng.uniform(0, duration_ms), 1)
        target = rng.choice(brokers) if kind in TARGETED else None
        lasting = round(rng.uniform(200, 4000), 1) if kind in LASTING else 0.0
        out.append(Fault(at, kind, target, lasting))
    return sorted(out, key=lambda f: f.at_ms)
