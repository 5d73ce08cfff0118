"""The streaming job as its own process, so the harness can SIGKILL it like a crashed driver.

    python -m course_lib.spark.job <config.json> [<report.json>]

It starts a SparkSession and one query per sink (:func:`course_lib.spark.pipeline.start_pipeline`),
waits until the backlog is processed (``availableNow``), writes a report (per-sink micro-batch
progress) and exits 0. It prints one line per milestone to stdout (``STARTED``, ``DONE``,
``TRAPPED <sink> <batch>``) which the harness reads.

A *commit trap* (see :mod:`course_lib.spark.harness`) makes Spark fail exactly when it tries to
write ``commits/N`` - after the sinks wrote batch N. The job then kills its whole process group
with SIGKILL on the spot, so the end state is that of a driver that died in that window.

Taught in notebooks/10_pyspark_exactly_once_lab.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from pathlib import Path

TRAP_MARK = "CONCURRENT_STREAM_LOG_UPDATE"
#: Environment variable with the Spark Connect session id of one run (set by the harness).
SESSION_ENV = "COURSE_SPARK_SESSION_ID"


def _say(line: str) -> None:
    print(line, flush=True)


def main(argv: list[str]) -> int:
    from course_lib.spark.pipeline import PipelineConfig, progress_summary, start_pipeline
    from course_lib.spark.session import SparkUnavailable, get_spark, jvm_scratch_conf

    # PySpark hands timestamps to Python as naive local times; make "local" mean UTC, as in
    # the session (spark.sql.session.timeZone), so times written by foreachBatch are UTC.
    os.environ["TZ"] = "UTC"
    time.tzset()
    cfg = PipelineConfig.from_json(Path(argv[0]).read_text())
    report_path = Path(argv[1]) if len(argv) > 1 else Path(cfg.workdir) / "last_report.json"
    t0 = time.time()
    try:
        # A local session's JVM keeps its temporary files where the harness can remove them
        # after a kill (with Spark Connect the server has its own).
        scratch: dict[str, str] = {}
        if not cfg.remote:
            cfg.scratch_path.mkdir(parents=True, exist_ok=True)
            scratch = jvm_scratch_conf(cfg.scratch_path)
        # With Spark Connect, the harness names the server-side session so that it can stop
        # the queries of a killed job (they do not die with this process).
        spark = get_spark(
            master=cfg.master,
            app_name="orders-exactly-once-lab",
            remote=cfg.remote,
            session_id=os.environ.get(SESSION_ENV) or None,
            extra_conf=scratch,
        )
    except SparkUnavailable as exc:
        _say(f"UNAVAILABLE {exc}")
        return 3
    session_s = time.time() - t0
    queries = start_pipeline(spark, cfg)
    _say(f"STARTED {json.dumps({'session_s': round(session_s, 2)})}")
    failed = {}
    if cfg.trigger != "availableNow":
        # A processing-time trigger never ends by itself: run for run_for_s, then stop.
        deadline = time.time() + cfg.run_for_s
        while time.time() < deadline and all(q.isActive for q in queries.values()):
            time.sleep(0.2)
        for q in queries.values():
            q.stop()
    for sink, q in queries.items():
        try:
            q.awaitTermination()
        except Exception as exc:  # StreamingQueryException
            text = str(exc)
            if TRAP_MARK in text:
                # Spark could not write commits/N because the harness put a trap there: the
                # sinks have written batch N, the checkpoint does not say so. Die right here.
                batch = _batch_of(text)
                _say(f"TRAPPED {sink} {batch}")
                os.killpg(os.getpgid(0), signal.SIGKILL)
            failed[sink] = text.splitlines()[0][:500]
    report = {
        "sinks": {s: progress_summary(q) for s, q in queries.items()},
        "failed": failed,
        "session_s": session_s,
        "total_s": time.time() - t0,
    }
    report_path.write_text(json.dumps(report, default=str))
    _say(f"DONE {json.dumps({'failed': failed})}")
    spark.stop()
    return 1 if failed else 0


def _batch_of(text: str) -> int | None:
    # "... Multiple streaming jobs detected for 3." -> 3
    import re

    m = re.search(r"detected for (\d+)", text)
    return int(m.group(1)) if m else None


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
