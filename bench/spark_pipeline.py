"""PySpark pipeline benchmark: records/s per sink, and end-to-end latency per micro-batch.

    python -m bench.spark_pipeline                 # local 3-broker cluster, local[2]
    python -m bench.spark_pipeline --quick         # smaller, for a smoke run
    python -m bench.spark_pipeline --bootstrap-servers host:9092 --master spark://h:7077

Two phases, each in a fresh job process (as in the lab) with its own topics and checkpoints:

1. **throughput** - a backlog of ``--records`` orders, one sink per run, ``availableNow``:
   records/s = input rows / summed micro-batch time, first batch (JVM warm-up, connector
   start) reported apart.
2. **latency** - once every query has committed its first (empty) batch, a producer sends
   ``--rate`` records/s for ``--seconds`` while a job with all three sinks runs a
   processing-time trigger (``--trigger``); the job is stopped when every sink caught up; per micro-batch, the latency of a
   record is (when the sink made it visible) - (its Kafka CreateTime on the input topic):
   output record timestamp (Kafka sink), the batch's SQLite commit time (store), the file's
   modification time from ``_spark_metadata`` (file sink). Printed: median and max per batch,
   summarised as p50/p95 over batches.

Numbers depend on the machine: the table prints its cores and Spark master.

Taught in notebooks/10_pyspark_exactly_once_lab.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

from course_lib.spark import orders as ref
from course_lib.spark import outcome
from course_lib.spark.loader import ensure_topic, load_orders
from course_lib.spark.pipeline import SINKS, PipelineConfig

ROOT = Path(__file__).resolve().parents[1]


def _run_job(cfg: PipelineConfig, workdir: Path, timeout_s: float = 600) -> dict:
    cfg_path, report = workdir / f"cfg-{uuid.uuid4().hex[:6]}.json", workdir / "report.json"
    cfg_path.write_text(cfg.to_json())
    proc = subprocess.run(
        [sys.executable, "-m", "course_lib.spark.job", str(cfg_path), str(report)],
        cwd=str(ROOT),
        capture_output=True,
        text=True,
        timeout=timeout_s,
        start_new_session=True,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"job failed ({proc.returncode}): {proc.stdout[-1500:]}\n{proc.stderr[-3000:]}")
    return json.loads(report.read_text())


def throughput(bootstrap: str, records: int, per_trigger: int, master: str, tmp: Path) -> list[dict]:
    from tqdm.auto import tqdm

    lines = ref.read_lines()
    lines = (lines * (records // len(lines) + 1))[:records]  # repeat the data set if asked for more
    topic = f"bench-in-{uuid.uuid4().hex[:6]}"
    ensure_topic(bootstrap, topic)
    load_orders(bootstrap, topic, lines, progress=False)
    rows = []
    for sink in tqdm(SINKS, desc="throughput runs", unit=" sink"):
        out = f"bench-out-{uuid.uuid4().hex[:6]}"
        ensure_topic(bootstrap, out)
        wd = tmp / f"tp-{sink}"
        cfg = PipelineConfig(
            bootstrap_servers=bootstrap,
            workdir=str(wd),
            input_topic=topic,
            output_topic=out,
            sinks=(sink,),
            master=master,
            max_offsets_per_trigger=per_trigger,
        )
        wd.mkdir(parents=True)
        report = _run_job(cfg, wd)
        batches = [b for b in report["sinks"][sink] if b["rows"]]
        first, rest = batches[0], batches[1:]
        n_rest = sum(b["rows"] for b in rest)
        ms_rest = sum(b["duration_ms"] for b in rest)
        rows.append(
            {
                "sink": sink,
                "records": sum(b["rows"] for b in batches),
                "batches": len(batches),
                "first_batch_ms": first["duration_ms"],
                "records_per_s": round(n_rest / (ms_rest / 1000), 1) if ms_rest else None,
                "batch_ms_p50": statistics.median(b["duration_ms"] for b in rest) if rest else None,
            }
        )
    return rows


def _wait(cond, timeout_s: float, what: str, proc) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"the job exited ({proc.returncode}) while waiting for {what}")
        try:
            if cond():
                return
        except (OSError, ValueError):  # files appearing while we read them
            pass
        time.sleep(0.5)
    print(f"(gave up waiting for {what} after {timeout_s} s)")


def _store_count(cfg) -> int:
    import sqlite3

    if not cfg.store_path.exists():
        return 0
    con = sqlite3.connect(cfg.store_path)
    try:
        return con.execute("SELECT count(*) FROM orders").fetchone()[0]
    finally:
        con.close()


def _produce_at_rate(bootstrap: str, topic: str, rate: float, seconds: float) -> int:
    from kafka import KafkaProducer

    lines = ref.read_lines()
    producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all", linger_ms=5)
    t0, i = time.monotonic(), 0
    try:
        while time.monotonic() - t0 < seconds:
            due = int((time.monotonic() - t0) * rate)
            while i < due:
                producer.send(topic, key=f"{i:06d}".encode(), value=lines[i % len(lines)].encode())
                i += 1
            time.sleep(0.01)
        producer.flush()
    finally:
        producer.close()
    return i


def _ts_ms(text) -> float:
    from datetime import datetime

    text = str(text).replace("Z", "+00:00")
    if "T" not in text:
        text = text.replace(" ", "T")
    dt = datetime.fromisoformat(text)
    if dt.tzinfo is None:  # Spark wrote it in the session time zone, which is UTC
        from datetime import timezone

        dt = dt.replace(tzinfo=timezone.utc)
    return dt.timestamp() * 1000


def latency(bootstrap: str, rate: float, seconds: float, trigger: str, master: str, tmp: Path) -> dict:
    topic, out = f"lat-in-{uuid.uuid4().hex[:6]}", f"lat-out-{uuid.uuid4().hex[:6]}"
    ensure_topic(bootstrap, topic)
    ensure_topic(bootstrap, out)
    wd = tmp / "latency"
    wd.mkdir()
    cfg = PipelineConfig(
        bootstrap_servers=bootstrap,
        workdir=str(wd),
        input_topic=topic,
        output_topic=out,
        master=master,
        trigger=trigger,
        max_offsets_per_trigger=100_000,
        starting_offsets="latest",
        run_for_s=seconds + 300,
    )  # upper bound: we stop it once caught up
    cfg_path = wd / "cfg.json"
    cfg_path.write_text(cfg.to_json())
    proc = subprocess.Popen(
        [sys.executable, "-m", "course_lib.spark.job", str(cfg_path), str(wd / "report.json")],
        cwd=str(ROOT),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        text=True,
        start_new_session=True,
    )
    try:
        # Warm-up: produce only once every query has committed its first (empty) batch, so
        # the numbers measure the steady state, not the JVM and connector start.
        _wait(
            lambda: all((cfg.checkpoint(s) / "commits" / "0").exists() for s in SINKS),
            180,
            "the queries to commit their first batch",
            proc,
        )
        produced = _produce_at_rate(bootstrap, topic, rate, seconds)
        all_lines = ref.read_lines()
        valid = sum(1 for i in range(produced) if ref.validate(all_lines[i % len(all_lines)])[0] == "ok")
        # Caught up = every sink shows every valid record (bounded wait).
        _wait(
            lambda: _store_count(cfg) >= valid and len(outcome.read_file_sink(cfg.files_path)) >= valid,
            120,
            "the sinks to catch up",
            proc,
        )
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, 9)  # results are read from committed output only
            proc.wait()
    # Per sink: {batch: [latency_ms, ...]}
    per: dict[str, dict[int, list[float]]] = {}
    ranges = outcome.batch_ranges(cfg.checkpoint("kafka"))
    for _p, _o, ts_out, value in _read_with_timestamps(bootstrap, out):
        v = json.loads(value)
        b = outcome.batch_of(ranges, v["src_partition"], v["src_offset"])
        per.setdefault("kafka", {}).setdefault(b, []).append(ts_out - _ts_ms(v["kafka_ts"]))
    store = outcome.read_store(cfg.store_path)
    committed = {b["batch_id"]: b["committed_at"] * 1000 for b in store["batches"]}
    for r in store["orders"]:
        per.setdefault("store", {}).setdefault(r["batch_id"], []).append(
            committed[r["batch_id"]] - _ts_ms(r["kafka_ts"])
        )
    mtimes = _file_mtimes(cfg.files_path)
    franges = outcome.batch_ranges(cfg.checkpoint("files"))
    for r in outcome.read_file_sink(cfg.files_path):
        b = outcome.batch_of(franges, r["src_partition"], r["src_offset"])
        per.setdefault("files", {}).setdefault(b, []).append(mtimes[r["file"]] - _ts_ms(r["kafka_ts"]))
    return per


def _read_with_timestamps(bootstrap: str, topic: str):
    from kafka import KafkaConsumer, TopicPartition

    c = KafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False, group_id=None)
    try:
        tps = [TopicPartition(topic, p) for p in sorted(c.partitions_for_topic(topic) or [])]
        c.assign(tps)
        c.seek_to_beginning(*tps)
        end = c.end_offsets(tps)
        deadline = time.monotonic() + 60
        while any(c.position(tp) < end[tp] for tp in tps) and time.monotonic() < deadline:
            for _tp, recs in c.poll(timeout_ms=500).items():
                for r in recs:
                    yield r.partition, r.offset, r.timestamp, r.value
    finally:
        c.close()


def _file_mtimes(sink_dir: Path) -> dict[str, float]:
    out = {}
    for f in (sink_dir / "_spark_metadata").iterdir():
        if f.name.split(".")[0].isdigit() and not f.name.startswith("."):
            for line in f.read_text().splitlines()[1:]:
                e = json.loads(line)
                out[Path(e["path"]).name] = e["modificationTime"]
    return out


def _pct(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q * (len(values) - 1))))] if values else None


def print_tables(tp_rows, lat, env) -> None:
    print(f"\nSpark pipeline throughput ({env})")
    print(f"{'sink':<8}{'records':>9}{'batches':>9}{'first batch ms':>16}{'records/s':>12}{'batch ms p50':>14}")
    for r in tp_rows:
        print(
            f"{r['sink']:<8}{r['records']:>9}{r['batches']:>9}{r['first_batch_ms']:>16}"
            f"{str(r['records_per_s']):>12}{str(r['batch_ms_p50']):>14}"
        )
    if lat is None:
        return
    print("\nEnd-to-end latency per micro-batch (ms, Kafka CreateTime -> visible in the sink)")
    print(f"{'sink':<8}{'batches':>9}{'records':>9}{'median p50':>12}{'median p95':>12}{'max p95':>10}")
    for sink in SINKS:
        batches = {b: v for b, v in lat.get(sink, {}).items() if v}
        meds = [statistics.median(v) for v in batches.values()]
        maxs = [max(v) for v in batches.values()]
        print(
            f"{sink:<8}{len(batches):>9}{sum(map(len, batches.values())):>9}"
            f"{_fmt(_pct(meds, 0.5)):>12}{_fmt(_pct(meds, 0.95)):>12}{_fmt(_pct(maxs, 0.95)):>10}"
        )


def _fmt(x):
    return "-" if x is None else f"{x:.0f}"


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bootstrap-servers", help="an existing cluster (default: start a local one)")
    ap.add_argument("--master", default="local[2]")
    ap.add_argument("--records", type=int, default=5000)
    ap.add_argument("--per-trigger", type=int, default=1000)
    ap.add_argument("--rate", type=float, default=50.0, help="records/s in the latency phase")
    ap.add_argument("--seconds", type=float, default=30.0)
    ap.add_argument("--trigger", default="2 seconds")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--no-latency", action="store_true")
    ap.add_argument("--no-throughput", action="store_true")
    args = ap.parse_args(argv)
    if args.quick:
        args.records, args.per_trigger, args.seconds = 2000, 500, 10.0
    env = f"{os.cpu_count()} cores, master {args.master}"
    with tempfile.TemporaryDirectory(prefix="spark-bench-") as tmp:
        tmp = Path(tmp)
        if args.bootstrap_servers:
            tp = (
                []
                if args.no_throughput
                else throughput(args.bootstrap_servers, args.records, args.per_trigger, args.master, tmp)
            )
            lat = (
                None
                if args.no_latency
                else latency(args.bootstrap_servers, args.rate, args.seconds, args.trigger, args.master, tmp)
            )
        else:
            from course_lib.real.cluster import LocalCluster

            with LocalCluster(proxies=False, progress=False) as cluster:
                bs = cluster.bootstrap_servers
                tp = [] if args.no_throughput else throughput(bs, args.records, args.per_trigger, args.master, tmp)
                lat = None if args.no_latency else latency(bs, args.rate, args.seconds, args.trigger, args.master, tmp)
        print_tables(tp, lat, env)


if __name__ == "__main__":
    main()
