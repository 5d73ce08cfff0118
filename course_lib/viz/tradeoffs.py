"""Trade-off experiments over many seeded trials, and their charts.

- :func:`loss_vs_acks` - how often acknowledged writes are lost under crashes, per ``acks``;
- :func:`duplicates_vs_idempotence` - duplicates under lost ACKs, idempotence off and on;
- :func:`latency_by_semantics` - simulated acknowledgement latency and throughput per setting.

Everything is seeded: the same call prints the same numbers, so the notebooks quote them.

Taught in notebooks/02_acks_and_durability and notebooks/04_idempotent_producer.
"""

from __future__ import annotations

import warnings

from ..nemesis import FaultKind
from ..experiments.scenarios import random_faults

CRASH_FAULTS = ("crash_leader_after_ack", "crash_leader", "crash", "pause", "shrink_isr_then_crash_leader")
ACKS_SETTINGS = {
    "acks=0": {"acks": 0, "enable_idempotence": False},
    "acks=1": {"acks": 1, "enable_idempotence": False},
    "acks=all": {"acks": "all", "enable_idempotence": False},
}


def _progress(items, desc):
    from ..progress import progress

    return progress(items, desc)


def _tally(results) -> dict:
    counts = [r.result.outcome_table() for r in results]
    sent = sum(c["sent"] for c in counts)
    return {
        "trials": len(results),
        "trials with loss": sum(1 for r in results if "lost" in r.result.found),
        "trials with duplicates": sum(1 for r in results if "duplicate" in r.result.found),
        "sent": sent,
        "lost": sum(c["lost (acknowledged)"] for c in counts),
        "duplicated": sum(c["duplicated"] for c in counts),
        "not delivered (producer told)": sum(c["not delivered (producer told)"] for c in counts),
        "violations": sum(1 for r in results if not r.result.valid),
    }


def loss_vs_acks(
    seeds=range(20),
    settings=ACKS_SETTINGS,
    kinds=CRASH_FAULTS,
    messages: int = 30,
    faults: int = 3,
    min_insync_replicas: int = 2,
    unclean_leader_election_enable: bool = False,
) -> dict[str, dict]:
    """Random crash/pause schedules (including an ISR shrink followed by the leader's death), the
    same ones for every setting; lost writes per setting."""
    out = {}
    topic = {
        "min_insync_replicas": min_insync_replicas,
        "unclean_leader_election_enable": unclean_leader_election_enable,
    }
    for label, config in settings.items():
        results = [
            random_faults(
                seed=s, producer_config=config, messages=messages, faults=faults, kinds=kinds, topic_config=topic
            )
            for s in _progress(list(seeds), label)
        ]
        out[label] = _tally(results)
    return out


def duplicates_vs_idempotence(
    seeds=range(20), kinds=(FaultKind.LOSE_NEXT_ACK,), messages: int = 30, faults: int = 3
) -> dict:
    """Lost ACKs (and whatever ``kinds`` adds), idempotence off and on, acks='all'."""
    settings = {
        "idempotence off": {"acks": "all", "enable_idempotence": False},
        "idempotence on": {"acks": "all", "enable_idempotence": True},
    }
    out = {}
    for label, config in settings.items():
        results = [
            random_faults(seed=s, producer_config=config, messages=messages, faults=faults, kinds=kinds)
            for s in _progress(list(seeds), label)
        ]
        out[label] = _tally(results)
    return out


LATENCY_SETTINGS = {
    "acks=0": {"acks": 0, "enable_idempotence": False},
    "acks=1": {"acks": 1, "enable_idempotence": False},
    "acks=all": {"acks": "all", "enable_idempotence": False},
    "acks=all + idempotence": {"acks": "all", "enable_idempotence": True},
}


