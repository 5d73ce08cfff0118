"""The fidelity matrix's second part: experiments kafka-python cannot run (notebooks/09).

kafka-python speaks neither the consumer group protocol (KIP-848, ``group.protocol=consumer``)
nor share groups (KIP-932), but the Java client and librdkafka (confluent-kafka 2.16.1) do,
and so does the simulator. Each experiment - a crashed member and a slow handler in a consumer
group (:mod:`course_lib.experiments.consumer_protocol_experiments`), workers sharing a partition with a
stalled worker, a poison record, a REJECT and a RELEASE (:mod:`course_lib.experiments.share_group_experiments`)
- runs once per column of :data:`COLUMNS`: the simulator's own clients, then each client on the
simulated cluster over TCP and on the lab's Kafka (:data:`course_lib.experiments.fidelity.KAFKA_TITLE`). A row of the matrix is one count the experiment
fixes (records processed twice, member epochs, deliveries, redeliveries), read from each column's
run (:data:`ROWS`); it agrees when every column that ran it shows the same. Where two neighbouring
columns do not, the pair names the layer between them (:data:`PAIR_MEANING`), as in
:mod:`course_lib.experiments.fidelity`; a difference already understood says why (:data:`KNOWN`).

Each run is :func:`measure`\\ d through :func:`~course_lib.experiments.shared_results.once_per_test_run`: in
``make test`` the tests that already assert these runs (tests/real, tests/wire, tests/java_client)
compute them, and this matrix - in tests/test_protocol_matrix.py and in notebook 09 - reads them
back (tests/xdist_groups.py keeps them in one process, the readers last).

    >>> expected = Result("share group", "share group", numbers=share_group_experiments.EXPECTED)
    >>> rows = protocol_rows({("share group", "simulator"): (expected, None)})
    >>> print(protocol_line(rows[4], COLUMNS[:2]))  # doctest: +NORMALIZE_WHITESPACE
    share: a poison record (limit 3)       2 more, then archived      not run (*)             -
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import nullcontext
from functools import partial
from typing import NamedTuple

from course_lib.experiments import consumer_protocol_experiments as kip848
from course_lib.experiments import share_group_experiments
from course_lib.experiments.matrix import (
    KAFKA,
    KAFKA_TITLE,
    SIMULATED,
    WIRE,
    Cell,
    Column,
    Lane,
    cell,
    column,
    run_matrix,
)
from course_lib.experiments.registry import family
from course_lib.experiments.shared_results import once_per_test_run
from course_lib.judge.result import Result

#: the columns, left to right: the simulator, each client on the simulated cluster, each on Kafka
#: (the clients that have the consumer protocol and share workloads; kafka-python has neither)
COLUMNS: list[Column] = [
    SIMULATED,
    *(column(c, WIRE) for c in ("java", "confluent-kafka")),
    *(column(c, KAFKA) for c in ("java", "confluent-kafka")),
]
_BY_KEY = {c.key: c for c in COLUMNS}

#: the experiments, each run once per column: the registry's consumer-protocol and share-group ones
EXPERIMENTS = (*(f"consumer group: {name}" for name in family("consumer protocol")), *family("share group"))


def result_key(experiment: str, column: str) -> str:
    """The :func:`~course_lib.experiments.shared_results.once_per_test_run` key of ``experiment``'s run in
    ``column`` (a LocalCluster's run stands for every Kafka cluster of the test run: one release)."""
    if experiment not in EXPERIMENTS or column not in _BY_KEY:
        raise ValueError(
            f"no protocol matrix run {experiment!r} on {column!r}: experiments {EXPERIMENTS}, "
            f"columns {[c.key for c in COLUMNS]}"
        )
    return f"protocol matrix: {experiment} on {column}"


def measure(experiment: str, column: str, compute: Callable[[], Result]) -> Result:
    """``compute()``, once per test run (its first caller's result for every later one)."""
    return once_per_test_run(result_key(experiment, column), compute)


def _registry_cell(experiment: str) -> Cell:
    if experiment not in EXPERIMENTS:
        raise ValueError(f"no protocol matrix experiment {experiment!r}: one of {', '.join(EXPERIMENTS)}")
    group = experiment.removeprefix("consumer group: ")
    return cell("consumer protocol", group) if group in kip848.EXPERIMENTS else cell("share group", experiment)


def compute_run(experiment: str, column: Column, kafka=None) -> Result:
    """``experiment`` in ``column``: its family's run at the column's place (on the simulator,
    seeded, in virtual time; on a WireCluster started for it; or on ``kafka``, a LocalCluster);
    the column's client builds its members through the workload's contract
    (:mod:`course_lib.client_adapters`)."""
    run = _registry_cell(experiment)
    return column.place.run(run.experiment, run.settings, column.client, kafka, seed=0)


def measured(experiment: str, column: str, kafka=None) -> dict:
    """The numbers of :func:`compute_run` of ``experiment`` in the column keyed ``column``, once
    per test run (a copy: a caller may pop what it has checked)."""
    return dict(measure(experiment, column, lambda: compute_run(experiment, _BY_KEY[column], kafka)).numbers)


class Row(NamedTuple):
    """One count an experiment fixes, read from each column's run."""

    title: str
    experiment: str
    cell: Callable[[dict], str | None]  #: the count in words; None: this client does not show it


def _twice(r: dict) -> str:
    return f"{r['twice']} twice ({r['seen']['a']} + {r['seen']['b']} read)"


def _epochs(r: dict) -> str | None:
    epochs = list(r["epochs"].values())
    return None if None in epochs else " ".join(str(e) for e in epochs)


#: the rows, each a count its experiment fixes (the member epochs as the Java client's
#: ``groupMetadata().generationId`` and the simulator's ``group_metadata()`` show them, in the
#: order :data:`~course_lib.experiments.consumer_protocol_experiments.JAVA_CRASH_EPOCHS` lists them)
ROWS: list[Row] = [
    Row("KIP-848: a member crashes", EXPERIMENTS[0], _twice),
    Row("KIP-848: crash, member epochs", EXPERIMENTS[0], _epochs),
    Row("KIP-848: a slow handler", EXPERIMENTS[1], _twice),
    Row("KIP-848: slow handler, member epochs", EXPERIMENTS[1], _epochs),
    Row("share: a poison record (limit 3)", EXPERIMENTS[2], lambda r: f"{r['poison_deliveries']} more, then archived"),
    Row(
        "share: a stalled worker's lock expires",
        EXPERIMENTS[2],
        lambda r: f"{r['stalled_returned']} held, {r['stalled_held']} redelivered",
    ),
    Row("share: REJECT", EXPERIMENTS[2], lambda r: f"{r['reject_deliveries']} delivery, archived"),
    Row(
        "share: RELEASE once",
        EXPERIMENTS[2],
        lambda r: "deliveries " + " and ".join(str(n) for n in r["release_once_deliveries"]),
    ),
    Row(
        "share: accepted, of 24",
        EXPERIMENTS[2],
        lambda r: f"{r['accepted']} once, {r['accepted_twice']} twice",
    ),
]

#: what each experiment must give, for every column (the tests assert each run against it)
EXPECTED: dict[str, dict] = {
    EXPERIMENTS[0]: {**kip848.CRASH_EXPECTED, "epochs": kip848.JAVA_CRASH_EPOCHS},
    EXPERIMENTS[1]: {**kip848.SLOW_EXPECTED, "epochs": kip848.JAVA_SLOW_EPOCHS},
    EXPERIMENTS[2]: share_group_experiments.EXPECTED,
}

#: why a client shows no value in a row
NOT_SHOWN = {"confluent-kafka": "librdkafka does not show its member epoch"}

#: differences understood, not fixed yet: (row title, column) -> why that column differs
#: (none now: the last one - group_metadata() of a member that left - was mended)
KNOWN: dict[tuple[str, str], str] = {}

#: each pair of neighbouring columns and the one layer in which they differ
PAIR_MEANING: dict[tuple[str, str], str] = {
    ("simulator", "wire java"): "the simulator's client differs from the Java client (same simulated brokers)",
    ("simulator", "wire confluent-kafka"): "the simulator's client differs from librdkafka (same simulated brokers)",
    ("wire java", "wire confluent-kafka"): "the clients differ (same brokers: the simulated cluster over TCP)",
    ("wire java", "Kafka java"): "the simulated broker differs from Kafka under java (same client, other brokers)",
    ("wire confluent-kafka", "Kafka confluent-kafka"): "the simulated broker differs from Kafka under "
    "confluent-kafka (same client, other brokers)",
    ("Kafka java", "Kafka confluent-kafka"): f"the clients differ (same brokers: {KAFKA_TITLE})",
}


def _shown(row: dict, key: str) -> bool:
    return row.get(key) is not None and key not in row["not shown"]


def disagreements(row: dict) -> list[str]:
    """Which neighbouring columns that show a value disagree in ``row``, what each points at,
    and why when it is a :data:`KNOWN` difference.

    >>> disagreements({"row": "r", "not shown": {}, "simulator": "1", "wire java": "2", "Kafka java": "2"})
    ["simulator vs wire java: the simulator's client differs from the Java client (same simulated brokers)"]
    """
    out = []
    for (a, b), meaning in PAIR_MEANING.items():
        if _shown(row, a) and _shown(row, b) and row[a] != row[b]:
            why = KNOWN.get((row["row"], a)) or KNOWN.get((row["row"], b))
            out.append(f"{a} vs {b}: {meaning}" + (f"; known: {why}" if why else ""))
    return out


def protocol_rows(runs: dict[tuple[str, str], tuple[Result | None, str | None]]) -> list[dict]:
    """The matrix from ``runs``: (experiment, column key) -> (its run's result, whose numbers
    the rows read, or None and why it did not run). A row holds each column's cell (None: not run, ``not run`` says why; a
    client that does not show the value: ``not shown`` says so), the expected cell, whether the
    columns that show a value agree (None: fewer than two) and the pairs that disagree."""
    rows = []
    for spec in ROWS:
        row: dict = {"row": spec.title, "experiment": spec.experiment, "not run": {}, "not shown": {}}
        row["expected"] = spec.cell(EXPECTED[spec.experiment])
        for col in COLUMNS:
            result, why = runs.get((spec.experiment, col.key), (None, "not asked for"))
            cell = None if result is None else spec.cell(result.numbers)
            if result is None:
                row["not run"][col.key] = why or "not run"
            elif cell is None:
                row["not shown"][col.key] = NOT_SHOWN.get(col.client, "this client does not show it")
            row[col.key] = cell
        shown = [row[c.key] for c in COLUMNS if _shown(row, c.key)]
        row["agree"] = None if len(shown) < 2 else all(cell == shown[0] for cell in shown)
        row["disagree"] = disagreements(row)
        rows.append(row)
    return rows


def wrong_cells(rows: list[dict]) -> list[str]:
    """Each cell that shows another count than its experiment must give (:data:`EXPECTED`),
    unless it is a :data:`KNOWN` difference: [] when every cell that ran is right.

    >>> run = Result("share group", "share group", numbers={**share_group_experiments.EXPECTED, "accepted_twice": 1})
    >>> runs = {("share group", "wire java"): (run, None)}
    >>> wrong_cells(protocol_rows(runs))
    ['share: accepted, of 24: wire java shows 22 once, 1 twice, expected 22 once, 0 twice']
    """
    return [
        f"{r['row']}: {c.key} shows {r[c.key]}, expected {r['expected']}"
        for r in rows
        for c in COLUMNS
        if _shown(r, c.key) and r[c.key] != r["expected"] and (r["row"], c.key) not in KNOWN
    ]


def unexplained(rows: list[dict]) -> list[str]:
    """The disagreements that are not :data:`KNOWN` differences, each with its row."""
    return [f"{r['row']}: {pair}" for r in rows for pair in r["disagree"] if "; known: " not in pair]


def protocol_table(
    kafka=None,
    kafka_why: str | None = None,
    read_only: str | None = None,
    clusters: tuple[str, ...] = ("simulated", "wire", "kafka"),
) -> list[dict]:
    """Run (or, in a test run, read back) every experiment in every column and return the rows
    (:func:`protocol_rows`). ``kafka``: a LocalCluster for the Kafka columns (None: they say
    ``kafka_why``, unless a run of this test run is read back). ``read_only``: the client
    columns only read back what this test run stored, and say this where nothing was. The
    columns run side by side (each mostly waits on its cluster's timeouts); a column whose client
    is missing says why. ``clusters``: the columns of these clusters only (the others say so)."""
    lanes = []
    for col in COLUMNS:
        why = None if col.place.name in clusters else f"the {col.place.name} columns were not asked for"
        why = why or (read_only if col.client else None) or col.place.why_not(kafka, kafka_why)
        shared = partial(_shared, col.key)
        lanes.append(Lane(col, why, None if kafka is None else partial(nullcontext, kafka), shared=shared))
    rows = run_matrix([_registry_cell(e) for e in EXPERIMENTS], lanes)
    return protocol_rows({(e, key): run[:2] for e, runs in zip(EXPERIMENTS, rows) for key, run in runs.items()})


def _shared(key: str, run: Cell, compute: Callable[[], Result]) -> Result:
    """A protocol matrix run, once per test run (read back when this test run has it)."""
    (name,) = [e for e in EXPERIMENTS if _registry_cell(e) == run]
    return measure(name, key, compute)


# ---- as text ------------------------------------------------------------------------------------
_TITLE, _WIDTH = 39, 26


def _cell(row: dict, key: str) -> str:
    if key in row["not run"]:
        return "not run (*)"
    if key in row["not shown"]:
        return "not shown (**)"
    return row[key]


def protocol_head(columns: list[Column] | None = None) -> str:
    columns = COLUMNS if columns is None else columns
    head = f"{'experiment: count':<{_TITLE}}" + "".join(f"{c.key:<{_WIDTH}}" for c in columns) + "agree"
    return f"{head}\n{'-' * len(head)}"


def protocol_line(row: dict, columns: list[Column] | None = None) -> str:
    """One row: each column's cell, and whether the columns that show it agree."""
    columns = COLUMNS if columns is None else columns
    shown = [row[c.key] for c in columns if _shown(row, c.key)]
    agree = "-" if len(shown) < 2 else "yes" if all(s == shown[0] for s in shown) else "NO"
    return f"{row['row']:<{_TITLE}}" + "".join(f"{_cell(row, c.key):<{_WIDTH - 1}} " for c in columns) + agree


def _footnotes(rows: list[dict], kind: str) -> list[str]:
    grouped: dict[tuple[str, str], list[str]] = {}
    for r in rows:
        for key, why in r[kind].items():
            titles = grouped.setdefault((key, why), [])
            if r["experiment"] not in titles:
                titles.append(r["experiment"])
    return [f"- {key}, {', '.join(names)}: {why}" for (key, why), names in grouped.items()]


def protocol_foot(rows: list[dict]) -> str:
    """How many rows agree, what each column is, the disagreements (the pair, what it points
    at), and why a column did not run or does not show a row."""
    ran = [r for r in rows if r["agree"] is not None]
    lines = [f"{sum(bool(r['agree']) for r in ran)} of {len(ran)} rows agree on every column that shows them"]
    lines += [f"{c.key}: {c.title}" for c in COLUMNS]
    disagree = [f"- {r['row']}: {pair}" for r in rows for pair in r["disagree"]]
    if disagree:
        lines += ["disagreements (which pair, what it points at):", *disagree]
    if any(r["not run"] for r in rows):
        lines += ["(*) not run:", *_footnotes(rows, "not run")]
    if any(r["not shown"] for r in rows):
        lines += ["(**) not shown:", *_footnotes(rows, "not shown")]
    return "\n".join(lines)


def protocol_text(rows: list[dict]) -> str:
    """The matrix as aligned text: a row per count, a column per client x cluster, then the foot."""
    return "\n".join([protocol_head(), *(protocol_line(r) for r in rows), protocol_foot(rows)])


# ---- in the README ------------------------------------------------------------------------------
#: the markers of the generated matrix in README.md
README_START = "<!-- protocol-matrix: generated by tests/test_protocol_matrix.py, do not edit -->"
README_END = "<!-- /protocol-matrix -->"


def protocol_markdown(rows: list[dict]) -> str:
    """The matrix as the README shows it: a Markdown table, the disagreements, why a column did
    not run. No time is in it: only counts the experiments fix."""
    out = [
        README_START,
        "",
        "| experiment: count | " + " | ".join(c.key for c in COLUMNS) + " |",
        "|---|" + "---|" * len(COLUMNS),
    ]
    out += [f"| {r['row']} | " + " | ".join(_cell(r, c.key) for c in COLUMNS) + " |" for r in rows]
    out += ["", *(f"- **{c.key}**: {c.title}" for c in COLUMNS)]
    out += ["", "Disagreements (the neighbouring pair, and the layer between them):", ""]
    out += [f"- {r['row']}: {pair}" for r in rows for pair in r["disagree"]] or ["- none"]
    for kind, mark in (("not run", "(*) not run"), ("not shown", "(**) not shown")):
        if any(r[kind] for r in rows):
            out += ["", f"{mark}:", "", *_footnotes(rows, kind)]
    return "\n".join([*out, "", README_END])


def readme_with_matrix(readme: str, rows: list[dict]) -> str:
    """``readme`` with its generated protocol matrix replaced by ``rows``'."""
    start, end = readme.index(README_START), readme.index(README_END) + len(README_END)
    return readme[:start] + protocol_markdown(rows) + readme[end:]


def readme_matrix(readme: str) -> str:
    """The generated protocol matrix in ``readme``."""
    return readme[readme.index(README_START) : readme.index(README_END) + len(README_END)]
