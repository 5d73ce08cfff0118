"""What lesson 05b says about its consumer-group runs, written from the runs themselves (a
:class:`~course_lib.application.consumer_groups.GroupRun` after ``run()``), for
``prediction.reveal(actual, explanation=...)``.

>>> from course_lib.application.consumer_groups import GroupRun
>>> run = GroupRun(seed=1, messages=40)
>>> _ = run.start("a", handler_ms=100, commit_every=4).start("b", at_ms=5000, handler_ms=100, commit_every=4)
>>> print(rebalance_replays(run.run(30_000)))  # doctest: +NORMALIZE_WHITESPACE
**Measured:** 10 messages are processed twice. At 6.20 s generation 2 gives partition 1 to `b`,
which starts at the group's committed offset for it - but `a` had processed those 10 records
since its last commit. Nothing crashed; a rebalance is enough. (kafka-python uses the *eager*
protocol: every member gives up every partition, then gets its new share; a partition it keeps
also restarts from the committed offset.)

Used in notebooks/05b_consumer_groups.
"""

from __future__ import annotations

import re


def _s(ms: float) -> str:
    return f"{ms / 1000:.2f} s"


def _messages(n: int, verb: str = "are") -> str:
    if n == 0:
        return "no message is" if verb == "are" else "no message"
    return f"{n} message{'' if n == 1 else 's'}" + (f" {verb if n != 1 else 'is'}" if verb else "")


def _rebalances(run) -> list[tuple[float, int, str]]:
    return [g for g in run.generations() if g[2] == "rebalanced"]


def rebalance_replays(run) -> str:
    """A second instance joins; the moved partition restarts at the committed offset."""
    dups = run.duplicates()
    first = _rebalances(run)[0] if _rebalances(run) else None
    when = (
        f"At {_s(first[0])} generation {first[1]} gives a partition to `b`"
        if first
        else "The rebalance gives a partition to `b`"
    )
    return (
        f"**Measured:** {_messages(dups)} processed twice. {when.replace('a partition', 'partition 1')},\n"
        f"which starts at the group's committed offset for it - but `a` had processed those {dups} records\n"
        "since its last commit. Nothing crashed; a rebalance is enough. (kafka-python uses the *eager*\n"
        "protocol: every member gives up every partition, then gets its new share; a partition it keeps\n"
        "also restarts from the committed offset.)"
    )


REVOKE_COMMIT = re.compile(r"committed p(\d+)@(\d+) \(on_partitions_revoked\)")


def commit_on_revoke(run) -> str:
    """The same run with ``commit_on_revoke=True``.

    >>> from course_lib.application.consumer_groups import GroupRun
    >>> run = GroupRun(seed=1, messages=40)
    >>> for name, at in (("a", 0), ("b", 5000)):
    ...     _ = run.start(name, at_ms=at, handler_ms=100, commit_every=4, commit_on_revoke=True)
    >>> print(commit_on_revoke(run.run(30_000)))  # doctest: +NORMALIZE_WHITESPACE
    **Measured:** no message is processed twice. At 6.20 s, in `on_partitions_revoked`, `a` commits
    offset 10 of partition 1 (the next record to read: it had processed 10), and `b` starts
    partition 1 at offset 10. The listener only helps a member that is still *in* the group,
    though. The next experiment is about one that is not.
    """
    commits = [(t, m) for t, who, what in run.events if (m := REVOKE_COMMIT.search(what))]
    said = f"**Measured:** {_messages(run.duplicates())} processed twice."
    if commits:
        t, m = commits[0]
        partition, offset = m.groups()
        said += (
            f" At {_s(t - run.t0)}, in `on_partitions_revoked`, `a` commits\n"
            f"offset {offset} of partition {partition} (the next record to read: it had processed {offset}), "
            f"and `b` starts\npartition {partition} at offset {offset}."
        )
    return said + (
        " The listener only helps a member that is still *in* the group,\n"
        "though. The next experiment is about one that is not."
    )


THROWN_OUT = "left the group: no poll()"


