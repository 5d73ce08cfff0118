"""The real-Kafka lab's plumbing: start (or connect to) a cluster, print and plot its tables.

    >>> kafka, why = start_lab()        # doctest: +SKIP
    >>> print(why)                      # doctest: +SKIP

- ``KAFKA_BOOTSTRAP_SERVERS`` or ``COURSE_CONNECTION_FILE`` set (a workshop):
  :func:`~course_lib.real.connect.connect` to that cluster
  (names prefixed per learner; the fault experiments need the local cluster and are skipped);
- else, Java 17+ and Maven present: a 3-broker :class:`~course_lib.real.cluster.LocalCluster`,
  stopped by :func:`stop_lab`, and at interpreter exit if a cell failed before that;
- else, with ``wire_fallback``: kafka-python against the simulated cluster over TCP
  (:class:`~course_lib.wire.backend.WireBackend` on a ``WireLab``: every fault, no JVM), saying so;
- else: ``(None, reason)``, and the lab's cells print that they were skipped.

Taught in notebooks/09_real_kafka_lab.
"""

from __future__ import annotations

import atexit
import os

from . import jars


def start_lab(progress: bool = True, wire_fallback: bool = False):
    """Return ``(cluster or None, a sentence saying what happened)``; ``wire_fallback``: without
    Java or Maven, a :class:`~course_lib.wire.backend.WireBackend` instead of None."""
    from .connect import ENV_BOOTSTRAP, ENV_CONNECTION_FILE, connect

    if os.environ.get(ENV_BOOTSTRAP) or os.environ.get(ENV_CONNECTION_FILE):
        kafka = connect()
        return kafka, (
            f"connected to {kafka.bootstrap_servers} as {kafka.prefix!r} (lost ACKs go through your own "
            f"proxy; broker faults need the local cluster)"
        )
    try:
        jars.check_jvm_tools()
    except jars.JvmToolMissing as e:
        if wire_fallback:
            from course_lib.wire.backend import WireBackend

            wire = WireBackend.start(seed=1)
            atexit.register(wire.cluster.stop)  # its threads and sockets, if a cell fails first
            return wire, (
                f"no real Kafka here ({str(e).splitlines()[0].rstrip('.')}): the experiments run with "
                f"kafka-python on the simulated cluster over TCP instead ({wire.cluster.bootstrap_servers})"
            )
        return None, (
            f"real Kafka lab skipped: {str(e).splitlines()[0].rstrip('.')}. Install Java 17+ and Maven "
            f"(apt-get install openjdk-17-jdk-headless maven, or conda env from environment.yml), "
            f"or set KAFKA_BOOTSTRAP_SERVERS to use an existing cluster."
        )
    from .cluster import LocalCluster

    # the KRaft controller in a process of its own: scenarios that kill two brokers keep a quorum
    kafka = LocalCluster(progress=progress, controllers=1)
    atexit.register(kafka.stop)  # a failing cell must not leave three JVMs running
    kafka.start()
    return kafka, (
        f"started 3 brokers and a controller on {kafka.bootstrap_servers} in "
        f"{kafka.timings_s.get('start', float('nan')):.0f} s"
    )


def is_wire(kafka) -> bool:
    """Is the lab the simulated cluster over the wire (the fallback without Java)?"""
    from course_lib.wire.backend import WireBackend

    return isinstance(kafka, WireBackend)


def is_local(kafka) -> bool:
    """Can the lab kill, pause and lose ACKs on this cluster?"""
    from .cluster import LocalCluster

    return isinstance(kafka, LocalCluster) or is_wire(kafka)


def stop_lab(kafka) -> str:
    if kafka is None:
        return "nothing to stop"
    if is_wire(kafka):
        kafka.cluster.stop()
        return "stopped the simulated cluster (its threads and sockets are gone)"
    if is_local(kafka):
        kafka.stop()
        return f"stopped; JVMs left: {len(kafka.jvm_pids())}"
    kafka.close()  # our own fault proxy only
    return "left the shared cluster running (it is not ours)"


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
    from .scenario_comparison import disagreements

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


def tradeoff_text(rows: list[dict]) -> str:
    cols = ["configuration", "messages", "msg/s", "p50 ms", "p99 ms", "one-at-a-time p50 ms"]
    widths = [24, 9, 9, 8, 8, 21]
    lines = ["".join(f"{c:>{w}}" if i else f"{c:<{w}}" for i, (c, w) in enumerate(zip(cols, widths)))]
    for r in rows:
        cells = []
        for i, (c, w) in enumerate(zip(cols, widths)):
            v = r.get(c, "-")
            if r["configuration"] == "acks=0" and c in ("p50 ms", "p99 ms"):
                v = "-"  # no acknowledgement, no latency
            cells.append(f"{v:<{w}}" if i == 0 else f"{v!s:>{w}}")
        lines.append("".join(cells))
    return "\n".join(lines)


def plot_tradeoffs(rows: list[dict]):
    import matplotlib.pyplot as plt

    labels = [r["configuration"] for r in rows]
    fig, (a, b) = plt.subplots(1, 2, figsize=(10, 3.2))
    a.barh(labels, [r["msg/s"] for r in rows], color="#6fa8dc")
    a.set_xlabel("messages / s (kafka-python, saturated)")
    a.invert_yaxis()
    lat = [r["p50 ms"] if r["configuration"] != "acks=0" else 0 for r in rows]
    b.barh(labels, lat, color="#e69138")
    b.set_xlabel("p50 latency, ms (send -> ack / commit)")
    b.invert_yaxis()
    b.set_yticks([])
    fig.tight_layout()
    return fig
