"""Explanations for notebooks/02_acks_and_durability: what each ``acks`` setting keeps through a
leader crash, ``min.insync.replicas``, unclean election, the loss rates and the costs."""

from __future__ import annotations

from ..judge.result import Result
from .words import count, listing, thousands, with_fate


def _acked(run) -> list:
    return [op for op in run.history if op.f == "send" and op.type == "ok"]


def before_the_crash(run) -> str:
    """What the producer was told before the leader died: the question's given, printed above it.

    >>> from course_lib.experiments.scenarios import run_scenario
    >>> print(before_the_crash(run_scenario("leader_crash_after_ack", seed=1, acks=1)))
    acknowledged before the crash: 13
      3 warm-up messages, sent before the followers paused
      10 messages sent while they were paused
    """
    acked = _acked(run)
    warm = sum(1 for op in acked if str(op.value).startswith("warmup"))
    return (
        f"acknowledged before the crash: {run.notes['acked_before_crash']}\n"
        f"  {warm} warm-up messages, sent before the followers paused\n"
        f"  {len(acked) - warm} messages sent while they were paused"
    )


def survivors(run) -> str:
    """``acks=1``: which acknowledged messages the crash kept.

    >>> from course_lib.experiments.scenarios import run_scenario
    >>> print(survivors(run_scenario("leader_crash_after_ack", seed=1, acks=1)))  # doctest: +NORMALIZE_WHITESPACE
    Of the 13 acknowledged sends, **4 survive** (warmup-0, warmup-1, warmup-2 and m-0) and **9 are
    lost** (m-1 to m-9): only what a follower had fetched before the leader died is in the new
    leader's log. Each acknowledgement was true when it was sent; it just did not survive the
    leader. The checker says why for each lost one, from the offsets, high watermark and epochs
    (below, for m-1).
    """
    kept, lost = with_fate(run.result, "delivered"), with_fate(run.result, "lost")
    lost_text = f"{lost[0]} to {lost[-1]}" if len(lost) > 2 else listing(lost)
    return (
        f"Of the {run.notes['acked_before_crash']} acknowledged sends, **{len(kept)} survive** ({listing(kept)}) "
        f"and **{len(lost)} are lost** ({lost_text}): only what a follower had fetched before the leader died is "
        "in the new leader's log. Each acknowledgement was true when it was sent; it just did not survive the "
        "leader. The checker says why for each lost one, from the offsets, high watermark and epochs "
        f"(below, for {lost[0] if lost else 'none'})."
    )


def all_acks(run) -> str:
    """The same crash with ``acks="all"``.

    >>> from course_lib.experiments.scenarios import run_scenario
    >>> print(all_acks(run_scenario("leader_crash_after_ack", seed=1, acks="all")))  # doctest: +NORMALIZE_WHITESPACE
    **0 lost.** Only 3 sends were acknowledged before the crash (the warm-up: the leader waited
    for the paused followers); the producer retried the rest on the new leader, and 13 of 13 are
    delivered once.
    """
    table = run.result.outcome_table()
    return (
        f"**{table['lost (acknowledged)']} lost.** Only {run.notes['acked_before_crash']} sends were acknowledged "
        "before the crash (the warm-up: the leader waited for the paused followers); the producer retried the "
        f"rest on the new leader, and {table['delivered once']} of {table['sent']} are delivered once."
    )


def fire_and_forget(run) -> str:
    """``acks=0`` and a leader crash: every future succeeds, the log does not have them all.

    >>> from course_lib.experiments.scenarios import run_scenario
    >>> print(fire_and_forget(run_scenario("fire_and_forget_crash", seed=1)))  # doctest: +NORMALIZE_WHITESPACE
    **All 40 futures succeeded**, none with an offset (no broker ever answered), and 21 of the 40
    messages are not in the log. With `acks=0` "success" only means "handed to the network".
    """
    acked, table = _acked(run), run.result.outcome_table()
    how = f"All {len(acked)}" if len(acked) == table["sent"] else f"{len(acked)} of {table['sent']}"
    offsets = (
        "none with an offset (no broker ever answered)" if all(op.offset is None for op in acked) else "with offsets"
    )
    missing = table["sent"] - table["delivered once"] - table["duplicated"]
    return (
        f"**{how} futures succeeded**, {offsets}, and {missing} of the {table['sent']} messages are not in the "
        'log. With `acks=0` "success" only means "handed to the network".'
    )


def accepted(run) -> str:
    """How many writes the cluster accepted, as the question's choices say it."""
    table = run.result.outcome_table()
    return {0: "none of them", table["sent"]: "all of them"}.get(table["delivered once"], "some of them")


