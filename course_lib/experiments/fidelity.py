"""Every named scenario on every client x cluster, side by side: the fidelity matrix (notebooks/09).

This module sits above the seam: it composes the scenarios (:mod:`course_lib.experiments.scenarios`) with
each client x cluster pair (:mod:`course_lib.backend`) - the simulator's own clients on the
simulated cluster, and kafka-python, confluent-kafka (librdkafka) and the Java client
(:data:`~course_lib.client_adapters.CLIENTS`) each on the simulated cluster over TCP
(:class:`~course_lib.wire.cluster.WireCluster`) and on a real cluster - so no cluster package
needs to know another. (Single behaviours are probed by :mod:`course_lib.experiments.behaviour_probes`.)

:func:`fidelity_table` runs every case of :data:`FIDELITY_CASES` - every name in ``SCENARIOS``,
some with two settings - in each column of :data:`MATRIX` and compares which anomaly classes
appeared. Where they agree, the simulator's explanation (offsets, high watermark, epochs) is
trustworthy for the real thing; where two neighbouring columns do not, the layer between them is
where the difference is (:data:`PAIR_MEANING`): simulator vs kafka-python on the simulated
cluster differ only in the client, one client on the two clusters only in the brokers, two
clients on one cluster only in the client - by design or not (:data:`BY_DESIGN`). A column that
cannot run a case says why in the row (``not run``), never silently. Each case is a cell of
:mod:`course_lib.experiments.matrix`: the one code path runs it in each column.

    >>> with LocalCluster(controllers=1) as kafka:              # doctest: +SKIP
    ...     rows = fidelity_table(kafka)
    >>> all(r["agree"] for r in rows if r["why not"] is None)  # doctest: +SKIP
    True

:func:`start_lab` starts the real lab (:mod:`course_lib.real.lab`) or, without Java, a wire
cluster in its place. Taught in notebooks/09_real_kafka_lab.
"""

from __future__ import annotations

import atexit
from contextlib import nullcontext
from collections.abc import Callable
from functools import partial

from course_lib.clusters import Part
from course_lib.real import lab as real_lab
from course_lib.experiments.matrix import (
    KAFKA,
    KAFKA_TITLE as KAFKA_TITLE,  # (callers read the title here too)
    MATRIX_CLIENTS,
    SIMULATED,
    WIRE,
    Cell,
    Column,
    Lane,
    Run,
    cell,
    column,
    run_matrix,
)
from course_lib.experiments.scenarios import SCENARIOS
from course_lib.wire.cluster import WireCluster

#: (scenario name, keyword arguments): every scenario, the telling settings of each.
FIDELITY_CASES: list[tuple[str, dict]] = [
    ("leader_crash_after_ack", {"acks": 1}),
    ("leader_crash_after_ack", {"acks": "all"}),
    ("not_enough_replicas", {"acks": "all"}),
    ("not_enough_replicas", {"acks": 1}),
    ("lost_ack_retry", {"idempotent": False}),
    ("lost_ack_retry", {"idempotent": True}),
    ("retries_reorder", {"idempotent": False}),
    ("retries_reorder", {"idempotent": True}),
    ("unclean_election", {"unclean": True}),
    ("unclean_election", {"unclean": False}),
    ("fire_and_forget_crash", {}),
    ("producer_restart_gap", {}),
    ("random_faults", {}),
    ("consumer_crash", {"semantics": "at-most-once", "crash_point": "after_commit"}),
    ("consumer_crash", {"semantics": "at-least-once", "crash_point": "after_process"}),
    ("consume_transform_produce", {"crash_point": "mid_batch"}),
    ("external_store_exactly_once", {"crash_point": "mid_batch"}),
    ("aborted_transaction", {"isolation_level": "read_committed"}),
    ("aborted_transaction", {"isolation_level": "read_uncommitted"}),
    ("zombie_fencing", {}),
    ("transaction_timeout", {}),
]
assert {name for name, _ in FIDELITY_CASES} == set(SCENARIOS), "every scenario needs a fidelity case"