def latency_by_semantics(
    records: int = 500, seed: int = 0, settings=LATENCY_SETTINGS, latency_ms: float = 1.0, batch_size: int = 2000
) -> dict[str, dict]:
    """Two measurements in *simulated* time, no faults, 3 brokers, RF=3:

    - latency: 50 records, one every 5 ms (a light load), the mean and the largest time from
      ``send()`` to the acknowledgement;
    - throughput: ``records`` 100-byte records handed over at once, records per simulated second
      until the last is committed (below the high watermark; ``batch_size`` bytes per batch).

    acks=0 "acknowledges" when the request leaves (nobody waits for the broker). The idempotent
    producer, like kafka-python's, keeps one batch per partition in flight; that is its cost."""
    out = {}
    for label, config in settings.items():
        cluster, producer = _bench_pair(seed, latency_ms, batch_size, config)
        for i in range(50):
            cluster.at(i * 5.0, producer.send, "bench", b"x" * 100)
        cluster.run_for(50 * 5.0)
        producer.flush()
        waits = _ack_waits(cluster.history)
        cluster, producer = _bench_pair(seed, latency_ms, batch_size, config)
        start = cluster.now
        for _ in range(records):
            producer.send("bench", b"x" * 100)
        producer.flush()
        cluster.run_until(lambda: (cluster.inspect("bench").hw or 0) >= records, 60_000)
        out[label] = {
            "mean ack latency ms": sum(waits) / len(waits),
            "max ack latency ms": max(waits),
            "records per simulated s": records / ((cluster.now - start) / 1000),
        }
    return out


def _bench_pair(seed, latency_ms, batch_size, config):
    from ..broker import Cluster
    from ..clients import KafkaProducer

    cluster = Cluster(brokers=3, seed=seed, latency_ms=latency_ms)
    cluster.create_topic("bench", replication_factor=3, min_insync_replicas=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        producer = KafkaProducer(bootstrap_servers=cluster, linger_ms=0, batch_size=batch_size, **config)
    return cluster, producer


def _ack_waits(history) -> list[float]:
    pending, waits = [], []
    for op in history:  # values are all equal and sends complete in order: pair them in order
        if op.f != "send":
            continue
        if op.type == "invoke":
            pending.append(op.time_ms)
        elif op.type == "ok":
            waits.append(op.time_ms - pending.pop(0))
    return waits


GOOD, MIDDLE, WORST = "#2e7d32", "#ef6c00", "#c62828"


def rate_colours(values: list, better: str = "lower") -> list:
    """A bar's colour says how good its value is, never where the bar stands: the best value
    green, the worst red, the rest orange (equal values, equal colours; all equal: all green).

    >>> rate_colours([0.185, 0.0167, 0.0])
    ['#c62828', '#ef6c00', '#2e7d32']
    >>> rate_colours([0, 0, 0.135])  # the duplicates chart: the bar with duplicates is the worst
    ['#2e7d32', '#2e7d32', '#c62828']
    >>> rate_colours([900, 1200], better="higher")
    ['#c62828', '#2e7d32']
    """
    if better not in ("lower", "higher"):
        raise ValueError(f"better must be 'lower' or 'higher', got {better!r}")
    if not values:
        return []
    best, worst = (min(values), max(values)) if better == "lower" else (max(values), min(values))
    return [GOOD if v == best else WORST if v == worst else MIDDLE for v in values]


def plot_rates(
    table: dict[str, dict],
    value: str,
    ax=None,
    title: str | None = None,
    per: str | None = None,
    better: str = "lower",
):
    """A bar per setting of ``table[setting][value]`` (divided by ``table[setting][per]`` if given),
    coloured by :func:`rate_colours` (``better="higher"`` for throughput-like values)."""
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=(6, 3))
    labels = list(table)
    values = [table[k][value] / (table[k][per] or 1) if per else table[k][value] for k in labels]
    bars = ax.bar(labels, values, color=rate_colours(values, better))
    ax.bar_label(bars, fmt="%.3g")
    ax.margins(y=0.15)  # room above the tallest bar for its label, under the title
    ax.set_ylabel(value if not per else f"{value} / {per}")
    ax.set_title(title or value)
    return ax
