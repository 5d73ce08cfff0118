"""A consumer application under a supervisor: crash points, one crash exception, one restart loop.

The lessons' pipeline (:class:`course_lib.application.processing.Processor`) and the grader's harnesses
(:mod:`course_lib.grading.harness`) run their applications through it, on any
:class:`~course_lib.backend.Backend`:

- :class:`AppCrash` is the process dying. It derives from ``BaseException``, so an application's
  ``except Exception`` (a learner's too) cannot swallow it - as no process catches its own death;
- a crash plan says where the application dies: :class:`Countdown` right after the n-th passage
  of a point (a call of ``poll``, ``write``, ``commit``...), :class:`AfterPolls` at a point once
  the instance has had records from n polls;
- :func:`supervise` starts instance 1, 2, ... until one finishes: a crashed instance is
  ``crash()``-ed (its clients die without a goodbye) and the next starts after the supervisor's
  restart delay (application time, :meth:`~course_lib.backend.Backend.app_time`).

Applications that run side by side (the members of a consumer group) use the same pieces:
:class:`Incarnations` names each started instance (a restarted one is a new client), and
:class:`~course_lib.in_thread.InThread` runs an instance's loop in a thread of its own, as a separate process would,
keeping its failure - an exception or an :class:`AppCrash` - for the supervising thread.

>>> plan = Countdown("write", 2)
>>> plan.reached("poll"); plan.reached("write")
>>> plan.reached("write")
Traceback (most recent call last):
...
course_lib.application.supervisor.AppCrash: crashed after call of write()
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable, Protocol


class AppCrash(BaseException):
    """The application process dies here."""


class CrashPlan(Protocol):
    def reached(self, point: str, polls: int = 0) -> None:
        """The application passes ``point`` (having had records from ``polls`` polls); raises
        :class:`AppCrash` if it dies there."""

    def disarm(self) -> None:
        """No more crashes (the restarted instance runs to the end)."""


class Countdown:
    """Dies right after the ``n``-th passage of ``point`` (``point=None``: never)."""

    def __init__(self, point: str | None, n: int):
        self.point, self.n = point, n

    def reached(self, point: str, polls: int = 0) -> None:
        if point == self.point:
            self.n -= 1
            if self.n == 0:
                raise AppCrash(f"crashed after call of {point}()")

    def disarm(self) -> None:
        self.point = None


class AfterPolls:
    """Dies at ``point`` once the instance has had records from ``polls`` polls (``point=None``:
    never). The crash's message is the point's name."""

    def __init__(self, point: str | None, polls: int | None):
        self.point, self.polls = point, polls

    def reached(self, point: str, polls: int = 0) -> None:
        if point == self.point and self.polls is not None and polls >= self.polls:
            raise AppCrash(point)

    def disarm(self) -> None:
        self.point = None


class Instance(Protocol):
    """One run of the application: ``run()`` returns when its work is done or raises
    :class:`AppCrash`; ``close()`` ends it cleanly, ``crash()`` kills its clients."""

    def run(self) -> None: ...
    def close(self) -> None: ...
    def crash(self) -> None: ...


@dataclass
class Steps:
    """An instance given as three functions (see :class:`Instance`)."""

    run: Callable[[], None]
    close: Callable[[], None]
    crash: Callable[[], None]


@dataclass
class Supervision:
    """What :func:`supervise` saw: one entry per crash, and how many instances ran."""

    crashes: list[dict] = field(default_factory=list)
    instances: int = 0
    finished: bool = False


def supervise(
    backend: Any,
    start: Callable[[int], Instance],
    max_instances: int,
    restart_delay_ms: float = 1000,
    facts: Callable[[Any], dict] | None = None,
    on_crash: Callable[[], None] | None = None,
    seen: Supervision | None = None,
) -> Supervision:
    """Start instance 1, 2, ... (``start(number)``) until one finishes, at most ``max_instances``.
    After a crash: ``instance.crash()``, ``on_crash()`` (e.g. disarm a one-crash plan), a record
    ``{"instance", "point", "time_ms", **facts(instance)}``, then the restart delay. The caller
    decides what running out of instances means (:attr:`Supervision.finished` is False). ``seen``:
    a :class:`Supervision` to fill (``start`` may read the crashes so far from it)."""
    seen = Supervision() if seen is None else seen
    for number in range(1, max_instances + 1):
        seen.instances = number
        instance = start(number)
        try:
            instance.run()
            instance.close()
            seen.finished = True
            return seen
        except AppCrash as crash:
            instance.crash()
            if on_crash is not None:
                on_crash()
            seen.crashes.append(
                {
                    "instance": number,
                    "point": str(crash),
                    "time_ms": backend.now_ms,
                    **(facts(instance) if facts else {}),
                }
            )
            backend.app_time(restart_delay_ms)
    return seen


class Incarnations:
    """How many instances of each application have started. A restarted instance is a new client
    on the network: the first keeps the application's name, the next are ``name#2``, ``name#3``...

    >>> started = Incarnations()
    >>> started.start("a"), started.start("b"), started.start("a")
    ('a', 'b', 'a#2')
    """

    def __init__(self) -> None:
        self._started: Counter = Counter()

    def start(self, name: str) -> str:
        """Count a new instance of ``name``; return its client id."""
        self._started[name] += 1
        number = self._started[name]
        return name if number == 1 else f"{name}#{number}"


__all__ = [
    "AppCrash",
    "CrashPlan",
    "Countdown",
    "AfterPolls",
    "Instance",
    "Steps",
    "Supervision",
    "supervise",
    "Incarnations",
]