#: the :func:`~course_lib.experiments.shared_results.once_per_test_run` key of ``fidelity_table(a LocalCluster)``
#: (every case, seed 0, every client): tests/real computes it, notebook 09 under test reads it back
LOCAL_TABLE = "fidelity matrix, every case and client on a local cluster, seed 0"


#: the matrix's columns, left to right: the simulator, then each client on the simulated
#: cluster, then each client on Kafka
MATRIX: list[Column] = [
    SIMULATED,
    *(column(c, WIRE) for c in MATRIX_CLIENTS),
    *(column(c, KAFKA) for c in MATRIX_CLIENTS),
]
#: the table's columns: (row key, title) - the same scenario code runs on each
COLUMNS: list[tuple[str, str]] = [(c.key, c.title) for c in MATRIX]
_BY_KEY = {c.key: c for c in MATRIX}
#: the columns every other is compared with - the simulator and kafka-python, the course's client:
#: a failure there fails the table instead of filling a cell
REFERENCE = (SIMULATED, column("kafka-python", WIRE), column("kafka-python", KAFKA))
#: a pair named only when the column between them did not run (it splits the pair in two)
SPLIT_BY = {(SIMULATED.key, REFERENCE[2].key): REFERENCE[1].key}


def _pair_meaning() -> dict[tuple[str, str], str]:
    """Each pair of neighbouring columns and the one layer in which they differ."""
    sim, wire, kafka = (c.key for c in REFERENCE)
    pairs = {
        (sim, wire): "a bug of the simulated client (same brokers, other client)",
        (wire, kafka): "a bug of the simulated broker (same client, other brokers)",
        (sim, kafka): "simulator vs Kafka (no wire run to tell client from broker)",
    }
    for client in MATRIX_CLIENTS[1:]:
        for place, base in ((WIRE, wire), (KAFKA, kafka)):
            pairs[(base, column(client, place).key)] = (
                f"the clients differ (kafka-python vs {client}, same brokers: {place.title})"
            )
        pairs[(column(client, WIRE).key, column(client, KAFKA).key)] = (
            f"the simulated broker differs from Kafka under {client} (same client, other brokers)"
        )
    return pairs


#: what a disagreement between two neighbouring columns points at
PAIR_MEANING = _pair_meaning()

#: where clients differ by design (their documented behaviour, not a bug of either): (scenario,
#: client) -> what differs. A disagreement of that client's column says so.
BY_DESIGN: dict[tuple[str, str], str] = {
    ("random_faults", "confluent-kafka"): "librdkafka's enable.idempotence defaults to false (kafka-python's "
    "and Java's to true), and the scenario leaves it at the client's default: a batch retried after a "
    "lost ACK is written twice",
    ("leader_crash_after_ack", "confluent-kafka"): "librdkafka's enable.idempotence defaults to false "
    "(kafka-python's and Java's to true), and acks=all leaves it at the client's default: a batch retried "
    "during the failover can be appended twice; whether it is depends on the failover's timing",
}


def _key(name: str, params: dict) -> tuple:
    return name, repr(sorted(params.items()))


def disagreements(row: dict) -> list[str]:
    """Which neighbouring columns that ran disagree in ``row``, and what each points at (the
    pair simulator/real Kafka is named only when the wire column did not run to split it).

    >>> disagreements({"simulator": ["lost"], "wire": [], "real Kafka": []})
    ['simulator vs wire: a bug of the simulated client (same brokers, other client)']
    >>> disagreements({"simulator": [], "wire": None, "real Kafka": ["lost"]})
    ['simulator vs real Kafka: simulator vs Kafka (no wire run to tell client from broker)']
    >>> disagreements({"simulator": [], "wire": [], "wire java": ["duplicate"]})
    ['wire vs wire java: the clients differ (kafka-python vs java, same brokers: the simulated cluster over TCP)']
    """
    out = []
    for (a, b), meaning in PAIR_MEANING.items():
        if row.get(SPLIT_BY.get((a, b), "")) is not None:
            continue  # split into the two pairs above
        if row.get(a) is not None and row.get(b) is not None and row[a] != row[b]:
            why = BY_DESIGN.get((row.get("scenario", ""), _BY_KEY[b].client)) or row.get("by design")
            out.append(f"{a} vs {b}: {meaning}" + (f"; by design: {why}" if why else ""))
    return out


