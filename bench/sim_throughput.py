"""Simulator throughput: how many records per second go produce -> replicate -> ack -> read on
a 3-broker, RF=3 cluster, and how long a property run of random fault schedules takes.

Rates are per second of this process's CPU time (``time.process_time``): the simulator is
single-threaded, and CPU time does not swing when other work shares the machine.

Run: ``python -m bench sim``.
"""
from __future__ import annotations

import time
import warnings

from course_lib.broker import Cluster
from course_lib.clients import KafkaProducer
from course_lib.scenarios import random_faults

CONFIGS = [
    ("acks=0", {"acks": 0, "enable_idempotence": False}),
    ("acks=1", {"acks": 1, "enable_idempotence": False}),
    ("acks=all", {"acks": "all", "enable_idempotence": False}),
    ("acks=all + idempotence", {"acks": "all", "enable_idempotence": True}),
]


def produce_and_read(config: dict, records: int, batch_records: int, seed: int = 0) -> dict:
    cluster = Cluster(brokers=3, seed=seed)
    cluster.create_topic("bench", partitions=1, replication_factor=3, min_insync_replicas=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        producer = KafkaProducer(bootstrap_servers=cluster, linger_ms=0,
                                 batch_size=1 if batch_records == 1 else 1 << 20, **config)
    value = b"x" * 100
    start = time.process_time()
    events = cluster.sim.events_run
    for i in range(0, records, batch_records):
        for _ in range(batch_records):
            producer.send("bench", value)
        cluster.run_for(0.01)  # let the sender take this batch before the next one is filled
    producer.flush()
    cluster.run_until(cluster._settled, 10_000)
    read = len(cluster.committed_records("bench"))
    elapsed = time.process_time() - start
    assert read == records, f"read {read} of {records}"
    requests = records // batch_records
    return {"records/s": records / elapsed, "requests/s": requests / elapsed,
            "events/request": (cluster.sim.events_run - events) / requests, "seconds": elapsed}


def property_run(schedules: int = 1000) -> dict:
    start = time.process_time()
    for seed in range(schedules):
        r = random_faults(seed=seed)
        assert r.result.final_read and not r.result.found, r.result.summary()
    elapsed = time.process_time() - start
    return {"schedules": schedules, "seconds": elapsed, "ms/schedule": elapsed / schedules * 1000}


def main(quick: bool = False) -> None:
    n1, n100 = (5_000, 50_000) if quick else (20_000, 500_000)
    rows = []
    best = lambda runs, key: max(runs, key=lambda r: r[key])  # noqa: E731 - best of 3: least disturbed
    for label, config in CONFIGS:
        one = best([produce_and_read(config, n1, 1, seed) for seed in range(3)], "requests/s")
        hundred = best([produce_and_read(config, n100, 100, seed) for seed in range(3)], "records/s")
        rows.append((label, one["requests/s"], one["events/request"], hundred["records/s"]))
    print("\nSimulator, 3 brokers, RF=3, min.insync.replicas=2 (per CPU-second, this machine)")
    print(f"{'configuration':<24} {'1-record batches: req/s':>24} {'events/req':>11} {'100-record batches: rec/s':>27}")
    for label, rps, epr, rec in rows:
        print(f"{label:<24} {rps:>24,.0f} {epr:>11.1f} {rec:>27,.0f}")
    prop = property_run(200 if quick else 1000)
    print(f"\nProperty run: {prop['schedules']} random fault schedules (safe configuration) in "
          f"{prop['seconds']:.1f} s ({prop['ms/schedule']:.1f} ms each)")
