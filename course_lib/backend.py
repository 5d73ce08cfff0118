"""One scenario, any backend: everything a scenario may ask of a cluster.

A scenario (:mod:`course_lib.experiments.scenarios`) is written once against :class:`Backend` and runs on the
simulator (:class:`SimBackend`, virtual time, seeded) or on any other cluster with a client adapter
(:class:`ComposedBackend`: kafka-python on a :class:`~course_lib.real.cluster.LocalCluster`, on a
shared cluster reached with :func:`~course_lib.real.connect.connect`, on a
:class:`~course_lib.wire.cluster.WireCluster`). Both write one :class:`~course_lib.history.History`
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

Two axes: a backend is a *client* side composed with a *cluster* side.

- Adding a client (confluent-kafka, a Java client...): one module in
  :mod:`course_lib.client_adapters` (its docstring is the contract); then
  ``ComposedBackend(cluster, clients=MyClients())`` runs every scenario with it on every
  wall-clock cluster.
- Adding a cluster: implement :class:`~course_lib.clusters.Topology` and the optional parts it
  has (:class:`~course_lib.clusters.BrokerFaults`, :class:`~course_lib.clusters.MessageFaults`,
  :class:`~course_lib.clusters.FaultSchedules`) on the cluster class itself, and say in
  ``missing_parts()`` which parts it lacks and why: the backend's ``faults`` follow, and
  :class:`MissingFault` names the missing part. :func:`open_backend` then takes it as it is.
- The simulator is the same two sides on a clock of its own: :class:`SimBackend` composes the
  simulator's clients (:mod:`course_lib.client_adapters.simulated`) with the simulated cluster
  (:class:`~course_lib.broker.simulated_cluster.SimulatedCluster`, which has every part, virtual
  time and network partitions too), and overrides the intents (``settle``, ``until_*``...) with
  the fixed virtual times its recorded traces assume (see :mod:`course_lib.backends.sim`).

Each adapter has a typed conformance line in ``tests/test_seam_types.py`` (checked by mypy),
and ``tests/test_layers.py`` runs scenarios on every client x cluster pair it supports.
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
from .backends.composed import KAFKA_TIMING, ComposedBackend
from .backends.sim import SIM_TIMING, SimBackend
from .clusters import TopicSpec, Topology
from .history import FAIL, INFO, OK


def open_backend(target=None, seed: int = 0, **sim_options) -> SimBackend | ComposedBackend:
    """The backend a scenario run uses.

    ``target``: ``None`` or ``"simulator"`` (a fresh simulated cluster from ``seed`` and
    ``sim_options``), a cluster (``LocalCluster``, ``connect()``, a started ``WireCluster``: with
    kafka-python's clients), or a backend (a new run with the same clients on the same cluster).
    ``sim_options`` matter to the simulator only: another cluster's settings are its own.
    """
    if target is None or target == "simulator":
        return SimBackend.start(seed=seed, **sim_options)
    if isinstance(target, SimBackend):
        return target.fresh(seed, **sim_options)
    if isinstance(target, ComposedBackend):
        return target.fresh()
    if isinstance(target, Topology):
        return ComposedBackend(target)
    raise TypeError(
        f"backend must be 'simulator', a cluster (LocalCluster, connect(), WireCluster) or a Backend, got {target!r}"
    )


__all__ = [
    "Backend",
    "SimBackend",
    "ComposedBackend",
    "TopicSpec",
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
