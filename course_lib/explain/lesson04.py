"""Explanations for notebooks/04_idempotent_producer: idempotence switched off quietly, sequence
numbers, a deduplicated retry, many lost ACKs, what it does not cover, a kafka-python bug, the price."""

from __future__ import annotations

from ..judge.result import Result
from .lesson03 import log
from .words import listing, thousands


def quietly_off(producer, caught: list) -> str:
    """A producer asked for ``acks=1`` and nothing else.

    >>> import warnings
    >>> from course_lib.broker import Cluster
    >>> from course_lib.clients import KafkaProducer
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     p = KafkaProducer(bootstrap_servers=Cluster(brokers=3, seed=1), acks=1)
    >>> print(quietly_off(p, caught))  # doctest: +NORMALIZE_WHITESPACE
    **Not idempotent**: `enable_idempotence` is `False`, and the only sign is the
    `IdempotenceDisabledWarning`, which names the culprit (`acks=1`). kafka-python does the same with
    only a log line. The producer works, until a lost ACK makes a duplicate. Pass
    `enable_idempotence=False` explicitly if that is what you want; the rest of this lesson uses
    `acks="all"`, where idempotence stays on.
    """
    on = producer.config["enable_idempotence"]
    names = [w.category.__name__ for w in caught]
    sign = (
        f"the only sign is the {listing(f'`{n}`' for n in names)}, which names the culprit (`acks={producer.config['acks']}`)"
        if names
        else "nothing warns"
    )
    return (
        f"**{'Idempotent' if on else 'Not idempotent'}**: `enable_idempotence` is `{on}`, and {sign}. kafka-python "
        "does the same with only a log line. The producer works, until a lost ACK makes a duplicate. Pass "
        "`enable_idempotence=False` explicitly if that is what you want; the rest of this lesson uses "
        '`acks="all"`, where idempotence stays on.'
    )


def sequences(state: dict, partition: str = "events-0") -> str:
    """What an idempotent producer holds after sending (``producer.state``).

    >>> state = {"producer_id": 1000, "producer_epoch": 0, "next_sequence": {"events-0": 3}}
    >>> print(sequences(state))  # doctest: +NORMALIZE_WHITESPACE
    Producer id 1000, epoch 0, **next sequence 3** for `events-0`: the 3 batches carried sequences
    0, 1 and 2. The leader remembers, per producer id, the last batches' sequences.
    """
    nxt = state["next_sequence"][partition]
    return (
        f"Producer id {state['producer_id']}, epoch {state['producer_epoch']}, **next sequence {nxt}** for "
        f"`{partition}`: the {nxt} batches carried sequences {listing(range(nxt))}. The leader remembers, per "
        "producer id, the last batches' sequences."
    )


def deduplicated(cluster, producer, message: str = "m-3") -> str:
    """A lost ACK retried by the idempotent producer.

    >>> c, p = _lost_ack_idempotent()
    >>> print(deduplicated(c, p))  # doctest: +NORMALIZE_WHITESPACE
    The log is **m-0, m-1, m-2, m-3**: m-3 is in it once. The retry carried the same producer id
    (1000) and sequence 3; the leader saw it already had that batch and answered with the first
    copy's offset instead of appending it again.
    """
    values = log(cluster).split(", ")
    times = {1: "once", 2: "twice"}.get(values.count(message), f"{values.count(message)} times")
    state = producer.state
    seq = state["next_sequence"]["events-0"] - 1
    return (
        f"The log is **{', '.join(values)}**: {message} is in it {times}. The retry carried the same producer id "
        f"({state['producer_id']}) and sequence {seq}; the leader saw it already had that batch and answered with "
        "the first copy's offset instead of appending it again."
    )


def over_many(dups: dict) -> str:
    """Duplicates over many seeded lost-ACK schedules, idempotence off and on.

    >>> t = lambda trials, dup: {"trials with duplicates": trials, "trials": 100, "duplicated": dup, "sent": 3000}
    >>> print(over_many({"idempotence off": t(100, 273), "idempotence on": t(0, 0)}))
    Without idempotence 100 of 100 trials have duplicates (273 of 3000 messages); with it, **0** (0 messages).
    """
    off, on = dups["idempotence off"], dups["idempotence on"]
    return (
        f"Without idempotence {off['trials with duplicates']} of {off['trials']} trials have duplicates "
        f"({off['duplicated']} of {off['sent']} messages); with it, **{on['trials with duplicates']}** "
        f"({on['duplicated']} messages)."
    )