def _agree(row: dict):
    """True when every column that ran found the same anomalies; None when fewer than two ran."""
    ran = [row[k] for k, _ in COLUMNS if row.get(k) is not None]
    return None if len(ran) < 2 else all(found == ran[0] for found in ran)


def _row(name: str, params: dict, ran: dict[str, Run]) -> dict:
    """One case's row: each column's anomaly classes, the runs, why a column did not run and
    how long each took."""
    sim = ran[SIMULATED.key][0]
    assert sim is not None  # (the simulator's column is strict: it ran, or the table failed)
    runs = {c.key: ran[c.key] for c in MATRIX if c.key in ran}
    row: dict = {
        "scenario": name,
        "parameters": params,
        "expected": sorted(sim.expected),
        "simulator": sorted(sim.result.found),
    }
    row["runs"], row["not run"], row["seconds"] = {"simulator": sim}, {}, {}
    for key, (result, why, seconds) in runs.items():
        row[key] = None if result is None else sorted(result.result.found)
        row["runs"][key], row["not run"][key], row["seconds"][key] = result, why, seconds
    real = row["runs"].get("real Kafka")
    row.update(
        {
            "real outcome": None if real is None else real.result.outcome_table(),
            "why not": row["not run"].get("real Kafka"),
            "wire why not": row["not run"].get("wire"),
            "real": real,
            "wire run": row["runs"].get("wire"),
            "sim": sim,
        }
    )
    row["agree"] = _agree(row)
    row["disagree"] = disagreements(row)
    return row


def column_seconds(rows: list[dict]) -> dict[str, float]:
    """Each column's wall-clock seconds over ``rows`` (the matrix's cost, column by column)."""
    out: dict[str, float] = {}
    for r in rows:
        for key, seconds in r.get("seconds", {}).items():
            out[key] = round(out.get(key, 0.0) + seconds, 1)
    return out


