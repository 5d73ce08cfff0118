"""The event loop's contract: schedule, step, run, peek, cancel - and determinism."""

import math

import pytest

from course_lib.sim import ReentrantRunError, Simulation


def test_events_run_in_time_order_with_fifo_tie_break():
    sim, log = Simulation(), []
    for delay, name in [(3, "c"), (1, "a"), (3, "d"), (2, "b")]:
        sim.schedule(delay, log.append, name)
    sim.run()
    assert log == ["a", "b", "c", "d"]
    assert sim.now == 3


def test_run_until_stops_the_clock_at_until():
    sim, log = Simulation(), []
    sim.schedule(5, log.append, 5)
    sim.schedule(15, log.append, 15)
    sim.run(until=10)
    assert log == [5] and sim.now == 10
    assert sim.peek() == 15


def test_cancelled_events_never_run():
    sim, log = Simulation(), []
    handle = sim.schedule(1, log.append, "x")
    sim.schedule(2, log.append, "y")
    sim.cancel(handle)
    assert sim.peek() == 2
    sim.run()
    assert log == ["y"]


def test_step_and_peek_on_an_empty_loop():
    sim = Simulation()
    assert sim.peek() == math.inf
    assert sim.step() is False


def test_run_until_predicate_and_timeout():
    sim, log = Simulation(), []
    for t in range(1, 10):
        sim.schedule(t, log.append, t)
    assert sim.run_until(lambda: len(log) == 3, timeout_ms=100)
    assert sim.now == 3
    assert not sim.run_until(lambda: False, timeout_ms=2)
    assert sim.now == 5


def test_blocking_from_inside_a_callback_is_refused():
    sim = Simulation()
    sim.schedule(1, lambda: sim.run(until=5))
    with pytest.raises(ReentrantRunError, match="callback"):
        sim.run()


def test_negative_delays_and_past_deadlines_are_rejected():
    sim = Simulation()
    with pytest.raises(ValueError):
        sim.schedule(-1, print)
    sim.run(until=10)
    with pytest.raises(ValueError, match="past"):
        sim.run(until=5)


def test_same_seed_same_random_choices():
    a, b = Simulation(seed=42), Simulation(seed=42)
    assert [a.rng.random() for _ in range(5)] == [b.rng.random() for _ in range(5)]
