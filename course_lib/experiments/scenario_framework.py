"""What every scenario is made of: the result it returns (:class:`~course_lib.judge.result.Result`), the registry
:func:`run_scenario` runs a scenario from by name (``@scenario``), and the building blocks of
Jepsen's shape - send numbered messages, then heal, read everything and check
(:func:`_finish`). The scenarios themselves: :mod:`course_lib.experiments.scenarios` (producers and
faults) and :mod:`course_lib.experiments.consumer_scenarios` (consumers and transactions).
"""

from __future__ import annotations

from typing import Callable

from .registry import EXPERIMENTS, experiment, family
from ..backend import Backend
from ..judge.checker import check
from ..judge.result import Result

TOPIC = "events"


#: the scenarios, by name: the registry's view of the ``scenario`` family
SCENARIOS = family("scenario")

#: how many times :func:`run_scenario` runs a scenario whose fault found its state gone
PREMISE_ATTEMPTS = 5


class PremiseLost(RuntimeError):
    """The state a fault is about was gone when the fault fired, so this run cannot show what the
    scenario is about (on a loaded machine: a paused follower fenced out of the ISR before the
    leader crashed). Not an outcome: :func:`run_scenario` heals the cluster and runs it again."""


def scenario(fn: Callable | None = None, *, workload: str = "producer"):
    """Declare a scenario (:func:`course_lib.experiments.registry.experiment`), running
    ``workload``: ``@scenario`` (a producer's) or ``@scenario(workload="consumer classic")``."""
    declare = experiment("scenario", workload)
    return declare if fn is None else declare(fn)


def run_scenario(name: str, backend=None, seed: int = 0, **params) -> Result:
    """Run the named scenario; ``backend``: ``None`` (the simulator, seeded), a ``LocalCluster``,
    a ``connect()`` handle, or a backend."""
    try:
        fn = SCENARIOS[name]
    except KeyError:
        raise ValueError(f"no scenario {name!r}; choose one of {sorted(SCENARIOS)}") from None
    lost: list[str] = []
    for attempt in range(1, PREMISE_ATTEMPTS + 1):
        try:
            result: Result = fn(seed=seed, backend=backend, **params)
            break
        except BaseException as e:
            _heal(backend)
            if not isinstance(e, PremiseLost) or attempt == PREMISE_ATTEMPTS:
                if isinstance(e, PremiseLost):
                    e.add_note(f"{name}: the same in each of {attempt} runs - is the machine too loaded?")
                raise
            lost.append(str(e))
    if lost:  # said, not hidden: the runs that could not show the case
        result.notes["runs_repeated"] = lost
    result.settings = dict(params)
    return result


def _heal(backend) -> None:
    """No broker stays paused or down after a run that failed: a LocalCluster's ``revive``, given
    it or a backend composed with it (the scenario may have left its followers paused)."""
    for target in (backend, getattr(backend, "cluster", None)):
        revive = getattr(target, "revive", None)
        if callable(revive):
            revive()
            return


# ---- building blocks -----------------------------------------------------------------------------
def _send_all(producer, topic: str, prefix: str, n: int, start: int = 0) -> list:
    return [producer.send(topic, f"{prefix}-{i}".encode()) for i in range(start, start + n)]


def _finish(
    name: str,
    seed: int,
    description: str,
    b: Backend,
    topic: str,
    producer_config: dict,
    topic_config: dict,
    expected: set,
    **notes,
) -> Result:
    b.final_read(topic)
    b.close_clients()
    result = check(b.history, producer_config, topic_config)
    return _result(name, seed, description, b, producer_config, topic_config, result, expected, topic=topic, **notes)


def _result(name, seed, description, b: Backend, producer_config, topic_config, result, expected, **notes) -> Result:
    where = b.provenance()
    if not where.notes:  # names used as asked: the topic is always "events"
        notes.pop("topic", None)
    return Result(
        "scenario",
        name,
        EXPERIMENTS[("scenario", name)].workload,
        seed=seed,
        description=description,
        config={"producer": producer_config, "topic": topic_config},
        history=b.history,
        check=result,
        notes={**notes, **where.notes},
        expected=set(expected),
        cluster=where.target,
        backend=where.label,
        where=where.where,
    )


def _summary(fn) -> str:
    return (fn.__doc__ or "").split("\n\n")[0]


def _unsafe_acks(acks) -> bool:
    """acks=0 and acks=1 acknowledge before the followers have the record: loss is expected."""
    return acks not in ("all", -1)
