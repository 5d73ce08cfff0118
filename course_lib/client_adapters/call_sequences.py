"""The call-sequence contract: a client replays a list of named calls and says what each answered.

The differentials (:mod:`course_lib.experiments.differential`, ``java_differential``,
``consumer_protocol_differential``) put the simulator's clients and a client library's through the
same seeded sequence and compare the answers call by call. What a call does is the differential's
(``actions``: a name -> what it does to the client); making the calls in turn, turning each answer
into the string compared, and the waits that belong to one client (:func:`wait_for_outcomes`) are
this module's - so no experiment keeps a client in a class of its own and forwards calls to it
(``tests/test_layers.py``).

The cluster a sequence runs on is given separately, as a :class:`SequenceCluster`: where a fault
lands, how to wait until it is settled, how to read it. It holds no client: the simulated
cluster's virtual clock and the wire cluster's wall clock are its two implementations
(:mod:`course_lib.experiments.sequence_clusters`).
"""

from __future__ import annotations

import time
from typing import Any, Callable, Iterable, Mapping, Protocol, TypeVar

T = TypeVar("T")

#: what one named call does to the client; its answer (or what it raises) is the call's outcome
Action = Callable[[Any], Any]
#: ``(call, answer)`` -> the outcome string compared (``answer()`` makes the call)
Outcome = Callable[[str, Callable[[], Any]], str]


class SequenceCluster(Protocol):
    """The cluster side of a call sequence (module docstring). ``cluster`` arguments are the
    simulated :class:`~course_lib.broker.Cluster` whose state is read, on its own thread."""

    #: how a failure names it ("the simulated cluster")
    name: str

    def read(self, fn: Callable[[Any], T]) -> T:
        """``fn(cluster)``, where the cluster's state lives."""
        ...

    def wait_until(self, condition: Callable[[Any], bool], timeout_s: float) -> bool:
        """Until ``condition(cluster)`` holds, at most ``timeout_s`` of this cluster's clock."""
        ...

    def fault(self, name: str, broker: int) -> None:
        """The fault ``name`` at ``broker``: a row of :data:`course_lib.clusters.faults.FAULTS`
        (``crash``, ``pause``, ``lose_next_request``, ``lose_next_ack`` ...) or a composed one
        (``bounce``: crashed, restarted a moment later), by :func:`~course_lib.clusters.faults.at_broker`."""
        ...

    def heal(self) -> bool:
        """Every fault healed and the cluster settled again (False: it did not settle)."""
        ...

    def poll_until(self, poll: Callable[[], bool], done: Callable[[], bool]) -> bool:
        """``poll()`` the clients (False: there was none to poll, so let a moment pass) until
        ``done()`` (False: it never was, within this clock's budget)."""
        ...


def method(name: str, *args: Any, **kwargs: Any) -> Action:
    """The action that calls the client's method ``name`` with these arguments."""
    return lambda client: getattr(client, name)(*args, **kwargs)


class Said(str):
    """An outcome given as it is, not an answer to encode (a fault's, a call not made)."""


def answer(call: str, make: Callable[[], Any], compare_value: bool = True) -> str:
    """What the call answered as compared: the exception class it raised, "ok", or the value's
    repr (a :class:`Said` as it is; without ``compare_value`` any value is "ok")."""
    try:
        value = make()
    except Exception as exc:  # noqa: BLE001 - the exception class is what is compared
        return type(exc).__name__
    if isinstance(value, Said):
        return str(value)
    return "ok" if value is None or not compare_value else repr(value)


class Failures:
    """An :data:`Outcome` that compares only whether a call succeeded ("ok" or "failed"), keeping
    what each failed call raised in :attr:`errors` (reported, not compared: the simulator's clients
    raise kafka-python's exception classes, the Java client Java's)."""

    def __init__(self) -> None:
        self.errors: list[str] = []

    def __call__(self, call: str, make: Callable[[], Any]) -> str:
        try:
            make()
        except Exception as exc:  # noqa: BLE001 - success or failure is compared, not the class
            self.errors.append(f"{call}: {type(exc).__name__}: {exc}"[:300])
            return "failed"
        return "ok"


def replay(
    client: Any,
    calls: Iterable[str],
    actions: Mapping[str, Action],
    before: Callable[[], None] | None = None,
    outcome: Outcome = answer,
    after: Callable[[str, str], str] | None = None,
) -> list[str]:
    """Each of ``calls`` made on ``client`` in turn (``actions[call](client)``), ``before()`` it
    and ``after(call, outcome)`` (what is observed once it is made, added to its outcome); the
    outcomes, in order."""
    outcomes = []
    for call in calls:
        if before is not None:
            before()
        said = outcome(call, lambda: actions[call](client))
        outcomes.append(after(call, said) if after is not None else said)
    return outcomes


# ---- waits of one client -------------------------------------------------------------------------
def _simulated_outcomes(producer: Any, timeout_s: float) -> None:
    # virtual time passes: the simulated producer runs on its cluster's clock
    producer._sim.run_until(lambda: producer._incomplete == 0 or producer._closed, timeout_s * 1000)


def kafka_python_idle(producer: Any, timeout_s: float = 5) -> None:
    """Wait (at most ``timeout_s``) until every send of a kafka-python producer has its outcome."""
    accumulator = producer._accumulator
    deadline = time.monotonic() + timeout_s
    while accumulator.has_incomplete and time.monotonic() < deadline and not producer._closed:
        time.sleep(0.002)  # a condition polled: kafka-python has no event for it


#: each library producer's wait until every send so far has its outcome, by client: (producer,
#: timeout_s) -> None (a closed producer waits no more)
OUTCOME_WAITS: dict[str, Callable[[Any, float], None]] = {
    "simulator": _simulated_outcomes,
    "kafka-python": kafka_python_idle,
}


def wait_for_outcomes(client: str, producer: Any, timeout_s: float = 5) -> None:
    """Until every send of ``producer`` (``client``'s library producer) has its outcome, at most
    ``timeout_s`` (of its clock).

    >>> wait_for_outcomes("java", None)
    Traceback (most recent call last):
    ValueError: no wait for a producer's outcomes of 'java': choose one of simulator, kafka-python
    """
    if client not in OUTCOME_WAITS:
        raise ValueError(f"no wait for a producer's outcomes of {client!r}: choose one of {', '.join(OUTCOME_WAITS)}")
    OUTCOME_WAITS[client](producer, timeout_s)