def slow_fate(run, name: str = "slow") -> str:
    """What happened to the slow member: "keeps its partition", "thrown out once", "thrown out again and again".

    >>> from course_lib.application.consumer_groups import GroupRun
    >>> run = GroupRun(seed=1, messages=40)
    >>> for name, ms in (("fast", 20), ("slow", 800)):
    ...     _ = run.start(name, handler_ms=ms, max_poll_records=10, max_poll_interval_ms=5000)
    >>> slow_fate(run.run(60_000))
    'thrown out again and again'
    """
    times = len(_thrown_out(run, name))
    return "keeps its partition" if times == 0 else "thrown out once" if times == 1 else "thrown out again and again"


def _thrown_out(run, name: str) -> list[float]:
    return [t for t, line in _timeline(run) if line.startswith(name) and THROWN_OUT in line]


def _timeline(run) -> list[tuple[float, str]]:
    """(seconds, 'who what') of each timeline row."""
    rows = []
    for row in run.timeline().splitlines():
        seconds, rest = row.strip().split(" s ", 1)
        rows.append((float(seconds), " ".join(rest.split())))
    return rows


def slow_handler(run, name: str = "slow") -> str:
    """Two members, one of them slower than ``max_poll_interval_ms`` per batch.

    >>> from course_lib.application.consumer_groups import GroupRun
    >>> run = GroupRun(seed=1, messages=40)
    >>> for name, ms in (("fast", 20), ("slow", 800)):
    ...     _ = run.start(name, handler_ms=ms, max_poll_records=10, max_poll_interval_ms=5000)
    >>> print(slow_handler(run.run(60_000)))  # doctest: +NORMALIZE_WHITESPACE
    **Measured:** 10 messages are processed more than once, 20 extra runs of the handler in all, and
    2 commits fail. `slow` is thrown out of the group at 9.10 s and 18.20 s (each time about 5.9 s
    after its last `poll()`); its commits fail with `CommitFailedError` at 11.20 s and 20.30 s.
    Each time its next `poll()` rejoins - and gets its partition back *at the committed offset*: the
    same records, the same time in the handler, thrown out again. Meanwhile the other member owns
    both partitions for a while and processes the slow one's partition too. A consumer stuck in
    this loop never makes progress and duplicates every batch it touches.
    """
    out = _thrown_out(run, name)
    gaps = sorted({m.group(1) for _, line in _timeline(run) if (m := re.search(r"no poll\(\) for ([\d.]+) ms", line))})
    failed = [t - run.t0 for t, who, _ in run.failed_commits if who == name]
    when = " and ".join(f"{t:.2f} s" for t in out)
    about = f" (each time about {float(gaps[0]) / 1000:.1f} s\nafter its last `poll()`)" if gaps else ""
    commits = " and ".join(_s(t) for t in failed)
    return (
        f"**Measured:** {_messages(run.duplicates())} processed more than once, {run.extra_runs()} extra runs of "
        f"the handler in all, and\n{len(run.failed_commits)} commits fail. `{name}` is thrown out of the group at "
        f"{when}{about}; its commits fail with `CommitFailedError` at {commits}.\n"
        "Each time its next `poll()` rejoins - and gets its partition back *at the committed offset*: the\n"
        "same records, the same time in the handler, thrown out again. Meanwhile the other member owns\n"
        "both partitions for a while and processes the slow one's partition too. A consumer stuck in\n"
        "this loop never makes progress and duplicates every batch it touches."
    )


def smaller_batches(run) -> str:
    """The same members with fewer records per poll.

    >>> from course_lib.application.consumer_groups import GroupRun
    >>> run = GroupRun(seed=1, messages=40)
    >>> for name, ms in (("fast", 20), ("slow", 800)):
    ...     _ = run.start(name, handler_ms=ms, max_poll_records=4, max_poll_interval_ms=5000)
    >>> print(smaller_batches(run.run(60_000)))  # doctest: +NORMALIZE_WHITESPACE
    **Measured:** 0 processed more than once, 0 failed commits, and the group formed once and never
    rebalanced (generation 1 at 3.10 s). Same work, same handler: only the batch size changed.
    """
    gens = run.generations()
    formed = [g for g in gens if g[2] == "formed"]
    rebalanced = len(_rebalances(run))
    shape = (
        f"the group formed once and never\nrebalanced (generation {formed[0][1]} at {_s(formed[0][0])})"
        if len(formed) == 1 and not rebalanced
        else f"the group rebalanced {rebalanced} times"
    )
    return (
        f"**Measured:** {run.duplicates()} processed more than once, {len(run.failed_commits)} failed commits, and "
        f"{shape}. Same work, same handler: only the batch size changed."
    )


