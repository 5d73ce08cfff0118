"""Kill the streaming job (and a broker) on purpose, restart it, and check every sink.

The Jepsen recipe, with Spark as the system under test:

1. **workload** - load the orders into a 3-partition, RF=3 topic (transactional loader);
2. **nemesis** - run the job (:mod:`course_lib.spark.job`) in its own process and SIGKILL its
   process group, ``kills`` times: either at a seeded random moment (usually mid-batch), or in
   *the window* - after the sinks wrote micro-batch N, before Spark committed it - hit
   deterministically by a **commit trap**; optionally SIGKILL a Kafka broker during one run;
3. **heal** - restart the broker, run the job once more to the end;
4. **final reads** - read each sink, record it in the history, compare with the input.

The commit trap: the harness watches the checkpoint of the target sink; as soon as batch N is
planned (``offsets/N`` appears - Spark writes it *before* running the batch, and running it takes
hundreds of milliseconds while the harness polls every 20 ms) it creates an empty file
``commits/N``. Spark writes a commit with "create, fail if it exists", so once the sink has
written batch N the commit fails (``CONCURRENT_STREAM_LOG_UPDATE``) and the job SIGKILLs its
process group on the spot. The harness removes the trap before the restart. Spark then re-runs
batch N - it is in the offsets log but not in the commit log - with exactly the same offsets.
If the trap came too late (the commit already existed) the run says so in the timeline.

A random kill waits for the next batch of a seeded sink to be planned, then a seeded
0-``random_kill_ms_max`` ms, and kills: usually in the middle of that batch.

The input is loaded in ``kills + 1`` portions, one before each run, so every run has new
batches to process (the stream keeps flowing while the job crashes and restarts).

Everything random comes from ``random.Random(seed)``; a failing run prints its seed.

Taught in notebooks/10_pyspark_exactly_once_lab.
"""

from __future__ import annotations

import json
import random
import shutil
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from course_lib.history import INFO, INVOKE, OK, History, OpName
from course_lib.spark import orders as ref
from course_lib.spark.experiment_options import ExperimentOptions
from course_lib.spark.faults import RANDOM, WINDOW, Kill, RunContext, checkpoint_state, injections_for
from course_lib.spark.final_reads import final_reads
from course_lib.spark.job import SESSION_ENV
from course_lib.spark.job_process import JobProcess
from course_lib.spark.loader import load_orders
from course_lib.spark.pipeline import SINK_SEMANTICS, PipelineConfig
from course_lib.spark.prerequisites import SparkUnavailable
from course_lib.spark.remote import learner_name, resolve_remote, stop_session_queries

#: The topic name under which each sink's final read is recorded in the history.
SINK_TOPICS = {"kafka": lambda o: o.output_topic, "store": lambda o: "store:orders", "files": lambda o: "files:orders"}


def plan_kills(opts: ExperimentOptions) -> list[Kill]:
    """The seeded kill schedule.

    >>> [(k.kind, k.sink, k.delay_ms) for k in plan_kills(ExperimentOptions(kills=4, seed=1))]
    [('window', 'kafka', None), ('window', 'store', None), ('window', 'files', None), ('random', 'kafka', 1165)]
    """
    rng = random.Random(opts.seed)
    window = [s for s in opts.window_sinks if s in opts.sinks]
    plan = []
    for i in range(opts.kills):
        if i < len(window):
            plan.append(Kill(run=i, kind=WINDOW, sink=window[i]))
        else:
            plan.append(
                Kill(
                    run=i,
                    kind=RANDOM,
                    sink=rng.choice(list(opts.sinks)),
                    delay_ms=rng.randint(0, opts.random_kill_ms_max),
                )
            )
    return plan


