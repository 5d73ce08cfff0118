"""Benchmark: the simulated cluster over the wire vs a real local Kafka (``LocalCluster``).

    python -m bench wire [--quick]      (registered in bench/__main__.py)
    python -m bench.wire [--quick]

Side by side in one run:

- start time of a 3-broker cluster: :class:`course_lib.wire.WireCluster` vs
  :class:`course_lib.real.cluster.LocalCluster` (cached jars, KRaft);
- the wall time of the scenario suite on the simulator, on kafka-python over the wire and
  (``--suite-local``, minutes) on LocalCluster;
- the client differential at scale (``--sequences N``, default 1,000 of each kind): seeded call
  sequences through the simulator's clients and kafka-python on the same simulated brokers
  (:mod:`course_lib.experiments.differential`; ``make test`` runs a hundred-odd), with the differences
  found, each with its seed;
- producer throughput, ``acks=all``, idempotent, 1 KB records, one RF=3 partition with
  ``min.insync.replicas=2``, into each, by three clients: kafka-python 3.0.12, confluent-kafka
  (librdkafka) and the Java client of the lab's Kafka release (its driver process, :mod:`bench.java_client`) - each
  into its own topic of ONE wire cluster and ONE LocalCluster. kafka-python also runs into a
  second wire cluster with 0.1 ms latency (loopback, what LocalCluster's brokers have between
  them) instead of the simulator's default 1 ms + up to 0.5 ms jitter per message (a LAN).
  Virtual ms = wall ms, so the simulated latency is real waiting.

Without Java the LocalCluster rows say why they are missing. Numbers from a 2-core machine
running the brokers and the client at once: compare rows, not absolute values.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from course_lib.clusters.jars import kafka_version  # noqa: E402 - light: no JVM, no cluster

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


def confluent_throughput(bootstrap_servers: str, topic: str, records: int, budget_s: float) -> dict:
    """The same measurement through confluent-kafka (librdkafka): ``records`` 1 KB produces (or as
    many as fit in ``budget_s``), acks=all, idempotent, linger 5 ms (librdkafka's default), the
    clock stopped when the last delivery report came."""
    from confluent_kafka import KafkaException, Producer

    payload = b"x" * RECORD_BYTES
    failed: list = []

    def report(err, _msg) -> None:
        if err is not None:
            failed.append(err)

    producer = Producer(
        {"bootstrap.servers": bootstrap_servers, "acks": "all", "enable.idempotence": True, "linger.ms": 5}
    )
    producer.produce(topic, payload, partition=0, on_delivery=report)  # warm-up: connections, metadata
    if producer.flush(30) or failed:
        raise KafkaException(f"confluent-kafka's warm-up produce failed: {failed or 'no delivery report in 30 s'}")
    sent = 0
    t0 = time.perf_counter()
    deadline = t0 + budget_s
    while sent < records and time.perf_counter() < deadline:
        try:
            producer.produce(topic, payload, partition=0, on_delivery=report)
            sent += 1
        except BufferError:  # librdkafka's queue is full: serve delivery reports, then go on
            producer.poll(0.01)
        producer.poll(0)
    left = producer.flush(60)
    elapsed = time.perf_counter() - t0
    if left or failed:
        raise KafkaException(f"confluent-kafka: {left} records undelivered, {len(failed)} failed: {failed[:1]}")
    return {
        "records": sent,
        "seconds": elapsed,
        "records_per_s": sent / elapsed,
        "mb_per_s": sent * RECORD_BYTES / elapsed / 1e6,
    }


def _client_versions() -> dict[str, str]:
    import kafka

    labels = {"kafka-python": f"kafka-python {kafka.__version__}"}
    try:
        import confluent_kafka
    except ImportError:
        labels["confluent-kafka"] = "confluent-kafka"
    else:
        labels["confluent-kafka"] = (
            f"confluent-kafka {confluent_kafka.__version__} (librdkafka {confluent_kafka.libversion()[0]})"
        )
    labels["java"] = f"Java client {kafka_version()} (driver process)"
    return labels


def clients_into(make_topic, servers: str, records: int, budget_s: float, driver) -> dict:
    """kafka-python's, confluent-kafka's and (``driver``) the Java client's throughput into one
    cluster, each into its own topic; a client that cannot run says why."""
    from . import java_client

    out: dict = {"kafka-python": produce_throughput(servers, make_topic("bench-kafka-python"), records, budget_s)}
    try:
        import confluent_kafka  # noqa: F401 - installed with the lab extra
    except ImportError:
        out["confluent-kafka"] = {"missing": "confluent-kafka is not installed (pip install -e '.[lab]')"}
    else:
        out["confluent-kafka"] = confluent_throughput(servers, make_topic("bench-confluent"), records, budget_s)
    if isinstance(driver, str):
        out["java"] = {"missing": driver}
    else:
        out["java"] = java_client.produce_throughput(driver, servers, make_topic("bench-java"), records)
    return out


def wire_numbers(records: int, budget_s: float, driver=None, **options) -> dict:
    """Start a wire cluster (timed) and measure each client into it (``driver`` None: only
    kafka-python)."""
    from course_lib.wire import WireCluster

    t0 = time.perf_counter()
    wire = WireCluster(brokers=3, seed=1, **options).start()
    start_s = time.perf_counter() - t0

    def make_topic(name: str) -> str:
        wire.create_topic(name, partitions=1, replication_factor=3, min_insync_replicas=2)
        return name

    try:
        if driver is None:
            clients = {
                "kafka-python": produce_throughput(wire.bootstrap_servers, make_topic("bench"), records, budget_s)
            }
        else:
            clients = clients_into(make_topic, wire.bootstrap_servers, records, budget_s, driver)
    finally:
        wire.stop()
    return {"start_s": start_s, "produce": clients["kafka-python"], "clients": clients}


def local_numbers(records: int, budget_s: float, driver=None) -> dict:
    from course_lib.clusters import jars
    from course_lib.real.cluster import LocalCluster

    try:
        jars.check_jvm_tools()
    except jars.JvmToolMissing as exc:
        return {"missing": str(exc).splitlines()[0]}
    t0 = time.perf_counter()
    with LocalCluster(proxies=False, progress=False) as cluster:
        start_s = time.perf_counter() - t0

        def make_topic(name: str) -> str:
            return cluster.create_topic(name, partitions=1, replication_factor=3, min_insync_replicas=2)

        clients = clients_into(make_topic, cluster.bootstrap_servers, records, budget_s, driver)
    return {"start_s": start_s, "produce": clients["kafka-python"], "clients": clients}


def java_driver():
    """One Java driver process for every Java row, or the reason there is none."""
    from course_lib.java_client import DriverProcess
    from course_lib.clusters import jars

    try:
        return DriverProcess()
    except jars.JvmToolMissing as exc:
        return str(exc).splitlines()[0]


def print_clients(wire: dict, local: dict) -> None:
    """Each client into the wire cluster and into LocalCluster, side by side."""
    labels = _client_versions()
    print(f"\nproducer throughput by client, acks=all, idempotent, {RECORD_BYTES} B records (records/s)")
    print(f"{'client':52} {'wire (1 ms)':>12} {'LocalCluster':>13} {'wire/local':>11}")
    for key, label in labels.items():
        w = wire.get("clients", {}).get(key, {"missing": "not run"})
        loc = local.get("clients", {}).get(key, {"missing": local.get("missing", "not run")})
        cells = [f"{r['records_per_s']:12.0f}" if "missing" not in r else f"{'-':>12}" for r in (w, loc)]
        ratio = (
            f"{w['records_per_s'] / loc['records_per_s']:10.2f}x" if "missing" not in w and "missing" not in loc else ""
        )
        print(f"{label:52} {cells[0]} {cells[1]:>13} {ratio:>11}")
        for where, r in (("wire", w), ("LocalCluster", loc)):
            if "missing" in r:
                print(f"  ({where}: {r['missing']})")


def suite_times(local: bool, limit: int | None = None) -> dict:
    """Wall time of every scenario of SCENARIOS (seed 1) on each backend: the simulator's own
    clients, kafka-python on the simulated cluster, and (``local``) kafka-python on LocalCluster.
    ``limit``: only the first scenarios (the quick smoke run)."""
    from course_lib.experiments.scenarios import SCENARIOS, run_scenario
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
    from course_lib.experiments import differential

    out: dict = {}
    wire = differential.wire_for_differential()
    try:
        for runner in (differential.ProducerDifferential(wire), differential.ConsumerDifferential(wire)):
            t0 = time.perf_counter()
            found = [d for seed in range(sequences) for d in runner.run(seed)]
            out[runner.kind] = {"sequences": sequences, "seconds": time.perf_counter() - t0, "differences": found}
        from course_lib.experiments import config_differential as configs

        t0 = time.perf_counter()
        found_configs = configs.config_differences(wire.bootstrap_servers)
        out["configuration"] = {
            "cases": len(configs.PRODUCER_CASES) + len(configs.CONSUMER_CASES),
            "seconds": time.perf_counter() - t0,
            "differences": found_configs,
            "known": sum(f[:2] in configs.KNOWN_CONFIG_DIFFERENCES for f in found_configs),
        }
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
    driver = java_driver()
    try:
        wire = wire_numbers(records, budget_s, driver)
        loopback = wire_numbers(records, budget_s, latency_ms=0.1, jitter_ms=0.05)
        local: dict = {"missing": "--no-local"} if args.no_local else local_numbers(records, budget_s, driver)
    finally:
        if not isinstance(driver, str):
            driver.close()
    rows = [
        ("simulated, wire (latency 1 ms, the default)", wire),
        ("simulated, wire (latency 0.1 ms, loopback)", loopback),
        (f"LocalCluster (Kafka {kafka_version()}, KRaft)", local),
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
    print_clients(wire, local)
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
        configs = diff.pop("configuration", None)
        for kind, r in diff.items():
            known = sum(d.known for d in r["differences"])
            print(
                f"{kind + ' call sequences':44} {r['sequences']:9d} {r['seconds']:9.1f} "
                f"{r['sequences'] / r['seconds']:7.1f} {len(r['differences']):5d} ({known} known)"
            )
        if configs is not None:
            print(
                f"{'configuration cases (accepted/refused values)':44} {configs['cases']:9d} {configs['seconds']:9.1f} "
                f"{'':7} {len(configs['differences']):5d} ({configs['known']} known)"
            )
        for d in (d for r in diff.values() for d in r["differences"]):
            print(f"  {'known' if d.known else 'NEW'}: {d}")
        if configs is not None:
            diff["configuration"] = configs
    return {"wire": wire, "loopback": loopback, "local": local, "suites": suites, "differential": diff}


if __name__ == "__main__":
    main(argv=sys.argv[1:])
