"""What each delivery guarantee costs on a real cluster: kafka-python throughput and latency.

    >>> rows = tradeoffs(kafka, messages=2000, budget_s=2)          # doctest: +SKIP
    >>> claim_verdicts(rows)                                         # doctest: +SKIP

Each run is bounded by a message count *and* a time budget. The numbers depend on the machine
(three brokers and the client share its cores): compare rows, not absolute values.

Taught in notebooks/09_real_kafka_lab; ``python -m bench real`` prints the longer tables.
"""

from __future__ import annotations

import time

from course_lib.clusters.parts import client_config

RECORD_BYTES = 100

#: (label, producer configuration, transaction size or None) - the rows of the trade-off table
TRADEOFF_ROWS = [
    ("acks=0", dict(acks=0, enable_idempotence=False), None),
    ("acks=1", dict(acks=1, enable_idempotence=False), None),
    ("acks=all", dict(acks="all", enable_idempotence=False), None),
    ("acks=all, idempotent", dict(acks="all", enable_idempotence=True), None),
    ("transactions of 10", dict(acks="all", transactional_id="tx-10", retry_backoff_ms=10), 10),
    ("transactions of 100", dict(acks="all", transactional_id="tx-100", retry_backoff_ms=10), 100),
]


def percentile(values: list[float], q: float) -> float:
    """The ``q``-th percentile (nearest rank); NaN for no values.

    >>> percentile([1, 2, 3, 4, 5], 50)
    3
    """
    if not values:
        return float("nan")
    s = sorted(values)
    return s[min(len(s) - 1, int(round(q / 100 * (len(s) - 1))))]


def run_producer(
    cluster, topic: str, *, max_messages: int, budget_s: float, tx_size: int | None = None, **config
) -> dict:
    """Send 100-byte records as fast as possible (``linger_ms=5``); latency = send ->
    acknowledgement, or send -> ``commit_transaction()`` returned for transactions."""
    from kafka import KafkaProducer

    payload = b"x" * RECORD_BYTES
    p = KafkaProducer(**client_config(cluster), linger_ms=5, **config)
    latencies_ms: list[float] = []
    sent = 0
    try:
        if tx_size:
            p.init_transactions()
        # warm-up: connections and metadata are not what we measure
        if tx_size:
            p.begin_transaction()
            p.send(topic, payload, partition=0)
            p.commit_transaction()
        else:
            p.send(topic, payload, partition=0).get(timeout=30)
        t0 = time.perf_counter()
        deadline = t0 + budget_s
        if tx_size:
            while sent < max_messages and time.perf_counter() < deadline:
                starts = []
                p.begin_transaction()
                for _ in range(tx_size):
                    starts.append(time.perf_counter())
                    p.send(topic, payload, partition=0)
                p.commit_transaction()
                done = time.perf_counter()
                latencies_ms += [(done - s) * 1000 for s in starts]
                sent += tx_size
        else:

            def on_ack(start):
                return lambda _md: latencies_ms.append((time.perf_counter() - start) * 1000)

            while sent < max_messages and time.perf_counter() < deadline:
                fut = p.send(topic, payload, partition=0)
                fut.add_callback(on_ack(time.perf_counter()))
                sent += 1
            p.flush(timeout=60)
        elapsed = time.perf_counter() - t0
    finally:
        p.close(timeout=10)
    n = len(latencies_ms) if config.get("acks") != 0 else sent
    return {
        "messages": sent,
        "seconds": elapsed,
        "msg_per_s": sent / elapsed,
        "mb_per_s": sent * RECORD_BYTES / elapsed / 1e6,
        "p50_ms": percentile(latencies_ms, 50),
        "p99_ms": percentile(latencies_ms, 99),
        "acked": n,
    }