def refused(run) -> str:
    """``min.insync.replicas=2`` with the ISR down to the leader.

    >>> from course_lib.experiments.scenarios import run_scenario
    >>> print(refused(run_scenario("not_enough_replicas", seed=1)))  # doctest: +NORMALIZE_WHITESPACE
    **0 of the 5 writes are accepted.** The broker answers `NotEnoughReplicas`, the producer
    retries (it is a retriable error) until `delivery_timeout_ms` (5 s here) and then fails all 5
    sends with `KafkaTimeoutError`. Nothing is silently lost: the application knows.
    """
    table, notes = run.result.outcome_table(), run.notes
    timeout = run.producer_config["delivery_timeout_ms"] / 1000
    return (
        f"**{table['delivered once']} of the {table['sent']} writes are accepted.** The broker answers "
        "`NotEnoughReplicas`, the producer retries (it is a retriable error) until `delivery_timeout_ms` "
        f"({timeout:g} s here) and then fails {'all ' if notes['failed'] == table['sent'] else ''}{notes['failed']} "
        f"sends with {listing(f'`{e}`' for e in notes['errors'])}. Nothing is silently lost: the application knows."
    )


def unclean(runs: dict) -> str:
    """Unclean election on (``runs[True]``) and off (``runs[False]``).

    >>> from course_lib.experiments.scenarios import run_scenario
    >>> runs = {u: run_scenario("unclean_election", seed=1, unclean=u) for u in (True, False)}
    >>> print(unclean(runs))  # doctest: +NORMALIZE_WHITESPACE
    With unclean election broker 2 led while the old leader was down, without the acknowledged
    writes: **5 are lost**. Without it the partition had *no leader* (offline) until the old leader
    returned, and 0 are lost. Availability or durability: you choose. (`acks="all"` did not help
    here, because `min.insync.replicas=1` let the ISR shrink to one broker.)
    """

    def lost(r) -> int:
        return r.result.outcome_table()["lost (acknowledged)"]

    on, off = runs[True], runs[False]
    led = on.notes["leader_while_old_down"]
    who = (
        f"broker {led} led while the old leader was down"
        if led is not None
        else "nobody led while the old leader was down"
    )
    off_led = off.notes["leader_while_old_down"]
    off_who = (
        "the partition had *no leader* (offline) until the old leader returned"
        if off_led is None
        else f"broker {off_led} led"
    )
    return (
        f"With unclean election {who}, without the acknowledged writes: **{lost(on)} are lost**. Without it "
        f'{off_who}, and {lost(off)} are lost. Availability or durability: you choose. (`acks="all"` did not '
        "help here, because `min.insync.replicas=1` let the ISR shrink to one broker.)"
    )


# the choices of the question on a consumer that read records an unclean election then lost
SKIPS, FROM_ZERO, AT_ONCE, ONCE_BACK = (
    "it skips offsets 3-5",
    "it reads everything again from offset 0",
    "it reads new0..new5 from offset 3, at once",
    "it reads new0..new5 from offset 3, once the old leader is back",
)


def consumer_did(probe: Result) -> str:
    """What the consumer did (one of the choices above), from what it read at each step
    (``behaviour_probes.consumer_after_unclean_election``)."""
    seen = probe.numbers
    after = seen["read_after_it_is_back"]
    if not after or after[0][0] > 3:
        return SKIPS
    if after[0][0] == 0:
        return FROM_ZERO
    return AT_ONCE if seen["read_while_its_only_broker_is_down"] else ONCE_BACK


def after_unclean(probe: Result) -> str:
    """The consumer that had read records the unclean election lost.

    >>> seen = {"read_before": 6, "read_while_its_only_broker_is_down": [],
    ...         "read_after_it_is_back": [(3, b"new0"), (4, b"new1"), (8, b"new5")]}
    >>> print(after_unclean(Result("probe", "consumer_after_unclean_election", numbers=seen)))  # doctest: +NORMALIZE_WHITESPACE +ELLIPSIS
    It had read 6 records. kafka-python is not fooled: it asks the new leader where the old leader's
    epoch ended (OffsetsForLeaderEpoch, KIP-320) and seeks back there, reading new0 to new5 from
    offset 3. But it read **nothing at all** while the old leader was down, although another broker
    already led. ...
    """
    seen = probe.numbers
    after = seen["read_after_it_is_back"]
    during = seen["read_while_its_only_broker_is_down"]
    values = [v.decode() for _, v in after]
    read = f"reading {values[0]} to {values[-1]} from offset {after[0][0]}" if after else "reading nothing"
    when = (
        "But it read **nothing at all** while the old leader was down, although another broker already led. "
        "The consumer had started when the old leader was the only live broker, a metadata answer lists only "
        "live brokers, and kafka-python 3.0.12 never goes back to `bootstrap_servers` (Java does since Kafka "
        "4.0: `metadata.recovery.strategy=rebootstrap`)."
        if not during
        else f"It read {count(len(during), 'record')} while the old leader was down."
    )
    return (
        f"It had read {seen['read_before']} records. kafka-python is not fooled: it asks the new leader where the "
        f"old leader's epoch ended (OffsetsForLeaderEpoch, KIP-320) and seeks back there, {read}. {when} "
        "Confirmed on the lab's cluster (`tests/real/test_fidelity_differential.py`)."
    )


