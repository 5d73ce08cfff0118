"""What the seeded-invariant tests share (tests/test_*_invariants.py): each runs a checked trial
per seed, and its mutation tests look for the first seed whose trial breaks an invariant."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Protocol, TypeVar

import pytest

from course_lib.broker.invariants import InvariantViolation


class Trial(Protocol):
    """What a checked trial reports: the events it ran and how many the checker looked at."""

    events: int
    checks: int


T = TypeVar("T", bound=Trial)


def first_violation(trial: Callable[[int], object], seeds: Iterable[int]) -> str | None:
    """The message of the first invariant ``trial(seed)`` breaks over ``seeds`` (None: none broke).

    >>> def trial(seed):
    ...     if seed == 2:
    ...         raise InvariantViolation("committed_kept: seed 2")
    >>> first_violation(trial, range(5)), first_violation(trial, range(2))
    ('committed_kept: seed 2', None)
    """
    for seed in seeds:
        try:
            trial(seed)
        except InvariantViolation as e:
            return str(e)
    return None


def checked_trials(trial: Callable[[int], T], seeds: Iterable[int]) -> Iterator[T]:
    """Each seed's ``trial(seed)``, its invariants checked at every event: a broken invariant, or
    an event the checker missed, fails the test with the seed and the call that replays it."""
    for seed in seeds:
        try:
            result = trial(seed)
        except InvariantViolation as e:
            pytest.fail(f"seed {seed}: {e}  (replay: {trial.__module__}.{trial.__name__}({seed}))")
        assert result.checks == result.events, f"seed {seed}: the checker missed events"
        yield result
