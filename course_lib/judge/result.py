"""What one run of an experiment gives back - the one result type every experiment of
:mod:`course_lib.experiments` returns, and what the lessons' ``explain/`` functions, the matrix
and the grader read.

Every run has the same parts: which experiment it was (``family``, ``name``, ``workload``), what
it was given (``settings``) and what it configured (``config``), its history and the checker's
verdict on it (``check``), what it measured (``numbers``) and noted on the way (``notes``). A
family reads its own parts through the properties below (a scenario's ``producer_config``, a
consumer scenario's ``semantics``, a share scenario's ``timeline()``): one type, no subclass per
family.

It lives with the judge, not in ``experiments/``, because the consuming application
(:func:`course_lib.application.processing.run_pipeline`, a layer below the experiments) returns
it too.

    >>> r = Result("probe", "demo", numbers={"acknowledged": 5, "read": 0})
    >>> r.numbers["read"], r.anomalies, r
    (0, set(), <Result probe demo: {'acknowledged': 5, 'read': 0}>)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..history import History
from .check_result import CheckResult


@dataclass
class Result:
    #: the experiment's family and name in :data:`course_lib.experiments.registry.EXPERIMENTS`
    family: str
    name: str
    #: what it asked of a client (a :data:`course_lib.experiments.registry.WORKLOADS` name)
    workload: str = ""
    seed: int | None = None
    description: str = ""
    #: the keyword arguments the run was given (a scenario's besides seed and backend)
    settings: dict[str, Any] = field(default_factory=dict)
    #: what the run configured: ``producer`` and ``topic`` (a scenario's), ``semantics`` and
    #: ``crash_point`` (a consuming application's)
    config: dict[str, Any] = field(default_factory=dict)
    history: History | None = None
    #: the checker's verdict on the history (None: the experiment is judged by its numbers)
    check: CheckResult | None = None
    #: what the run measured, by name: counts, what a client saw, what a reader read
    numbers: dict[str, Any] = field(default_factory=dict)
    #: what the run noted on the way (a scenario's: the crashed leader, the errors seen, where it ran)
    notes: dict[str, Any] = field(default_factory=dict)
    #: the anomalies the experiment's settings should show
    expected: set[str] = field(default_factory=set)
    #: what the checker observed in the history, when the family has a view of it (a share
    #: scenario's :class:`~course_lib.judge.checker.ShareObserved`)
    observed: Any = None
    #: the cluster it ran on (None once stored: :mod:`course_lib.experiments.shared_results`)
    cluster: Any = None
    #: where it ran: ``simulator`` or a backend's label, and the suffix a repr gives it
    backend: str = "simulator"
    where: str = ""

    @property
    def anomalies(self) -> set[str]:
        """What the checker found (none when nothing was checked)."""
        return self.check.found if self.check is not None else set()

    @property
    def result(self) -> CheckResult:
        """The checker's verdict (a scenario's name for :attr:`check`)."""
        if self.check is None:
            raise AttributeError(f"the {self.family} {self.name!r} has no checker verdict: read its numbers")
        return self.check

    @property
    def parameters(self) -> dict[str, Any]:
        """A scenario's name for :attr:`settings`."""
        return self.settings

    @parameters.setter
    def parameters(self, value: dict[str, Any]) -> None:
        self.settings = value

    # ---- a scenario's view -------------------------------------------------------------------
    @property
    def producer_config(self) -> dict[str, Any]:
        return self.config.get("producer") or {}

    @property
    def topic_config(self) -> dict[str, Any]:
        return self.config.get("topic") or {}

    # ---- a consuming application's view -------------------------------------------------------
    @property
    def semantics(self) -> str:
        return self.config["semantics"]

    @property
    def crash_point(self) -> str | None:
        return self.config["crash_point"]

    @property
    def sink(self) -> list:
        """What the application wrote, in order."""
        return self.numbers["sink"]

    @property
    def crashes(self) -> list:
        return self.numbers["crashes"]

    # ---- a share scenario's view --------------------------------------------------------------
    def timeline(self) -> list[dict]:
        """One row per delivery: which record, to which worker, when, which delivery it was."""
        return [
            {
                "partition": p,
                "offset": o,
                "message": d.message,
                "worker": d.worker,
                "time_ms": d.time_ms,
                "delivery": d.delivery_count,
            }
            for (p, o), ds in sorted(self.observed.deliveries.items())
            for d in ds
        ]

    # ---- a transaction-version run's view (the names lesson 06 and its exercise use) ----------
    @property
    def epochs(self) -> tuple:
        """The producer's epoch after init_transactions() and after each transaction."""
        return self.numbers["epochs"]

    @property
    def add_partitions_sent_by_producer(self) -> int:
        return self.numbers["add_partitions_sent_by_producer"]

    @property
    def read_committed(self) -> tuple:
        """What a read_committed consumer read at the end, in offset order."""
        return self.numbers["read_committed"]

    @property
    def late_write_error(self) -> str | None:
        """The broker's answer to the late write (None: appended)."""
        return self.numbers["late_write_error"]

    @property
    def last_stable_offset(self) -> int:
        return self.numbers["last_stable_offset"]

    @property
    def log_end_offset(self) -> int:
        return self.numbers["log_end_offset"]

    # ---- shown ---------------------------------------------------------------------------------
    def __repr__(self) -> str:
        seed = "" if self.seed is None else f" seed={self.seed}"
        said = self.check.summary() if self.check is not None else repr(self.numbers)
        return f"<Result {self.family} {self.name}{seed}{self.where}: {said}>"

    def _repr_html_(self) -> str:
        seed = "" if self.seed is None else f" (seed {self.seed})"
        head = f"<h4>{self.name}{seed}</h4>" + (f"<p>{self.description}</p>" if self.description else "")
        if self.check is None:
            return head + "<pre>" + repr(self.numbers) + "</pre>"
        return head + self.check._repr_html_()
