"""The one matrix: experiment x client x cluster, each cell by one code path (notebooks/09).

A column is a client at a :class:`Place` - the simulator's own clients, a client on the simulated
cluster over TCP (:class:`~course_lib.wire.cluster.WireCluster`), a client on the lab's Kafka - and
a cell is an experiment of the one registry (:mod:`course_lib.experiments.registry`) with its
settings. :func:`run_cell` runs a cell in a column and answers with the one result type
(:class:`~course_lib.judge.result.Result`) or why it could not: the client lacks the experiment's
workload (:func:`~course_lib.client_adapters.missing_workloads`, which also says when the machine
lacks the client), the cluster lacks a part the experiment needs (``MissingFault``, from its
``missing_parts()``), the table's own reason (no Kafka in this run), or how the client failed.
The place decides how an experiment's family runs there (a scenario or a probe composes the
client with the place's cluster; a group or share experiment builds its members from the
client), so no table asks which client or cluster a column is.

:func:`run_matrix` runs cells in :class:`Lane`\\ s - a column as one table runs it: in a thread of
its own on a cluster of its own (columns mostly wait on their cluster's timeouts, so they run side
by side), or row by row in the caller's thread. Its callers are the tables:
:mod:`~course_lib.experiments.fidelity` (the scenarios), :mod:`~course_lib.experiments.by_design`
(the probes where the clients differ by design) and :mod:`~course_lib.experiments.protocol_matrix`
(KIP-848 and share groups).

    >>> sim = Lane(SIMULATED)
    >>> result, why, _ = run_cell(sim, cell("probe", "strict_min_isr_high_watermark"), None, seed=0)
    >>> why, result.numbers
    (None, {'acknowledged': 5, 'read': 0, 'isr': 2})
    >>> run_cell(Lane(column("kafka-python", WIRE)), cell("share group", "share group"), None, seed=0)[1]
    'kafka-python 3.0.12 has no share consumer (no KIP-932)'
"""

from __future__ import annotations

import contextlib
import time
import warnings
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, NamedTuple

from course_lib.backend import ComposedBackend, MissingFault, SimBackend
from course_lib.client_adapters import CLIENTS, missing_workloads
from course_lib.experiments import behaviour_probes as probes
from course_lib.experiments import consumer_protocol_experiments as kip848
from course_lib.experiments import share_group_experiments
from course_lib.experiments.registry import EXPERIMENTS, Experiment
from course_lib.experiments.scenarios import run_scenario
from course_lib.judge.result import Result
from course_lib.clusters.jars import kafka_version
from course_lib.wire.cluster import WireCluster

#: the release the lab's Kafka clusters and the Java client run in this process
#: (``COURSE_KAFKA_VERSION``, :func:`course_lib.clusters.jars.kafka_version`): every title names it
KAFKA_TITLE = f"Kafka {kafka_version()}"
#: what the clients are called in titles
CLIENT_TITLES = {
    "kafka-python": "kafka-python 3.0.12",
    "confluent-kafka": "confluent-kafka 2.16.1",
    "java": f"Java {kafka_version()}",
}
#: the client libraries of the matrix, kafka-python (the course's) first
MATRIX_CLIENTS = ("kafka-python", "confluent-kafka", "java")


