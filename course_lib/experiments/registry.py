"""The one registry of the course's experiments: each is declared once, where it is written, with
``@experiment(family, workload)``, and every list of experiments is read from here.

A *family* is a kind of experiment with one way to run it: ``"scenario"`` (a producer, consumer or
transaction scenario, :func:`~course_lib.experiments.scenario_framework.run_scenario` on any
backend), ``"share scenario"`` (a share-group scenario on the simulator,
:func:`~course_lib.experiments.share_scenarios.run_share_scenario`), ``"consumer protocol"`` (a
KIP-848 group experiment with any client's members), ``"share group"`` (the share-group
experiment with any client's workers), ``"probe"`` (one behaviour on any backend,
:mod:`~course_lib.experiments.behaviour_probes`), ``"transaction version"`` (transactions v1
against v2 on the simulator, :mod:`~course_lib.experiments.transaction_versions`). A *workload* is
one of :data:`course_lib.client_adapters.WORKLOADS`: what the experiment asks of a client.

Every experiment returns the one result type, :class:`course_lib.judge.result.Result`
(tests/test_layers.py checks each one's declared return); :func:`measured` builds it for a run
judged by what it measured.

    >>> from course_lib.experiments import scenarios
    >>> family("scenario")["leader_crash_after_ack"] is scenarios.leader_crash_after_ack
    True
    >>> EXPERIMENTS[("scenario", "leader_crash_after_ack")].workload
    'producer'
    >>> experiment("scenario", "admin")
    Traceback (most recent call last):
    ValueError: no workload 'admin': choose one of producer, consumer classic, consumer protocol, share
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from ..judge.result import Result

#: the workloads, as :data:`course_lib.client_adapters.WORKLOADS` names them (tests/test_composition.py
#: checks they are the same: the registry stays above the seam without importing the adapters)
WORKLOADS = ("producer", "consumer classic", "consumer protocol", "share")
#: the families, each with how its experiments are run
FAMILIES = {
    "scenario": "run_scenario(name, backend, seed, **settings) -> Result",
    "share scenario": "run_share_scenario(name, seed, **settings) -> Result",
    "consumer protocol": "run_on(name, client, cluster) / on_the_simulator(name) -> Result",
    "share group": "run_on(client, cluster) / simulator_run() -> Result",
    "probe": "probe(backend) -> Result (numbers: what the client saw)",
    "transaction version": "run(transaction_version, seed, **settings) -> Result",
}


@dataclass(frozen=True)
class Experiment:
    """One experiment: its name in its family, the workload it runs, the function that is it."""

    family: str
    name: str
    workload: str
    run: Callable[..., Any]

    @property
    def summary(self) -> str:
        """The first line of its docstring."""
        return (self.run.__doc__ or "").strip().split("\n")[0]


#: every experiment, by (family, name), in the order they were declared
EXPERIMENTS: dict[tuple[str, str], Experiment] = {}


def experiment(family: str, workload: str, name: str | None = None) -> Callable[[Callable], Callable]:
    """Declare the decorated function an experiment of ``family`` running ``workload``, named
    ``name`` (its own name by default); it is returned unchanged."""
    if family not in FAMILIES:
        raise ValueError(f"no family {family!r}: choose one of {', '.join(FAMILIES)}")
    if workload not in WORKLOADS:
        raise ValueError(f"no workload {workload!r}: choose one of {', '.join(WORKLOADS)}")

    def declare(fn: Callable) -> Callable:
        key = (family, name or fn.__name__)
        if key in EXPERIMENTS and EXPERIMENTS[key].run is not fn:
            raise ValueError(f"the {family} {key[1]!r} is declared twice")
        EXPERIMENTS[key] = Experiment(family, key[1], workload, fn)
        return fn

    return declare


class family(Mapping[str, Callable[..., Any]]):
    """The run functions of one family, by name: a live view of :data:`EXPERIMENTS` (the
    family's old registries, ``SCENARIOS`` and ``SHARE_SCENARIOS``, are these views)."""

    def __init__(self, name: str) -> None:
        if name not in FAMILIES:
            raise ValueError(f"no family {name!r}: choose one of {', '.join(FAMILIES)}")
        self.name = name

    def _names(self) -> list[str]:
        return [n for f, n in EXPERIMENTS if f == self.name]

    def __getitem__(self, name: str) -> Callable[..., Any]:
        return EXPERIMENTS[(self.name, name)].run

    def __iter__(self) -> Iterator[str]:
        return iter(self._names())

    def __len__(self) -> int:
        return len(self._names())

    def __repr__(self) -> str:
        return f"<the {self.name} experiments: {', '.join(self._names())}>"


def measured(run: Callable, numbers: dict[str, Any], **parts: Any) -> Result:
    """The :class:`~course_lib.judge.result.Result` of a run of the experiment ``run`` that is
    judged by what it measured (a probe's outcomes), its family, name and workload from here;
    ``parts``: its other fields (``seed``, ``settings``)."""
    (declared,) = [e for e in EXPERIMENTS.values() if e.run is run]
    return Result(
        declared.family, declared.name, declared.workload, description=declared.summary, numbers=numbers, **parts
    )


def of_workload(workload: str) -> list[Experiment]:
    """Every experiment that runs ``workload``, in declaration order."""
    return [e for e in EXPERIMENTS.values() if e.workload == workload]
