"""The faults the Spark lab's harness injects into one run of the streaming job, as small objects.

Each injection (:class:`Injection`) is told, every 20 ms while the job runs, what time it is:

- :meth:`~Injection.watch` from the job's launch (the first batch may be planned before the job
  has started all its queries);
- :meth:`~Injection.act` once the queries run, while the job is alive (True: it killed the job);
- :meth:`~Injection.report` when the job has ended, and :meth:`~Injection.heal` whatever happened.

:class:`CommitTrap` kills the job in *the window* (after the sinks wrote batch N, before Spark
committed it), :class:`RandomKill` a seeded moment after a batch was planned, :class:`BrokerKill`
SIGKILLs the leader of the input topic's partition 0 and restarts it afterwards. See
:mod:`course_lib.spark.harness` for the experiment they are part of.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from course_lib.history import INFO, History, Nemesis
from course_lib.spark import outcome
from course_lib.spark.experiment_options import ExperimentOptions
from course_lib.spark.job_process import JobProcess
from course_lib.spark.pipeline import PipelineConfig

WINDOW, RANDOM = "window", "random"


@dataclass
class Kill:
    """One planned kill of the job."""

    run: int
    kind: str  # WINDOW | RANDOM
    sink: str | None = None  # window: whose commit is trapped; random: whose batch starts
    delay_ms: int | None = None  # random kills: ms after that sink's next batch was planned


@dataclass
class RunContext:
    """What one run of the job works with: the pipeline, where it logs, the experiment's options,
    the cluster (``None`` without a LocalCluster: no broker kills) and where to record."""

    index: int  # 0-based number of the run
    cfg: PipelineConfig
    cfg_path: Path
    workdir: Path
    opts: ExperimentOptions
    cluster: Any
    history: History
    event: Callable[..., None]  # event(run, what, **detail): a line of the experiment's timeline

    def note(self, what: str, **detail) -> None:
        self.event(self.index, what, **detail)

    def record_crash(self, **value) -> None:
        self.history.record("nemesis", INFO, Nemesis.CRASH, value=value)


def checkpoint_state(cfg: PipelineConfig) -> dict:
    """Per sink: last planned and last committed batch (the window is planned > committed)."""
    out = {}
    for sink in cfg.sinks:
        ck = cfg.checkpoint(sink)
        planned, committed = outcome.planned_batches(ck), outcome.committed_batches(ck)
        out[sink] = {"planned": planned[-1] if planned else None, "committed": committed[-1] if committed else None}
    return out


@dataclass
class BatchWatch:
    """The first batch of ``sink`` a run plans anew, and when its offsets file appeared."""

    sink: str
    batch: int
    offsets: Path
    commit: Path
    seen_at: float | None = None

    @classmethod
    def next_batch(cls, cfg: PipelineConfig, sink: str) -> BatchWatch:
        ck = cfg.checkpoint(sink)
        planned = outcome.planned_batches(ck)
        # The first batch this run plans anew (a batch planned but not committed by the previous
        # run is re-run first, from its existing offsets file).
        target = (planned[-1] if planned else -1) + 1
        return cls(sink, target, ck / "offsets" / str(target), ck / "commits" / str(target))

    def newly_planned(self, now: float) -> bool:
        """True once: the first time the batch is seen planned (``seen_at`` is then ``now``)."""
        if self.seen_at is None and self.offsets.exists():
            self.seen_at = now
            return True
        return False

    def __str__(self) -> str:
        return f"{self.sink} batch {self.batch}"


class Injection:
    """One fault injected into one run of the job (the hooks do nothing unless overridden)."""

    #: what the run's "start" event names as the target
    target = ""

    def __init__(self, ctx: RunContext):
        self.ctx = ctx

    def watch(self, now: float) -> None:
        """Every 20 ms from the job's launch (``time.monotonic()`` seconds)."""

    def act(self, job: JobProcess, now: float, started_at: float) -> bool:
        """Every 20 ms while the job's queries run; True if this killed the job."""
        return False

    def report(self, job: JobProcess, rc: int | None) -> None:
        """Once the job has ended (exit code ``rc``, None if it would not die)."""

    def heal(self) -> None:
        """After the run, whatever happened: undo the fault."""


