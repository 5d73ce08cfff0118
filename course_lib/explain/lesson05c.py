"""What lesson 05c says about its share-group runs, written from the runs themselves (a
:class:`~course_lib.judge.result.Result` of a share scenario), for
``prediction.reveal(actual, explanation=...)``.

>>> from course_lib.experiments.share_scenarios import run_share_scenario
>>> r = run_share_scenario("poison_message", seed=1)
>>> print(poison(r))  # doctest: +NORMALIZE_WHITESPACE
**Measured:** `job-3` is delivered 5 times (delivery counts 1, 2, 3, 4 and 5), each time
released by the handler that failed on it; then the broker archives it (released at the delivery
count limit). The other 9 records are processed once each. No error reaches the application: the
record is given up on purpose, and only the broker's state says so - unless the group has a
dead-letter topic (Kafka 4.4, next section).

Used in notebooks/05c_share_groups.
"""

from __future__ import annotations

from course_lib.experiments.share_waits import crash_wait_answer, real_crash_answer
from course_lib.clusters.jars import kafka_version as lab_kafka_version


def on_kafka(kafka_version: str | None = None) -> str:
    """The real cluster's name in the lesson's words: ``Kafka <release>``, the lab's release
    (``$COURSE_KAFKA_VERSION``, else the course's default) unless told.

    >>> on_kafka("4.3.1"), on_kafka() == f"Kafka {lab_kafka_version()}"
    ('Kafka 4.3.1', True)
    """
    return f"Kafka {kafka_version or lab_kafka_version()}"


def real_question(kafka_version: str | None = None) -> str:
    """The real-Kafka part's prediction question, naming the release the lab's cluster runs.

    >>> print(real_question("4.4.0"))
    Kafka 4.4.0: the crashed worker's process is killed. When does the other worker get its records?
    """
    return f"{on_kafka(kafka_version)}: the crashed worker's process is killed. When does the other worker get its records?"


def _and(items) -> str:
    items = [str(i) for i in items]
    if not items:
        return "nothing"
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _records(n: int) -> str:
    return f"{n} record{'' if n == 1 else 's'}"


def _value(v) -> str:
    """A number as a person writes it: ``{'share-consumer-1': 12}`` as ``share-consumer-1: 12``,
    a list as ``1, 2, 3`` (no raw Python reprs on the page; the lines break at the commas).

    >>> _value({"share-consumer-1": 12, "share-consumer-2": 9}), _value([1, 2]), _value([]), _value(None)
    ('share-consumer-1: 12, share-consumer-2: 9', '1, 2', '-', '-')
    """
    if isinstance(v, dict):
        return ", ".join(f"{k}: {_value(x)}" for k, x in v.items()) or "-"
    if isinstance(v, (list, tuple, set)):
        return ", ".join(map(str, v)) or "-"
    return "-" if v is None else str(v)


def measured(result) -> str:
    """The run's settings and measured numbers, one per line: what an experiment cell prints.

    >>> from course_lib.experiments.share_scenarios import run_share_scenario
    >>> print(measured(run_share_scenario("ordering_across_workers", seed=1, workers=1)))
    ordering_across_workers, seed 1
      settings: workers=1, records=30, fastest_ms=10, slowest_ms=300
      records                   30
      deliveries                30
      redelivered               0
      processed_twice           0
      archived                  0
      reordered                 0
    """
    settings = ", ".join(f"{k}={v}" for k, v in result.settings.items())
    rows = [f"  {k:<25} {_value(v)}" for k, v in result.numbers.items()]
    return "\n".join([f"{result.name}, seed {result.seed}", f"  settings: {settings}", *rows])