def fidelity_table(
    cluster=None,
    cases=FIDELITY_CASES,
    seed: int = 0,
    reuse=(),
    wire=True,
    real_why_not: str | None = None,
    clients=MATRIX_CLIENTS,
    on_row: Callable[[dict], object] | None = None,
    side_by_side: bool = False,
) -> list[dict]:
    """Run each case in the simulator and with each of ``clients`` on the simulated cluster over
    TCP (``wire``) and on the real ``cluster``: the fidelity matrix, one row per case.

    A row ``agrees`` when every column that ran it found the same anomaly classes; ``disagree``
    names the neighbouring pairs that did not and the layer between them (simulator vs wire: a
    client bug of the simulator; wire vs real Kafka: a broker bug; one client vs another on one
    cluster: the clients differ). ``not run`` says why a column could not run a case (broker
    faults on a shared cluster, a fault schedule in virtual time, no JVM for the Java client);
    ``why not`` / ``wire why not`` are kafka-python's. ``cluster=None``: no Kafka columns
    (``real_why_not`` says why, e.g. no Java). ``wire``: True starts a lab
    :class:`~course_lib.wire.cluster.WireCluster` for the call, a WireCluster is used as given
    (for kafka-python; every other client gets a lab of its own, so the wire columns run side by
    side), False leaves the wire columns out. ``reuse``: kafka-python's real results already run
    (``run_scenario(..., backend=cluster)``) for some cases. ``row["seconds"]`` holds each run's
    wall-clock time (:func:`column_seconds` sums a column's). ``on_row(row)`` is called as each
    row is done, in order (the lab prints it: the first rows show within seconds).
    ``side_by_side``: every client but kafka-python gets a Kafka cluster of its own, made
    :meth:`like <course_lib.real.cluster.LocalCluster.like>` ``cluster`` and stopped afterwards,
    so the Kafka columns run at once as the wire columns do (three times the JVMs: the test
    suite's choice, not a laptop's).
    """
    done = {_key(getattr(r, "name", ""), r.parameters): r for r in reuse}
    no_real = real_why_not or "no real Kafka cluster in this run"
    sim, wire_kp, kafka_kp = REFERENCE
    # The wire columns mostly wait (the simulated cluster's wall-clock timeouts: ~5 s of CPU in
    # 100 s), each client on a simulated cluster of its own, in a thread of its own, while this
    # thread runs the first Kafka column and, unless ``side_by_side``, the others on the same
    # cluster one after another: the matrix takes about its longest column.
    lanes = [Lane(sim, apart=False, strict=True)]
    for i, col in enumerate(c for c in MATRIX if c.place is KAFKA and c.client in clients):
        apart = side_by_side and cluster is not None and i > 0  # a cluster of its own, like ``cluster``
        lanes.append(
            Lane(
                col,
                None if cluster is not None else no_real,
                cluster.like if apart else partial(nullcontext, cluster),
                apart=apart,
                strict=col in REFERENCE,
                shared=partial(_reused, done) if col == kafka_kp and cluster is not None else None,
            )
        )
    if wire:
        for col in (c for c in MATRIX if c.place is WIRE and c.client in clients):
            given = col == wire_kp and wire is not True
            made = partial(nullcontext, wire) if given else partial(WireCluster.lab, seed=seed)
            lanes.append(Lane(col, runs_on=made, strict=col in REFERENCE))
    else:
        lanes.append(Lane(wire_kp, "the wire column was not asked for", apart=False))
    rows: list[dict] = []

    def row_done(case: Cell, runs: dict[str, Run]) -> None:
        rows.append(_row(case.experiment.name, case.settings, runs))
        if on_row is not None:
            on_row(rows[-1])

    cells = [cell("scenario", name, **params) for name, params in cases]
    run_matrix(cells, lanes, seed, on_row=row_done, progress="the fidelity matrix")
    return rows


def _reused(done: dict, case: Cell, compute: Callable):
    """kafka-python's run of ``case`` on Kafka, when the caller has it already."""
    return done.get(_key(case.experiment.name, case.settings)) or compute()


def start_lab(progress: bool = True, wire_fallback: bool = False):
    """Return ``(cluster or None, a sentence saying what happened)``: the real lab
    (:func:`course_lib.real.lab.start_lab`); ``wire_fallback``: without Java or Maven, a started
    lab :class:`~course_lib.wire.cluster.WireCluster` (kafka-python's clients reach it over TCP)
    instead of None."""
    kafka, why = real_lab.start_lab(progress)
    missing = real_lab.jvm_missing() if kafka is None and wire_fallback else None
    if missing is None:
        return kafka, why
    wire = WireCluster.lab(seed=1).start()
    atexit.register(wire.stop)  # its threads and sockets, if a cell fails first
    return wire, (
        f"no real Kafka here ({missing}): the experiments run with "
        f"kafka-python on the simulated cluster over TCP instead ({wire.bootstrap_servers})"
    )


def is_wire(kafka) -> bool:
    """Is the lab the simulated cluster over the wire (the fallback without Java)?"""
    return isinstance(kafka, WireCluster)


def is_local(kafka) -> bool:
    """Can the lab kill, pause and lose ACKs on this cluster (it has broker faults)?"""
    return kafka is not None and Part.BROKER_FAULTS not in kafka.missing_parts()


