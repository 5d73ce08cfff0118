"""The real-Kafka lab's plumbing: start (or connect to) a cluster, print and plot its trade-offs
(the fidelity table, which composes every backend, is :mod:`course_lib.experiments.fidelity`).

    >>> kafka, why = start_lab()        # doctest: +SKIP
    >>> print(why)                      # doctest: +SKIP

- ``KAFKA_BOOTSTRAP_SERVERS`` or ``COURSE_CONNECTION_FILE`` set (a workshop):
  :func:`~course_lib.real.connect.connect` to that cluster
  (names prefixed per learner; the fault experiments need the local cluster and are skipped);
- else, Java 17+ and Maven present: a 3-broker :class:`~course_lib.real.cluster.LocalCluster`,
  stopped by :func:`stop_lab`, and at interpreter exit if a cell failed before that;
- else: ``(None, reason)``, and the lab's cells print that they were skipped
  (:func:`course_lib.experiments.fidelity.start_lab` then starts the simulated cluster over TCP instead).

Taught in notebooks/09_real_kafka_lab.
"""

from __future__ import annotations

import atexit
import os

from course_lib.clusters import Part

from course_lib.clusters.jars import jvm_missing as jvm_missing


def start_lab(progress: bool = True):
    """Return ``(cluster or None, a sentence saying what happened)``."""
    from .connect import ENV_BOOTSTRAP, ENV_CONNECTION_FILE, connect

    if os.environ.get(ENV_BOOTSTRAP) or os.environ.get(ENV_CONNECTION_FILE):
        kafka = connect()
        return kafka, (
            f"connected to {kafka.bootstrap_servers} as {kafka.prefix!r} (lost ACKs go through your own "
            f"proxy; broker faults need the local cluster)"
        )
    missing = jvm_missing()
    if missing is not None:
        return None, (
            f"real Kafka lab skipped: {missing}. Install Java 17+ and Maven "
            f"(apt-get install openjdk-17-jdk-headless maven, or conda env from environment.yml), "
            f"or set KAFKA_BOOTSTRAP_SERVERS to use an existing cluster."
        )
    from .cluster import LocalCluster

    # the KRaft controller in a process of its own: scenarios that kill two brokers keep a quorum
    kafka = LocalCluster(progress=progress, controllers=1)
    atexit.register(kafka.stop)  # a failing cell must not leave three JVMs running
    kafka.start()
    return kafka, (
        f"started 3 brokers and a controller (Kafka {kafka.kafka_version}) on {kafka.bootstrap_servers} in "
        f"{kafka.timings_s.get('start', float('nan')):.0f} s"
    )


def is_local(kafka) -> bool:
    """Can the lab kill, pause and lose ACKs on this cluster (it has broker faults)?"""
    return kafka is not None and Part.BROKER_FAULTS not in kafka.missing_parts()


def stop_lab(kafka) -> str:
    if kafka is None:
        return "nothing to stop"
    if is_local(kafka):
        kafka.stop()
        return f"stopped; JVMs left: {len(kafka.jvm_pids())}"
    kafka.close()  # our own fault proxy only
    return "left the shared cluster running (it is not ours)"


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