def idle_workers(result) -> str:
    """More workers than partitions: who got records.

    >>> from course_lib.experiments.share_scenarios import run_share_scenario
    >>> r = run_share_scenario("more_workers_than_partitions", seed=1, workers=4, partitions=2)
    >>> print(idle_workers(r))  # doctest: +NORMALIZE_WHITESPACE
    **Measured:** 0 of the 4 workers are idle: they process 12, 8, 12 and 8 of the 40 records.
    Partition 0 is read by 2 workers at once and partition 1 by 3. A consumer group gives each
    partition to exactly one member, so 2 of its 4 members would get nothing; a share group hands
    out *records*, not partitions, to whoever asks.
    """
    n = result.numbers
    counts = list(n["per_worker"].values())
    workers, partitions = result.settings["workers"], result.settings["partitions"]
    read = [f"partition {p} by {k}" for p, k in n["workers_per_partition"].items()]
    first = read[0].replace(" by ", " is read by ", 1) + " workers at once"
    return (
        f"**Measured:** {n['idle_workers']} of the {workers} workers are idle: they process {_and(counts)} of the "
        f"{n['records']} records.\n{_and([first, *read[1:]]).capitalize()}. A consumer group gives each\n"
        f"partition to exactly one member, so {max(workers - partitions, 0)} of its {workers} members would get "
        "nothing; a share group hands\nout *records*, not partitions, to whoever asks."
    )


def _are(n: int) -> str:
    """'3 records are', '1 record is': the subject of a measured sentence."""
    return f"{_records(n)} {'is' if n == 1 else 'are'}"


def crash_twice(result) -> str:
    """A worker crashes holding records it has partly processed.

    >>> from course_lib.experiments.share_scenarios import run_share_scenario
    >>> print(crash_twice(run_share_scenario("worker_crash", seed=1)))  # doctest: +NORMALIZE_WHITESPACE
    **Measured:** 3 records are processed twice. The crashed worker held 5 records and had
    finished 3; it acknowledged none of them. 515 ms after the crash - its process died, its
    operating system closed its connections, and the broker ended its share session - the broker
    makes all 5 available again and the other worker gets them: 5 records delivered twice, the 3
    finished ones processed twice. No offset, no rebalance: a record comes back when its holder's
    connection closes or its lock runs out.
    """
    n, s = result.numbers, result.settings
    after = n["redelivery_after_crash_ms"]
    when = f"{_thousands(after)} ms after the crash" if after is not None else "Never"
    why = (
        "when the acquisition\nlocks taken at its poll run out"
        if crash_wait_answer(result) != "at once"
        else "its process died, its\noperating system closed its connections, and the broker ended its share session"
    )
    return (
        f"**Measured:** {_are(n['processed_twice'])} processed twice. The crashed worker held "
        f"{_records(n['held_at_crash'])} and had\nfinished {s['processed_before_crash']}; it acknowledged none "
        f"of them. {when} - {why} - the broker makes all\n"
        f"{n['redelivered']} available again and the other worker gets them: {_records(n['redelivered'])} "
        f"delivered twice, the {n['processed_twice']}\nfinished ones processed twice. No offset, no rebalance: "
        "a record comes back when its holder's\nconnection closes or its lock runs out."
    )


def _thousands(ms: float) -> str:
    """30 000, as the lessons write thousands (tests read '30 000' as one number)."""
    return f"{round(ms):,}".replace(",", " ")


def crash_wait(result, killed=None) -> str:
    """The crash again, of the worker's machine (``host_lost``), with a shorter lock; ``killed``:
    the run where only its process died, for comparison.

    >>> from course_lib.experiments.share_scenarios import run_share_scenario
    >>> lost = run_share_scenario("worker_crash", seed=1, lock_ms=5_000, host_lost=True)
    >>> print(crash_wait(lost, run_share_scenario("worker_crash", seed=1)))  # doctest: +NORMALIZE_WHITESPACE
    **Measured:** the other worker gets the 5 held records 4 655 ms after the crash (515 ms when
    only the process died): the wait follows the lock, not the crash. A machine that is gone
    closes no connection: the broker does not see a crash; it sees a lock run out. Still 3 records
    are processed twice: a shorter lock only makes the duplicates come sooner - and leaves less
    time to a slow handler.
    """
    n = result.numbers
    after = killed.numbers["redelivery_after_crash_ms"] if killed is not None else None
    then = f" ({_thousands(after)} ms when\nonly the process died)" if after is not None else ""
    return (
        f"**Measured:** the other worker gets the {n['held_at_crash']} held records "
        f"{_thousands(n['redelivery_after_crash_ms'])} ms after the crash{then}: the wait\nfollows the lock, not the "
        "crash. A machine that is gone closes no connection: the broker does not see a crash; it\nsees a lock run "
        f"out. Still {_are(n['processed_twice'])} processed twice: a shorter lock only makes the duplicates come "
        "sooner -\nand leaves less time to a slow handler."
    )