def static_membership(runs: dict) -> str:
    """A restart of `a`, ``runs[False]`` dynamic and ``runs[True]`` static (``group_instance_id``).

    >>> from course_lib.application.consumer_groups import GroupRun
    >>> runs = {}
    >>> for static in (False, True):
    ...     run = GroupRun(seed=1, messages=40)
    ...     for name in ("a", "b"):
    ...         _ = run.start(name, handler_ms=500, **({"group_instance_id": name} if static else {}))
    ...     runs[static] = run.restart("a", at_ms=6000, down_ms=3000).run(30_000)
    >>> print(static_membership(runs))  # doctest: +NORMALIZE_WHITESPACE
    **Measured:** without static membership the restart causes 2 rebalances (generation 2 at
    10.71 s, generation 3 at 15.81 s), and the whole group stops each time. In the timeline `a#2`
    is the restarted `a`: a new member, unknown to the group. With `group_instance_id` it causes 0:
    at 11.21 s the static member comes back and gets its partitions again, with no new generation.
    The price: while `a` is down, *nobody* processes its partition - and if it never comes back,
    the group notices only after `session_timeout_ms`. Static membership trades rebalances for that delay.
    """
    dynamic, static = runs[False], runs[True]
    after = [g for g in dynamic.generations() if g[0] >= 5000]
    gens = ", ".join(f"generation {g} at {_s(t)}" for t, g, _ in after)
    back = [t for t, line in _timeline(static) if "came back" in line]
    came = f"at {back[0]:.2f} s the static member comes back and gets its partitions again, with no new generation"
    return (
        f"**Measured:** without static membership the restart causes {dynamic.rebalances(after_ms=5000)} rebalances "
        f"({gens}), and the whole group stops each time. In the timeline `a#2`\n"
        "is the restarted `a`: a new member, unknown to the group. "
        f"With `group_instance_id` it causes {static.rebalances(after_ms=5000)}:\n"
        f"{came if back else 'the static member comes back'}.\n"
        "The price: while `a` is down, *nobody* processes its partition - and if it never comes back,\n"
        "the group notices only after `session_timeout_ms`. Static membership trades rebalances for that delay."
    )


def latest_reset(run) -> str:
    """A new group with ``auto_offset_reset="latest"`` on a topic that already has messages.

    >>> from course_lib.application.consumer_groups import GroupRun
    >>> run = GroupRun(seed=1, messages=40)
    >>> _ = run.start("a", auto_offset_reset="latest").produce(10, at_ms=8000)
    >>> print(latest_reset(run.run(20_000)))  # doctest: +NORMALIZE_WHITESPACE
    **Measured:** 40 messages are never processed (`msg-0` ... `msg-39`): every message written
    before the group first joined; the 10 later ones are. No error, no warning - the application
    looks healthy. `auto_offset_reset="earliest"` reads them; it is the right choice for a new
    application that must see the topic's history.
    """
    never = run.never_processed()
    later = len(run.sent) - len(never)
    names = f" (`{never[0]}` ... `{never[-1]}`)" if len(never) > 1 else ""
    return (
        f"**Measured:** {_messages(len(never))} never processed{names}: every message written\n"
        f"before the group first joined; the {later} later ones are. No error, no warning - the application\n"
        'looks healthy. `auto_offset_reset="earliest"` reads them; it is the right choice for a new\n'
        "application that must see the topic's history."
    )


def expired_offsets_answer(run, arrived: int) -> str:
    """Which messages ``auto_offset_reset="latest"`` loses after the offsets expired (a choice).

    >>> class Run:
    ...     def never_processed(self): return [f"msg-{i}" for i in range(40, 50)]
    ...     sent = [f"msg-{i}" for i in range(50)]
    >>> expired_offsets_answer(Run(), arrived=10)
    'the ones that arrived while it was away'
    """
    never = len(run.never_processed())
    if never == 0:
        return "none"
    return "the ones that arrived while it was away" if never == arrived else "all of them"