def stop_lab(kafka) -> str:
    if is_wire(kafka):
        kafka.stop()
        return "stopped the simulated cluster (its threads and sockets are gone)"
    return real_lab.stop_lab(kafka)


def classes_cell(values) -> str:
    """A matrix cell: the anomaly classes a column found, or "-" for none.

    >>> classes_cell(["duplicate", "reorder"]), classes_cell([])
    ('duplicate, reorder', '-')
    """
    return ", ".join(values) if values else "-"


def _columns(rows: list[dict]) -> list[Column]:
    """The matrix columns ``rows`` have (rows of the three-column table, or of the two-column
    table before it, have fewer keys; a column asked for and not run is there with None)."""
    keys = {k for r in rows for k in r}
    return [c for c in MATRIX if c.key in keys] or [c for c in MATRIX if c.key in ("simulator", "real Kafka")]


def _why_not(row: dict, key: str) -> str | None:
    """Why ``key``'s column did not run this row (None: it ran)."""
    legacy = {"wire": "wire why not", "real Kafka": "why not"}.get(key)
    why = row.get("not run", {}).get(key) or (row.get(legacy) if legacy else None)
    return why or (None if row.get(key) is not None else "not run")


#: the width of a column of :func:`fidelity_text` (fixed: the lab prints the head before any row)
_WIDTH = 23


def fidelity_text(rows: list[dict]) -> str:
    """The fidelity matrix as aligned text: scenario, parameters, the anomalies in each column,
    whether every column that ran the case agrees; below it, which neighbouring pair disagrees
    and which layer that points at, and why a column did not run a case (one line per reason).
    The lab prints the same in three parts, each row as soon as it is done:
    :func:`fidelity_head`, :func:`fidelity_line`, :func:`fidelity_foot`."""
    columns = _columns(rows)
    return "\n".join([fidelity_head(columns), *(fidelity_line(r, columns) for r in rows), fidelity_foot(rows, columns)])


def fidelity_head(columns: list[Column] | None = None) -> str:
    """The column titles of :func:`fidelity_text` (default: every column of the matrix) and the
    rule under them."""
    columns = MATRIX if columns is None else columns
    head = f"{'scenario':<29}{'parameters':<53}" + "".join(f"{c.key:<{_WIDTH}}" for c in columns) + "agree"
    return f"{head}\n{'-' * len(head)}"


def _params(row: dict) -> str:
    return ", ".join(f"{k}={v}" for k, v in row["parameters"].items())


def fidelity_line(row: dict, columns: list[Column] | None = None) -> str:
    """One case of :func:`fidelity_text`: what each column found (``not run (*)``: the foot
    says why), and whether they agree."""
    columns = MATRIX if columns is None else columns
    cells = [("not run (*)" if _why_not(row, c.key) else classes_cell(row.get(c.key))) for c in columns]
    agree = "-" if row.get("agree") is None else "yes" if row["agree"] else "NO"
    return f"{row['scenario']:<29}{_params(row):<52} " + "".join(f"{c:<{_WIDTH - 1}} " for c in cells) + agree


def fidelity_foot(rows: list[dict], columns: list[Column] | None = None) -> str:
    """Below the rows of :func:`fidelity_text`: how many cases agree, what each column is, which
    neighbouring pairs disagree and what that points at, why a column did not run a case."""
    columns = MATRIX if columns is None else columns
    why_not: dict[tuple[str, str], list[str]] = {}
    disagree = []
    for r in rows:
        for col in columns:
            why = _why_not(r, col.key)
            if why and r["scenario"] not in why_not.setdefault((col.key, why), []):
                why_not[(col.key, why)].append(r["scenario"])
        if r.get("agree") is False:
            disagree += [f"- {r['scenario']} {_params(r)}: {pair}" for pair in r.get("disagree") or disagreements(r)]
    ran = [r for r in rows if r.get("agree") is not None]
    lines = [f"{sum(bool(r['agree']) for r in ran)} of {len(ran)} cases agree on every backend that ran them"]
    lines += [f"{c.key}: {c.title}" for c in columns]
    if disagree:
        lines += ["disagreements (which pair, what it points at):", *disagree]
    by_design = by_design_lines(rows, columns)
    if by_design:
        lines += ["clients differ, by design (what each did in this run):", *by_design]
    if why_not:
        lines.append("(*) not run:")
        lines += [f"- {key}, {', '.join(names)}: {why}" for (key, why), names in why_not.items()]
    return "\n".join(lines)