def times_processed(result) -> int:
    """How many times the most-processed record went through the handler.

    >>> class R:
    ...     numbers = {"times_processed": {"job-0": 5, "job-1": 4}}
    >>> times_processed(R())
    5
    """
    return max(result.numbers["times_processed"].values(), default=0)


def slow_handler(result) -> str:
    """A handler slower than the lock, without RENEW.

    >>> from course_lib.experiments.share_scenarios import run_share_scenario
    >>> print(slow_handler(run_share_scenario("slow_handler", seed=1)))  # doctest: +NORMALIZE_WHITESPACE
    **Measured:** every record is processed 5 times (job-0: 5, job-1: 5, job-2: 5), and all 3
    are archived at the end. Each time the lock runs out while the handler is still busy, the
    broker gives the record to the other worker; the first one's ACCEPT then comes back refused
    (12 of the 15 ACCEPTs). At delivery 5 - the delivery count limit - the broker gives up and
    archives the record; the ACCEPTs that come after that (3) reach a record already archived,
    which the broker skips without an error: the records were processed every time, yet the
    broker never saw one accepted.
    """
    n = result.numbers
    times = n["times_processed"]
    each = ", ".join(f"{m}: {k}" for m, k in times.items())
    all_same = len(set(times.values())) == 1
    how = f"every record is processed {times_processed(result)} times" if all_same else "the records are processed"
    accepts = sum(times.values())  # every processing ends in an ACCEPT
    return (
        f"**Measured:** {how} ({each}), and all {n['archived']}\nare archived at the end. "
        "Each time the lock runs out while the handler is still busy, the\nbroker gives the record to the other "
        "worker; the first one's ACCEPT then comes back refused\n"
        f"({n['refused_acks']} of the {accepts} ACCEPTs). At delivery "
        f"{result.settings['delivery_count_limit']} - the delivery count limit - the broker gives up and\n"
        f"archives the record; the ACCEPTs that come after that ({accepts - n['refused_acks']}) reach a record "
        "already archived,\nwhich the broker skips without an error: the records were processed every time, yet "
        "the\nbroker never saw one accepted."
    )


def renew(result) -> str:
    """The slow handler with RENEW every half lock.

    >>> from course_lib.experiments.share_scenarios import run_share_scenario
    >>> print(renew(run_share_scenario("slow_handler", seed=1, renew=True)))  # doctest: +NORMALIZE_WHITESPACE
    **Measured:** each record is processed 1 time (job-0: 1, job-1: 1, job-2: 1); 3 deliveries
    for 3 records, 0 refused acknowledgements, 0 archived. Each RENEW restarts the lock's clock,
    so the record stays with the worker that is processing it. RENEW is the fix when a handler
    is slow *by design*; a lock longer than the slowest handler is the other one.
    """
    n = result.numbers
    times = n["times_processed"]
    each = ", ".join(f"{m}: {k}" for m, k in times.items())
    return (
        f"**Measured:** each record is processed {times_processed(result)} time"
        f"{'' if times_processed(result) == 1 else 's'} ({each}); {n['deliveries']} deliveries\n"
        f"for {n['records']} records, {n['refused_acks']} refused acknowledgements, {n['archived']} archived. "
        "Each RENEW restarts the lock's clock,\nso the record stays with the worker that is processing it. "
        "RENEW is the fix when a handler\nis slow *by design*; a lock longer than the slowest handler is the other one."
    )