def expired_offsets(runs: dict) -> str:
    """``runs["latest"]`` and ``runs["earliest"]``: the group comes back after its offsets expired.

    >>> from course_lib.application.consumer_groups import GroupRun
    >>> runs = {}
    >>> for reset in ("latest", "earliest"):
    ...     run = GroupRun(seed=1, messages=40, offsets_retention_minutes=1)
    ...     _ = run.start("a").stop("a", at_ms=10_000).produce(10, at_ms=30_000)
    ...     runs[reset] = run.start("a2", at_ms=90_000, auto_offset_reset=reset).run(110_000)
    >>> print(expired_offsets(runs))  # doctest: +NORMALIZE_WHITESPACE
    **Measured:** at 90.00 s the coordinator finds the group empty for 80 s and drops its offsets.
    With `"latest"` 10 messages that arrived while the application was away are never processed;
    with `"earliest"` 40 messages are processed a second time. Either way the committed offset - the
    one thing at-least-once relies on - is gone. Keep `offsets.retention.minutes` longer than any
    pause a group can have (a weekend, a holiday freeze), or store offsets with the output (lesson 07).
    """
    expired = [(t, line) for t, line in _timeline(runs["latest"]) if "committed offsets expired" in line]
    found = re.search(r"empty for (\d+) s", expired[0][1]) if expired else None
    empty = found.group(1) if found else "?"
    when = f"at {expired[0][0]:.2f} s the coordinator finds the group empty for {empty} s and drops its offsets"
    return (
        f"**Measured:** {when if expired else 'the offsets did not expire'}.\n"
        f'With `"latest"` {_messages(len(runs["latest"].never_processed()), "")} '
        "that arrived while the application was away are never processed;\n"
        f'with `"earliest"` {_messages(runs["earliest"].duplicates())} processed a second time. '
        "Either way the committed offset - the\none thing at-least-once relies on - is gone. "
        "Keep `offsets.retention.minutes` longer than any\npause a group can have (a weekend, a holiday "
        "freeze), or store offsets with the output (lesson 07)."
    )


def _names_list(values) -> str:
    values = [f"`{v}`" for v in values]
    if not values:
        return "nothing"
    return values[0] if len(values) == 1 else ", ".join(values[:-1]) + " and " + values[-1]


def real_kafka(slow: dict, restarts: dict, deleted: dict) -> str:
    """The optional real-cluster part: ``slow`` from ``slow_handler(kafka)``, ``restarts[static]``
    from ``groups.restart_rebalances``, ``deleted`` from ``groups.deleted_before_read``. Real timing
    varies, so this is this machine's run, made into text only once it has run.

    >>> slow = {"commit_error": "CommitFailedError", "other_owns": 2, "slow_rejoined_with": 1}
    >>> restarts = {False: {"generation_before": 1, "generation_after": 3, "same_partition": True},
    ...             True: {"generation_before": 2, "generation_after": 2, "same_partition": True}}
    >>> deleted = {"committed_before": 4, "read_after": ["msg-8", "msg-9"],
    ...            "never_processed": ["msg-4", "msg-5", "msg-6", "msg-7"]}
    >>> print(real_kafka(slow, restarts, deleted))  # doctest: +NORMALIZE_WHITESPACE
    **Measured on this machine:** the slow member's commit raises `CommitFailedError`, the other
    member owns 2 partitions meanwhile, and the slow one rejoins with 1. A dynamic restart moves the
    group from generation 1 to 3 (2 rebalances); a static one from 2 to 2 (0 rebalances), with the
    same partition. After the deletion the group reads `msg-8` and `msg-9`: `msg-4`, `msg-5`,
    `msg-6` and `msg-7` were never processed, and no error reached the application.
    """
    error = f"raises `{slow['commit_error']}`" if slow["commit_error"] else "succeeds"
    moves = []
    for static in (False, True):
        r = restarts[static]
        gens = r["generation_after"] - r["generation_before"]
        moves.append((r["generation_before"], r["generation_after"], gens, r["same_partition"]))
    (d0, d1, dn, _), (s0, s1, sn, same) = moves
    return (
        f"**Measured on this machine:** the slow member's commit {error}, the other\nmember owns "
        f"{slow['other_owns']} partition{'s' if slow['other_owns'] != 1 else ''} meanwhile, and the slow one "
        f"rejoins with {slow['slow_rejoined_with']}. A dynamic restart moves the\ngroup from generation {d0} to {d1} "
        f"({dn} rebalances); a static one from {s0} to {s1} ({sn} rebalances), {'with' if same else 'without'} the\n"
        f"same partition. After the deletion the group reads {_names_list(deleted['read_after'])}: "
        f"{_names_list(deleted['never_processed'])} were never processed, and no error reached the application."
    )


