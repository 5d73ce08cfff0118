"""Benchmark: the simulated cluster over the wire vs a real local Kafka (``LocalCluster``).

    python -m bench wire [--quick]      (registered in bench/__main__.py)
    python -m bench.wire [--quick]

Side by side in one run, with the same unmodified kafka-python 3.0.12 client:

- start time of a 3-broker cluster: :class:`course_lib.wire.WireCluster` vs
  :class:`course_lib.real.cluster.LocalCluster` (cached jars, KRaft);
- the wall time of the scenario suite on the simulator, on kafka-python over the wire and
  (``--suite-local``, minutes) on LocalCluster;
- the client differential at scale (``--sequences N``, default 1,000 of each kind): seeded call
  sequences through the simulator's clients and kafka-python on the same simulated brokers
  (:mod:`course_lib.wire.differential`; ``make test`` runs a hundred-odd), with the differences
  found, each with its seed;
- producer throughput, ``acks=all``, idempotent, 1 KB records, one RF=3 partition with
  ``min.insync.replicas=2``, into each. The simulated cluster runs twice: with the simulator's
  default network latency (1 ms + up to 0.5 ms jitter per message, a LAN) and with 0.1 ms
  (loopback, what LocalCluster's brokers have between them). Virtual ms = wall ms, so the
  simulated latency is real waiting.

Without Java the LocalCluster rows say why they are missing. Numbers from a 2-core machine
running the brokers and the client at once: compare rows, not absolute values.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

RECORD_BYTES = 1024


def produce_throughput(bootstrap_servers: str, topic: str, records: int, budget_s: float) -> dict:
    """Send ``records`` 1 KB records (or as many as fit in ``budget_s``), acks=all, idempotent;
    the clock stops when the last one is acknowledged."""
    from kafka import KafkaProducer

    payload = b"x" * RECORD_BYTES
    producer = KafkaProducer(bootstrap_servers=bootstrap_servers, acks="all", enable_idempotence=True, linger_ms=5)
    try:
        producer.send(topic, payload, partition=0).get(timeout=30)  # warm-up: connections, metadata
        sent = 0
        t0 = time.perf_counter()
        deadline = t0 + budget_s
        last = None
        while sent < records and time.perf_counter() < deadline:
            last = producer.send(topic, payload, partition=0)
            sent += 1
        producer.flush()
        if last is not None:
            last.get(timeout=60)
        elapsed = time.perf_counter() - t0
    finally:
        producer.close()
    return {
        "records": sent,
        "seconds": elapsed,
        "records_per_s": sent / elapsed,
        "mb_per_s": sent * RECORD_BYTES / elapsed / 1e6,
    }


def wire_numbers(records: int, budget_s: float, **options) -> dict:
    from course_lib.wire import WireCluster

    t0 = time.perf_counter()
    wire = WireCluster(brokers=3, seed=1, **options).start()
    start_s = time.perf_counter() - t0
    try:
        wire.create_topic("bench", partitions=1, replication_factor=3, min_insync_replicas=2)
        produce = produce_throughput(wire.bootstrap_servers, "bench", records, budget_s)
    finally:
        wire.stop()
    return {"start_s": start_s, "produce": produce}


def local_numbers(records: int, budget_s: float) -> dict:
    from course_lib.real import jars
    from course_lib.real.cluster import LocalCluster

    try:
        jars.check_jvm_tools()
    except jars.JvmToolMissing as exc:
        return {"missing": str(exc).splitlines()[0]}
    t0 = time.perf_counter()
    with LocalCluster(proxies=False, progress=False) as cluster:
        start_s = time.perf_counter() - t0
        topic = cluster.create_topic("wire-bench", partitions=1, replication_factor=3, min_insync_replicas=2)
        produce = produce_throughput(cluster.bootstrap_servers, topic, records, budget_s)
    return {"start_s": start_s, "produce": produce}


def suite_times(local: bool, limit: int | None = None) -> dict:
    """Wall time of every scenario of SCENARIOS (seed 1) on each backend: the simulator's own
    clients, kafka-python on the simulated cluster, and (``local``) kafka-python on LocalCluster.
    ``limit``: only the first scenarios (the quick smoke run)."""
    from course_lib.scenarios import SCENARIOS, run_scenario
    from course_lib.backend import ComposedBackend
    from course_lib.wire.cluster import WireCluster

    names = sorted(SCENARIOS)[:limit]
    out: dict = {}
    t0 = time.perf_counter()
    for name in names:
        run_scenario(name, seed=1)
    out["simulator clients (virtual time)"] = (time.perf_counter() - t0, len(names))
    on_wire = [n for n in names if n != "random_faults"]  # simulator-only: a virtual-time schedule
    t0 = time.perf_counter()
    with WireCluster.lab(seed=1) as lab:
        for name in on_wire:
            run_scenario(name, backend=ComposedBackend(lab), seed=1)
            lab.revive()
    out["kafka-python on the simulated cluster"] = (time.perf_counter() - t0, len(on_wire))
    if local:
        from course_lib.real.cluster import LocalCluster

        t0 = time.perf_counter()
        ran = 0
        with LocalCluster(progress=False, controllers=1) as cluster:
            for name in on_wire:
                run_scenario(name, backend=cluster, seed=1)
                ran += 1
        out["kafka-python on LocalCluster (start included)"] = (time.perf_counter() - t0, ran)
    return out


def differential_numbers(sequences: int) -> dict:
    """Run ``sequences`` producer and ``sequences`` consumer call sequences (seeds 0..N-1) through
    both clients; every difference found, and the time each kind took."""
    from course_lib.wire import differential

    out: dict = {}
    wire = differential.wire_for_differential()
    try:
        for runner in (differential.ProducerDifferential(wire), differential.ConsumerDifferential(wire)):
            t0 = time.perf_counter()
            found = [d for seed in range(sequences) for d in runner.run(seed)]
            out[runner.kind] = {"sequences": sequences, "seconds": time.perf_counter() - t0, "differences": found}
    finally:
        wire.stop()
    return out


def main(quick: bool = False, argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(prog="python -m bench.wire", description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer records (~1 minute with Java)")
    parser.add_argument("--records", type=int, default=None, help="records per producer run")
    parser.add_argument("--no-local", action="store_true", help="skip LocalCluster (no JVM)")
    parser.add_argument("--no-suite", action="store_true", help="skip the scenario suite timings")
    parser.add_argument("--suite-local", action="store_true", help="also run the suite on LocalCluster (minutes)")
    parser.add_argument(
        "--sequences", type=int, default=None, help="client differential sequences of each kind (default 1000)"
    )
    args = parser.parse_args(argv or [])
    quick = quick or args.quick
    # quick: a smoke run (tests/test_bench.py) - every row printed, none of them a measurement
    records = args.records or (500 if quick else 20000)
    budget_s = 3.0 if quick else 30.0
    wire = wire_numbers(records, budget_s)
    loopback = wire_numbers(records, budget_s, latency_ms=0.1, jitter_ms=0.05)
    local: dict = {"missing": "--no-local"} if args.no_local else local_numbers(records, budget_s)
    rows = [
        ("simulated, wire (latency 1 ms, the default)", wire),
        ("simulated, wire (latency 0.1 ms, loopback)", loopback),
        ("LocalCluster (Kafka 4.3.1, KRaft)", local),
    ]
    print(f"\n3 brokers, kafka-python 3.0.12, acks=all, idempotent, {RECORD_BYTES} B records, RF=3, min ISR 2")
    print(f"{'cluster':44} {'start s':>9} {'records':>8} {'records/s':>10} {'MB/s':>7}")
    for label, r in rows:
        if "missing" in r:
            print(f"{label:44} skipped: {r['missing']}")
            continue
        p = r["produce"]
        print(f"{label:44} {r['start_s']:9.3f} {p['records']:8d} {p['records_per_s']:10.0f} {p['mb_per_s']:7.2f}")
    if "missing" not in local:
        speedup = local["start_s"] / wire["start_s"]
        ratio = wire["produce"]["records_per_s"] / local["produce"]["records_per_s"]
        ratio_loop = loopback["produce"]["records_per_s"] / local["produce"]["records_per_s"]
        print(
            f"start: simulated is {speedup:.0f}x faster; throughput simulated/LocalCluster: "
            f"{ratio:.2f}x (1 ms), {ratio_loop:.2f}x (0.1 ms)"
        )
    suites = {} if args.no_suite else suite_times(local=args.suite_local, limit=2 if quick else None)
    if suites:
        print(f"\n{'scenario suite (seed 1)':44} {'wall s':>9} {'scenarios':>10}")
        for label, (seconds, count) in suites.items():
            print(f"{label:44} {seconds:9.2f} {count:10d}")
    sequences = args.sequences if args.sequences is not None else (4 if quick else 1000)
    diff = differential_numbers(sequences) if sequences else {}
    if diff:
        print(
            f"\n{'client differential (simulator vs kafka-python)':44} {'sequences':>9} {'wall s':>9} {'seq/s':>7} {'differences':>11}"
        )
        for kind, r in diff.items():
            known = sum(d.known for d in r["differences"])
            print(
                f"{kind + ' call sequences':44} {r['sequences']:9d} {r['seconds']:9.1f} "
                f"{r['sequences'] / r['seconds']:7.1f} {len(r['differences']):5d} ({known} known)"
            )
        for d in (d for r in diff.values() for d in r["differences"]):
            print(f"  {'known' if d.known else 'NEW'}: {d}")
    return {"wire": wire, "loopback": loopback, "local": local, "suites": suites, "differential": diff}


if __name__ == "__main__":
    main(argv=sys.argv[1:])