def _probe(experiment: Experiment, backend) -> Result:
    """A probe on ``backend``, its warnings (a client's complaints on a killed broker) silenced and
    the backend's clients closed after."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return experiment.run(backend)
    finally:
        close = getattr(backend, "close_clients", None)
        if close is not None:
            close()


def _revive(cluster) -> None:
    """Every broker of ``cluster`` up again, so its next cell starts as every cell does (a cluster
    without broker faults has nothing to revive)."""
    revive = getattr(cluster, "revive", None)
    if revive is not None:
        revive()


class Place:
    """Where a column's runs happen, and how each family of experiments runs there (``cluster``:
    the column's cluster for the table, or None: a run starts its own where it can)."""

    name: str  #: the place in a word (tables and tests select columns by it)
    title: str  #: what it is, in words
    prefix: str = ""  #: the start of its columns' keys
    where: str = ""  #: the place in a plot's tick

    def run(self, experiment: Experiment, settings: dict, client: str, cluster, seed: int) -> Result:
        """``experiment`` with ``settings`` and ``client``'s side here."""
        runs: dict[str, Callable[..., Result]] = {
            "scenario": self.scenario,
            "probe": self.probe,
            "consumer protocol": self.group,
            "share group": self.share,
        }
        if experiment.family not in runs:
            raise ValueError(f"the matrix runs no {experiment.family} experiment: one of {', '.join(runs)}")
        return runs[experiment.family](experiment, settings, client, cluster, seed)

    def scenario(self, experiment: Experiment, settings: dict, client: str, cluster, seed: int) -> Result:
        with self._there(cluster, seed) as there:
            seeded = {"seed": seed} if self.seeded else {}
            return run_scenario(
                experiment.name, backend=ComposedBackend(there, CLIENTS[client]()), **seeded, **settings
            )

    def probe(self, experiment: Experiment, settings: dict, client: str, cluster, seed: int) -> Result:
        with self._there(cluster, seed) as there:
            return _probe(experiment, ComposedBackend(there, CLIENTS[client]()))

    def group(self, experiment: Experiment, settings: dict, client: str, cluster, seed: int) -> Result:
        raise NotImplementedError

    def share(self, experiment: Experiment, settings: dict, client: str, cluster, seed: int) -> Result:
        raise NotImplementedError

    #: whether a scenario here runs on the table's seed (a simulated cluster's fault schedule)
    seeded = True

    @contextlib.contextmanager
    def _there(self, cluster, seed: int) -> Iterator[Any]:
        """The cluster a composed run uses: the column's, revived after the run (the next cell
        starts with every broker up), or one started for the run and stopped after."""
        if cluster is None:
            with self._started(seed) as started:
                yield started
            return
        try:
            yield cluster
        finally:
            _revive(cluster)

    def _started(self, seed: int) -> contextlib.AbstractContextManager:
        raise ValueError(f"a run on {self.title} needs its cluster (kafka=...)")

    def why_not(self, kafka, kafka_why: str | None) -> str | None:
        """Why no column here can run in a table given ``kafka`` (None: they can)."""
        return None


class _Simulator(Place):
    """The simulator itself: its own clients, seeded, in virtual time."""

    name, title, where = "simulated", "the simulator", "the simulator"

    def scenario(self, experiment: Experiment, settings: dict, client: str, cluster, seed: int) -> Result:
        return run_scenario(experiment.name, seed=seed, **settings)

    def probe(self, experiment: Experiment, settings: dict, client: str, cluster, seed: int) -> Result:
        return _probe(experiment, SimBackend.start(seed=1, **probes.SIM_TIMING))

    def group(self, experiment: Experiment, settings: dict, client: str, cluster, seed: int) -> Result:
        return kip848.on_the_simulator(experiment.name)

    def share(self, experiment: Experiment, settings: dict, client: str, cluster, seed: int) -> Result:
        return share_group_experiments.simulator_run(seed=0)


class _Wire(Place):
    """The simulated cluster over TCP: the column's WireCluster, or one started for the run."""

    name, title, prefix, where = "wire", "the simulated cluster over TCP", "wire", "the simulated cluster"

    def _started(self, seed: int) -> contextlib.AbstractContextManager:
        return WireCluster.lab(seed=seed)

    def group(self, experiment: Experiment, settings: dict, client: str, cluster, seed: int) -> Result:
        return kip848.on_the_wire(experiment.name, client)

    def share(self, experiment: Experiment, settings: dict, client: str, cluster, seed: int) -> Result:
        return share_group_experiments.on_the_wire(client)


