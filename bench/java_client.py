"""Benchmark: the Java client's (the lab's Kafka release) producer throughput into the simulated cluster over the wire
vs into a real local Kafka (``LocalCluster``), in one run.

    python -m bench wire [--quick]          (the Java rows beside kafka-python's and confluent-kafka's,
                                             into bench.wire's one wire cluster and one LocalCluster)
    python -m bench.java_client [--quick] [--records N]   (the Java client alone, its own clusters)

The producer runs in the Java driver process (:mod:`course_lib.java_client`): ``acks=all``,
idempotent, the client's default ``linger.ms``, 1 KB records into one RF=3 partition with
``min.insync.replicas=2``. The sends loop in Java (one driver command for all of them, clock
stopped when the last future completes), so JSON per record does not weigh on the number. The
simulated cluster runs with its default network latency (1 ms + jitter) and with 0.1 ms
(loopback, what LocalCluster's brokers have between them); virtual ms = wall ms.

Without Java every row says why it is missing. Numbers from a 2-core machine that runs brokers and
client at once: compare rows, not absolute values.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

RECORD_BYTES = 1024
PRODUCER_CONFIG = {"acks": "all", "enable.idempotence": "true"}


def produce_throughput(driver, bootstrap_servers: str, topic: str, records: int) -> dict:
    """``records`` 1 KB sends through the Java producer, after one warm-up send; the same keys as
    :func:`bench.wire.produce_throughput` (records, seconds, records_per_s, mb_per_s) plus failed."""
    from course_lib.java_client import JavaProducer

    producer = JavaProducer(driver, {"bootstrap.servers": bootstrap_servers, **PRODUCER_CONFIG})
    try:
        producer.send(topic, b"x" * RECORD_BYTES, partition=0).get(timeout=60)  # connections, metadata
        run = producer.send_many(topic, records, value_bytes=RECORD_BYTES, partition=0)
    finally:
        producer.close(timeout=30)
    if run["failed"]:
        first = run["first_error"]
        raise RuntimeError(f"{run['failed']} of {records} sends failed, first: {first['class']}: {first['message']}")
    seconds = run["seconds"]
    return {
        "records": records,
        "failed": run["failed"],
        "seconds": seconds,
        "records_per_s": records / seconds,
        "mb_per_s": records * RECORD_BYTES / seconds / 1e6,
    }


def into_wire(driver, records: int, **options) -> dict:
    from course_lib.wire import WireCluster

    wire = WireCluster(brokers=3, seed=1, **options).start()
    try:
        wire.create_topic("java-bench", partitions=1, replication_factor=3, min_insync_replicas=2)
        return produce_throughput(driver, wire.bootstrap_servers, "java-bench", records)
    finally:
        wire.stop()


def into_local(driver, records: int) -> dict:
    from course_lib.real.cluster import LocalCluster

    with LocalCluster(proxies=False, progress=False) as cluster:
        topic = cluster.create_topic("java-bench", partitions=1, replication_factor=3, min_insync_replicas=2)
        return produce_throughput(driver, cluster.bootstrap_servers, topic, records)


def main(quick: bool = False, argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(prog="python -m bench.java_client", description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="500 records per row (a smoke run)")
    parser.add_argument("--records", type=int, default=None, help="records per row (default 20000)")
    parser.add_argument("--no-local", action="store_true", help="skip LocalCluster")
    args = parser.parse_args(argv or [])
    records = args.records or (500 if quick or args.quick else 20000)
    from course_lib.java_client import DriverProcess
    from course_lib.clusters import jars

    rows = [
        "simulated, wire (latency 1 ms, the default)",
        "simulated, wire (latency 0.1 ms, loopback)",
        f"LocalCluster (Kafka {jars.kafka_version()}, KRaft)",
    ]
    results: dict = {}

    try:
        driver = DriverProcess()
    except jars.JvmToolMissing as exc:
        results = {label: {"missing": str(exc).splitlines()[0]} for label in rows}
    else:
        with driver:
            results[rows[0]] = into_wire(driver, records)
            results[rows[1]] = into_wire(driver, records, latency_ms=0.1, jitter_ms=0.05)
            results[rows[2]] = {"missing": "--no-local"} if args.no_local else into_local(driver, records)
    print(
        f"\nJava client {jars.kafka_version()} (driver process), 3 brokers, acks=all, idempotent, {RECORD_BYTES} B records, RF=3, min ISR 2"
    )
    print(f"{'cluster':44} {'records':>8} {'seconds':>8} {'records/s':>10} {'MB/s':>7}")
    for label, r in results.items():
        if "missing" in r:
            print(f"{label:44} skipped: {r['missing']}")
            continue
        print(f"{label:44} {r['records']:8d} {r['seconds']:8.2f} {r['records_per_s']:10.0f} {r['mb_per_s']:7.2f}")
    wire, local = results[rows[0]], results[rows[2]]
    if "missing" not in wire and "missing" not in local:
        print(f"Java throughput simulated/LocalCluster: {wire['records_per_s'] / local['records_per_s']:.2f}x (1 ms)")
    return results


if __name__ == "__main__":
    main(argv=sys.argv[1:])