def poison(result) -> str:
    """A record on which the handler always fails (see the module's doctest)."""
    n, s = result.numbers, result.settings
    bad = f"job-{s['poison']}"
    why = _and(sorted(set(n["archived_why"])))
    # the other records' processings, counted (not inferred from what was archived)
    others = [len(ps) for m, ps in result.observed.processed.items() if m != bad]
    once = others.count(1)
    rest = (
        f"The other {once} records are processed once each"
        if once == s["records"] - 1
        else f"Of the other {s['records'] - 1} records, {once} are processed once"
    )
    return (
        f"**Measured:** `{bad}` is delivered {n['poison_deliveries']} times (delivery counts "
        f"{_and(n['poison_delivery_counts'])}), each time\nreleased by the handler that failed on it; then the "
        f"broker archives it ({why}). {rest}. No error reaches the application: the\nrecord is given up on "
        "purpose, and only the broker's state says so - unless the group has a\ndead-letter topic (Kafka 4.4, "
        "next section)."
    )


def ordering_answer(runs: dict) -> str:
    """``runs[k]``: ``ordering_across_workers`` with k workers. The lesson's choice for 3 workers.

    >>> class R:
    ...     def __init__(self, k): self.numbers = {"reordered": k}
    >>> ordering_answer({1: R(0), 3: R(12)})
    'some are processed out of order'
    """
    return "some are processed out of order" if runs[max(runs)].numbers["reordered"] else "in offset order"


def ordering(runs: dict) -> str:
    """One partition, 1 worker and several: how many records are processed after a later one.

    >>> from course_lib.experiments.share_scenarios import run_share_scenario
    >>> runs = {k: run_share_scenario("ordering_across_workers", seed=1, workers=k) for k in (1, 3)}
    >>> print(ordering(runs))  # doctest: +NORMALIZE_WHITESPACE
    **Measured:** with 3 workers 12 of the 30 records are processed after a later record of
    the same partition; with 1 worker, 0. Nothing was redelivered (0 deliveries beyond the first):
    the order is lost simply because workers of different speed finish in a different order.
    A share group promises no order at all - not even within a partition.
    """
    many, one = runs[max(runs)], runs[min(runs)]
    extra = many.numbers["deliveries"] - many.numbers["records"]
    return (
        f"**Measured:** with {max(runs)} workers {many.numbers['reordered']} of the {many.numbers['records']} records "
        f"are processed after a later record of\nthe same partition; with {min(runs)} worker"
        f"{'' if min(runs) == 1 else 's'}, {one.numbers['reordered']}. Nothing was redelivered ({extra} deliveries "
        "beyond the first):\nthe order is lost simply because workers of different speed finish in a different "
        "order.\nA share group promises no order at all - not even within a partition."
    )


def faster_answer(result) -> str:
    """Which finished the same work first, as one of the lesson's choices.

    >>> class R:
    ...     numbers = {"share_group_ms": 1406, "consumer_group_ms": 2123}
    >>> faster_answer(R())
    'the share group'
    """
    share, group = result.numbers["share_group_ms"], result.numbers["consumer_group_ms"]
    if abs(share - group) < 0.05 * max(share, group):
        return "about the same"
    return "the share group" if share < group else "the consumer group"


