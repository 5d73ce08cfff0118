"""Step 4 of the Spark lab's experiment: read every sink back, record each read in the history
(``final_read`` operations the checker judges), and compare it with the input - lost and
duplicated order ids, the store's balances and skipped replays, the file sink as Spark reads it
and as a naive listing of its folder would.
"""

from __future__ import annotations

from course_lib.history import OK, History, OpName
from course_lib.spark import orders as ref
from course_lib.spark import outcome
from course_lib.spark.pipeline import PipelineConfig


def final_reads(cfg: PipelineConfig, lines: list[str], history: History, opts) -> tuple[dict, dict, dict]:
    """(outcomes, evidence, dead letters) per sink; ``opts``: the experiment's options (client config)."""
    exp = ref.expected(lines)
    expected_ids = exp["valid_ids"]
    outcomes, evidence = {}, {}
    if "kafka" in cfg.sinks:
        rows = outcome.read_kafka_sink(cfg.bootstrap_servers, cfg.output_topic, opts.client_config)
        history.record(
            "sink-kafka",
            OK,
            OpName.FINAL_READ,
            topic=cfg.output_topic,
            value=[[r["partition"], r["offset"], r["order_id"]] for r in rows],
        )
        outcomes["kafka"] = outcome.compare(expected_ids, [r["order_id"] for r in rows])
        ranges = outcome.batch_ranges(cfg.checkpoint("kafka"))
        ev = {}
        for r in rows:
            if r["order_id"] in outcomes["kafka"]["duplicated"]:
                e = ev.setdefault(
                    r["order_id"],
                    {
                        "order_id": r["order_id"],
                        "source": f"{cfg.input_topic}-{r['src_partition']}@{r['src_offset']}",
                        "batch": outcome.batch_of(ranges, r["src_partition"], r["src_offset"]),
                        "copies_at": [],
                    },
                )
                e["copies_at"].append(f"{cfg.output_topic}-{r['partition']}@{r['offset']}")
        evidence["kafka"] = list(ev.values())
    dead = {}
    if "store" in cfg.sinks:
        store = outcome.read_store(cfg.store_path)
        history.record(
            "sink-store",
            OK,
            OpName.FINAL_READ,
            topic="store:orders",
            value=[[r["src_partition"], r["row"], r["order_id"]] for r in store["orders"]],
        )
        o = outcome.compare(expected_ids, [r["order_id"] for r in store["orders"]])
        o["balances_ok"] = store["balances_cents"] == exp["balances_cents"]
        o["replays_skipped"] = [r["batch_id"] for r in store["replays"] if r["skipped"]]
        outcomes["store"] = o
        evidence["store"] = [
            {"batch": b, "what": "Spark re-ran a committed batch id; the store skipped it"}
            for b in o["replays_skipped"]
        ]
        got = sorted((d["reason"], d["raw"]) for d in store["dead_letters"])
        want = sorted((b["reason"], b["raw"]) for b in exp["bad"])
        dead = {
            "expected": len(want),
            "stored": len(got),
            "match": got == want,
            "by_reason": _count(d["reason"] for d in store["dead_letters"]),
        }
        history.record(
            "sink-store",
            OK,
            OpName.FINAL_READ,
            topic="store:dead_letters",
            value=[[d["src_partition"], d["src_offset"], d["reason"]] for d in store["dead_letters"]],
        )
    if "files" in cfg.sinks:
        rows = outcome.read_file_sink(cfg.files_path)
        naive = outcome.read_file_sink_naively(cfg.files_path)
        history.record(
            "sink-files",
            OK,
            OpName.FINAL_READ,
            topic="files:orders",
            value=[[0, i, r["order_id"]] for i, r in enumerate(rows)],
        )
        o = outcome.compare(expected_ids, [r["order_id"] for r in rows])
        naive_o = outcome.compare(expected_ids, [r["order_id"] for r in naive])
        o["naive_listing"] = {
            "observed": naive_o["observed"],
            "duplicated": len(naive_o["duplicated"]),
            "lost": len(naive_o["lost"]),
        }
        outcomes["files"] = o
        evidence["files"] = (
            [
                {
                    "what": "files outside _spark_metadata (written by a killed or "
                    "repeated batch, ignored by Spark's readers)",
                    "extra_rows": naive_o["observed"] - o["observed"],
                }
            ]
            if naive_o["observed"] != o["observed"]
            else []
        )
    return outcomes, evidence, dead


def _count(items) -> dict:
    out: dict = {}
    for x in items:
        out[x] = out.get(x, 0) + 1
    return dict(sorted(out.items()))
