"""Explanations for notebooks/03_retries_ordering_duplicates: a lost ACK on the wire, retries=0,
and reordering with several requests in flight."""

from __future__ import annotations

from .words import listing, thousands

TOPIC = "events"


def log(cluster) -> str:
    """The committed log's values, in order (a choice's measured answer)."""
    return ", ".join(v.decode() for _, _, v in cluster.committed_records(TOPIC))


def lost_ack(cluster, producer) -> str:
    """The lost ACK, retried without idempotence: what the log holds and when each request went.

    >>> c, p = _lost_ack(retries=None)
    >>> print(lost_ack(c, p))  # doctest: +NORMALIZE_WHITESPACE
    The log is **m-0, m-0, m-1**. In the diagram below the first ACK ends in a red cross. The
    producer sent m-0 at 4 ms, waited `request_timeout_ms` (500 ms), refreshed its metadata, waited
    `retry_backoff_ms` (100 ms) and sent the same batch again at 604 ms; the broker appended it a
    second time - it has no way to know it is a retry. m-1 followed at 610 ms.
    """
    sent = [round(e.sent_ms) for e in cluster.network.trace if e.kind == "produce_request"]
    first, retry, *rest = sent + [None, None]
    cfg = producer.config
    after = f" m-1 followed at {thousands(rest[0])} ms." if rest and rest[0] is not None else ""
    return (
        f"The log is **{log(cluster)}**. In the diagram below the first ACK ends in a red cross. The producer sent "
        f"m-0 at {first} ms, waited `request_timeout_ms` ({cfg['request_timeout_ms']} ms), refreshed its metadata, "
        f"waited `retry_backoff_ms` ({cfg['retry_backoff_ms']} ms) and sent the same batch again at "
        f"{thousands(retry)} ms; the broker appended it a second time - it has no way to know it is a retry.{after}"
    )


def seen_and_logged(future, cluster) -> str:
    """What the application saw and whether m-0 is in the log, as the question's choices say it."""
    in_log = "m-0" in log(cluster).split(", ")
    if future.exception is None:
        return "success, and m-0 is in the log" if in_log else "success, but m-0 is not in the log"
    return "an error, but m-0 is in the log" if in_log else "an error, and m-0 is not in the log"


def timed_out(future, cluster) -> str:
    """``retries=0`` and a lost ACK.

    >>> c, p = _lost_ack(retries=0)
    >>> print(timed_out(p.futures[0], c))  # doctest: +NORMALIZE_WHITESPACE
    The application gets `RequestTimedOutError`, the history records the outcome as `info`
    (indeterminate), and m-0 **is** in the log. An application that treats the error as "not
    written" is wrong; one that resends it is back to duplicates. Without retries the producer
    never duplicates, but a failure that is not a lost ACK (a lost *request*) loses the record.
    """
    outcomes = [op.type for op in cluster.history if op.f == "send" and op.type != "invoke"]
    in_log = "m-0" in log(cluster).split(", ")
    error = type(future.exception).__name__ if future.exception is not None else None
    return (
        f"The application gets {f'`{error}`' if error else 'no error'}, the history records the outcome as "
        f"{listing(f'`{o}`' for o in outcomes)}{' (indeterminate)' if outcomes == ['info'] else ''}, and m-0 "
        f'{"**is**" if in_log else "is **not**"} in the log. An application that treats the error as "not written" '
        "is wrong; one that resends it is back to duplicates. Without retries the producer never duplicates, but "
        "a failure that is not a lost ACK (a lost *request*) loses the record."
    )


def order(run) -> str:
    """The values of a run's final read, in log order (a choice's measured answer)."""
    return ", ".join(row[2] for row in next(op for op in run.history if op.f == "final_read").value)


def reordered(run) -> str:
    """Retries with 5 requests in flight and no idempotence.

    >>> from course_lib.experiments.scenarios import run_scenario
    >>> print(reordered(run_scenario("retries_reorder", seed=1, idempotent=False, max_in_flight=5)))  # doctest: +NORMALIZE_WHITESPACE
    ... # doctest: +NORMALIZE_WHITESPACE
    The log holds **m-0, m-2, m-3, m-1**: the retry of m-1 landed behind the batches sent after it.
    The checker counts 1 reordered message and says this configuration allows it: retries with
    max_in_flight_requests_per_connection > 1 and no idempotence: a later batch can be appended
    before a retried earlier one.
    """
    n = run.result.outcome_table()["reordered"]
    reason = run.result.allowed.get("reordered")
    verdict = f"says this configuration allows it: {reason}." if reason else "says this configuration forbids it."
    return (
        f"The log holds **{order(run)}**: the retry of m-1 landed behind the batches sent after it. The checker "
        f"counts {n} reordered message{'s' if n != 1 else ''} and {verdict}"
    )


def which_fix(runs: dict) -> str:
    """Which of the two settings kept the order (a choice's measured answer); ``runs``: the run of
    each setting, ``max_in_flight=1`` first, idempotence second."""
    kept = ["reordered" not in r.result.found for r in runs.values()]
    return {(True, True): "both", (True, False): "only max_in_flight=1", (False, True): "only idempotence"}.get(
        (kept[0], kept[1]), "neither"
    )


def fixes(runs: dict) -> str:
    """``max_in_flight=1`` against idempotence with 5 in flight.

    >>> from course_lib.experiments.scenarios import run_scenario
    >>> settings = (dict(idempotent=False, max_in_flight=1), dict(idempotent=True, max_in_flight=5))
    >>> runs = {str(kw): run_scenario("retries_reorder", seed=1, **kw) for kw in settings}
    >>> print(fixes(runs))  # doctest: +NORMALIZE_WHITESPACE
    **Both** keep the order: m-0, m-1, m-2, m-3 with one request in flight, m-0, m-1, m-2, m-3 with
    idempotence. With one request in flight there is nothing to overtake. The idempotent producer
    numbers every batch; kafka-python (and this simulator) also keeps one batch per partition in
    flight when idempotent, while the Java client allows up to 5 and the broker rejects
    out-of-sequence batches so they are retried in order.
    """
    one, idem = (order(r) for r in runs.values())
    verdict = which_fix(runs)
    return (
        f"**{verdict[:1].upper() + verdict[1:]}** keep{'' if verdict in ('both', 'neither') else 's'} the order: "
        f"{one} with one request in flight, {idem} with idempotence. With one request in flight there is nothing to "
        "overtake. The idempotent producer numbers every batch; kafka-python (and this simulator) also keeps one "
        "batch per partition in flight when idempotent, while the Java client allows up to 5 and the broker rejects "
        "out-of-sequence batches so they are retried in order."
    )


class _Sent:
    """The doctests' producer: its config and the futures of its sends."""

    def __init__(self, producer, futures):
        self.config, self.futures = producer.config, futures


def _lost_ack(retries):
    from course_lib.broker import Cluster
    from course_lib.clients import KafkaProducer

    cluster = Cluster(brokers=3, seed=1, trace=True)
    cluster.create_topic(TOPIC, min_insync_replicas=2)
    config = dict(acks="all", enable_idempotence=False, request_timeout_ms=500)
    if retries is not None:
        config["retries"] = retries
    producer = KafkaProducer(bootstrap_servers=cluster, **config)
    cluster.lose_next_ack(producer.node_id)
    futures = [producer.send(TOPIC, b"m-0")]
    producer.flush()
    if retries is None:
        futures.append(producer.send(TOPIC, b"m-1"))
        producer.flush()
        cluster.final_read(TOPIC)
    return cluster, _Sent(producer, futures)
