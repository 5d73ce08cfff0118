"""Every named scenario on every backend, side by side: the fidelity table (notebooks/09).

This module sits above the seam: it composes the scenarios (:mod:`course_lib.scenarios`) with
each client x cluster pair (:mod:`course_lib.backend`) - the simulator's own clients, kafka-python
on the simulated cluster over TCP (:class:`~course_lib.wire.cluster.WireCluster`) and kafka-python
on a real cluster - so no cluster package needs to know another. (Single behaviours are probed
by :mod:`course_lib.behaviour_probes`.)

:func:`fidelity_table` runs every case of :data:`FIDELITY_CASES` - every name in ``SCENARIOS``,
some with two settings - on each column and compares which anomaly classes appeared. Where they
agree, the simulator's explanation (offsets, high watermark, epochs) is trustworthy for the real
thing; where they do not, the pair that differs says where the bug is: the first two differ only
in the client, the last two only in the brokers. A backend that cannot run a scenario says why
in the row (``why not``, ``wire why not``), never silently.

    >>> with LocalCluster(controllers=1) as kafka:              # doctest: +SKIP
    ...     rows = fidelity_table(kafka)
    >>> all(r["agree"] for r in rows if r["why not"] is None)  # doctest: +SKIP
    True

:func:`start_lab` starts the real lab (:mod:`course_lib.real.lab`) or, without Java, a wire
cluster in its place. Taught in notebooks/09_real_kafka_lab.
"""

from __future__ import annotations

import atexit
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from course_lib.backend import ComposedBackend, MissingFault
from course_lib.clusters import Part
from course_lib.real import lab as real_lab
from course_lib.scenarios import SCENARIOS, run_scenario
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

#: the :func:`~course_lib.shared_results.once_per_test_run` key of ``fidelity_table(a LocalCluster)``
#: (every case, seed 0): tests/real computes it, notebook 09 under test reads it back
LOCAL_TABLE = "fidelity table, every case on a local cluster, seed 0"


#: the table's columns: (row key, title). The same scenario code runs on each; the clients
#: change between the first two, the brokers between the last two.
COLUMNS: list[tuple[str, str]] = [
    ("simulator", "simulator clients"),
    ("wire", "kafka-python on the simulated cluster"),
    ("real Kafka", "kafka-python on Kafka 4.3.1"),
]

#: what a disagreement between two columns points at
PAIR_MEANING = {
    ("simulator", "wire"): "a bug of the simulated client (same brokers, other client)",
    ("wire", "real Kafka"): "a bug of the simulated broker (same client, other brokers)",
    ("simulator", "real Kafka"): "simulator vs Kafka (no wire run to tell client from broker)",
}


def _key(name: str, params: dict) -> tuple:
    return name, repr(sorted(params.items()))


def disagreements(row: dict) -> list[str]:
    """Which pairs of columns that ran disagree in ``row``, and what each points at (the pair
    simulator/real Kafka is named only when the wire column did not run to split it).

    >>> disagreements({"simulator": ["lost"], "wire": [], "real Kafka": []})
    ['simulator vs wire: a bug of the simulated client (same brokers, other client)']
    >>> disagreements({"simulator": [], "wire": None, "real Kafka": ["lost"]})
    ['simulator vs real Kafka: simulator vs Kafka (no wire run to tell client from broker)']
    """
    out = []
    for (a, b), meaning in PAIR_MEANING.items():
        if a == "simulator" and b == "real Kafka" and row.get("wire") is not None:
            continue  # split into the two pairs above
        if row.get(a) is not None and row.get(b) is not None and row[a] != row[b]:
            out.append(f"{a} vs {b}: {meaning}")
    return out


def _agree(row: dict):
    """True when every column that ran found the same anomalies; None when fewer than two ran."""
    ran = [row[k] for k, _ in COLUMNS if row.get(k) is not None]
    return None if len(ran) < 2 else all(found == ran[0] for found in ran)


def _run_wire(name: str, params: dict, lab, seed: int):
    """One case with kafka-python on the simulated cluster; the lab is healed afterwards so the
    next case starts with every broker up (as LocalCluster's scenarios leave theirs)."""
    try:
        return run_scenario(name, backend=ComposedBackend(lab), seed=seed, **params)
    finally:
        lab.revive()


def _attempt(run, *args, **kwargs):
    """``(run(...), None)``, or ``(None, why)`` when the backend cannot inject a fault the case needs."""
    try:
        return run(*args, **kwargs), None
    except MissingFault as e:
        return None, str(e)


