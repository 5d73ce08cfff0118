"""The Backend protocol without a JVM: both adapters satisfy it, faults are data, names are
namespaced once, and the real adapter's timeline runs scheduled actions in order."""

import dataclasses
import inspect
import itertools
import time

import pytest

from course_lib.backend import (
    KAFKA_TIMING,
    Backend,
    ConditionTimeout,
    ComposedBackend,
    MissingFault,
    SimBackend,
    open_backend,
)
from course_lib.history import Nemesis
from course_lib.real.connect import connect
from course_lib.experiments.scenarios import SCENARIOS, run_scenario


def _roles() -> list[type]:
    """The small protocols Backend is composed of (topology, clients, clock, nemesis, final phase)."""
    return [c for c in Backend.__mro__[1:] if getattr(c, "_is_protocol", False) and c.__module__ == Backend.__module__]


def _members(protocol: type) -> set[str]:
    """The members a role declares, with those of the protocols it is made of (the nemesis role's
    broker faults are every part's, course_lib.clusters.parts.BrokerProcessFaults)."""
    made_of = [c for c in protocol.__mro__ if getattr(c, "_is_protocol", False)]
    return {n for c in made_of for n in [*vars(c), *vars(c).get("__annotations__", {})] if not n.startswith("_")}


def test_backend_is_five_small_roles():
    # the adapters' conformance is typed (tests/test_seam_types.py, checked by mypy); here: the shape
    roles = _roles()
    assert [r.__name__ for r in roles] == ["TopologyRole", "ClientsRole", "ClockRole", "NemesisRole", "FinalPhaseRole"]
    members = set().union(*map(_members, roles))
    assert {"create_topic", "crash", "lose_next_ack", "final_read", "wait_until", "history"} <= members
    assert all(len(_members(r)) <= 25 for r in roles), {r.__name__: len(_members(r)) for r in roles}


def test_open_backend_defaults_to_a_fresh_seeded_simulator():
    a, b = open_backend(None, seed=4), open_backend("simulator", seed=4)
    assert isinstance(a, SimBackend) and a.cluster is not b.cluster and a.cluster.seed == 4
    with pytest.raises(TypeError, match="backend must be"):
        open_backend(42)


def test_every_nemesis_call_records_one_operation_of_its_name():
    b = SimBackend.start(seed=2)
    topic = b.create_topic("t", min_insync_replicas=2)
    producer = b.producer()
    b.pause(2)
    b.resume(2)
    b.crash(3)
    b.restart(3)
    b.lose_next_ack(producer, topic)
    b.lose_next_request(producer, topic)
    b.crash_client(producer)
    assert [op.f for op in b.history if op.process == "nemesis"] == [
        Nemesis.PAUSE,
        Nemesis.RESUME,
        Nemesis.CRASH,
        Nemesis.RESTART,
        Nemesis.LOSE_NEXT_ACK,
        Nemesis.LOSE_NEXT_REQUEST,
        Nemesis.CRASH_CLIENT,
    ]


def test_a_shared_cluster_offers_client_faults_only_and_says_why():
    b = ComposedBackend(connect("kafka.example:9092", prefix="alice"))
    assert not (b.faults & {Nemesis.CRASH, Nemesis.RESTART, Nemesis.PAUSE, Nemesis.RESUME})
    assert Nemesis.CRASH_CLIENT in b.faults
    # lost ACKs and requests, refused requests happen in the learner's own proxy: no broker is touched
    assert {Nemesis.LOSE_NEXT_ACK, Nemesis.LOSE_NEXT_REQUEST, Nemesis.REFUSE_NEXT_REQUEST} <= b.faults
    with pytest.raises(MissingFault) as e:
        b.require("unclean_election", Nemesis.CRASH, Nemesis.RESTART)
    text = str(e.value)
    assert "unclean_election needs the fault(s) ['crash', 'restart']" in text
    assert "kafka.example:9092" in text and "LocalCluster" in text


def test_broker_fault_scenarios_refuse_a_shared_cluster_before_touching_it():
    shared = connect("kafka.example:9092", prefix="alice")  # nothing listens there: nothing may be asked
    for name in (
        "leader_crash_after_ack",
        "not_enough_replicas",
        "unclean_election",
        "fire_and_forget_crash",
        "random_faults",
    ):
        with pytest.raises(MissingFault, match=name):
            run_scenario(name, backend=shared)