def by_design_lines(rows: list[dict], columns: list[Column] | None = None) -> list[str]:
    """One line per row of :mod:`course_lib.experiments.by_design` in ``rows``: what each column's client did
    in this run, and why the clients differ.

    >>> by_design_lines([{"scenario": "p", "by design": "why", "simulator": ["a"], "wire java": ["b"]}])
    ['- p: simulator: a; wire java: b - clients differ, by design: why']
    """
    columns = MATRIX if columns is None else columns
    out = []
    for r in rows:
        if r.get("by design"):
            done = "; ".join(f"{c.key}: {classes_cell(r[c.key])}" for c in columns if r.get(c.key) is not None)
            out.append(f"- {r['scenario']}: {done} - clients differ, by design: {r['by design']}")
    return out


def plot_fidelity(rows: list[dict]):
    """One line per case, one column per client x cluster; each cell names the anomalies found."""
    import matplotlib.pyplot as plt

    columns = _columns(rows)
    fig, ax = plt.subplots(figsize=(2.2 * len(columns) + 4, 0.38 * len(rows) + 1))
    for i, r in enumerate(rows):
        for j, col in enumerate(columns):
            found = r.get(col.key)
            if found is None:  # this column could not run it (fidelity_text says why)
                colour, label = "#eeeeee", "not run"
            else:
                colour = ("#f4cccc" if found else "#d9ead3") if r.get("agree") is not False else "#ffe599"
                label = classes_cell(found)
            ax.add_patch(plt.Rectangle((j, i), 1, 1, facecolor=colour, edgecolor="white"))
            ax.text(j + 0.5, i + 0.5, label, ha="center", va="center", fontsize=8)
    ax.set_xlim(0, len(columns))
    ax.set_ylim(len(rows), 0)
    ax.set_xticks([j + 0.5 for j in range(len(columns))], [_tick(c) for c in columns], fontsize=8)
    ax.set_yticks(
        [i + 0.5 for i in range(len(rows))],
        [f"{r['scenario']} {' '.join(f'{k}={v}' for k, v in r['parameters'].items())}" for r in rows],
        fontsize=8,
    )
    ax.tick_params(length=0)
    ax.set_title("anomalies found (red: anomaly, green: none; yellow: columns disagree; grey: not run)", fontsize=9)
    fig.tight_layout()
    return fig


def _tick(col: Column) -> str:
    return f"{col.client} on\n{col.place.where}" if col.client else "simulator clients"


def client_differences(rows: list[dict]) -> str:
    """For each client beside kafka-python: on each cluster, the cases where its anomalies differ
    from kafka-python's (the clients differ) and where they differ between the two clusters under
    it (the brokers differ), each with the reason when the clients differ by design."""
    lines = []
    for client in MATRIX_CLIENTS[1:]:
        for place, base in ((WIRE, REFERENCE[1].key), (KAFKA, REFERENCE[2].key)):
            key = column(client, place).key
            ran = [r for r in rows if r.get(key) is not None and r.get(base) is not None]
            if not any(key in r for r in rows):
                continue  # a table without this column
            if not ran:
                why = next((_why_not(r, key) for r in rows if _why_not(r, key)), "not run")
                lines.append(f"{client} on {place.title}: not run ({why})")
                continue
            differ = [r for r in ran if r[key] != r[base]]
            lines.append(
                f"{client} on {place.title}: the same anomalies as kafka-python in "
                f"{len(ran) - len(differ)} of {len(ran)} cases"
            )
            for r in differ:
                why = BY_DESIGN.get(
                    (r["scenario"], client), "not explained: a bug of one of the two clients or the adapter"
                )
                lines.append(
                    f"  - {r['scenario']} {_params(r)}: {client} {classes_cell(r[key])}, kafka-python {classes_cell(r[base])} ({why})"
                )
        wire, kafka = column(client, WIRE).key, column(client, KAFKA).key
        split = [r for r in rows if r.get(wire) is not None and r.get(kafka) is not None and r[wire] != r[kafka]]
        lines += [
            f"  - {r['scenario']} {_params(r)}: under {client} the simulated cluster found {classes_cell(r[wire])}, "
            f"Kafka {classes_cell(r[kafka])} (the brokers differ)"
            for r in split
        ]
    return "\n".join(lines)