def _row(name: str, params: dict, sim, real_run: tuple, wire_run: tuple) -> dict:
    """One case's row: each column's anomaly classes, the runs, and why a column did not run."""
    (real, why), (over_wire, wire_why) = real_run, wire_run
    row = {
        "scenario": name,
        "parameters": params,
        "expected": sorted(sim.expected),
        "simulator": sorted(sim.result.found),
        "wire": None if over_wire is None else sorted(over_wire.result.found),
        "real Kafka": None if real is None else sorted(real.result.found),
        "real outcome": None if real is None else real.result.outcome_table(),
        "why not": why,
        "wire why not": wire_why,
        "real": real,
        "wire run": over_wire,
        "sim": sim,
    }
    row["agree"] = _agree(row)
    row["disagree"] = disagreements(row)
    return row


def fidelity_table(
    cluster=None,
    cases=FIDELITY_CASES,
    seed: int = 0,
    reuse=(),
    wire=True,
    real_why_not: str | None = None,
    on_row: Callable[[dict], object] | None = None,
) -> list[dict]:
    """Run each case in the simulator, with kafka-python on the simulated cluster over TCP
    (``wire``) and on the real ``cluster``; one row per case.

    A row ``agrees`` when every backend that ran it found the same anomaly classes;
    ``disagree`` names the pairs that did not (simulator vs wire: a client bug of the simulator;
    wire vs real Kafka: a broker bug). ``why not`` / ``wire why not`` say why the real / wire
    backend could not run a case (e.g. broker faults on a shared cluster, a fault schedule in
    virtual time). ``cluster=None``: no real column (``real_why_not`` says why, e.g. no Java).
    ``wire``: True starts a lab :class:`~course_lib.wire.cluster.WireCluster` for the call, a
    WireCluster is used as given, False leaves the column out. ``reuse``: real results already run
    (``run_scenario(..., backend=cluster)``) for some cases. ``on_row(row)`` is called as each
    row is done, in order (the lab prints it: the first rows show within seconds).
    """
    from tqdm.auto import tqdm

    if wire is True:
        with WireCluster.lab(seed=seed) as lab:
            return fidelity_table(cluster, cases, seed, reuse, wire=lab, real_why_not=real_why_not, on_row=on_row)
    done = {_key(getattr(r, "name", ""), r.parameters): r for r in reuse}
    no_real = real_why_not or "no real Kafka cluster in this run"
    cases = list(cases)
    rows = []
    # Both columns mostly wait (the simulated cluster's wall-clock timeouts: ~5 s of CPU in 100 s;
    # the JVMs'), each on its own cluster: the wire column runs its cases one after another in a
    # thread of its own while this one runs the real column, so the table takes the longer of the
    # two instead of their sum.
    with ThreadPoolExecutor(1, thread_name_prefix="wire-column") as pool:
        wire_runs = [
            pool.submit(_attempt, _run_wire, name, params, wire, seed) if wire else None for name, params in cases
        ]
        try:
            for (name, params), wire_run in tqdm(
                list(zip(cases, wire_runs)), desc="simulator, wire, real Kafka", leave=False
            ):
                sim = run_scenario(name, seed=seed, **params)
                real, why = done.get(_key(name, params)), None if cluster is not None else no_real
                if real is None and cluster is not None:
                    real, why = _attempt(run_scenario, name, backend=cluster, **params)
                over_wire = wire_run.result() if wire_run else (None, "the wire column was not asked for")
                rows.append(_row(name, params, sim, (real, why), over_wire))
                if on_row is not None:
                    on_row(rows[-1])
        finally:
            pool.shutdown(cancel_futures=True)  # a failed real run does not wait for the wire column
    return rows


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


def _fmt(values) -> str:
    return ", ".join(values) if values else "-"


#: (row key, short title, what it is) of the fidelity table's columns, left to right
_FIDELITY_COLUMNS = [
    ("simulator", "simulator", "the simulator's own clients"),
    ("wire", "wire", "kafka-python on the simulated cluster over TCP (course_lib.wire)"),
    ("real Kafka", "real Kafka", "kafka-python on Kafka 4.3.1"),
]


def _why_not(row: dict, key: str) -> str | None:
    """Why ``key``'s column did not run this row (None: it ran). Rows of the two-column table
    (no ``wire`` key) say the wire column was not run."""
    if key == "simulator":
        return None
    if key == "wire":
        return row.get("wire why not") or (None if row.get("wire") is not None else "the wire column was not run")
    return row.get("why not") or (None if row.get("real Kafka") is not None else "not run")