class _Kafka(Place):
    """The lab's Kafka, a cluster the table is given (a LocalCluster, or one like it)."""

    name, title, prefix, where = "kafka", KAFKA_TITLE, "Kafka", KAFKA_TITLE
    seeded = False  # Kafka keeps its own time: a scenario runs on its default seed

    def group(self, experiment: Experiment, settings: dict, client: str, cluster, seed: int) -> Result:
        return kip848.run_on(experiment.name, client, self._given(cluster))

    def share(self, experiment: Experiment, settings: dict, client: str, cluster, seed: int) -> Result:
        return share_group_experiments.run_on(client, self._given(cluster))

    def _given(self, cluster):
        return self._started(0) if cluster is None else cluster

    def why_not(self, kafka, kafka_why: str | None) -> str | None:
        return None if kafka is not None else kafka_why or f"no {KAFKA_TITLE} cluster in this run"


SIMULATOR, WIRE, KAFKA = _Simulator(), _Wire(), _Kafka()


class Column(NamedTuple):
    """One column: a client (\"\": the simulator's own) at a place."""

    key: str  #: the row key of its cells
    client: str
    place: Place
    title: str


#: the simulator's own clients: the column every table starts with
SIMULATED = Column("simulator", "", SIMULATOR, "the simulator's own clients")
#: kafka-python's columns keep the keys they had when they were the fidelity table's only ones
_FIRST_KEYS = {("kafka-python", WIRE): "wire", ("kafka-python", KAFKA): "real Kafka"}


def column(client: str, place: Place) -> Column:
    """``client``'s column at ``place``.

    >>> column("java", WIRE).key, column("kafka-python", KAFKA).key
    ('wire java', 'real Kafka')
    """
    key = _FIRST_KEYS.get((client, place), f"{place.prefix} {client}")
    return Column(key, client, place, f"{CLIENT_TITLES[client]} on {place.title}")


class Cell(NamedTuple):
    """A row of a table: an experiment of the registry, with its settings."""

    experiment: Experiment
    settings: dict


def cell(family: str, name: str, **settings: Any) -> Cell:
    """The registry's experiment ``name`` of ``family`` with ``settings``."""
    return Cell(EXPERIMENTS[(family, name)], settings)


#: a cell's run: its result (None: it did not run), why it did not, its wall-clock seconds
Run = tuple[Result | None, str | None, float]


class NotRun(Exception):
    """A run that cannot be computed here (the cell says why); one stored earlier in the test run
    is read back all the same (:attr:`Lane.shared`)."""


class Lane(NamedTuple):
    """A column as one table runs it."""

    column: Column
    why: str | None = None  #: the table's reason none of its cells runs (no Kafka in this run)
    #: the column's cluster for the table, entered once (in the lane's thread) and left at the end;
    #: None: each run starts its own where it can
    runs_on: Callable[[], contextlib.AbstractContextManager] | None = None
    apart: bool = True  #: in a thread of its own; False: row by row in the caller's thread
    strict: bool = False  #: a failure fails the table (a reference column), not a cell
    #: how a cell's run is found: ``shared(cell, compute)`` (a result stored this test run, or
    #: ``compute()``); None: computed
    shared: Callable[[Cell, Callable[[], Result]], Result] | None = None


def why_not(lane: Lane, c: Cell) -> str | None:
    """Why ``c`` cannot run in ``lane``: its client lacks the workload (or the machine lacks the
    client), or the table's reason; None: it can."""
    lacks = missing_workloads(lane.column.client or "simulator")
    return lacks.get(c.experiment.workload) or lane.why


def _first_line(e: BaseException) -> str:
    return f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"


