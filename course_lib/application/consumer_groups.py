"""Consumer groups as an operator meets them: application instances that poll, spend time in their
handler, commit, join, leave and restart - *concurrently*, on the simulator's one clock.

Each instance polls with ``timeout_ms=0`` at its own moments: when it is idle (every
``idle_poll_ms``) and when its handler has finished a batch (``handler_ms`` per record, so a
batch of 5 at 100 ms keeps it busy for 500 ms). Heartbeats run in the background as in
kafka-python, so a busy instance stays in the group - until it exceeds ``max_poll_interval_ms``.

>>> run = GroupRun(seed=1, messages=20)
>>> _ = run.start("a", commit_every=1)
>>> print(run.run(until_ms=5000).summary())
20 of 20 messages processed; processed more than once: 0 (0 extra runs); never processed: 0; group formed 1, rebalanced 0 times; failed commits: 0

The instance's loop is the at-least-once loop of lesson 05: poll, process every record, commit
the processed offsets (every ``commit_every`` batches), poll again. ``commit_on_revoke=True``
adds a ``ConsumerRebalanceListener`` that commits what was processed when partitions are taken
away. A commit that fails (``CommitFailedError``) is logged and the loop goes on, as most
applications do.

Taught in notebooks/05b_consumer_groups.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any, TypedDict

from kafka import ConsumerRebalanceListener
from kafka import errors as Errors
from kafka.structs import OffsetAndMetadata, TopicPartition

from ..backend import Backend, open_backend
from ..history import OpName
from .supervisor import AppCrash, CrashPlan, Incarnations

TOPIC = "orders"
GROUP = "billing"
GROUP_EVENTS = ("rebalance", "left_group", "member_removed", "static_member_replaced", "offsets_expired")


class _CommitOnRevoke(ConsumerRebalanceListener):
    """Commit what was processed before the partitions go to another member."""

    def __init__(self, app: App):
        self.app = app

    def on_partitions_revoked(self, revoked):
        self.app.commit(reason="on_partitions_revoked")
        self.app.done.clear()

    def on_partitions_assigned(self, assigned):
        pass

    def on_partitions_lost(self, lost):
        # thrown out: committing is impossible, the new owners replay from the last commit
        self.app.done.clear()


@dataclass
class App:
    """One application instance: a consumer in the group, plus what its handler is doing (an
    :class:`~course_lib.application.supervisor.Instance` whose ``run()`` is driven step by step by
    :class:`GroupRun`, which has every instance take its turn on one clock)."""

    name: str
    consumer: Any  # the backend's consumer (kafka-python's API)
    settings: dict
    handler_ms: float
    commit_every: int
    next_ms: float = 0.0
    in_handler: list = field(default_factory=list)  # the batch being processed
    handled: int = 0  # records its handler has finished, repeats included
    done: dict = field(default_factory=dict)  # (topic, partition) -> next offset, processed, not committed
    batches_since_commit: int = 0
    stop_at_ms: float | None = None
    restart_after_ms: float | None = None  # set by restart(): start again this long after close()
    crash_plan: CrashPlan | None = None  # where the process dies (points: process, commit, poll)
    restart_after_crash_ms: float | None = None  # its supervisor starts it again this long after
    run: GroupRun = field(kw_only=True)  # the run whose clock and records it shares

    def commit(self, reason: str = "after the batch") -> None:
        assigned = {tuple(tp) for tp in self.consumer.assignment()}
        offsets = {TopicPartition(*tp): OffsetAndMetadata(o, "", -1) for tp, o in self.done.items() if tp in assigned}
        self.batches_since_commit = 0
        if not offsets:
            return
        try:
            self.consumer.commit(offsets)
            self.done.clear()
            if reason != "after the batch":  # the routine commits would drown the timeline
                committed = ", ".join(f"p{tp.partition}@{m.offset}" for tp, m in sorted(offsets.items()))
                self.run.events.append((self.run.backend.now_ms, self.name, f"committed {committed} ({reason})"))
        except (Errors.CommitFailedError, Errors.RebalanceInProgressError) as exc:
            self.done.clear()  # these partitions are gone: their new owner starts from the last commit
            self.run.failed_commits.append((self.run.backend.now_ms, self.name, f"{type(exc).__name__} ({reason})"))

    def reached(self, point: str) -> None:
        """The instance passes ``point``; raises :class:`~course_lib.application.supervisor.AppCrash` where its
        crash plan says it dies."""
        if self.crash_plan is not None:
            self.crash_plan.reached(point)

    def close(self) -> None:
        """Graceful shutdown: commit what was processed, ``close()`` (the member leaves its group)."""
        self.commit(reason="before close()")
        self.consumer.close()
        self.consumer = None

    def crash(self) -> None:
        """The process dies: no commit, no LeaveGroup (the group notices after session_timeout_ms)."""
        self.run.backend.crash_client(self.consumer)
        self.consumer = None


class GroupRun:
    """A seeded cluster with topic ``orders`` (``messages`` records ``msg-0``.., spread over
    ``partitions``) and a plan of instances of group ``billing``. Build the plan with
    :meth:`start`, :meth:`stop`, :meth:`restart`, :meth:`crash`, :meth:`produce`, then :meth:`run` it."""

    def __init__(
        self, seed: int = 1, messages: int = 40, partitions: int = 2, idle_poll_ms: float = 100, **cluster_options
    ):
        # the simulator: every instance polls with timeout_ms=0 on one clock, which kafka-python
        # against real brokers cannot do (it completes a join only inside a longer poll())
        self.backend: Backend = open_backend(None, seed, **cluster_options)
        self.topic = self.backend.create_topic(TOPIC, partitions=partitions, min_insync_replicas=2)
        self.group = self.backend.group_id(GROUP)
        self.partitions = partitions
        self.idle_poll_ms = idle_poll_ms
        self.producer = self.backend.producer()
        self.sent: list[str] = []
        self.processed: Counter = Counter()
        self.apps: dict[str, App] = {}
        self.failed_commits: list[tuple] = []
        self._incarnations = Incarnations()
        self.events: list[tuple] = []  # (time_ms, who, what) of the plan itself
        self.owned: list[tuple] = []  # (time_ms, name, partitions owned) after each poll
        self.member_names: dict[str, str] = {}  # a consumer group's member id -> instance name
        self._plan: list[tuple] = []  # (time_ms, order, action, args)
        self._send(messages)
        self.t0 = self.backend.now_ms  # plan times and the timeline count from here

    @property
    def now_ms(self) -> float:
        """Time since the run started (the plan's clock)."""
        return self.backend.now_ms - self.t0

    # ---- the plan ------------------------------------------------------------------------------
    def start(
        self,
        name: str,
        at_ms: float = 0,
        handler_ms: float = 50,
        commit_every: int = 1,
        commit_on_revoke: bool = False,
        crash: CrashPlan | None = None,
        restart_after_ms: float | None = None,
        **consumer_config,
    ) -> GroupRun:
        """An instance ``name`` starts at ``at_ms``; ``consumer_config`` are kafka-python settings
        (``max_poll_records``, ``max_poll_interval_ms``, ``group_instance_id``, ...).

        ``crash``: where its process dies, a :mod:`course_lib.application.supervisor` crash plan over the
        points ``process`` (the handler finished a batch, not yet committed), ``commit`` and
        ``poll`` - e.g. ``Countdown("process", 2)``; ``restart_after_ms``: its supervisor starts
        it again (once more, without the plan) that long after the crash."""
        if name in self.apps or any(a[2] == "start" and a[3][0] == name for a in self._plan):
            raise ValueError(f"an instance named {name!r} is already planned; restart() it instead")
        if not isinstance(commit_every, int) or commit_every < 1:
            raise ValueError(f"commit_every must be an int >= 1 (batches per commit), got {commit_every!r}")
        if handler_ms < 0:
            raise ValueError(f"handler_ms must be >= 0, got {handler_ms!r}")
        settings = dict(
            handler_ms=handler_ms,
            commit_every=commit_every,
            commit_on_revoke=commit_on_revoke,
            crash=crash,
            restart_after_ms=restart_after_ms,
            **consumer_config,
        )
        self._at(at_ms, "start", name, settings)
        return self

    def stop(self, name: str, at_ms: float) -> GroupRun:
        """Graceful shutdown: finish the batch in the handler, commit it, ``close()``."""
        self._at(at_ms, "stop", name)
        return self

    def restart(self, name: str, at_ms: float, down_ms: float) -> GroupRun:
        """Stop ``name`` at ``at_ms`` (gracefully) and start it again, same settings, ``down_ms``
        later (a deploy, a restarted pod)."""
        self._at(at_ms, "stop", name, down_ms)
        return self

    def crash(self, name: str, at_ms: float, down_ms: float | None = None) -> GroupRun:
        """``name``'s process dies at ``at_ms``: the batch in its handler is lost, nothing is
        committed, no LeaveGroup (the group waits ``session_timeout_ms`` to notice). With
        ``down_ms`` its supervisor starts it again, same settings, that much later."""
        self._at(at_ms, "crash", name, down_ms)
        return self

    def produce(self, messages: int, at_ms: float) -> GroupRun:
        """``messages`` more records arrive at ``at_ms``."""
        self._at(at_ms, "produce", messages)
        return self

    def _at(self, at_ms, action, *args):
        if at_ms < self.now_ms:
            raise ValueError(f"at_ms={at_ms} is in the past (now {self.now_ms:.0f} ms)")
        self._plan.append((self.t0 + at_ms, len(self._plan), action, args))
        self._plan.sort(key=lambda a: (a[0], a[1]))

    # ---- running -------------------------------------------------------------------------------
    def run(self, until_ms: float) -> GroupRun:
        """Run the plan and the instances until ``until_ms`` after the start."""
        until_ms += self.t0
        while True:
            running = [a for a in self.apps.values() if a.consumer is not None]
            next_app = min(running, key=lambda a: (a.next_ms, a.name), default=None)
            next_plan = self._plan[0][0] if self._plan else float("inf")
            t = min(next_plan, next_app.next_ms if next_app else float("inf"))
            if t > until_ms:
                break
            if t > self.backend.now_ms:
                self.backend.wait(t - self.backend.now_ms)
            if self._plan and next_plan <= t:
                _, _, action, args = self._plan.pop(0)
                getattr(self, "_do_" + action)(*args)
            else:
                assert next_app is not None, "t is an instance's turn here: with none running, it is the plan's"
                try:
                    self._step(next_app)
                except AppCrash as crash:
                    what = str(crash) if str(crash).startswith("crashed") else f"crashed at {crash}"
                    self._crashed(next_app, what, next_app.restart_after_crash_ms)
        if until_ms > self.backend.now_ms:
            self.backend.wait(until_ms - self.backend.now_ms)
        return self

    def _do_start(self, name, settings):
        settings = dict(settings)
        handler_ms, commit_every = settings.pop("handler_ms"), settings.pop("commit_every")
        on_revoke = settings.pop("commit_on_revoke")
        crash, restart_after_crash_ms = settings.pop("crash"), settings.pop("restart_after_ms")
        client_id = self._incarnations.start(name)  # a restarted instance is a new client on the network
        config = {
            "group_id": self.group,
            "client_id": client_id,
            "auto_offset_reset": "earliest",
            "enable_auto_commit": False,
            "session_timeout_ms": 10_000,
            "heartbeat_interval_ms": 3000,
            "max_poll_records": 5,
            **settings,
        }
        if config.get("group_protocol") == "consumer":
            # a consumer group's coordinator sets both (group.consumer.*): the client may not
            del config["session_timeout_ms"], config["heartbeat_interval_ms"]
        consumer = self.backend.consumer(**config)
        if config.get("group_protocol") == "consumer":
            # KIP-1082: the client makes its member id, so the coordinator's trace can be named
            self.member_names[consumer._member_id] = name
        app = App(
            name,
            consumer,
            dict(
                settings,
                handler_ms=handler_ms,
                commit_every=commit_every,
                commit_on_revoke=on_revoke,
                crash=crash,
                restart_after_ms=restart_after_crash_ms,
            ),
            handler_ms,
            commit_every,
            next_ms=self.backend.now_ms,
            run=self,
            crash_plan=crash,
            restart_after_crash_ms=restart_after_crash_ms,
        )
        consumer.subscribe([self.topic], listener=_CommitOnRevoke(app) if on_revoke else None)
        self.apps[name] = app
        self.events.append((self.backend.now_ms, name, "started"))

    def _running(self, name: str, verb: str) -> App:
        app = self.apps.get(name)
        if app is None or app.consumer is None:
            raise ValueError(f"no running instance named {name!r} to {verb} at {self.backend.now_ms:.0f} ms")
        return app

    def _do_stop(self, name, down_ms=None):
        app = self._running(name, "stop")
        app.stop_at_ms = self.backend.now_ms
        app.restart_after_ms = down_ms
        if not app.in_handler:
            self._shutdown(app)

    def _do_crash(self, name, down_ms=None):
        self._crashed(self._running(name, "crash"), "crashed", down_ms)

    def _crashed(self, app: App, what: str, down_ms: float | None) -> None:
        app.crash()
        if app.crash_plan is not None:
            app.crash_plan.disarm()  # the restarted instance runs on
        self.events.append((self.backend.now_ms, app.name, what))
        self._restart_later(app, down_ms)

    def _do_produce(self, messages):
        self._send(messages)
        self.events.append((self.backend.now_ms, "producer", f"{messages} new messages"))

    def _send(self, messages):
        for _ in range(messages):
            i = len(self.sent)
            self.sent.append(f"msg-{i}")
            self.producer.send(self.topic, f"msg-{i}".encode(), partition=i % self.partitions)
        self.producer.flush()

    def _step(self, app: App) -> None:
        now = self.backend.now_ms
        if app.in_handler:  # the handler finished its batch
            for r in app.in_handler:
                self.processed[r.value.decode()] += 1
                app.handled += 1
                app.done[(r.topic, r.partition)] = r.offset + 1
            app.in_handler = []
            app.batches_since_commit += 1
            app.reached("process")
            if app.batches_since_commit >= app.commit_every:
                app.commit()
                app.reached("commit")
            if app.stop_at_ms is not None:
                return self._shutdown(app)
        records = [r for rs in app.consumer.poll(timeout_ms=0).values() for r in rs]
        app.reached("poll")
        self.owned.append((now, app.name, len(app.consumer.assignment())))
        app.in_handler = records
        app.next_ms = now + (len(records) * app.handler_ms if records else self.idle_poll_ms)

    def _shutdown(self, app: App) -> None:
        app.close()
        self.events.append((self.backend.now_ms, app.name, "closed"))
        self._restart_later(app, app.restart_after_ms)

    def _restart_later(self, app: App, down_ms: float | None) -> None:
        if down_ms is not None:
            del self.apps[app.name]
            self._at(self.now_ms + down_ms, "start", app.name, app.settings)

    # ---- results -------------------------------------------------------------------------------
    def duplicates(self) -> int:
        """Messages processed more than once (counting each one once)."""
        return sum(1 for n in self.processed.values() if n > 1)

    def extra_runs(self) -> int:
        """How many times the handler ran on a message it had already processed."""
        return sum(n - 1 for n in self.processed.values() if n > 1)

    def stopped_ms(self, name: str) -> float:
        """How long ``name`` owned no partition between its first assignment and its last poll
        (sampled at its polls): the time a rebalance stopped it."""
        samples = [(t, n) for t, who, n in self.owned if who == name]
        first = next((i for i, (_, n) in enumerate(samples) if n), None)
        if first is None:
            return 0.0
        return 0.0 + sum(t1 - t0 for (t0, n), (t1, _) in zip(samples[first:], samples[first + 1 :]) if n == 0)

    def waited_ms(self, name: str) -> float | None:
        """How long ``name`` owned no partition from its start to its first assignment (sampled at
        its polls); None if it never got one."""
        started = next(t for t, who, what in self.events if who == name and what == "started")
        first = next((t for t, who, n in self.owned if who == name and n), None)
        return None if first is None else first - started

    def consumer_group_trace(self) -> list:
        """What the coordinator of a consumer group (``group_protocol="consumer"``) did: the
        history's ``consumer_group_*`` operations of this run's group, in time order."""
        return [
            op
            for op in self.backend.history
            if op.f.startswith("consumer_group_") and isinstance(op.value, dict) and op.value.get("group") == self.group
        ]

    def member_name(self, member_id: str) -> str:
        """The instance a consumer group's member id belongs to (the id itself if none)."""
        return self.member_names.get(member_id, member_id)

    def never_processed(self) -> list[str]:
        return [m for m in self.sent if not self.processed[m]]

    def rebalances(self, after_ms: float = 0) -> int:
        """Completed rebalances (new generations) after ``after_ms``; the first assignment counts."""
        return sum(1 for op in self.backend.history if op.f == "rebalance" and op.time_ms >= self.t0 + after_ms)

    def generations(self) -> list[tuple[float, int, str]]:
        """``(time_ms, generation, how)`` of each generation of the group, ``how`` one of
        ``"formed"`` (the first members of a group that had none), ``"rebalanced"`` (partitions
        handed out again among members) or ``"emptied"`` (the last member left: Kafka's coordinator
        starts a new, empty generation, which is why the next one is numbered two higher)."""
        found: list[tuple[float, int, str]] = []
        members: set = set()
        generation = 0
        for op in self.backend.history:
            if not isinstance(op.value, dict) or op.value.get("group") not in (None, self.group):
                continue
            if op.f == "rebalance":
                generation, was_empty = op.value["generation"], not members
                members = set(op.value["assignment"])
                how = "emptied" if not members else "formed" if was_empty else "rebalanced"
                found.append((op.time_ms - self.t0, generation, how))
            elif op.f == "static_member_replaced":
                members.add(op.value["member"])  # the same instance under a new member id
            elif op.f == "member_removed" and op.value["member"] in members:
                members.discard(op.value["member"])
                if not members:
                    generation += 1
                    found.append((op.time_ms - self.t0, generation, "emptied"))
        return found

    def assignment(self) -> dict:
        """Partitions of each running instance, ``{name: [partition, ...]}``."""
        return {
            name: sorted(tp.partition for tp in app.consumer.assignment())
            for name, app in sorted(self.apps.items())
            if app.consumer is not None
        }

    def summary(self) -> str:
        return (
            f"{len(self.processed)} of {len(self.sent)} messages processed; processed more than once: "
            f"{self.duplicates()} ({self.extra_runs()} extra runs); never processed: {len(self.never_processed())}; "
            f"{self._group_count()}; failed commits: {len(self.failed_commits)}"
        )

    def _group_count(self) -> str:
        """'group formed 1, rebalanced 1 time': forming the group is not a rebalance (the
        summary once said "rebalances: 2" for one rebalance, counting the first assignment). A
        consumer group has no generations: its group epoch and the target assignments it computed."""
        trace = self.consumer_group_trace()
        if trace:
            epochs = [op.value["epoch"] for op in trace if op.f == "consumer_group_group_epoch"]
            targets = sum(1 for op in trace if op.f == "consumer_group_target_assignment")
            return f"consumer group at epoch {max(epochs)}, {targets} target assignment{'' if targets == 1 else 's'}"
        hows = Counter(how for _, _, how in self.generations())
        rebalanced = hows["rebalanced"]
        return f"group formed {hows['formed']}, rebalanced {rebalanced} time{'' if rebalanced == 1 else 's'}"

    def timeline(self) -> str:
        """What happened to the group, in time order: starts and stops, rebalances (who got
        which partitions), members thrown out, failed commits; for a consumer group its epochs,
        target assignments and each member's reconciliations instead of rebalances."""
        rows = [(t, who, what) for t, who, what in self.events]
        # the generation an emptied group moves to has no rebalance of its own: say where it went
        emptied = {round(t + self.t0, 6): g for t, g, how in self.generations() if how == "emptied"}
        rows += [(t, who, f"commit failed: {what}") for t, who, what in self.failed_commits]
        for op in self.backend.history:
            if op.f not in GROUP_EVENTS:
                continue
            v = op.value if op.f != OpName.LEFT_GROUP else op.evidence
            assert v is not None, "each group event carries its details (a member that left: in its evidence)"
            if op.f == "rebalance":
                parts = ", ".join(f"{m.rsplit('-', 1)[0]}={[p for _, p in tps]}" for m, tps in v["assignment"].items())
                rows.append((op.time_ms, "group", f"generation {v['generation']}: {parts or 'no members'}"))
            elif op.f == OpName.LEFT_GROUP:
                rows.append((op.time_ms, op.process, f"left the group: {v['reason']}"))
            elif op.f == "member_removed":
                empty = emptied.pop(round(op.time_ms, 6), None)
                then = f"; no members left: generation {empty}, empty" if empty is not None else ""
                rows.append((op.time_ms, "group", f"removed {v['member'].rsplit('-', 1)[0]}: {v['reason']}{then}"))
            elif op.f == "static_member_replaced":
                rows.append(
                    (op.time_ms, "group", f"static member {v['instance']} came back: same partitions, no rebalance")
                )
            else:
                rows.append(
                    (
                        op.time_ms,
                        "group",
                        f"committed offsets expired (group empty for {v['empty_for_ms'] / 1000:.0f} s)",
                    )
                )
        rows += self._consumer_group_rows()
        return "\n".join(
            f"{(t - self.t0) / 1000:6.2f} s  {who:<8} {what}" for t, who, what in sorted(rows, key=lambda r: r[0])
        )

    def _consumer_group_rows(self) -> list[tuple]:
        """A consumer group's side of :meth:`timeline` (none for a classic group): the group epoch
        and why it grew, each target assignment the coordinator computed, and the partitions each
        member owns after each reconciliation."""
        rows: list[tuple] = []
        cause = ""
        for op in self.consumer_group_trace():
            v = op.value
            if op.f == "consumer_group_member_joined":
                cause = f"{self.member_name(v['member'])} joined"
            elif op.f == "consumer_group_member_removed":
                cause = f"removed {self.member_name(v['member'])}: {v['reason']}"
            elif op.f == "consumer_group_group_epoch":
                rows.append((op.time_ms, "group", f"group epoch {v['epoch']}: {cause or v['reason']}"))
                cause = ""
            elif op.f == "consumer_group_target_assignment":
                parts = ", ".join(
                    f"{self.member_name(m)}={tps.get(self.topic, [])}" for m, tps in sorted(v["assignment"].items())
                )
                rows.append((op.time_ms, "group", f"target assignment of epoch {v['epoch']}: {parts or 'no members'}"))
        owned: dict[str, set] = {}
        for op in self.backend.history:
            evidence = op.evidence if isinstance(op.evidence, dict) else {}
            member = evidence.get("member_id")
            if member is None:  # not a member's operation
                continue
            if op.f == OpName.LEFT_GROUP:
                owned.pop(member, None)  # its partitions are lost, not revoked
            if op.f != OpName.ASSIGNED or member not in self.member_names:
                continue
            now, before = {p for _, p in op.value}, owned.get(member, set())
            owned[member] = now
            moves = [f"{verb} {sorted(ps)}" for verb, ps in (("gave up", before - now), ("got", now - before)) if ps]
            rows.append(
                (
                    op.time_ms,
                    self.member_names[member],
                    f"owns {sorted(now)}: {', '.join(moves) or 'no change'} (member epoch {evidence['generation']})",
                )
            )
        return rows


# ---- the same experiment on any backend ---------------------------------------------------------
SLOW_HANDLER_CONFIG = dict(
    enable_auto_commit=False,
    auto_offset_reset="earliest",
    session_timeout_ms=6000,
    heartbeat_interval_ms=1000,
    max_poll_interval_ms=3000,
)


def slow_handler_outcome(backend: Backend) -> dict:
    """Two members share a 2-partition topic; one stays in its handler for 6 s (twice its
    ``max_poll_interval_ms``) while the other keeps polling. Written once against
    :class:`~course_lib.backend.Backend`: its clock bounds the waits and its ``poll_together``
    polls members as separate application processes would (on real Kafka at the same time:
    kafka-python collects a join only inside ``poll()``, :mod:`course_lib.client_adapters.joining`).

    Returns what the application observes: the late commit's error, how many partitions the
    other member owns meanwhile, and how many the slow one has after polling again."""
    b = backend

    def clock() -> float:
        return b.now_ms / 1000

    def keep_polling(seconds: float, consumers) -> None:
        end = clock() + seconds
        while clock() < end:
            b.poll_together(consumers, 200)

    topic = b.create_topic("slow-handler", partitions=2, min_insync_replicas=2)
    producer = b.producer()
    for i in range(10):
        producer.send(topic, f"m-{i}".encode(), partition=i % 2)
    producer.flush()
    producer.close()
    config = dict(SLOW_HANDLER_CONFIG, group_id=b.group_id("slow-handler"))
    slow = b.consumer(client_id="slow", **config)
    other = b.consumer(client_id="other", **config)
    for consumer in (slow, other):
        consumer.subscribe([topic])
        # the partitions known before the first join: kafka-python 3.0.12 can wedge a leader that
        # learns them only after (course_lib.client_adapters.joining)
        consumer.topics()
    try:
        got = 0
        deadline = clock() + 60
        while (len(slow.assignment()) != 1 or len(other.assignment()) != 1 or not got) and clock() < deadline:
            got += sum(len(rs) for rs in b.poll_together([slow, other], 200)[0].values())
        if len(slow.assignment()) != 1 or not got:
            raise RuntimeError(
                f"the group never settled with two members in 60 s on {b.describe()}: the slow member "
                f"holds {sorted(slow.assignment())}, the other {sorted(other.assignment())}, {got} records read"
            )
        keep_polling(6, [other])  # the slow member is in its handler
        outcome: dict[str, Any] = {"commit_error": None}
        try:
            slow.commit()
        except Errors.KafkaError as exc:
            outcome["commit_error"] = type(exc).__name__
        keep_polling(3, [other])
        outcome["other_owns"] = len(other.assignment())
        deadline = clock() + 60
        while len(slow.assignment()) != 1 and clock() < deadline:
            b.poll_together([slow, other], 200)
        outcome["slow_rejoined_with"] = len(slow.assignment())
        return outcome
    finally:
        slow.close()
        other.close()
        b.close_clients()


def slow_handler(target=None, seed: int = 1) -> dict:
    """:func:`slow_handler_outcome` on ``target``: None for the simulator (seeded), else a
    ``LocalCluster``, a ``connect()`` handle or a backend (:func:`course_lib.backend.open_backend`)."""
    return slow_handler_outcome(open_backend(target, seed, group_initial_rebalance_delay_ms=0))


def simulated_slow_handler(seed: int = 1) -> dict:
    """:func:`slow_handler_outcome` on the simulator."""
    return slow_handler(None, seed)


# ---- classic and consumer groups side by side (KIP-848) ----------------------------------------
class _Protocol(TypedDict, total=False):
    """The consumer setting that picks the group protocol (absent: the classic protocol)."""

    group_protocol: str


def protocols_side_by_side(seed: int = 1, **cluster_options) -> dict:
    """Lesson 05b's slow handler on a classic group (kafka-python's eager protocol) and on a
    consumer group (``group_protocol="consumer"``, as the Java client 4.3.1 with
    ``group.protocol=consumer``): ``fast`` spends 20 ms per record, ``slow`` 800 ms, both take
    10 records per poll with ``max_poll_interval_ms=5000``. ``{"classic": run, "consumer": run}``;
    ``cluster_options`` are :class:`~course_lib.broker.options.ClusterOptions` for both clusters.

    >>> runs = protocols_side_by_side()
    >>> sorted(runs), runs["consumer"].stopped_ms("fast")
    (['classic', 'consumer'], 0.0)
    >>> print(runs["consumer"].summary())  # Kafka's 1 s assignment interval: slow gets partition 1 too late
    40 of 40 messages processed; processed more than once: 0 (0 extra runs); never processed: 0; consumer group at epoch 3, 2 target assignments; failed commits: 0
    """
    runs = {}
    for protocol in ("classic", "consumer"):
        run = GroupRun(seed=seed, messages=40, **cluster_options)
        extra: _Protocol = {} if protocol == "classic" else {"group_protocol": "consumer"}
        for name, handler_ms in (("fast", 20), ("slow", 800)):
            run.start(name, handler_ms=handler_ms, max_poll_records=10, max_poll_interval_ms=5000, **extra)
        runs[protocol] = run.run(60_000)
    return runs
