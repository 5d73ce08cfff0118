"""Simulator vs real Kafka: every named scenario on three backends, side by side (the fidelity
table of notebooks/09; single behaviours are probed by :mod:`course_lib.behaviour_probes`).

Each scenario is written once (:mod:`course_lib.scenarios`); :func:`fidelity_table` runs every
case of :data:`FIDELITY_CASES` - every name in ``SCENARIOS``, some with two settings - with the
simulator's own clients, with kafka-python on the simulated cluster over TCP
(:mod:`course_lib.wire`) and with kafka-python on a real cluster, and compares which anomaly
classes appeared. Where they agree, the simulator's explanation (offsets, high watermark,
epochs) is trustworthy for the real thing; where they do not, the pair that differs says where
the bug is: the first two differ only in the client, the last two only in the brokers. A
backend that cannot run a scenario says why in the row (``why not``, ``wire why not``), never
silently.

    >>> with LocalCluster(controllers=1) as kafka:              # doctest: +SKIP
    ...     rows = fidelity_table(kafka)
    >>> all(r["agree"] for r in rows if r["why not"] is None)  # doctest: +SKIP
    True

Taught in notebooks/09_real_kafka_lab.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from course_lib.backend import MissingFault
from course_lib.scenarios import SCENARIOS, run_scenario

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
    from course_lib.wire.backend import WireBackend

    try:
        return run_scenario(name, backend=WireBackend(lab), seed=seed, **params)
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
    ``wire``: True starts a :class:`~course_lib.wire.backend.WireLab` for the call, a WireLab is
    used as given, False leaves the column out. ``reuse``: real results already run
    (``run_scenario(..., backend=cluster)``) for some cases. ``on_row(row)`` is called as each
    row is done, in order (the lab prints it: the first rows show within seconds).
    """
    from tqdm.auto import tqdm

    if wire is True:
        from course_lib.wire.backend import WireLab

        with WireLab(seed=seed) as lab:
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