def fidelity_text(rows: list[dict]) -> str:
    """The fidelity table as aligned text: scenario, parameters, the anomalies on each backend,
    whether every backend that ran the case agrees; below it, which pair disagrees and what that
    points at, and why a backend did not run a case (one line per reason). The lab prints the
    same in three parts, each row as soon as it is done: :func:`fidelity_head`,
    :func:`fidelity_line`, :func:`fidelity_foot`."""
    return "\n".join([fidelity_head(), *(fidelity_line(r) for r in rows), fidelity_foot(rows)])


def fidelity_head() -> str:
    """The column titles of :func:`fidelity_text` and the rule under them."""
    head = f"{'scenario':<29}{'parameters':<53}" + "".join(f"{t:<22}" for _, t, _ in _FIDELITY_COLUMNS) + "agree"
    return f"{head}\n{'-' * len(head)}"


def _params(row: dict) -> str:
    return ", ".join(f"{k}={v}" for k, v in row["parameters"].items())


def fidelity_line(row: dict) -> str:
    """One case of :func:`fidelity_text`: what each backend found (``not run (*)``: the foot
    says why), and whether they agree."""
    cells = [("not run (*)" if _why_not(row, key) else _fmt(row[key])) for key, _, _ in _FIDELITY_COLUMNS]
    agree = "-" if row.get("agree") is None else "yes" if row["agree"] else "NO"
    return f"{row['scenario']:<29}{_params(row):<52} " + "".join(f"{c:<21} " for c in cells) + agree


def fidelity_foot(rows: list[dict]) -> str:
    """Below the rows of :func:`fidelity_text`: how many cases agree, what each column is, which
    pairs disagree, why a backend did not run a case."""
    why_not: dict[tuple[str, str], list[str]] = {}
    disagree = []
    for r in rows:
        for key, title, _ in _FIDELITY_COLUMNS:
            why = _why_not(r, key)
            if why and r["scenario"] not in why_not.setdefault((title, why), []):
                why_not[(title, why)].append(r["scenario"])
        if r.get("agree") is False:
            disagree += [f"- {r['scenario']} {_params(r)}: {pair}" for pair in r.get("disagree") or disagreements(r)]
    ran = [r for r in rows if r.get("agree") is not None]
    lines = [f"{sum(bool(r['agree']) for r in ran)} of {len(ran)} cases agree on every backend that ran them"]
    lines += [f"{title}: {what}" for _, title, what in _FIDELITY_COLUMNS]
    if disagree:
        lines += ["disagreements (which pair, what it points at):", *disagree]
    if why_not:
        lines.append("(*) not run:")
        lines += [f"- {title}, {', '.join(names)}: {why}" for (title, why), names in why_not.items()]
    return "\n".join(lines)


def plot_fidelity(rows: list[dict]):
    """One line per case, one column per backend; each cell names the anomalies found."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(10, 0.38 * len(rows) + 1))
    for i, r in enumerate(rows):
        for j, (key, _, _) in enumerate(_FIDELITY_COLUMNS):
            found = r.get(key)
            if found is None:  # this backend could not run it (fidelity_text says why)
                colour, label = "#eeeeee", "not run"
            else:
                colour = ("#f4cccc" if found else "#d9ead3") if r.get("agree") is not False else "#ffe599"
                label = _fmt(found)
            ax.add_patch(plt.Rectangle((j, i), 1, 1, facecolor=colour, edgecolor="white"))
            ax.text(j + 0.5, i + 0.5, label, ha="center", va="center", fontsize=8)
    ax.set_xlim(0, len(_FIDELITY_COLUMNS))
    ax.set_ylim(len(rows), 0)
    ax.set_xticks(
        [j + 0.5 for j in range(len(_FIDELITY_COLUMNS))],
        ["simulator clients", "kafka-python on\nthe simulated cluster", "kafka-python on\nKafka 4.3.1"],
        fontsize=8,
    )
    ax.set_yticks(
        [i + 0.5 for i in range(len(rows))],
        [f"{r['scenario']} {' '.join(f'{k}={v}' for k, v in r['parameters'].items())}" for r in rows],
        fontsize=8,
    )
    ax.tick_params(length=0)
    ax.set_title("anomalies found (red: anomaly, green: none; yellow: backends disagree; grey: not run)", fontsize=9)
    fig.tight_layout()
    return fig
