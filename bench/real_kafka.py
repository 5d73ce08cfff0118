"""Benchmark: what each delivery guarantee costs on a real local Kafka cluster.

    python -m bench.real_kafka            # ~2-3 minutes on 2 cores, prints tables

Measures, on a fresh 3-broker LocalCluster (clients connect directly, no lost-ACK proxy):

- cluster start time with cached jars, and the time from SIGKILL of a partition leader to the
  first successful acks=all produce on the new leader;
- kafka-python producer throughput and per-message latency (send -> acknowledgement, or send ->
  commit_transaction returned for transactions) for acks 0/1/all, idempotence on/off and
  transactions of 1/10/100 messages;
- Kafka's own Java ``ProducerPerformance`` from the same jars, as the reference for the broker.

Each kafka-python run is bounded by a message count *and* a time budget. Numbers from a 2-core
machine running three brokers and the client at once: compare rows, not absolute values.

Taught in notebooks/09_real_kafka_lab (and the idempotence-cost claim in notebooks/08).
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from course_lib.clusters import jars  # noqa: E402
from course_lib.real.cluster import LocalCluster  # noqa: E402
from course_lib.experiments.on_kafka.measure import RECORD_BYTES, run_producer, sequential_latency  # noqa: E402


def producer_performance(cluster: LocalCluster, topic: str, acks: str, records: int, idempotence: bool = True) -> dict:
    cmd = [
        jars.java_executable(),
        "-Xmx512m",
        "-cp",
        jars.kafka_classpath(progress=False, version=cluster.kafka_version),
        "org.apache.kafka.tools.ProducerPerformance",
        "--topic",
        topic,
        "--num-records",
        str(records),
        "--record-size",
        str(RECORD_BYTES),
        "--throughput",
        "-1",
        "--producer-props",
        f"bootstrap.servers={cluster.bootstrap_servers}",
        f"acks={acks}",
        f"enable.idempotence={'true' if idempotence else 'false'}",
        "linger.ms=5",
    ]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=180).stdout
    # "... records sent, 95238.1 records/sec (9.08 MB/sec), 12.3 ms avg latency, ...,
    #  10 ms 50th, 30 ms 95th, 45 ms 99th, 50 ms 99.9th."
    final = [l for l in out.splitlines() if "50th" in l]
    if not final:
        return {"error": out[-500:]}
    m = re.search(
        r"(\d+) records sent, ([\d.]+) records/sec \(([\d.]+) MB/sec\).*?"
        r"(\d+) ms 50th, (\d+) ms 95th, (\d+) ms 99th",
        final[-1],
    )
    return {
        "messages": int(m.group(1)),
        "msg_per_s": float(m.group(2)),
        "mb_per_s": float(m.group(3)),
        "p50_ms": float(m.group(4)),
        "p99_ms": float(m.group(6)),
    }


def failover_to_first_produce(cluster: LocalCluster, topic: str) -> dict:
    """Kill the leader; time until metadata shows a new leader and until a produce succeeds."""
    from kafka import KafkaProducer

    p = KafkaProducer(
        bootstrap_servers=cluster.bootstrap_servers,
        acks="all",
        request_timeout_ms=5000,
        retry_backoff_ms=50,
        max_block_ms=30000,
    )
    try:
        p.send(topic, b"before", partition=0).get(timeout=30)
        old = cluster.leader_of(topic, 0)
        t0 = time.perf_counter()
        cluster.crash(old)
        fut = p.send(topic, b"after-kill", partition=0)  # retried internally until it lands
        md = fut.get(timeout=120)
        produce_s = time.perf_counter() - t0
        new = cluster.wait_for_leader(topic, 0, not_in=(old,))
        elected_s = time.perf_counter() - t0
    finally:
        p.close(timeout=5)
    cluster.restart(old)
    return {
        "killed": old,
        "new_leader": new,
        "first_produce_s": produce_s,
        "new_leader_visible_s": elected_s,
        "offset": md.offset,
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--messages", type=int, default=20000, help="per kafka-python row")
    ap.add_argument("--budget-s", type=float, default=8.0, help="time cap per kafka-python row")
    ap.add_argument("--java-records", type=int, default=200000)
    ap.add_argument("--sequential", type=int, default=300, help="writes per one-at-a-time row")
    args = ap.parse_args(argv)

    t0 = time.perf_counter()
    jars.kafka_classpath()
    with LocalCluster(proxies=False, progress=False) as cluster:
        start_s = cluster.timings_s["start"]
        print(
            f"Kafka {cluster.kafka_version}, 3 brokers (KRaft combined), cluster start with cached "
            f"jars: {start_s:.1f} s (format {cluster.timings_s['format']:.1f} s)"
        )
        cluster.create_topic("bench-failover")
        fo = failover_to_first_produce(cluster, "bench-failover")
        print(
            f"SIGKILL leader {fo['killed']} -> first successful acks=all produce: "
            f"{fo['first_produce_s']:.2f} s (new leader {fo['new_leader']} seen in metadata "
            f"by {fo['new_leader_visible_s']:.2f} s)\n"
        )

        rows = [
            ("acks=0, no idempotence", dict(acks=0, enable_idempotence=False), None),
            ("acks=1, no idempotence", dict(acks=1, enable_idempotence=False), None),
            ("acks=all, no idempotence", dict(acks="all", enable_idempotence=False), None),
            ("acks=all, idempotent", dict(acks="all", enable_idempotence=True), None),
            ("transactions of 1", dict(acks="all", transactional_id="bench-tx-1"), 1),
            ("transactions of 10", dict(acks="all", transactional_id="bench-tx-10"), 10),
            ("transactions of 100", dict(acks="all", transactional_id="bench-tx-100"), 100),
            # kafka-python waits retry_backoff_ms (100) between a transaction's steps when the
            # broker is still finishing the previous one: most of a small transaction's latency.
            (
                "tx of 10, retry_backoff 10ms",
                dict(acks="all", transactional_id="bench-tx-10b", retry_backoff_ms=10),
                10,
            ),
        ]
        results = []
        for i, (label, cfg, tx) in enumerate(rows):
            topic = f"bench-{i}"
            cluster.create_topic(topic)
            r = run_producer(cluster, topic, max_messages=args.messages, budget_s=args.budget_s, tx_size=tx, **cfg)
            results.append(("kafka-python 3.0.12", label, r))
        sequential = []
        for label, cfg in [
            ("acks=1, no idempotence", dict(acks=1, enable_idempotence=False)),
            ("acks=all, no idempotence", dict(acks="all", enable_idempotence=False)),
            ("acks=all, idempotent", dict(acks="all", enable_idempotence=True)),
        ]:
            topic = f"bench-seq-{len(sequential)}"
            cluster.create_topic(topic)
            sequential.append((label, sequential_latency(cluster, topic, args.sequential, **cfg)))
        for label, acks, idem in [("acks=1, no idempotence", "1", False), ("acks=all, idempotent", "all", True)]:
            topic = f"bench-java-{acks}"
            cluster.create_topic(topic)
            results.append(
                ("Java ProducerPerformance", label, producer_performance(cluster, topic, acks, args.java_records, idem))
            )

    print(f"{'client':<26}{'configuration':<30}{'messages':>9}{'msg/s':>10}{'MB/s':>7}{'p50 ms':>8}{'p99 ms':>8}")
    for client, label, r in results:
        if "error" in r:
            print(f"{client:<26}{label:<30} error: {r['error']}")
            continue
        p50 = "-" if label.startswith("acks=0") else f"{r['p50_ms']:.1f}"
        p99 = "-" if label.startswith("acks=0") else f"{r['p99_ms']:.1f}"
        print(f"{client:<26}{label:<30}{r['messages']:>9}{r['msg_per_s']:>10.0f}{r['mb_per_s']:>7.2f}{p50:>8}{p99:>8}")
    print("\nOne write at a time (send().get(), linger_ms=0): latency of the round trip itself")
    print(f"{'configuration':<26}{'writes':>7}{'p50 ms':>8}{'p99 ms':>8}")
    for label, r in sequential:
        print(f"{label:<26}{r['n']:>7}{r['p50_ms']:>8.1f}{r['p99_ms']:>8.1f}")
    print(
        "\nThroughput rows send as fast as possible, so their latency is mostly time queued in the producer's buffer."
    )
    print(
        f"{RECORD_BYTES}-byte records, one partition, RF=3, min.insync.replicas=2, linger.ms=5. "
        f"Transaction latency = send -> commit_transaction() returned. acks=0 has no ACK, so no "
        f"latency. Total bench time {time.perf_counter() - t0:.0f} s."
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