def _times(n: int) -> str:
    return "once" if n == 1 else f"{n} times"


def _ms(ms: float) -> str:
    """A short gap in the unit that reads best: '0.15 ms', '5.00 s'."""
    return f"{ms:.2f} ms" if ms < 1000 else _s(ms)


def _consumer_group_story(run) -> dict:
    """The steps of a consumer group's run that lesson 05b tells: who got every partition first,
    when the other joined, when the coordinator computed the target that gives it its share, when
    the first member gave those partitions up and when the other got them (times in ms of the run)."""
    trace = run.consumer_group_trace()
    targets = [op for op in trace if op.f == "consumer_group_target_assignment"]
    joins = [op for op in trace if op.f == "consumer_group_member_joined"]
    first_target = targets[0].value["assignment"] if targets else {}
    if len(first_target) != 1 or len(joins) < 2:
        return {}  # no "one member first, the other later" in this run
    first = next(iter(first_target))
    second = next(op.value["member"] for op in joins if op.value["member"] != first)
    joined = next(op.time_ms for op in joins if op.value["member"] == second)
    shared = next((op for op in targets if op.value["assignment"].get(second)), None)
    if shared is None:
        return {}
    moved = sorted(shared.value["assignment"][second][run.topic])
    assigned = [
        (op.time_ms, op.evidence["member_id"], {p for _, p in op.value})
        for op in run.backend.history
        if op.f == "assigned" and isinstance(op.evidence, dict) and op.time_ms >= shared.time_ms
    ]
    gave_up = next((t for t, m, owns in assigned if m == first and not owns & set(moved)), None)
    got = next((t for t, m, owns in assigned if m == second and owns), None)
    return {
        "first": run.member_name(first),
        "second": run.member_name(second),
        "first_joined": joins[0].time_ms,
        "joined": joined,
        "epoch": shared.value["epoch"],
        "computed": shared.time_ms,
        "moved": moved,
        "gave_up": gave_up,
        "got": got,
    }


#: the consumer-protocol question's choices (lesson 05b, "who waits")
WHO_WAITS = (
    "both stop, as on the classic group",
    "fast keeps processing; slow waits for its partition",
    "nobody waits",
)


def _slow_waited_ms(consumer) -> float | None:
    """How long the member a partition moved to owned nothing (from the start), or None."""
    story = _consumer_group_story(consumer)
    if story and story.get("got") is not None:
        return story["got"] - consumer.t0
    return None


def who_waits_answer(runs) -> str:
    """Lesson 05b's consumer-group question, answered from the run: does `fast` stop while
    `slow` joins, and does `slow` wait for a partition?

    >>> from course_lib.application.consumer_groups import protocols_side_by_side
    >>> who_waits_answer(protocols_side_by_side())
    'fast keeps processing; slow waits for its partition'
    """
    consumer = runs["consumer"]
    fast_stopped, slow_waited = consumer.stopped_ms("fast") > 0, bool(_slow_waited_ms(consumer))
    if fast_stopped:
        return WHO_WAITS[0]
    return WHO_WAITS[1] if slow_waited else WHO_WAITS[2]