def share_vs_group(result) -> str:
    """The same work as a share group and as a consumer group.

    >>> from course_lib.experiments.share_scenarios import run_share_scenario
    >>> print(share_vs_group(run_share_scenario("share_group_vs_consumer_group", seed=1)))
    ... # doctest: +NORMALIZE_WHITESPACE
    **Measured:** the share group finishes in 1 406 ms, the consumer group in 2 134 ms. The
    consumer group's workers process 20, 20, 0 and 0 records: 2 idle, since it has 2 partitions;
    the share group's process 12, 8, 12 and 8. The costs: the share group writes 42 state records
    to the share coordinator (`__share_group_state`) against the consumer group's 22 offset
    commits, and 14 records are processed after a later one of their partition, where the
    consumer group keeps each partition in order.
    """
    n = result.numbers
    group = list(n["consumer_group_per_worker"].values())
    share = list(n["share_group_per_worker"].values())
    idle = sum(1 for k in group if k == 0)
    partitions = result.settings["partitions"]
    return (
        f"**Measured:** the share group finishes in {_thousands(n['share_group_ms'])} ms, the consumer group in "
        f"{_thousands(n['consumer_group_ms'])} ms. The\nconsumer group's workers process {_and(group)} records: "
        f"{idle} idle, since it has {partitions} partitions;\nthe share group's process {_and(share)}. The costs: "
        f"the share group writes {n['share_state_writes']} state records\nto the share coordinator "
        f"(`__share_group_state`) against the consumer group's {n['consumer_group_commits']} offset\ncommits, and "
        f"{n['reordered']} records are processed after a later one of their partition, where the\nconsumer group "
        "keeps each partition in order."
    )


# ---- the real-Kafka part: the simulator's runs and the lab's Kafka's, side by side ----------------
#: (label, the simulator's number, Kafka's number), for :func:`side_by_side`
_CRASH_ROWS = [
    ("crash: records the crashed worker held", "held_at_crash"),
    ("crash: delivered again", "redelivered"),
    ("crash: processed twice", "processed_twice"),
    ("crash: ms from the crash to the redelivery", "redelivery_after_crash_ms"),
]
_POISON_ROWS = [
    ("poison: deliveries of the poison record", "poison_deliveries"),
    ("poison: its delivery counts", "poison_delivery_counts"),
    ("poison: records archived", "archived"),
]


def side_by_side(
    sim_crash, real_crash: dict | None, sim_poison, real_poison: dict | None, kafka_version: str | None = None
) -> str:
    """The simulator's ``worker_crash`` and ``poison_message`` results and the numbers
    :mod:`course_lib.experiments.on_kafka.share_groups` measured on Kafka (``kafka_version``: the release it ran,
    by default the lab's), one row per number (the simulator's alone while Kafka's are None).

    >>> class Sim:
    ...     def __init__(self, **numbers): self.numbers = numbers
    >>> print(side_by_side(Sim(held_at_crash=5, redelivered=5, processed_twice=3, redelivery_after_crash_ms=4655),
    ...     {"held_at_crash": 5, "redelivered": 5, "processed_twice": 3, "redelivery_after_crash_ms": 4726},
    ...     Sim(poison_deliveries=5, poison_delivery_counts=[1, 2], archived=1),
    ...     {"poison_deliveries": 5, "poison_delivery_counts": [1, 2], "archived": 1}, kafka_version="4.3.1"))
                                                      simulator    Kafka 4.3.1
    crash: records the crashed worker held                    5              5
    crash: delivered again                                    5              5
    crash: processed twice                                    3              3
    crash: ms from the crash to the redelivery             4655           4726
    poison: deliveries of the poison record                   5              5
    poison: its delivery counts                            1, 2           1, 2
    poison: records archived                                  1              1
    """

    def cell(v) -> str:
        return _and(v).replace(" and ", ", ") if isinstance(v, list) else str(v)

    kafka = real_crash is not None and real_poison is not None
    rows = [(label, sim_crash.numbers[k], real_crash[k] if kafka else "") for label, k in _CRASH_ROWS]  # type: ignore[index]
    rows += [(label, sim_poison.numbers[k], real_poison[k] if kafka else "") for label, k in _POISON_ROWS]  # type: ignore[index]
    width = 15 if kafka else 0
    lines = [f"{'':<44}{'simulator':>15}{on_kafka(kafka_version) if kafka else '':>{width}}"]
    lines += [f"{label:<44}{cell(s):>15}{cell(r):>{width}}" for label, s, r in rows]
    return "\n".join(line.rstrip() for line in lines)