@dataclass
class ExperimentResult:
    """What happened: history, timeline, per-sink outcome, evidence for duplicates."""

    options: ExperimentOptions
    history: History
    timeline: list[dict]
    outcomes: dict[str, dict]
    evidence: dict[str, list[dict]]
    runs: list[dict]
    workdir: str
    dead_letters: dict = field(default_factory=dict)

    def table(self) -> list[dict]:
        """One row per sink: semantics, expected, observed, lost, duplicated."""
        rows = []
        for sink, o in self.outcomes.items():
            rows.append(
                {
                    "sink": sink,
                    "semantics": SINK_SEMANTICS.get(sink, ""),
                    "expected": o["expected"],
                    "observed": o["observed"],
                    "lost": len(o["lost"]),
                    "duplicated": len(o["duplicated"]),
                    "extra_copies": sum(n - 1 for n in o["duplicated"].values()),
                    "balances_ok": o.get("balances_ok", ""),
                }
            )
        return rows

    def sink_history(self, sink: str) -> History:
        """The history as the course's checker reads it, for one sink.

        The loader's sends are re-labelled: value = the order id (valid lines only - malformed
        ones must not reach a sink), topic = the sink's final-read topic; then that sink's
        final read, plus the broker crashes (the job crashes are in :attr:`timeline`).
        """
        topic = SINK_TOPICS[sink](self.options)
        order_of = {
            f"{i:06d}": o["order_id"]
            for i, (r, o) in enumerate(ref.validate(l) for l in ref.read_lines(self.options.n_orders))
            if o
        }
        h = History(clock=lambda: 0.0)
        # The loader learns a record's partition only from the acknowledgement.
        partition_of = {op.value: op.partition for op in self.history if op.f == OpName.SEND and op.type != INVOKE}
        pending = {}
        for op in self.history:
            if op.f == OpName.SEND and op.value in order_of:
                if op.type == INVOKE:
                    pending[op.value] = h.invoke(
                        "loader", OpName.SEND, order_of[op.value], topic=topic, partition=partition_of.get(op.value)
                    )
                elif op.value in pending:
                    h.complete(pending.pop(op.value), op.type, offset=op.offset, partition=op.partition, error=op.error)
            elif op.f == OpName.FINAL_READ and op.topic == topic:
                h.record(op.process, op.type, OpName.FINAL_READ, value=op.value, topic=topic)
            elif op.process == "nemesis" and isinstance(op.value, dict) and "broker" in op.value:
                h.record("nemesis", op.type, op.f, value=op.value)
        return h

    def check(self) -> dict:
        """Feed each sink's history to :func:`course_lib.judge.checker.check`.

        Only the Kafka sink is *allowed* duplicates (Spark documents it as at-least-once); the
        store and the file sink promise exactly-once, so a lost write or a duplicate there is a
        violation. Order is not promised by any sink.
        """
        from course_lib.judge.checker import check

        # No sink promises the input order: batches are written by parallel tasks into several
        # output partitions/files, so order is not part of the contract (loss/duplicates are).
        unordered = {
            "reordered": "Spark writes a micro-batch with parallel tasks into several "
            "output partitions or files: the sink does not keep input order"
        }
        allowed = {
            "kafka": {
                **unordered,
                "duplicate": "Spark's Kafka sink is at-least-once: a micro-batch "
                "re-run after a crash is produced again",
            },
            "store": unordered,
            "files": unordered,
        }
        return {sink: check(self.sink_history(sink), allowed=allowed[sink]) for sink in self.outcomes}

    def print_table(self) -> None:
        rows = self.table()
        cols = list(rows[0]) if rows else []
        print(" | ".join(f"{c:>12}" for c in cols))
        for r in rows:
            print(" | ".join(f"{str(r[c]):>12}" for c in cols))


def shared_key(opts: ExperimentOptions) -> str:
    """The :func:`~course_lib.experiments.shared_results.once_per_test_run` key of :func:`run_experiment`
    with ``opts`` on a fresh local cluster: tests/spark runs it, notebook 10 under test reads it."""
    return f"spark kill experiment on a local cluster, {opts!r}"