#: the markers of the generated matrix in README.md
README_START = "<!-- fidelity-matrix: generated by tests/real/test_real_scenarios.py, do not edit -->"
README_END = "<!-- /fidelity-matrix -->"


#: the disagreements' line when there are none
NO_DISAGREEMENT = "- none: every column that ran a case found the same anomalies"


def fidelity_markdown(rows: list[dict]) -> str:
    """The matrix as the README shows it (between :data:`README_START` and :data:`README_END`):
    a Markdown table of every column's anomalies, then each disagreement named with its layer,
    and why a column did not run a case. No time or count is in it that a run could change
    without the matrix changing."""
    columns = _columns(rows)
    out = [
        README_START,
        "",
        "| scenario | parameters | " + " | ".join(c.key for c in columns) + " |",
        "|---|---|" + "---|" * len(columns),
    ]
    for r in rows:
        cells = ["not run" if _why_not(r, c.key) else classes_cell(r.get(c.key)) for c in columns]
        out.append(f"| {r['scenario']} | {_params(r) or '-'} | " + " | ".join(cells) + " |")
    out += ["", *(f"- **{c.key}**: {c.title}" for c in columns)]
    disagree = [f"- {r['scenario']} {_params(r)}: {pair}" for r in rows for pair in r.get("disagree") or []]
    out += ["", "Disagreements (the neighbouring pair, and the layer between them):", ""]
    out += disagree or [NO_DISAGREEMENT]
    why_not: dict[tuple[str, str], list[str]] = {}
    for r in rows:
        for c in columns:
            why = _why_not(r, c.key)
            if why and r["scenario"] not in why_not.setdefault((c.key, why), []):
                why_not[(c.key, why)].append(r["scenario"])
    if why_not:
        out += ["", "Not run:", ""]
        out += [f"- {key}, {', '.join(names)}: {why}" for (key, why), names in why_not.items()]
    return "\n".join([*out, "", README_END])


def timing_free(markdown: str) -> list[str]:
    """The lines of :func:`fidelity_markdown` no timing can change: without the rows and
    disagreements of the cases whose outcome for some client depends on timing by design
    (:data:`BY_DESIGN`: a retry without idempotence may or may not be appended twice), and without
    the line saying there is no disagreement, which a run without the timed one prints instead."""
    timed = {scenario for scenario, _ in BY_DESIGN}
    return [
        line
        for line in markdown.splitlines()
        if line != NO_DISAGREEMENT and not any(f"| {s} |" in line or f"- {s} " in line for s in timed)
    ]


def readme_matrix(readme: str) -> str:
    """The generated matrix in ``readme``."""
    return readme[readme.index(README_START) : readme.index(README_END) + len(README_END)]


def readme_with_matrix(readme: str, rows: list[dict]) -> str:
    """``readme`` with its generated matrix replaced by ``rows``'."""
    start, end = readme.index(README_START), readme.index(README_END) + len(README_END)
    return readme[:start] + fidelity_markdown(rows) + readme[end:]
