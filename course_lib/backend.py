"""One scenario, any backend: everything a scenario may ask of a cluster.

A scenario (:mod:`course_lib.scenarios`) is written once against :class:`Backend` and runs on the
simulator (:class:`SimBackend`, virtual time, seeded) or on real Apache Kafka (:class:`KafkaBackend`,
a :class:`~course_lib.real.cluster.LocalCluster` or a shared cluster reached with
:func:`~course_lib.real.connect.connect`). Both write one :class:`~course_lib.history.History`
that one checker reads.

>>> b = SimBackend.start(seed=1)
>>> topic = b.create_topic("orders", min_insync_replicas=2)
>>> topic, b.leader_of(topic), b.isr_of(topic)
('orders', 1, [1, 2, 3])
>>> b.crash(1)
>>> b.until_leader_elected(topic, not_=1) in (2, 3)
True
>>> [op.f for op in b.history if op.process == "nemesis"]
['crash']

What a backend can break is data (:attr:`Backend.faults`); a scenario that needs a fault the
backend lacks fails at once with :class:`MissingFault`, which says which fault and why:

>>> b.require("some_scenario", "crash", "teleport")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
course_lib.backends.base.MissingFault: some_scenario needs the fault(s) ['teleport'], which the simulator ...

Names: a shared cluster namespaces every topic, group and transactional id with the learner's
prefix - exactly once, in the cluster object (``cluster.topic(name)``); the backend only adds a
per-run suffix on real Kafka so that reruns never meet old data.

Time: a scenario says *what* it waits for, never how long a backend needs:
``b.settle(topic)``, ``b.until_replicated(topic)``, ``b.until_isr_shrinks(topic)``, ``b.until_leader_elected(topic, not_=1)``,
``b.until_appended(topic, 4)``, ``b.until_transaction_aborted(topic, timeout)``... On real Kafka
each polls the cluster's state (admin metadata, end offsets) up to a generous bound and fails
with :class:`ConditionTimeout`, naming what it waited for and what it saw last. On the simulator
each advances the fixed virtual time the golden traces were recorded with (exact and
repeatable). ``b.wait(ms)`` remains for time that is the scenario's own (a producer that hangs).

The adapter contract - what writing a new backend (e.g. kafka-python against the simulated
cluster over TCP) means:

1. Subclass :class:`~course_lib.backends.wallclock.WallClock` if the cluster runs in real time
   (it brings the history's clock, ``wait``/``at``/``wait_until`` and every intent as a condition
   on the cluster's state), else :class:`~course_lib.backends.base.Common` (as the simulator
   does). Set ``kind`` (a label for results,
   never branched on), ``faults`` (which :class:`~course_lib.history.Nemesis` faults it can
   inject), ``missing_reason`` (one sentence: why the others are missing), ``history`` (one
   :class:`~course_lib.history.History` per run; its clock is the backend's) and ``timing``
   (a :class:`Timing`: its durations, bounds and per-purpose client settings).
2. Provide the primitives: names and topics (``create_topic``, ``delete_topic``, ``group_id``,
   ``transactional_id``), clients that record every call in ``history`` with kafka-python's API
   and configuration names (``producer(purpose=..., **config)``, ``consumer``), observation (``brokers``,
   ``leader_of``, ``isr_of``, ``replicas_of``, ``partitions_of``, ``evidence``, ``end_offset``,
   ``provenance``), time (``now_ms``, ``wait``, ``wait_until`` - a predicate that raises counts
   as false -, ``at``), the faults it offers (each call records exactly one nemesis operation of
   its name; an unoffered one raises :class:`MissingFault` through ``require``) and Jepsen's last
   phase (``heal``, ``final_read``, ``close_clients``).
3. The intents (``settle``, ``until_*``, ``confirm_no_leader_elected``, ``app_time``,
   ``poll_together``): a wall-clock backend inherits them; a virtual-clock backend overrides them
   with the fixed virtual times its recorded traces assume (see :mod:`course_lib.backends.sim`),
   or waits for the state through ``self.until(what, observe, done)``. ``read_to_end``, ``stream`` and ``hold_back_followers`` follow from
   the timing profile.
4. Teach :func:`open_backend` to recognise its target, and add it to the protocol test
   (tests/test_backend.py) and the fidelity table.
"""

from __future__ import annotations

from .backends.base import (
    BROKER_FAULTS,
    CLIENT_FAULTS,
    PRODUCER_PURPOSES,
    SIM_ONLY_FAULTS,
    Backend,
    ConditionTimeout,
    MissingFault,
    Provenance,
    Timing,
)
from .backends.kafka import KAFKA_TIMING, KafkaBackend
from .backends.sim import SIM_TIMING, SimBackend
from .history import FAIL, INFO, OK


def open_backend(target=None, seed: int = 0, **sim_options) -> SimBackend | KafkaBackend:
    """The backend a scenario run uses.

    ``target``: ``None`` or ``"simulator"`` (a fresh simulated cluster from ``seed`` and
    ``sim_options``), a cluster object (``LocalCluster`` / ``connect()``), or a backend (a new run
    on the same cluster). ``sim_options`` matter to the simulator only: a real cluster's settings
    are its broker configuration.
    """
    if target is None or target == "simulator":
        return SimBackend.start(seed=seed, **sim_options)
    if isinstance(target, SimBackend):
        return SimBackend.start(seed=seed, **sim_options)
    if isinstance(target, KafkaBackend):
        return type(target).fresh(target)  # a subclass (course_lib.wire's WireBackend) stays itself
    if hasattr(target, "bootstrap_servers"):
        return KafkaBackend(target)
    raise TypeError(f"backend must be 'simulator', a LocalCluster, a connect() handle or a Backend, got {target!r}")


__all__ = [
    "Backend",
    "SimBackend",
    "KafkaBackend",
    "MissingFault",
    "open_backend",
    "BROKER_FAULTS",
    "CLIENT_FAULTS",
    "SIM_ONLY_FAULTS",
    "ConditionTimeout",
    "Provenance",
    "Timing",
    "SIM_TIMING",
    "KAFKA_TIMING",
    "PRODUCER_PURPOSES",
    "OK",
    "FAIL",
    "INFO",
]
