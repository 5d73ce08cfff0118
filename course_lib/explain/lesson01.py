"""Explanations for notebooks/01_replicated_log: LEO and HW, a paused follower, a new leader.
Each takes the lesson's ``Cluster`` right after the experiment it explains."""

from __future__ import annotations

from .words import listing, thousands

TOPIC = "events"


def _state(cluster) -> dict:
    return cluster.partition_state(TOPIC)


def leo_hw(cluster) -> str:
    """Each replica's LEO and HW, in a line (a note's measured answer).

    >>> print(leo_hw(_three_sent()))  # doctest: +NORMALIZE_WHITESPACE
    broker 1 (leader): LEO 3, HW 3; broker 2: LEO 3, HW 0; broker 3: LEO 3, HW 0
    """
    return "; ".join(
        f"broker {b}{' (leader)' if r['role'] == 'leader' else ''}: LEO {r['leo']}, HW {r['hw']}"
        for b, r in _state(cluster)["replicas"].items()
    )


def after_flush(cluster) -> str:
    """Right after ``flush()``: every copy written, only the leader knows it is committed.

    >>> print(after_flush(_three_sent()))  # doctest: +NORMALIZE_WHITESPACE +ELLIPSIS
    Every replica has LEO 3: all 3 copies hold the records. The leader's HW is 3, but the
    followers (brokers 2 and 3) still show HW 0. ...
    """
    state = _state(cluster)
    reps = state["replicas"]
    leader = state["leader"]
    followers = [b for b in reps if b != leader]
    leos = {r["leo"] for r in reps.values()}
    f_hws = sorted({reps[b]["hw"] for b in followers})
    leo = (
        f"Every replica has LEO {leos.pop()}: all {len(reps)} copies hold the records"
        if len(leos) == 1
        else ("The replicas' LEOs differ: " + ", ".join(f"broker {b} {r['leo']}" for b, r in reps.items()))
    )
    return (
        f"{leo}. The leader's HW is {reps[leader]['hw']}, but the followers (brokers {listing(followers)}) "
        f"still show HW {listing(f_hws, '')}. A follower learns the HW from the leader's *next* fetch response: "
        "the HW is the leader's knowledge first.\n\n"
        "The space-time diagram below shows why: the producer's request (blue) reaches the leader, the "
        'followers\' fetches (grey) carry the records, and only when their next fetch says "I have it" does '
        "the leader advance the HW and send the ACK (green)."
    )


def stalled(cluster) -> str:
    """A paused follower still in the ISR: the HW stands still.

    >>> c = _three_sent(); c.pause(3)
    >>> for i in range(3, 6):
    ...     _ = PRODUCER[0].send("events", f"m-{i}".encode())
    >>> c.run_for(20)
    >>> print(stalled(c))  # doctest: +NORMALIZE_WHITESPACE +ELLIPSIS
    The leader's LEO is 6 but its HW stays at 3: broker 3 is paused and still in the ISR [1, 2, 3], so
    it has not fetched the new records, and no `acks="all"` write completes. ...
    """
    state = _state(cluster)
    reps, leader = state["replicas"], state["leader"]
    paused = [b for b, r in reps.items() if r["paused"]]
    in_isr = [b for b in paused if b in state["isr"]]
    who = (
        f"broker {listing(in_isr)} is paused and still in the ISR {state['isr']}"
        if in_isr
        else "no paused broker is in the ISR"
    )
    return (
        f"The leader's LEO is {reps[leader]['leo']} but its HW stays at {reps[leader]['hw']}: {who}, so it has not "
        'fetched the new records, and no `acks="all"` write completes. Kafka waits for **all** of the ISR, not '
        "just `min.insync.replicas` of them; `min.insync.replicas` only says how small the ISR may get before "
        "writes are refused - and, since Kafka 3.7 (KAFKA-15583), how small it may get before the HW stops "
        "moving: while the ISR is smaller than `min.insync.replicas` the leader still appends `acks=1` writes, "
        "but no consumer can read them until the ISR grows back."
    )