def real_source(real_crash: dict | None) -> str:
    """What the real-Kafka question's answer is: measured on Kafka, or (Kafka did not run) the
    simulator's answer - the reveal line must not say "measured" for a run that did not happen.

    >>> real_source(None)
    "the simulator's answer (Kafka did not run)"
    >>> real_source({"redelivery_after_crash_ms": 180})
    'measured on Kafka'
    """
    return "measured on Kafka" if real_crash is not None else "the simulator's answer (Kafka did not run)"


def real_kafka(
    sim_crash, real_crash: dict | None, sim_poison, real_poison: dict | None, kafka_version: str | None = None
) -> str:
    """What the side-by-side runs say, each number from the runs; while Kafka did not run
    (``real_crash`` None: the cell above printed why), what the simulator answers.
    ``kafka_version``: the release Kafka's numbers come from (default: the lab's).

    >>> class Sim:
    ...     def __init__(self, settings, **numbers): self.settings, self.numbers = settings, numbers
    >>> crash = Sim({"lock_ms": 5000}, held_at_crash=5, redelivered=5, processed_twice=3, redelivery_after_crash_ms=515)
    >>> poisoned = Sim({"poison": 3}, poison_deliveries=5, poison_delivery_counts=[1, 2, 3, 4, 5], archived=1)
    >>> print(real_kafka(crash, {"held_at_crash": 5, "redelivered": 5, "processed_twice": 3,
    ...     "redelivery_after_crash_ms": 275, "delivery_counts": [2, 2, 2, 2, 2]},
    ...     poisoned, {"poison_deliveries": 5, "poison_delivery_counts": [1, 2, 3, 4, 5], "archived": 1},
    ...     kafka_version="4.3.1"))
    ... # doctest: +NORMALIZE_WHITESPACE
    **Measured on Kafka 4.3.1:** the other worker got the crashed worker's 5 records 275 ms after
    the crash (the simulator: 515 ms, with a lock of 5 000 ms), with delivery count 2: the broker
    handed them back when the process died, before the lock ran out. 3 records were processed twice (the
    simulator: 3). `job-3` was delivered 5 times (the simulator's delivery counts), then
    archived (the simulator: 5 times, then archived). The counts agree; so does
    the wait: when a process dies its connections close, and the broker ends its share session and
    releases what it held (`SharePartitionManager`, on a disconnect), long before the lock runs out.
    """
    sim_after = sim_crash.numbers["redelivery_after_crash_ms"]
    lock = sim_crash.settings["lock_ms"]
    if real_crash is None or real_poison is None:
        # (why it did not run is printed above the lock-in, so it is not repeated here)
        return (
            "**Not measured on Kafka here.** The simulator's answer, with the same settings: the "
            f"other worker gets the\ncrashed worker's {sim_crash.numbers['redelivered']} records "
            f"{_thousands(sim_after) + ' ms' if sim_after is not None else 'never'} after the crash, with a lock of "
            f"{_thousands(lock)} ms. Whether {on_kafka(kafka_version)} agrees\nis for the run on Kafka (Java 17+ and Maven): "
            "turn the real-Kafka part on and run this section again."
        )
    after = real_crash["redelivery_after_crash_ms"]
    counts = sorted(set(real_crash.get("delivery_counts", [])))
    if after is None:
        crash = "the other worker never got the crashed worker's records back"
    else:
        how = (
            "killing\nthe process did not hand them back; the lock ran out"
            if real_crash_answer(real_crash, sim_crash) != "at once"
            else "the broker\nhanded them back when the process died, before the lock ran out"
        )
        crash = (
            f"the other worker got the crashed worker's {real_crash['redelivered']} records {_thousands(after)} ms after\n"
            f"the crash (the simulator: {_thousands(sim_after) + ' ms' if sim_after is not None else 'never'}, "
            f"with a lock of {_thousands(lock)} ms), with delivery count {_and(counts)}: {how}"
        )
    archived = "then\narchived" if real_poison["archived"] else "and it\nwas not archived"
    # the simulator's counts are on the page above (its poison run): say whether Kafka's match
    real_counts = real_poison["poison_delivery_counts"]
    poison_counts = (
        "the simulator's delivery counts"
        if real_counts == sim_poison.numbers["poison_delivery_counts"]
        else f"delivery counts {_and(real_counts)}"
    )
    sim_archived = "then archived" if sim_poison.numbers["archived"] else "not archived"
    same = all(sim_crash.numbers[k] == real_crash[k] for _, k in _CRASH_ROWS[:3]) and all(
        sim_poison.numbers[k] == real_poison[k] for _, k in _POISON_ROWS
    )
    verdict = (
        "The counts agree" if same else "Where the counts differ, Kafka is right: the simulator has a gap to close"
    )
    if real_crash_answer(real_crash, sim_crash) == crash_wait_answer(sim_crash):
        verdict += (
            "; so does\nthe wait: when a process dies its connections close, and the broker ends its share session "
            "and\nreleases what it held (`SharePartitionManager`, on a disconnect), long before the lock runs out."
        )
    else:
        verdict += "; the wait does not: Kafka is right, and the simulator has a gap to close."
    return (
        f"**Measured on {on_kafka(kafka_version)}:** {crash}. {_are(real_crash['processed_twice']).replace(' are', ' were').replace(' is', ' was')} "
        f"processed twice (the\nsimulator: {sim_crash.numbers['processed_twice']}). `job-{sim_poison.settings['poison']}` was "
        f"delivered {real_poison['poison_deliveries']} times ({poison_counts}), "
        f"{archived} (the simulator: {sim_poison.numbers['poison_deliveries']} times, {sim_archived}). {verdict}"
    )