def restart_gap(run) -> str:
    """The application restarts and sends again: a new producer id.

    >>> from course_lib.experiments.scenarios import run_scenario
    >>> print(restart_gap(run_scenario("producer_restart_gap", seed=1)))  # doctest: +NORMALIZE_WHITESPACE
    **A duplicate.** The restarted application's producer has a new id (1001; the first one had
    1000), so the broker cannot match its copy to the first one's. Sequence numbers are per
    producer id and per partition: they say nothing across restarts, across partitions, or about
    what a consumer does with the record. A stable `transactional_id` closes the restart gap
    (notebook 06), and the consumer side needs its own design (notebook 05).
    """
    first, *later = run.notes["producer_ids"]
    dup = run.result.outcome_table()["duplicated"]
    return (
        f"**{'A duplicate' if dup else 'No duplicate'}.** The restarted application's producer has a new id "
        f"({listing(later)}; the first one had {first}), so the broker cannot match its copy to the first one's. "
        "Sequence numbers are per producer id and per partition: they say nothing across restarts, across "
        "partitions, or about what a consumer does with the record. A stable `transactional_id` closes the "
        "restart gap (notebook 06), and the consumer side needs its own design (notebook 05)."
    )


def second_send(probe: Result) -> str:
    """What became of the second record (a choice's measured answer)."""
    second = probe.numbers["second_after_10s"]
    return {"ok": "written", "pending": "never sent: it stays pending"}.get(second, "refused with an error")


def wedged(result: Result) -> str:
    """kafka-python 3.0.12 after an expired idempotent batch (``behaviour_probes.idempotent_batch_expired``).

    >>> probe = {"first": "KafkaTimeoutError", "second_after_10s": "pending", "close(timeout=0)": "KafkaTimeoutError", "read": []}
    >>> print(wedged(Result("probe", "idempotent_batch_expired", numbers=probe)))  # doctest: +ELLIPSIS +NORMALIZE_WHITESPACE
    The first send failed with `KafkaTimeoutError`, as it should; the second is still **pending** 10 s
    later, and 0 records were read. This is a bug in kafka-python 3.0.12: ...
    """
    probe = result.numbers
    return (
        f"The first send failed with `{probe['first']}`, as it should; the second is still **{probe['second_after_10s']}** "
        f"10 s later, and {len(probe['read'])} records were read. This is a bug in kafka-python 3.0.12: after an "
        "expired batch (it may have been appended, so the partition's sequence is unknown) the producer drops its "
        "producer id and never asks for a new one, so it sends nothing and expires nothing - `flush()` only times "
        "out. On the lab's real cluster the second send stayed pending too; the simulator does the same. The Java "
        "client bumps the epoch and carries on. So after a `KafkaTimeoutError` from an idempotent kafka-python "
        "producer, create a new one. This one cannot even be closed: `close()` flushes first, so it never returns "
        f"(the simulator raises `KafkaTimeoutError` instead), and `close(timeout=0)` raises `{probe['close(timeout=0)']}` "
        "and leaves it running (lesson 02's `NotEnoughReplicas` sends leave their producer in this state too)."
    )


def throughput_cost(perf: dict) -> str:
    """How much throughput idempotence costs (a choice's measured answer)."""
    kept = perf["acks=all + idempotence"]["records per simulated s"] / perf["acks=all"]["records per simulated s"]
    return "none" if kept > 0.95 else "less than half" if kept > 0.5 else "half or more"


def price(perf: dict) -> str:
    """Latency and throughput with and without idempotence, in simulated time.

    >>> m = lambda ms, rate: {"mean ack latency ms": ms, "records per simulated s": rate}
    >>> print(price({"acks=all": m(5.09, 8090), "acks=all + idempotence": m(7.62, 2119)}))
    ... # doctest: +NORMALIZE_WHITESPACE
    At a light load idempotence adds 2.53 ms per acknowledgement here (7.62 vs 5.09 ms), and when 500
    records arrive at once throughput drops from 8 090 to 2 119 records per simulated second (74 %
    less), because kafka-python keeps only one batch per partition in flight. The Java client keeps
    up to `max.in.flight.requests.per.connection=5` in flight with idempotence, so its cost is much
    smaller - but never literally zero.
    """
    off, on = perf["acks=all"], perf["acks=all + idempotence"]
    ms_off, ms_on = off["mean ack latency ms"], on["mean ack latency ms"]
    r_off, r_on = off["records per simulated s"], on["records per simulated s"]
    return (
        f"At a light load idempotence adds {ms_on - ms_off:.2f} ms per acknowledgement here ({ms_on:.2f} vs "
        f"{ms_off:.2f} ms), and when 500 records arrive at once throughput drops from {thousands(r_off)} to "
        f"{thousands(r_on)} records per simulated second ({round(100 * (1 - r_on / r_off))} % less), because "
        "kafka-python keeps only one batch per partition in flight. The Java client keeps up to "
        "`max.in.flight.requests.per.connection=5` in flight with idempotence, so its cost is much smaller - but "
        "never literally zero."
    )


def _lost_ack_idempotent():
    from course_lib.broker import Cluster
    from course_lib.clients import KafkaProducer

    cluster = Cluster(brokers=3, seed=1, trace=True)
    cluster.create_topic("events", min_insync_replicas=2)
    producer = KafkaProducer(bootstrap_servers=cluster, acks="all", enable_idempotence=True, request_timeout_ms=500)
    for i in range(3):
        producer.send("events", f"m-{i}".encode())
        producer.flush()
    cluster.lose_next_ack(producer.node_id)
    producer.send("events", b"m-3")
    producer.flush()
    cluster.final_read("events")
    return cluster, producer