def sequential_latency(cluster, topic: str, n: int, **config) -> dict:
    """One write at a time (``send().get()``, ``linger_ms=0``): the round trip itself, no queueing."""
    from kafka import KafkaProducer

    p = KafkaProducer(**client_config(cluster), linger_ms=0, **config)
    lat = []
    try:
        p.send(topic, b"warm-up", partition=0).get(timeout=30)
        for _ in range(n):
            t = time.perf_counter()
            p.send(topic, b"x" * RECORD_BYTES, partition=0).get(timeout=30)
            lat.append((time.perf_counter() - t) * 1000)
    finally:
        p.close(timeout=5)
    return {"p50_ms": percentile(lat, 50), "p99_ms": percentile(lat, 99), "n": n}


def tradeoffs(
    cluster, messages: int = 2000, budget_s: float = 2.0, sequential: int = 50, rows=TRADEOFF_ROWS
) -> list[dict]:
    """One row per configuration: saturated throughput and latency, plus (acks 1/all and
    idempotent) the latency of one write at a time. Topics are fresh, RF=3,
    min.insync.replicas=2; transactional ids get the cluster's prefix."""
    from tqdm.auto import tqdm

    stamp = int(time.time() * 1000) % 10**8
    out = []
    for i, (label, cfg, tx) in enumerate(tqdm(rows, desc="measuring", leave=False)):
        cfg = dict(cfg)
        if "transactional_id" in cfg:
            cfg["transactional_id"] = cluster.transactional_id(f"{cfg['transactional_id']}-{stamp}")
        topic = cluster.topic(f"tradeoff-{stamp}-{i}")
        cluster.create_topic(topic)
        r = run_producer(cluster, topic, max_messages=messages, budget_s=budget_s, tx_size=tx, **cfg)
        row = {
            "configuration": label,
            "messages": r["messages"],
            "msg/s": round(r["msg_per_s"]),
            "p50 ms": round(r["p50_ms"], 1),
            "p99 ms": round(r["p99_ms"], 1),
        }
        if tx is None and cfg["acks"] != 0 and sequential:
            s = sequential_latency(
                cluster, topic, sequential, **{k: v for k, v in cfg.items() if k != "transactional_id"}
            )
            row["one-at-a-time p50 ms"] = round(s["p50_ms"], 1)
        out.append(row)
    return out


def claim_verdicts(rows: list[dict]) -> dict:
    """Test two claims from the articles against measured rows (from :func:`tradeoffs`).

    - "idempotence has no performance cost" (seeds/004): compare ``acks=all`` with and without
      idempotence; within 25 % either way counts as "no measurable cost here".
    - "a committed write takes on the order of 10 ms" (seeds/002): the one-at-a-time ``acks=all``
      latency; "order of 10 ms" = between 1 and 100 ms.
    """
    by = {r["configuration"]: r for r in rows}
    plain, idem = by["acks=all"], by["acks=all, idempotent"]
    ratio = idem["msg/s"] / plain["msg/s"] if plain["msg/s"] else float("nan")
    idem_verdict = (
        "holds here: no measurable throughput cost"
        if ratio >= 0.75
        else "does not hold here: idempotence cost throughput"
    )
    one = plain.get("one-at-a-time p50 ms", float("nan"))
    ten_ms = (
        "holds: the order of 10 ms"
        if 1 <= one <= 100
        else "below the order of 10 ms"
        if one < 1
        else "above the order of 10 ms"
    )
    one_acks1 = by["acks=1"].get("one-at-a-time p50 ms", float("nan"))
    tx10, tx100 = by.get("transactions of 10"), by.get("transactions of 100")
    return {
        "acks=1 / acks=all one-at-a-time p50 ms": f"{one_acks1} / {one}",
        "transactions of 100 / of 10 throughput": (
            round(tx100["msg/s"] / tx10["msg/s"], 1) if tx10 and tx100 and tx10["msg/s"] else None
        ),
        "idempotent / plain acks=all throughput": round(ratio, 2),
        "claim 'idempotence has no performance cost'": idem_verdict,
        "acks=all one-at-a-time p50 ms": one,
        "claim 'a committed write takes ~10 ms'": ten_ms,
    }