def _source(result, which: str) -> str:
    """``job-<n>`` of a setting (``poison``, ``reject``) of the dead-letter run."""
    return f"job-{result.settings[which]}"


def dead_letter_choices(poison: str = "job-3", reject: str = "job-7") -> list[str]:
    """What the dead-letter question offers (the poison and the rejected record are the setup).

    >>> dead_letter_choices()[1]
    'job-3 and job-7, headers only: no key, no value'
    """
    return [
        f"{poison} and {reject}, each with its key and value",
        f"{poison} and {reject}, headers only: no key, no value",
        f"{reject} only: the delivery count limit archives without a dead letter",
        "nothing: the broker only archives",
    ]


def dead_letter_answer(result) -> str:
    """The choice of :func:`dead_letter_choices` the run of ``dead_letter_topic`` measured (or,
    if none fits, what it measured).

    >>> from course_lib.experiments.share_scenarios import run_share_scenario
    >>> dead_letter_answer(run_share_scenario("dead_letter_topic", seed=1, kafka_version="4.4.0"))
    'job-3 and job-7, headers only: no key, no value'
    >>> dead_letter_answer(run_share_scenario("dead_letter_topic", seed=1, kafka_version="4.3.1"))
    'nothing: the broker only archives'
    """
    poison, reject = _source(result, "poison"), _source(result, "reject")
    choices = dead_letter_choices(poison, reject)
    letters = result.numbers["dead_letters"]
    sources = sorted(d["source"] for d in letters)
    copied = [d["value"] is not None for d in letters]
    if not letters:
        return choices[3]
    if sources == sorted([poison, reject]) and all(copied):
        return choices[0]
    if sources == sorted([poison, reject]) and not any(copied):
        return choices[1]
    if sources == [reject]:
        return choices[2]
    return f"{_and(sources)}, {'with' if all(copied) else 'without'} their values"