def run_experiment(
    bootstrap_servers: str,
    workdir: str | Path,
    options: ExperimentOptions | None = None,
    *,
    cluster=None,
    progress: bool = True,
) -> ExperimentResult:
    """Load, run with kills, heal, final-read, compare. ``cluster``: a LocalCluster (for broker
    kills and topic creation); without it the topics are created through the admin API.

    Raises ``RuntimeError`` (with the seed) if the final run does not finish.
    """
    from tqdm.auto import tqdm

    opts = options or ExperimentOptions()
    remote = resolve_remote(opts.remote) or ""
    workdir = Path(workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    t0 = time.monotonic()
    clock = lambda: (time.monotonic() - t0) * 1000.0
    history = History(clock=clock)
    timeline: list[dict] = []

    def event(run: int | None, what: str, **detail) -> None:
        timeline.append({"t_s": round(clock() / 1000, 2), "run": run, "event": what, **detail})

    # 1. workload -------------------------------------------------------------------------
    lines = ref.read_lines(opts.n_orders)
    _create_topics(bootstrap_servers, cluster, opts)
    cfg = PipelineConfig(
        bootstrap_servers=bootstrap_servers,
        workdir=str(workdir),
        input_topic=opts.input_topic,
        output_topic=opts.output_topic,
        sinks=tuple(opts.sinks),
        master=opts.master,
        max_offsets_per_trigger=opts.max_offsets_per_trigger,
        idempotent_store=opts.idempotent_store,
        remote=remote,
        kafka_options=dict(opts.kafka_options or {}),
    )
    cfg_path = workdir / "pipeline.json"
    cfg_path.write_text(cfg.to_json())
    (workdir / "logs").mkdir(exist_ok=True)

    # 2. nemesis: runs with kills, then 3. heal + final run -------------------------------
    plan = plan_kills(opts)
    runs: list[dict] = []
    n_runs = len(plan) + 1
    bar = tqdm(total=n_runs, desc="job runs", unit=" run", disable=not progress)
    for i in range(n_runs):
        kill = plan[i] if i < len(plan) else None
        # Portion i of the input (the loader skips what is already there, so it is cumulative).
        upto = len(lines) * (i + 1) // n_runs
        loaded = load_orders(
            bootstrap_servers,
            opts.input_topic,
            lines[:upto],
            history=history,
            progress=False,
            client_config=opts.client_config,
            transactional_id=f"{opts.learner}.orders-loader-{uuid.uuid4().hex[:8]}" if opts.learner else None,
        )
        event(i, "loaded", lines=upto, **loaded)
        ctx = RunContext(i, cfg, cfg_path, workdir, opts, cluster, history, event)
        info = _one_run(ctx, kill)
        runs.append(info)
        bar.update(1)
        if kill is None and info["exit"] != 0:
            bar.close()
            raise RuntimeError(
                f"the final run did not finish cleanly ({info}); seed={opts.seed}; logs in {workdir / 'logs'}"
            )
    bar.close()

    # 4. final reads + comparison -----------------------------------------------------------
    outcomes, evidence, dead = final_reads(cfg, lines, history, opts)
    event(None, "checked")
    # Keep the evidence next to the checkpoints: the history (JSON lines) and the timeline.
    (workdir / "history.jsonl").write_text(history.to_jsonl())
    (workdir / "timeline.json").write_text(json.dumps(timeline, default=str, indent=1))
    return ExperimentResult(
        options=opts,
        history=history,
        timeline=timeline,
        outcomes=outcomes,
        evidence=evidence,
        runs=runs,
        workdir=str(workdir),
        dead_letters=dead,
    )


def _create_topics(bootstrap_servers, cluster, opts) -> None:
    from course_lib.spark.loader import ensure_topic

    for topic in (opts.input_topic, opts.output_topic):
        if cluster is not None:
            try:
                cluster.create_topic(topic, partitions=3)
            except Exception as exc:
                if "TopicAlreadyExists" not in type(exc).__name__ + str(exc):
                    raise
        else:
            ensure_topic(
                bootstrap_servers,
                topic,
                partitions=3,
                replication_factor=opts.replication_factor,
                min_insync_replicas=max(1, opts.replication_factor - 1),
                client_config=opts.client_config,
            )


#: Spark's words when a ``foreachBatch`` query's Python worker did not connect back to the JVM in
#: time: the streaming runner waits a fixed 10 s for it (``PythonWorkerFactory``, not configurable
#: in Spark 4.0), which a loaded machine can exceed while that Python imports pyspark
WORKER_LATE = "Python worker failed to connect back"
#: how often a run is started when its start fails that way
START_ATTEMPTS = 3


class WorkerLate(RuntimeError):
    """The job could not start its queries because Spark's Python worker connected back late."""


def _one_run(ctx: RunContext, kill: Kill | None) -> dict:
    """Run the job once with this run's fault injections (:mod:`course_lib.spark.faults`); what
    happened goes to the history and the timeline, and the dict returned summarises it. A start
    that failed only because the machine was too slow for Spark (:data:`WORKER_LATE`) is made
    again - as a killed job's restart would be: the sinks are exactly-once across restarts."""
    for attempt in range(1, START_ATTEMPTS + 1):
        try:
            return _run_once(ctx, kill)
        except WorkerLate as exc:
            if attempt == START_ATTEMPTS:
                raise
            ctx.note("start failed, starting again", why=str(exc))
    raise AssertionError("unreachable")


def _start_error(log: Path) -> type[RuntimeError]:
    """What a start that failed raises, by the job's log: :class:`WorkerLate` if Spark said
    :data:`WORKER_LATE`, else ``RuntimeError``."""
    return WorkerLate if log.exists() and WORKER_LATE in log.read_text(errors="replace") else RuntimeError


def _run_once(ctx: RunContext, kill: Kill | None) -> dict:
    i, cfg, opts, workdir = ctx.index, ctx.cfg, ctx.opts, ctx.workdir
    injections = injections_for(ctx, kill)
    inv = ctx.history.invoke("job", "run", {"run": i, "kill": kill.__dict__ if kill else None})
    ctx.note(
        "start",
        kill=kill.kind if kill else "none (final run)",
        target="".join(injection.target for injection in injections),
    )
    session_id = str(uuid.uuid4()) if cfg.remote else None
    env = {SESSION_ENV: session_id} if session_id else {}
    if opts.learner:
        env["COURSE_LEARNER_PREFIX"] = opts.learner
    run = JobProcess(ctx.cfg_path, workdir / "logs" / f"run-{i}.log", env=env)

    def watch(now: float) -> None:
        for injection in injections:
            injection.watch(now)

    try:
        start_deadline = time.monotonic() + opts.run_timeout_s
        # Watch from the start: the first query's batch 0 may run before the job has started
        # all its queries (a warm Spark Connect server commits it in a few hundred ms).
        while not run.started.wait(0.02) and run.proc.poll() is None:
            watch(time.monotonic())
            if time.monotonic() > start_deadline:
                break
        if not run.started.is_set():
            run.kill()
            log = workdir / "logs" / f"run-{i}.log"
            why = f"run {i}: the job did not start its queries (exit {run.proc.poll()}); see {log}; seed={opts.seed}"
            ctx.history.complete(inv, INFO, error="did not start")
            raise _start_error(log)(why)
        unavailable = run.line("UNAVAILABLE")
        if unavailable:
            raise SparkUnavailable(unavailable.removeprefix("UNAVAILABLE "))
        ctx.note("queries started")
        started_at = time.monotonic()
        deadline = started_at + opts.run_timeout_s
        rc = None
        while rc is None and time.monotonic() < deadline:
            rc = run.proc.poll()
            now = time.monotonic()
            watch(now)
            if rc is None and any(injection.act(run, now, started_at) for injection in injections):
                rc = run.proc.returncode  # killed (None if it would not die: handled below)
                break
            time.sleep(0.02)
        if rc is None and run.proc.poll() is None:
            run.kill()
            rc = run.wait(30)
            ctx.note("timeout: job killed", after_s=opts.run_timeout_s)
        rc = run.wait(30) if rc is None else rc
        for injection in injections:
            injection.report(run, rc)
    finally:
        run.close()
        shutil.rmtree(cfg.scratch_path, ignore_errors=True)  # the dead JVM's temporary files
        if session_id and run.proc.returncode != 0:
            # A Spark Connect client that died leaves its queries running in the server (also
            # those it started before it failed to start the others).
            # The job opened its session as learner_name() in its environment (see get_spark).
            stopped = stop_session_queries(cfg.remote, session_id, user_id=learner_name(opts.learner))
            if stopped:
                ctx.note("stopped the killed job's queries on the server", queries=stopped)
        for injection in injections:
            injection.heal()
    ctx.history.complete(inv, OK if rc == 0 else INFO, error=None if rc == 0 else f"exit {rc}")
    ctx.note("finished" if rc == 0 else "died", exit=rc)
    return {
        "run": i,
        "kill": kill.kind if kill else None,
        "exit": rc,
        "trapped": run.line("TRAPPED"),
        "state_after": checkpoint_state(cfg),
    }