def removed_by(cluster) -> str:
    """Who took the paused broker out of the ISR (a choice's measured answer): the controller if it
    fenced it, else the leader (or nobody, if it is still in).

    >>> c = _frozen_for_30s()
    >>> removed_by(c)
    'the controller'
    """
    paused = [b for b, r in _state(cluster)["replicas"].items() if r["paused"]]
    if all(b in _state(cluster)["isr"] for b in paused):
        return "nobody: it stays in the ISR"
    return "the controller" if _fenced(cluster) else "the leader"


def _fenced(cluster) -> list:
    return [op for op in cluster.history if op.process == "controller" and op.f == "fence"]


def removed(cluster) -> str:
    """Who removed the frozen follower from the ISR, and when the stalled writes completed.

    >>> print(removed(_frozen_for_30s()))  # doctest: +NORMALIZE_WHITESPACE +ELLIPSIS
    The ISR is now [1, 2] and the HW moved to 6. m-3, m-4 and m-5 were acknowledged at 10 003 ms,
    about 10 s after they were sent. What removed broker 3 was not the leader's ... the controller
    *fenced* it at 10 000 ms (no heartbeat for 9000 ms) ...
    """
    state = _state(cluster)
    acked = [op for op in cluster.history if op.f == "send" and op.type == "ok"][3:]
    times = sorted({round(op.time_ms) for op in acked})
    when = f"at {listing(thousands(t) + ' ms' for t in times)}"
    sent = (
        min(
            op.time_ms
            for op in cluster.history
            if op.f == "send" and op.type == "invoke" and op.value in {a.value for a in acked}
        )
        if acked
        else 0
    )
    fences = _fenced(cluster)
    if fences:
        op = fences[0]
        why = (
            "What removed broker {b} was not the leader's `replica.lag.time.max.ms` (30 s) but the controller: "
            "a frozen broker also stops heartbeating, and the controller *fenced* it at {t} ms ({reason}) and "
            "took it out of the ISR."
        ).format(b=op.value["broker"], t=thousands(op.time_ms), reason=op.value["reason"])
    else:
        why = "The leader removed it after `replica.lag.time.max.ms`."
    return (
        f"The ISR is now {state['isr']} and the HW moved to {state['replicas'][state['leader']]['hw']}. "
        f"{listing(op.value for op in acked)} were acknowledged {when}, about "
        f"{round((times[-1] - sent) / 1000) if acked else 0} s after they were sent. {why} Either way, a frozen "
        'follower stalls `acks="all"` writes for seconds.'
    )


def new_leader(cluster) -> str:
    """After the leader's crash: who leads, in which epoch, and why not the paused broker.

    >>> c = _frozen_for_30s(); c.crash(1); c.run_for(10_000)
    >>> print(new_leader(c))  # doctest: +NORMALIZE_WHITESPACE +ELLIPSIS
    Broker 2 leads, in leader epoch 1; its ISR is [2]. Broker 3 was not in the ISR, so it could not
    be chosen ...
    """
    state = _state(cluster)
    out = [b for b, r in state["replicas"].items() if r["paused"] and b not in state["isr"]]
    leader = f"Broker {state['leader']} leads" if state["leader"] is not None else "Nobody leads"
    why = (
        f" Broker {listing(out)} was not in the ISR, so it could not be chosen (that would be an *unclean* "
        "election: notebook 02)."
        if out
        else ""
    )
    return (
        f"{leader}, in leader epoch {state['leader_epoch']}; its ISR is {state['isr']}.{why} The epoch tells "
        "every replica and client which leader is current, so a stale leader's answers can be rejected."
    )


# the lesson's cluster, for the doctests
PRODUCER: list = []


def _three_sent():
    from course_lib.broker import Cluster
    from course_lib.clients import KafkaProducer

    cluster = Cluster(brokers=3, seed=1)
    cluster.create_topic(TOPIC, replication_factor=3, min_insync_replicas=2)
    producer = KafkaProducer(bootstrap_servers=cluster, acks="all")
    PRODUCER[:] = [producer]
    for i in range(3):
        producer.send(TOPIC, f"m-{i}".encode())
    producer.flush()
    return cluster


def _frozen_for_30s():
    cluster = _three_sent()
    cluster.pause(3)
    for i in range(3, 6):
        PRODUCER[0].send(TOPIC, f"m-{i}".encode())
    cluster.run_for(20)
    cluster.run_for(30_000)
    return cluster