def dead_letter_table(result) -> str:
    """What the dead-letter experiment cell prints: the settings, what was archived, and the
    dead-letter topic read back, one line per record.

    >>> from course_lib.experiments.share_scenarios import run_share_scenario
    >>> print(dead_letter_table(run_share_scenario("dead_letter_topic", seed=1, kafka_version="4.3.1")))
    dead_letter_topic, seed 1 (Kafka 4.3.1)
      settings: records=10, poison=3, reject=7, delivery_count_limit=5, copy_record=False, transient_failures=0
      refused: Unknown topic config name: errors.deadletterqueue.group.enable
    """
    n = result.numbers
    settings = ", ".join(f"{k}={v}" for k, v in result.settings.items() if k != "kafka_version")
    lines = [f"{result.name}, seed {result.seed} (Kafka {result.settings['kafka_version']})", f"  settings: {settings}"]
    if n["refused"]:
        return "\n".join([*lines, f"  refused: {n['refused']}"])
    lines += [
        f"  archived {n['archived']}, of them written to {n['dlq_topic']}: {n['archived_to_dlq']}",
        f"  {n['dlq_topic']}:",
        f"    {'offset':<7}{'stands for':<11}{'deliveries':<11}{'key':<6}{'value':<9}__dlq.errors.message",
    ]
    for offset, d in enumerate(n["dead_letters"]):
        key, value = (d[k].decode(errors="replace") if d[k] is not None else "-" for k in ("key", "value"))
        lines.append(f"    {offset:<7}{d['source']:<11}{d['delivery_count']:<11}{key:<6}{value:<9}{d['why']}")
    return "\n".join(lines)


def dead_letters(result, copied=None) -> str:
    """The dead-letter run explained; ``copied``: the same run with ``copy_record=True``.

    >>> from course_lib.experiments.share_scenarios import run_share_scenario
    >>> r = run_share_scenario("dead_letter_topic", seed=1, kafka_version="4.4.0")
    >>> c = run_share_scenario("dead_letter_topic", seed=1, kafka_version="4.4.0", copy_record=True)
    >>> print(dead_letters(r, c))  # doctest: +NORMALIZE_WHITESPACE
    **Measured:** the dead-letter topic `dlq.jobs` holds 2 records, one for each record the broker
    archived: `job-7` (delivery 1: "Offset rejected by client.") and `job-3` (delivery 5:
    "Offset delivery count exceeded the threshold."). Neither carries a key or a value: a dead
    letter says *where* the record is (its headers name the topic, partition, offset, group,
    delivery count and reason), and the record itself stays in `jobs` until retention deletes it.
    With `errors.deadletterqueue.copy.record.enable=true` the broker copies the value into the
    dead letter: `job-7` and `job-3`. The broker writes the dead letters; the application sees no
    error either way.
    """
    n = result.numbers
    if n["refused"]:
        return (
            f"**Measured:** Kafka {result.settings['kafka_version']} refuses the dead-letter topic "
            f"(`{n['refused']}`): dead-letter queues for share groups need Kafka 4.4 (`share.version` 2). "
            "Run the lab on 4.4 (unset `COURSE_KAFKA_VERSION`) to see them."
        )
    letters = n["dead_letters"]
    each = _and(f'`{d["source"]}` (delivery {d["delivery_count"]}: "{d["why"]}")' for d in letters)
    carries = [d for d in letters if d["key"] is not None or d["value"] is not None]
    what = (
        f"{'Neither' if len(letters) == 2 else 'None'} carries a key or a value"
        if not carries
        else f"{_and(d['source'] for d in carries)} carry the source's key or value"
    )
    text = (
        f"**Measured:** the dead-letter topic `{n['dlq_topic']}` holds {_records(len(letters))}, "
        f"{'one for each record' if n['archived_to_dlq'] == n['archived'] == len(letters) else 'for some of the records'} "
        f"the broker archived: {each}. {what}: a dead letter says *where* the record is (its headers name the topic, partition, "
        "offset, group, delivery count and reason), and the record itself stays in `jobs` until retention deletes it."
    )
    if copied is not None and not copied.numbers["refused"]:
        values = [d["value"].decode() for d in copied.numbers["dead_letters"] if d["value"] is not None]
        text += (
            "\nWith `errors.deadletterqueue.copy.record.enable=true` the broker copies the value into the dead letter: "
            f"{_and(f'`{v}`' for v in values)}."
        )
    return text + " The broker writes the dead letters; the application sees no error either way."