class CommitTrap(Injection):
    """Kill the job in the window: an empty ``commits/N`` file created as soon as batch N is
    planned makes Spark's commit of N fail after the sinks wrote it, and the job SIGKILLs itself."""

    def __init__(self, ctx: RunContext, sink: str):
        super().__init__(ctx)
        self.batch = BatchWatch.next_batch(ctx.cfg, sink)
        self.target = str(self.batch)
        self.set = False

    def watch(self, now: float) -> None:
        if not self.batch.newly_planned(now):
            return
        try:  # O_EXCL: never touch a real commit file
            os.close(os.open(self.batch.commit, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
            self.set = True
            self.ctx.note("trap set", sink=self.batch.sink, batch=self.batch.batch)
        except FileExistsError:
            self.ctx.note("trap too late", sink=self.batch.sink, batch=self.batch.batch)

    def report(self, job: JobProcess, rc: int | None) -> None:
        trapped = job.line("TRAPPED")
        if trapped:
            _, sink, batch = trapped.split()
            state = checkpoint_state(self.ctx.cfg)
            self.ctx.record_crash(
                run=self.ctx.index, signal="SIGKILL", moment=WINDOW, sink=sink, batch=int(batch), state=state
            )
            self.ctx.note("SIGKILL job", moment=f"window: {sink} wrote batch {batch}, commit not written", state=state)
        elif self.set:
            self.ctx.note("trap not reached", sink=self.batch.sink, batch=self.batch.batch)

    def heal(self) -> None:
        commit = self.batch.commit
        if self.set and commit.exists() and commit.stat().st_size == 0:
            commit.unlink()  # the restart must be able to commit batch N


class RandomKill(Injection):
    """SIGKILL the job ``delay_ms`` after ``sink``'s next batch was planned: usually mid-batch.
    In the run that also kills a broker (``after``), not before that broker is down: both faults
    are the point of that run, and a batch planned within ``broker_kill_s`` of the start would
    otherwise end the run first (seen once in CI: the job killed 0.99 s after its queries
    started, the broker kill due at 1.0 s)."""

    def __init__(self, ctx: RunContext, sink: str, delay_ms: int, after: BrokerKill | None = None):
        super().__init__(ctx)
        self.batch = BatchWatch.next_batch(ctx.cfg, sink)
        self.delay_ms = delay_ms
        self.after = after
        self.target = f"{self.batch} +{delay_ms} ms"

    def watch(self, now: float) -> None:
        self.batch.newly_planned(now)

    def act(self, job: JobProcess, now: float, started_at: float) -> bool:
        seen_at = self.batch.seen_at
        if seen_at is None or now - seen_at < self.delay_ms / 1000:
            return False
        if self.after is not None and self.after.killed is None:
            return False
        state = checkpoint_state(self.ctx.cfg)
        job.kill()
        job.wait(30)
        late_ms = round((now - seen_at) * 1000)
        moment = f"random: {late_ms} ms after {self.batch.sink} batch {self.batch.batch} was planned"
        self.ctx.record_crash(run=self.ctx.index, signal="SIGKILL", moment=moment, state=state)
        self.ctx.note("SIGKILL job", moment=moment, state=state)
        return True

    def report(self, job: JobProcess, rc: int | None) -> None:
        if rc == 0 and not job.line("TRAPPED"):
            self.ctx.note("run finished before the random kill")


class BrokerKill(Injection):
    """SIGKILL the leader of the input topic's partition 0 ``broker_kill_s`` after the queries
    started; restart it (and wait for the full ISR) when the run is over."""

    def __init__(self, ctx: RunContext):
        super().__init__(ctx)
        self.killed: int | None = None

    def act(self, job: JobProcess, now: float, started_at: float) -> bool:
        opts, cluster = self.ctx.opts, self.ctx.cluster
        if self.killed is None and now - started_at >= opts.broker_kill_s:
            self.killed = cluster.leader_of(opts.input_topic, 0)
            cluster.kill(self.killed)
            self.ctx.history.record(
                "nemesis",
                INFO,
                Nemesis.CRASH,
                value={"broker": self.killed, "signal": "SIGKILL", "leader_of": f"{opts.input_topic}-0"},
            )
            self.ctx.note("SIGKILL broker", broker=self.killed)
        return False

    def heal(self) -> None:
        if self.killed is not None:
            restart_broker(self.ctx.cluster, self.killed, self.ctx.opts.input_topic)
            self.ctx.history.record("nemesis", INFO, Nemesis.RESTART, value={"broker": self.killed})
            self.ctx.note("broker restarted", broker=self.killed)


def injections_for(ctx: RunContext, kill: Kill | None) -> list[Injection]:
    """The faults of one run: its planned kill of the job, and the broker kill in its run."""
    # the broker kill first: a tick that has both due takes the broker down before the job
    broker = BrokerKill(ctx) if ctx.cluster is not None and ctx.opts.broker_kill_run == ctx.index else None
    found: list[Injection] = [broker] if broker is not None else []
    if kill is not None:
        if kill.sink is None:
            raise ValueError(f"{kill} names no sink: plan_kills gives every kill the sink it watches")
        if kill.kind == WINDOW:
            found.append(CommitTrap(ctx, kill.sink))
        elif kill.kind == RANDOM and kill.delay_ms is not None:
            found.append(RandomKill(ctx, kill.sink, kill.delay_ms, after=broker))
        else:
            raise ValueError(f"{kill}: kind must be {WINDOW!r} or {RANDOM!r} (with delay_ms)")
    return found


def restart_broker(cluster, broker_id: int, topic: str) -> None:
    """Adapter around ``LocalCluster.restart``: its readiness poll asks the cluster through
    kafka-python's admin client, which can raise ECONNREFUSED while the restarted node is not
    listening yet (seen under load). The JVM is launched before that poll, so a failed poll is
    retried here by waiting for the partitions' ISR instead."""
    try:
        cluster.restart(broker_id)
    except Exception as exc:
        if not _wait_full_isr(cluster, topic):
            raise RuntimeError(f"broker {broker_id} did not come back after a restart: {exc}") from exc
        return
    _wait_full_isr(cluster, topic)


def _wait_full_isr(cluster, topic: str, partitions: int = 3, timeout_s: float = 90.0) -> bool:
    """Heal completely before going on: every partition back to 3 in-sync replicas."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            if all(len(cluster.isr_of(topic, p)) == 3 for p in range(partitions)):
                return True
        except Exception:  # metadata not ready yet, or the admin client hit a node still starting
            pass
        time.sleep(0.5)
    return False