def most_duplicated(loss: dict) -> str:
    """The ``acks`` setting with the most duplicated messages (a choice's measured answer)."""
    return max(loss, key=lambda setting: loss[setting]["duplicated"])


def loss_rates(loss: dict) -> str:
    """Loss and duplicates per ``acks`` setting over many seeded crash schedules.

    >>> t = lambda trials, lost, dup: {"trials with loss": trials, "trials": 100, "lost": lost, "sent": 3000, "duplicated": dup}
    >>> print(loss_rates({"acks=0": t(79, 510, 0), "acks=1": t(10, 42, 22), "acks=all": t(0, 0, 332)}))  # doctest: +NORMALIZE_WHITESPACE
    ... # doctest: +NORMALIZE_WHITESPACE
    `acks=0` lost acknowledged writes in 79 of 100 trials (510 of 3000 messages), `acks=1` in 10 (42
    messages), `acks=all` in none. **`acks=all` has the most duplicates** (332 of 3000), although
    idempotence is off for all three: every failed acknowledgement becomes a retry, and `acks=0` never
    retries. Durability and exactly-once are different properties (notebook 04).
    """
    parts = []
    for k, (setting, t) in enumerate(loss.items()):
        n = t["trials with loss"]
        if k == 0:
            parts.append(
                f"`{setting}` lost acknowledged writes in {n} of {t['trials']} trials ({t['lost']} of {t['sent']} messages)"
            )
        else:
            parts.append(f"`{setting}` in {n} ({t['lost']} messages)" if n else f"`{setting}` in none")
    top = most_duplicated(loss)
    return (
        f"{listing(parts).replace(' and `', ', `')}. **`{top}` has the most duplicates** ({loss[top]['duplicated']} "
        f"of {loss[top]['sent']}), although idempotence is off for all three: every failed acknowledgement becomes "
        "a retry, and `acks=0` never retries. Durability and exactly-once are different properties (notebook 04)."
    )


# the choices of the question on what acks="all" costs
NO_LONGER, ONE_TRIP, MANY_TIMES = (
    "no longer",
    "about one more round trip",
    "ten times longer or more",
)


def extra_wait(perf: dict) -> str:
    """How much longer ``acks="all"`` waits than ``acks=1`` (a choice's measured answer)."""
    one, every = perf["acks=1"]["mean ack latency ms"], perf["acks=all"]["mean ack latency ms"]
    if every - one < 0.25 * one:
        return NO_LONGER
    return ONE_TRIP if every < 4 * one else MANY_TIMES


def costs(perf: dict) -> str:
    """Latency and throughput per ``acks`` setting, in simulated time.

    >>> m = lambda ms, rate: {"mean ack latency ms": ms, "records per simulated s": rate}
    >>> print(costs({"acks=0": m(0.0, 77507), "acks=1": m(2.53, 17756), "acks=all": m(5.09, 8090)}))  # doctest: +NORMALIZE_WHITESPACE
    ... # doctest: +NORMALIZE_WHITESPACE
    `acks=0` waits 0.00 ms (it never waits for an answer), `acks=1` 2.53 ms (one round trip to the
    leader), `acks=all` 5.09 ms (it also waits for the followers' next fetch). Throughput falls in the
    same order: 77 507, 17 756 and 8 090 records per simulated second. These are the simulator's
    numbers: the shape, not the values, carries over to a real cluster (lab 09 measures one).
    """
    ms = {s: perf[s]["mean ack latency ms"] for s in ("acks=0", "acks=1", "acks=all")}
    rates = [thousands(perf[s]["records per simulated s"]) for s in ms]
    return (
        f"`acks=0` waits {ms['acks=0']:.2f} ms (it never waits for an answer), `acks=1` {ms['acks=1']:.2f} ms "
        f"(one round trip to the leader), `acks=all` {ms['acks=all']:.2f} ms (it also waits for the followers' "
        f"next fetch). Throughput falls in the same order: {listing(rates)} records per simulated second. These "
        "are the simulator's numbers: the shape, not the values, carries over to a real cluster (lab 09 "
        "measures one)."
    )