def consumer_protocol(runs) -> str:
    """The slow handler on a classic and on a consumer group, side by side: who stops, for how
    long, and why (the assignment interval, revocation before assignment). The point first.

    >>> from course_lib.application.consumer_groups import protocols_side_by_side
    >>> print(consumer_protocol(protocols_side_by_side()))  # doctest: +NORMALIZE_WHITESPACE
    **Measured:** a consumer group does not stop for a rebalance. `fast` processed on without a
    pause (0.00 s without a partition); the member a partition moves to waits instead: `slow` owned
    nothing for 10.12 s.
    <BLANKLINE>
    On the classic group `fast` owns no partition for 0.30 s in all, across 3
    rebalances: each time `slow` leaves or comes back, every member gives up everything and waits
    for the new assignment; `slow` is thrown out 2 times and 10 messages are processed twice.
    On the consumer group `fast` never stops (0.00 s). It joined first and got both partitions at
    once (a consumer group has no initial rebalance delay). `slow` joined 0.15 ms later, but the
    coordinator computes a target assignment at most once per `group.consumer.assignment.interval.ms`
    (1.00 s) and only in a heartbeat: the target of epoch 3 came with the next heartbeat, at 5.11 s.
    Then incremental reconciliation revokes before it assigns: `fast` gave up partition 1 at 5.12 s,
    and `slow` got it only with its own next heartbeat, at 10.12 s. So `slow` owned nothing for
    10.12 s. `fast` processed all 40 messages before `slow` had a record to read, so `slow`'s
    handler never ran: it is never thrown out, and no message is processed twice.
    The wait: 2.0 heartbeat intervals (5.00 s each) is the consumer group's price; and a
    handler slower than `max_poll_interval_ms` is still thrown out once it has records to process.
    """
    classic, consumer = runs["classic"], runs["consumer"]
    rebalances = len(_rebalances(classic))
    options = consumer.backend.cluster.cluster.options
    stopped = consumer.stopped_ms("fast")
    slow_waited = _slow_waited_ms(consumer)
    point = (
        f"**Measured:** a consumer group does not stop for a rebalance. `fast` processed on without a pause "
        f"({_s(consumer.stopped_ms('fast'))} without a partition); the member a partition moves to waits instead: "
        f"`slow` owned nothing for {_s(slow_waited or 0)}.\n\n"
    )
    text = point + (
        f"On the classic group `fast` owns no partition for {_s(classic.stopped_ms('fast'))} in all, "
        f"across {rebalances}\nrebalance{'' if rebalances == 1 else 's'}: each time `slow` leaves or comes back, "
        "every member gives up everything and waits\nfor the new assignment; "
        f"`slow` is thrown out {_times(len(_thrown_out(classic, 'slow')))} and "
        f"{_messages(classic.duplicates())} processed twice.\n"
    )
    story = _consumer_group_story(consumer)
    late = story.get("second") == "fast"  # then fast waited for its first partition (told below)
    never = "never stops once it owns a partition" if late else "never stops"
    text += f"On the consumer group `fast` {never if stopped == 0 else 'stops too'} ({_s(stopped)}). "
    waited = None
    if story:
        first, second, moved = story["first"], story["second"], story["moved"]
        what = f"partition{'s' if len(moved) > 1 else ''} {_names_list([str(p) for p in moved]).replace('`', '')}"
        came = f"with `{second}`'s join itself" if story["computed"] == story["joined"] else "with the next heartbeat"
        text += "It" if first == "fast" else f"`{first}`"
        text += (
            " joined first and got both partitions at\nonce (a consumer group has no initial rebalance delay). "
            f"`{second}` joined {_ms(story['joined'] - story['first_joined'])} later, but the\ncoordinator computes "
            "a target assignment at most once per `group.consumer.assignment.interval.ms`\n"
            f"({_s(options.group_consumer_assignment_interval_ms)}) and only in a heartbeat: the target of epoch "
            f"{story['epoch']} came {came}, at {_s(story['computed'] - consumer.t0)}.\n"
            "Then incremental reconciliation revokes before it assigns: "
        )
        if story["gave_up"] is not None and story["got"] is not None:
            waited = story["got"] - consumer.t0  # both instances start at 0
            text += (
                f"`{first}` gave up {what} at {_s(story['gave_up'] - consumer.t0)},\nand `{second}` got "
                f"{'them' if len(moved) > 1 else 'it'} only with its own next heartbeat, at {_s(waited)}. "
                f"So `{second}` owned nothing for\n{_s(waited)}. "
            )
        else:
            text += f"`{first}` must give up {what} before `{second}` gets {'them' if len(moved) > 1 else 'it'}. "
    times = len(_thrown_out(consumer, "slow"))
    thrown = f"thrown out {_times(times)}" if times else "never thrown out"
    twice = f"{_messages(consumer.duplicates())} processed twice"
    if consumer.apps["slow"].handled == 0:
        text += (
            f"`fast` processed all {len(consumer.sent)} messages before `slow` had a record to read, so `slow`'s\n"
            f"handler never ran: it is {thrown}, and {twice}.\n"
        )
    else:
        text += f"`slow` is {thrown}, and {twice}.\n"
    hb = options.group_consumer_heartbeat_interval_ms
    here = f", here {waited / hb:.1f} heartbeat intervals ({_s(hb)} each)" if waited is not None else ""
    return text + (
        f"The wait{here.replace(', here', ':')} is the consumer group's price; and a\nhandler slower than "
        "`max_poll_interval_ms` is still thrown out once it has records to process."
    )