def run_cell(lane: Lane, c: Cell, cluster, seed: int) -> Run:
    """``c`` in ``lane``'s column on ``cluster`` (the lane's, or None): the one code path of every
    cell. A cell that cannot run, or whose run fails, says why (a strict lane's failure raises)."""
    col, why = lane.column, why_not(lane, c)
    if why and lane.shared is None:
        return None, why, 0.0
    t0 = time.monotonic()

    def compute() -> Result:
        if why:
            raise NotRun(why)
        return col.place.run(c.experiment, c.settings, col.client, cluster, seed)

    try:
        result = compute() if lane.shared is None else lane.shared(c, compute)
        return result, None, round(time.monotonic() - t0, 1)
    except (NotRun, MissingFault) as e:
        return None, str(e), round(time.monotonic() - t0, 1)
    except Exception as e:
        if lane.strict:
            raise
        return None, f"{col.client or 'the simulator'} failed: {_first_line(e)}", round(time.monotonic() - t0, 1)


def _in_a_thread(
    stack: contextlib.ExitStack, lane: Lane, made: Callable[[], Any], cells: list[Cell], seed: int
) -> list[Future]:
    """``lane``'s cells in a thread of its own, on the cluster ``made()`` gives, entered in that
    thread and left when ``stack`` is (after the thread stopped)."""
    clusters = stack.enter_context(contextlib.ExitStack())  # left after the pool stops
    pool = stack.enter_context(ThreadPoolExecutor(1, thread_name_prefix=f"{lane.column.key}-column"))
    stack.callback(pool.shutdown, cancel_futures=True)  # a failed strict run does not wait
    there = pool.submit(lambda: clusters.enter_context(made()))

    def run(c: Cell) -> Run:
        return run_cell(lane, c, there.result(), seed)

    return [pool.submit(run, c) for c in cells]


def run_matrix(
    cells: Sequence[Cell],
    lanes: Sequence[Lane],
    seed: int = 0,
    on_row: Callable[[Cell, dict[str, Run]], object] | None = None,
    progress: str | None = None,
) -> list[dict[str, Run]]:
    """Every cell in every lane: one dict per cell, each lane's column key -> its :data:`Run`, in
    the order of ``lanes``. The lanes apart run side by side: one with a cluster of its own in a
    thread of its own, on that cluster, entered in the thread (a cluster's start overlaps the other
    columns' runs); the cells of those without (each run starts its own) in a pool they share. The
    others run row by row here, in the order of ``lanes``. A lane none of whose cells can run
    starts nothing. ``on_row(cell,
    runs)`` is called as each row is done, in order; ``progress``: a progress bar's title."""
    cells = list(cells)
    rows: list[dict[str, Run]] = []
    with contextlib.ExitStack() as stack:
        futures: dict[str, list[Future]] = {}
        here: dict[str, Any] = {}
        busy = [lane for lane in lanes if lane.shared is not None or not all(why_not(lane, c) for c in cells)]
        # the cells of the lanes apart whose runs each start their own cluster are independent: they
        # share one pool, a thread per such lane, taken in the order of ``lanes``
        loose = [lane for lane in busy if lane.apart and lane.runs_on is None]
        if loose:
            pool = stack.enter_context(ThreadPoolExecutor(len(loose), thread_name_prefix="matrix"))
            stack.callback(pool.shutdown, cancel_futures=True)  # a failed strict run does not wait
            for lane in loose:
                futures[lane.column.key] = [pool.submit(run_cell, lane, c, None, seed) for c in cells]
        for lane in lanes:
            if lane in busy and lane.runs_on is not None and lane.apart:
                futures[lane.column.key] = _in_a_thread(stack, lane, lane.runs_on, cells, seed)
            elif lane not in loose:
                made = lane.runs_on if lane.runs_on is not None and lane in busy else contextlib.nullcontext
                here[lane.column.key] = stack.enter_context(made())
        shown: Sequence[Cell] = cells
        if progress is not None:
            from tqdm.auto import tqdm

            shown = tqdm(cells, desc=progress, leave=False)
        for i, c in enumerate(shown):
            runs = {}
            for lane in lanes:
                key = lane.column.key
                runs[key] = futures[key][i].result() if key in futures else run_cell(lane, c, here[key], seed)
            rows.append(runs)
            if on_row is not None:
                on_row(c, runs)
    return rows