def test_names_carry_the_prefix_once_and_a_run_suffix():
    shared = connect("kafka.example:9092", prefix="alice")
    b = ComposedBackend(shared)
    group, txn = b.group_id("processors"), b.transactional_id("writer")
    assert group == f"alice.processors-{b.run_id}" and txn == f"alice.writer-{b.run_id}"
    assert ComposedBackend(shared).run_id != b.run_id  # reruns never meet old topics or groups


def test_the_real_timeline_runs_scheduled_actions_in_time_order():
    b = ComposedBackend(connect("kafka.example:9092", prefix="alice"))
    ran = []
    b.at(20, ran.append, "second")
    b.at(5, ran.append, "first")
    b.at(500, ran.append, "later")
    b.wait(30)
    assert ran == ["first", "second"]


def test_every_scenario_takes_a_backend():
    for name, fn in SCENARIOS.items():
        assert "backend" in inspect.signature(fn).parameters, name


def _protocol_methods() -> list[str]:
    return sorted({n for r in _roles() for n, v in vars(r).items() if callable(v) and not n.startswith("_")})


@pytest.mark.parametrize("name", _protocol_methods())
def test_both_adapters_take_the_same_arguments_with_the_same_defaults(name):
    # one default, one behaviour: e.g. lose_next_ack's close was False on one backend, True on the other
    def shape(cls):
        params = list(inspect.signature(getattr(cls, name)).parameters.values())
        return [(p.name, p.kind, p.default) for p in params]

    assert shape(SimBackend) == shape(ComposedBackend), name


def test_the_simulator_advances_exactly_the_recorded_virtual_time():
    # the golden traces were recorded with these waits: a condition would move the clock elsewhere
    b = SimBackend.start(seed=1)
    topic = b.create_topic("t", min_insync_replicas=2)
    steps = {
        "settle": lambda: b.settle(topic),
        "until_replicated": lambda: b.until_replicated(topic),
        "until_sent": lambda: b.until_sent(None),
        "until_acknowledged": lambda: b.until_acknowledged(None),
        "until_appended": lambda: b.until_appended(topic, 1),
        "until_transaction_aborted": lambda: b.until_transaction_aborted(topic, 5000),
        "app_time": lambda: b.app_time(25),
    }
    took = {}
    for name, step in steps.items():
        t0 = b.now_ms
        step()
        took[name] = b.now_ms - t0
    assert took == pytest.approx(
        {
            "settle": 0,
            "until_replicated": 1000,
            "until_sent": 0.1,
            "until_acknowledged": 5,
            "until_appended": 20,
            "until_transaction_aborted": 8000,
            "app_time": 25,
        }
    )


def test_a_condition_that_never_comes_says_what_it_waited_for_and_what_it_saw():
    b = SimBackend.start(seed=1)
    topic = b.create_topic("t", min_insync_replicas=2)
    with pytest.raises(
        ConditionTimeout, match=r"waited 5 s on the simulator for the ISR of t-0 to shrink.*\[1, 2, 3\]"
    ):
        b.until(f"the ISR of {topic}-0 to shrink", lambda: b.isr_of(topic), lambda isr: len(isr) == 1, 5000)


def test_a_real_isr_shrink_counts_once_it_was_seen_stable(monkeypatch):
    # a broker shows new metadata before its partitions apply it: one sighting is not enough
    b = ComposedBackend(connect("kafka.example:9092", prefix="alice"))
    assert b.timing.isr_stable_ms == 1500
    b.timing = dataclasses.replace(KAFKA_TIMING, condition_timeout_ms=2000, isr_stable_ms=300)
    sightings = iter([[1, 2, 3], [1], [1, 2], *[[1]] * 100])
    monkeypatch.setattr(b, "isr_of", lambda topic, partition=0: next(sightings))
    start = time.monotonic()
    assert b.until_isr_shrinks("t") == [1]
    assert time.monotonic() - start >= 0.3
    flapping = itertools.cycle([[1], [1, 2]])
    monkeypatch.setattr(b, "isr_of", lambda topic, partition=0: next(flapping))
    with pytest.raises(ConditionTimeout, match="ISR of t-0 to shrink to 1"):
        b.until_isr_shrinks("t")


def test_producer_purposes_are_a_closed_list():
    assert KAFKA_TIMING.producer_config("failover") == {"request_timeout_ms": 5000, "retry_backoff_ms": 100}
    assert SimBackend.start().timing.producer_config("failover") == {}
    with pytest.raises(ValueError, match="unknown producer purpose 'fast'"):
        KAFKA_TIMING.producer_config("fast")
