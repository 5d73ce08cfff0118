"""Explanations for notebooks/09_real_kafka_lab: a leader killed after acknowledging, a lost ACK,
the fidelity table, transactions, the production clients, your own code under faults, the costs.

Real runs vary from run to run and machine to machine: every number here comes from the run it
is given, and every sentence that depends on the outcome is chosen by it (the doctests run the
same functions on the simulator, or on rows shaped like the lab's)."""

from __future__ import annotations

import json
import math
from pathlib import Path

from course_lib.clusters.jars import kafka_version

from .words import count, listing, thousands, with_fate

#: the real cluster of the lab's columns: the release it runs (``$COURSE_KAFKA_VERSION``, else
#: the course's default), as the matrices' titles name it (:data:`course_lib.experiments.fidelity.KAFKA_TITLE`)
KAFKA_TITLE = f"Kafka {kafka_version()}"

# ---- experiment 1: kill the leader after it acknowledged ------------------------------------------


def _frozen(run) -> list[str]:
    """The writes sent while the followers were frozen (the warm-up writes before it aside)."""
    return [m.id for m in run.result.messages.values() if not m.id.startswith("warmup")]


def before_the_crash(run) -> str:
    """What the producer was told before the leader died.

    >>> from course_lib.experiments.scenarios import run_scenario
    >>> print(before_the_crash(run_scenario("leader_crash_after_ack", seed=0, acks=1)))
    acknowledged before the crash: 13 (3 warm-up writes, 10 sent while the followers were frozen)
    """
    acked, sent = run.notes["acked_before_crash"], _frozen(run)
    warm = len(run.result.messages) - len(sent)
    return (
        f"acknowledged before the crash: {acked} ({warm} warm-up writes, "
        f"{acked - warm} sent while the followers were frozen)"
    )


def survivors(run) -> int:
    """How many writes sent while the followers were frozen are in the log at the end."""
    kept = set(with_fate(run.result, "delivered"))
    return sum(1 for m in _frozen(run) if m in kept)


def acks_one(run) -> str:
    """``acks=1``: the leader alone had the writes it acknowledged, then died.

    >>> from course_lib.experiments.scenarios import run_scenario
    >>> print(acks_one(run_scenario("leader_crash_after_ack", seed=0, acks=1)))  # doctest: +NORMALIZE_WHITESPACE
    Of the 10 writes the leader acknowledged while its followers were frozen, **0 survive** and
    **10 are lost** (m-0 to m-9): acknowledged, then missing from the log. The checker explains each
    from the history: acknowledged by the old leader, which crashed, then a clean election of a
    follower that never had them. This is notebook 02's result, on a real cluster.
    """
    frozen, lost = _frozen(run), with_fate(run.result, "lost")
    kept = survivors(run)
    lost_text = f"{lost[0]} to {lost[-1]}" if len(lost) > 2 else listing(lost)
    text = (
        f"Of the {len(frozen)} writes the leader acknowledged while its followers were frozen, **{kept} "
        f"{'survives' if kept == 1 else 'survive'}** "
        f"and **{len(lost)} {'is' if len(lost) == 1 else 'are'} lost** ({lost_text}): acknowledged, then missing "
        "from the log. The checker explains each from the history: acknowledged by the old leader, which "
        "crashed, then a clean election of a follower that never had them."
    )
    if kept:
        text += (
            f" {listing(m for m in frozen if m not in lost)} survived although only the leader had acknowledged "
            "it: a frozen follower's pending fetch was answered into its socket buffer, and it appended that "
            "when it resumed."
        )
    return text + " This is notebook 02's result, on a real cluster."


def acknowledged_while_frozen(run) -> int:
    """How many writes sent while the followers were frozen were acknowledged before the crash."""
    return run.notes["acked_before_crash"] - (len(run.result.messages) - len(_frozen(run)))


def acks_all(run) -> str:
    """``acks="all"`` and ``min.insync.replicas=2``: the same crash.

    >>> from course_lib.experiments.scenarios import run_scenario
    >>> print(acks_all(run_scenario("leader_crash_after_ack", seed=0, acks="all")))  # doctest: +NORMALIZE_WHITESPACE
    **0 of the 10** writes sent while the followers were frozen were acknowledged before the crash:
    the leader waits for the in-sync followers, and frozen followers never confirm. kafka-python's
    retries then delivered 13 of the 13 writes once to the new leader: no anomaly.
    """
    table, acked = run.result.outcome_table(), acknowledged_while_frozen(run)
    found = sorted(run.result.found)
    verdict = "no anomaly" if not found else f"the checker found {listing(found)}"
    return (
        f"**{acked} of the {len(_frozen(run))}** writes sent while the followers were frozen were acknowledged "
        "before the crash: the leader waits for the in-sync followers, and frozen followers never confirm. "
        f"kafka-python's retries then delivered {table['delivered once']} of the {table['sent']} writes once to "
        f"the new leader: {verdict}."
    )


# ---- experiment 2: lose an ACK ---------------------------------------------------------------------

# the choices of the question on a retry after a lost ACK, without and then with idempotence
RETRY_CHOICES = (
    "without: a duplicate; with: each message once",
    "a duplicate both times",
    "each message once both times",
    "something else",
)


def _outcome(run) -> str:
    found = run.result.found
    return "a duplicate" if found == {"duplicate"} else "each message once" if not found else "other"


def retry_outcome(runs: list) -> str:
    """The choice a run without idempotence and one with it (in that order) measured."""
    plain, idempotent = (_outcome(r) for r in runs)
    if (plain, idempotent) == ("a duplicate", "each message once"):
        return RETRY_CHOICES[0]
    if plain == idempotent and plain != "other":
        return RETRY_CHOICES[1] if plain == "a duplicate" else RETRY_CHOICES[2]
    return RETRY_CHOICES[3]


def retry(runs: list) -> str:
    """The lost ACK, without idempotence and with it.

    >>> from course_lib.experiments.scenarios import run_scenario
    >>> runs = [run_scenario("lost_ack_retry", seed=0, idempotent=i) for i in (False, True)]
    >>> print(retry(runs))  # doctest: +NORMALIZE_WHITESPACE
    Without idempotence the retried batch is appended a second time: **3 messages duplicated**
    (m-2, m-3 and m-4), 7 sent. With idempotence the broker recognises the producer id and sequence
    number and answers the retry with the first append's offset: **0 duplicated**, 7 of 7 delivered
    once. (Notebooks 03-04.)
    """
    plain, idempotent = (r.result for r in runs)
    dup = with_fate(plain, "duplicated")
    safe = idempotent.outcome_table()
    first = (
        f"Without idempotence the retried batch is appended a second time: **{count(len(dup), 'message')} "
        f"duplicated** ({listing(dup)}), {plain.outcome_table()['sent']} sent."
        if dup
        else f"Without idempotence the retry was **not** appended twice this time (the checker found "
        f"{listing(sorted(plain.found))}): whether it is depends on when the connection dropped."
    )
    second = (
        "With idempotence the broker recognises the producer id and sequence number and answers the retry with "
        f"the first append's offset: **{safe['duplicated']} duplicated**, {safe['delivered once']} of "
        f"{safe['sent']} delivered once."
    )
    other = sorted(idempotent.found - {"duplicate"})
    if other:
        second += f" (The checker found {listing(other)} there too.)"
    return f"{first} {second} (Notebooks 03-04.)"


# ---- the fidelity table ------------------------------------------------------------------------------

#: the columns that run kafka-python (or the simulator's clients): where a difference is the model's
_KAFKA_PYTHON = ("simulator", "wire", "real Kafka")


def _ran(row: dict, keys) -> dict:
    return {k: row[k] for k in keys if row.get(k) is not None}


def disagreeing(table: list[dict]) -> int:
    """How many cases the simulator and kafka-python (simulated cluster, Kafka) disagree on."""
    return sum(1 for r in table if len({tuple(v) for v in _ran(r, _KAFKA_PYTHON).values()}) > 1)


def fidelity(table: list[dict]) -> str:
    """The fidelity table, read for the simulator's columns and then every column.

    >>> row = lambda name, sim, wire, real, **more: {"scenario": name, "parameters": {}, "simulator": sim,
    ...     "wire": wire, "real Kafka": real, "agree": None, **more}
    >>> table = [row("lost_ack_retry", ["duplicate"], ["duplicate"], ["duplicate"], agree=True),
    ...          row("random_faults", [], [], None, **{"Kafka confluent-kafka": None, "agree": True}),
    ...          row("leader_crash_after_ack", [], [], [], **{"Kafka confluent-kafka": ["duplicate"], "agree": False})]
    >>> print(fidelity(table))  # doctest: +NORMALIZE_WHITESPACE +ELLIPSIS
    **All 3 cases agree** between the simulator and kafka-python, on the simulated cluster (3 cases
    ran) and on Kafka ... (2 ran): the simulator's explanations (offsets, high watermark, epochs,
    fencing) describe what the real cluster did. Agreement is engineered, not luck: each real fault
    is built so the real mechanism is the one the simulator models (freeze the followers so the dead
    leader alone had the writes; run the KRaft controller as a process of its own, so killing two of
    the three brokers leaves a controller to fence them and, for the unclean election, to elect the
    out-of-sync survivor; let the proxy fail one produce request and answer it late, so the requests
    behind it land first). With the other clients' columns, 2 of 3 cases agree on every column that
    ran them; the others differ by client, which the next question is about.
    """
    wire = sum(1 for r in table if r.get("wire") is not None)
    real = sum(1 for r in table if r.get("real Kafka") is not None)
    differ = [r for r in table if len({tuple(v) for v in _ran(r, _KAFKA_PYTHON).values()}) > 1]
    if not differ:
        text = (
            f"**All {len(table)} cases agree** between the simulator and kafka-python, on the simulated cluster "
            f"({wire} cases ran) and on {KAFKA_TITLE} ({real} ran): the simulator's explanations (offsets, high "
            "watermark, epochs, fencing) describe what the real cluster did. Agreement is engineered, not luck: "
            "each real fault is built so the real mechanism is the one the simulator models (freeze the followers "
            "so the dead leader alone had the writes; run the KRaft controller as a process of its own, so killing "
            "two of the three brokers leaves a controller to fence them and, for the unclean election, to elect "
            "the out-of-sync survivor; let the proxy fail one produce request and answer it late, so the requests "
            "behind it land first)."
        )
    else:
        cases = listing(f"`{r['scenario']}` {_params(r)}".strip() for r in differ)
        text = (
            f"**{len(differ)} of {len(table)} cases disagree** between the simulator and kafka-python: {cases}. "
            "The line under the table names the pair that differs: the simulator and the wire column differ by "
            "the client, the wire and the real column by the broker. A disagreement means the model misses a "
            "mechanism (or the real fault did not trigger the one it models): the simulator's value depends on "
            "this table."
        )
    if not real:
        text += " The real column did not run here: the wire column alone checks the simulator's clients."
    ran = [r for r in table if r.get("agree") is not None]
    agree = sum(1 for r in ran if r["agree"])
    if agree < len(ran):
        text += (
            f" With the other clients' columns, {agree} of {len(ran)} cases agree on every column that ran them; "
            "the others differ by client, which the next question is about."
        )
    return text


def _params(row: dict) -> str:
    return ", ".join(f"{k}={v}" for k, v in row["parameters"].items())


# ---- transactions ---------------------------------------------------------------------------------


def log_end(aborted: list) -> int:
    """The log end offset the aborted-transaction runs measured (the first run's)."""
    return aborted[0].notes["log_end_offset"]


def transactions(zombie, aborted: list) -> str:
    """A zombie's late commit, and a partition with an aborted transaction under both isolation levels.

    >>> from course_lib.experiments.consumer_scenarios import aborted_transaction, zombie_fencing
    >>> aborted = [aborted_transaction(seed=0, isolation_level=i) for i in ("read_committed", "read_uncommitted")]
    >>> print(transactions(zombie_fencing(seed=0), aborted))  # doctest: +NORMALIZE_WHITESPACE
    The log end offset is **12**, 3 more than the 9 records: each commit or abort marker takes an
    offset. The `read_committed` reader returned a-0 to a-2 and c-0 to c-2 (it skips b-0 to b-2); the
    `read_uncommitted` one returned 9 records, b-0 to b-2 among them. The zombie's late commit
    raised `ProducerFencedError`: its replacement's `init_transactions()` bumped the epoch and aborted
    the zombie's open transaction.
    """
    end, parts = log_end(aborted), []
    records = sum(1 for m in aborted[0].result.messages.values())
    parts.append(
        f"The log end offset is **{end}**, {end - records} more than the {records} records: each commit or abort "
        "marker takes an offset."
    )
    for run in aborted:
        level, seen = run.topic_config["isolation_level"], [v for _, v in run.notes["seen"]]
        skipped = [v for v in (m.id for m in run.result.messages.values()) if v not in seen]
        if level == "read_committed":
            got = listing(_runs_of(seen))
            parts.append(
                f"The `read_committed` reader returned {got}"
                + (f" (it skips {listing(_runs_of(skipped))});" if skipped else ", every record;")
            )
        else:
            aborted_seen = [v for v in seen if v.startswith("b-")]
            parts.append(
                f"the `read_uncommitted` one returned {count(len(seen), 'record')}"
                + (
                    f", {listing(_runs_of(aborted_seen))} among them."
                    if aborted_seen
                    else ", none of the aborted ones."
                )
            )
    if zombie is not None:
        error = zombie.notes["zombie_error"]
        parts.append(
            f"The zombie's late commit raised `{error}`: its replacement's `init_transactions()` bumped the epoch and "
            "aborted the zombie's open transaction."
            if error
            else "The zombie's late commit **succeeded**: nothing fenced it."
        )
    return " ".join(parts)


def _runs_of(values: list[str]) -> list[str]:
    """``["a-0", "a-1", "a-2", "c-0"]`` as ``["a-0 to a-2", "c-0"]``: each transaction's records."""
    groups: dict[str, list[str]] = {}
    for v in values:
        groups.setdefault(v.split("-")[0], []).append(v)
    return [g[0] if len(g) == 1 else f"{g[0]} to {g[-1]}" for g in groups.values()]


# ---- your production client -----------------------------------------------------------------------


def _client_keys(table: list[dict]) -> dict[str, list[tuple[str, str]]]:
    from course_lib.experiments.fidelity import MATRIX, MATRIX_CLIENTS

    base = {"wire": "wire", "kafka": "real Kafka"}
    return {
        client: [(c.key, base[c.place.name]) for c in MATRIX if c.client == client and any(c.key in r for r in table)]
        for client in MATRIX_CLIENTS[1:]
    }


def _differences(table: list[dict]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for client, pairs in _client_keys(table).items():
        cases = []
        for r in table:
            if any(r.get(k) is not None and r.get(b) is not None and r[k] != r[b] for k, b in pairs):
                cases.append(f"{r['scenario']} {_params(r)}".strip())
        out[client] = cases
    return out


def client_cases(table: list[dict]) -> str:
    """Where each client found other anomalies than kafka-python on the same cluster, in a line.

    >>> table = [{"scenario": "random_faults", "parameters": {}, "wire": [], "wire confluent-kafka": ["duplicate"],
    ...           "wire java": []}]
    >>> client_cases(table)
    'confluent-kafka: random_faults; java: none'
    """
    return "; ".join(f"{client}: {listing(cases)}" for client, cases in _differences(table).items())


def clients(table: list[dict]) -> str:
    """The production clients against kafka-python.

    >>> table = [{"scenario": "random_faults", "parameters": {}, "wire": [], "wire confluent-kafka": ["duplicate"],
    ...           "wire java": []}, {"scenario": "lost_ack_retry", "parameters": {"idempotent": True}, "wire": [],
    ...           "wire confluent-kafka": [], "wire java": []}]
    >>> print(clients(table))  # doctest: +NORMALIZE_WHITESPACE
    **confluent-kafka** found other anomalies than kafka-python in 1 of 2 cases: random_faults
    (librdkafka's enable.idempotence defaults to false (kafka-python's and Java's to true), and the
    scenario leaves it at the client's default: a batch retried after a lost ACK is written twice).
    **java** found the same anomalies as kafka-python in all 2 cases. The guarantees of the earlier
    lessons hold for every client *with the same settings*; the defaults are not the same.
    """
    from course_lib.experiments.fidelity import BY_DESIGN

    keys, parts = _client_keys(table), []
    for client, cases in _differences(table).items():
        ran = sum(1 for r in table if any(r.get(k) is not None and r.get(b) is not None for k, b in keys[client]))
        if not ran:
            parts.append(f"**{client}** did not run here.")
        elif not cases:
            parts.append(f"**{client}** found the same anomalies as kafka-python in all {ran} cases.")
        else:
            named = [r for r in table if f"{r['scenario']} {_params(r)}".strip() in cases]
            why = [
                f"{c} ({BY_DESIGN.get((r['scenario'], client), 'not explained: a bug of a client or its adapter')})"
                for c, r in zip(cases, named)
            ]
            parts.append(
                f"**{client}** found other anomalies than kafka-python in {len(cases)} of {ran} cases: {'; '.join(why)}."
            )
    return " ".join(parts) + (
        " The guarantees of the earlier lessons hold for every client *with the same settings*; the defaults are "
        "not the same."
    )


# ---- your own kafka-python code under seeded faults --------------------------------------------------


def orders_read(outcomes: dict) -> int:
    """How many records the consumer read in the run without idempotence."""
    return outcomes["enable_idempotence=False"]["read"]


def own_code(outcomes: dict) -> str:
    """The orders app with kafka-python's defaults and with ``enable_idempotence=False``.

    >>> o = {"kafka-python's defaults": {"read": 10, "distinct": 10, "twice": []},
    ...      "enable_idempotence=False": {"read": 11, "distinct": 10, "twice": ["order-3"]}}
    >>> print(own_code(o))  # doctest: +NORMALIZE_WHITESPACE
    With kafka-python's defaults the consumer read **10 records**, 10 distinct orders, none twice:
    the lost ACK's retry carries the same producer id and sequence number, and the broker answers it
    with the first append's offset; the crash cost nothing either, since `acks="all"` with
    `min.insync.replicas=2` acknowledged only writes a follower had. With `enable_idempotence=False`
    it read **11 records**, 10 distinct: order-3 twice, the retry appended a second time (notebooks
    03-04).
    """
    safe, plain = outcomes["kafka-python's defaults"], outcomes["enable_idempotence=False"]

    def twice(o) -> str:
        return f"{listing(o['twice'])} twice" if o["twice"] else "none twice"

    return (
        f"With kafka-python's defaults the consumer read **{safe['read']} records**, {safe['distinct']} distinct "
        f"orders, {twice(safe)}: the lost ACK's retry carries the same producer id and sequence number, and the "
        'broker answers it with the first append\'s offset; the crash cost nothing either, since `acks="all"` '
        "with `min.insync.replicas=2` acknowledged only writes a follower had. With `enable_idempotence=False` "
        f"it read **{plain['read']} records**, {plain['distinct']} distinct: {twice(plain)}"
        + (", the retry appended a second time (notebooks 03-04)." if plain["twice"] else ".")
    )


# ---- what the guarantees cost -----------------------------------------------------------------------


def _by(costs: list[dict]) -> dict[str, dict]:
    return {r["configuration"]: r for r in costs}


def cost_summary(costs: list[dict]) -> str:
    """The measured answers to the cost question, in a line (fastest first, idempotence, one write).

    >>> print(cost_summary(SAMPLE_COSTS))
    fastest to slowest: acks=0, acks=1, acks=all, transactions of 100, acks=all, idempotent, transactions of 10; idempotent / plain acks=all throughput 0.62; one acks="all" write 4.1 ms
    """
    order = [r["configuration"] for r in sorted(costs, key=lambda r: -r["msg/s"])]
    by = _by(costs)
    ratio = by["acks=all, idempotent"]["msg/s"] / by["acks=all"]["msg/s"] if by["acks=all"]["msg/s"] else math.nan
    one = by["acks=all"].get("one-at-a-time p50 ms")
    return (
        f"fastest to slowest: {', '.join(order)}; idempotent / plain acks=all throughput {ratio:.2f}; "
        f'one acks="all" write {one} ms'
    )


def costs(costs: list[dict], verdicts: dict) -> str:
    """The cost rows of this run, and the two claims' verdicts (``claim_verdicts(costs)``).

    >>> from course_lib.experiments.on_kafka.measure import claim_verdicts
    >>> print(costs(SAMPLE_COSTS, claim_verdicts(SAMPLE_COSTS)))  # doctest: +NORMALIZE_WHITESPACE
    **Throughput, fastest first:** acks=0 (20 000 msg/s), acks=1 (9 000), acks=all (8 000),
    transactions of 100 (6 000), acks=all, idempotent (5 000) and transactions of 10 (1 500).
    <BLANKLINE>
    - The saturated rows' p50 latency (31.0 to 120.0 ms) is mostly time queued in the producer's
      buffer: one write at a time takes 2.9 to 4.1 ms, the round trip itself. One at a time,
      `acks="all"` took 4.1 ms and `acks=1` 2.9 ms: `acks="all"` was the slower, as it waits for the
      whole ISR (on a loaded machine the noise is of the same size: compare several runs).
    - "The order of 10 ms" for a committed (`acks="all"`) write: 4.1 ms here, so the claim holds: the
      order of 10 ms. Add a network between brokers and it grows.
    - Idempotence: the idempotent `acks="all"` row moved 0.62 times the plain row's throughput (38 %
      slower), so the claim 'idempotence has no performance cost' does not hold here: idempotence cost
      throughput. In kafka-python the idempotent producer keeps one batch per partition in flight, so
      it loses pipelining; one write at a time it took 3.9 ms against 4.1 ms. Notebook 08 (claim 9)
      explains the mechanism; the claim's "exactly-once" part is wrong regardless.
    - Transactions of 100 moved 4.0 times as many messages per second as transactions of 10: each
      commit pays a fixed cost (markers to every partition, the coordinator's log).
    """
    by = _by(costs)
    order = sorted(costs, key=lambda r: -r["msg/s"])
    rates = [f"{r['configuration']} ({thousands(r['msg/s'])}{' msg/s' if i == 0 else ''})" for i, r in enumerate(order)]
    saturated = [r["p50 ms"] for r in costs if r["configuration"] != "acks=0"]
    single = [r["one-at-a-time p50 ms"] for r in costs if "one-at-a-time p50 ms" in r]
    every, one = by["acks=all"].get("one-at-a-time p50 ms"), by["acks=1"].get("one-at-a-time p50 ms")
    idem = by["acks=all, idempotent"]
    ratio = verdicts["idempotent / plain acks=all throughput"]
    lines = [f"**Throughput, fastest first:** {listing(rates)}.", ""]
    queued = min(saturated) > max(single) if single else False
    lines.append(
        f"- The saturated rows' p50 latency ({min(saturated)} to {max(saturated)} ms) is "
        + ("mostly time queued in the producer's buffer" if queued else "not far above the round trip here")
        + (f": one write at a time takes {min(single)} to {max(single)} ms, the round trip itself." if single else ".")
        + (
            f' One at a time, `acks="all"` took {every} ms and `acks=1` {one} ms: `acks="all"` was the '
            + (
                "slower, as it waits for the whole ISR"
                if every > one
                else "faster or as fast this time, although it waits for the whole ISR"
            )
            + " (on a loaded machine the noise is of the same size: compare several runs)."
            if every is not None and one is not None
            else ""
        )
    )
    lines.append(
        f'- "The order of 10 ms" for a committed (`acks="all"`) write: {every} ms here, so the claim '
        f"{verdicts[next(k for k in verdicts if '10 ms' in k)]}. Add a network between brokers and it grows."
    )
    slower = round((1 - ratio) * 100)
    single_idem = idem.get("one-at-a-time p50 ms")
    lines.append(
        f'- Idempotence: the idempotent `acks="all"` row moved {ratio:.2f} times the plain row\'s throughput ('
        + (f"{slower} % slower" if slower > 0 else "no slower")
        + f"), so the claim 'idempotence has no performance cost' {verdicts[next(k for k in verdicts if 'idempotence' in k)]}."
        + (
            " In kafka-python the idempotent producer keeps one batch per partition in flight, so it loses pipelining"
            if slower > 0
            else " Here it kept up, although kafka-python's idempotent producer keeps one batch per partition in "
            "flight (on a loaded machine the saturated rows are noisy: compare several runs)"
        )
        + (
            f"; one write at a time it took {single_idem} ms against {every} ms"
            if single_idem is not None and every is not None
            else ""
        )
        + '. Notebook 08 (claim 9) explains the mechanism; the claim\'s "exactly-once" part is wrong regardless.'
    )
    tx = verdicts.get("transactions of 100 / of 10 throughput")
    if tx is not None:
        lines.append(
            f"- Transactions of 100 moved {tx} times as many messages per second as transactions of 10: each commit "
            "pays a fixed cost (markers to every partition, the coordinator's log)."
        )
    return "\n".join(lines)


#: rows shaped like :func:`course_lib.experiments.on_kafka.measure.tradeoffs`' (for the doctests; not a measurement)
SAMPLE_COSTS = [
    {"configuration": "acks=0", "msg/s": 20000, "p50 ms": 0.0},
    {"configuration": "acks=1", "msg/s": 9000, "p50 ms": 31.0, "one-at-a-time p50 ms": 2.9},
    {"configuration": "acks=all", "msg/s": 8000, "p50 ms": 40.0, "one-at-a-time p50 ms": 4.1},
    {"configuration": "acks=all, idempotent", "msg/s": 5000, "p50 ms": 60.0, "one-at-a-time p50 ms": 3.9},
    {"configuration": "transactions of 10", "msg/s": 1500, "p50 ms": 120.0},
    {"configuration": "transactions of 100", "msg/s": 6000, "p50 ms": 90.0},
]


# ---- clients kafka-python does not have: KIP-848 and share groups (course_lib/experiments/protocol_matrix.py) ----

#: what a learner can answer: which layer the protocol matrix's disagreements point at
PROTOCOL_CHOICES = [
    "none: every column shows the same counts",
    "the simulator's own clients",
    f"the brokers: the simulated cluster vs {KAFKA_TITLE}",
    "the clients: Java vs librdkafka",
    "several of these",
]


def _layer(pair: str) -> int:
    """The :data:`PROTOCOL_CHOICES` index a disagreement (``"a vs b: ..."``) points at."""
    a, b = pair.split(":", 1)[0].split(" vs ")
    if a == "simulator":
        return 1
    return 2 if a.split(" ", 1)[1] == b.split(" ", 1)[1] else 3


def protocol_differs(rows: list[dict]) -> str:
    """Which layer the protocol matrix's disagreements point at (one of :data:`PROTOCOL_CHOICES`).

    >>> protocol_differs([{"disagree": []}])
    'none: every column shows the same counts'
    >>> protocol_differs([{"disagree": ["wire java vs Kafka java: the simulated broker differs"]}]) == PROTOCOL_CHOICES[2]
    True
    >>> PROTOCOL_CHOICES[2] == f"the brokers: the simulated cluster vs Kafka {kafka_version()}"
    True
    """
    layers = {_layer(pair) for r in rows for pair in r["disagree"]}
    return PROTOCOL_CHOICES[0 if not layers else layers.pop() if len(layers) == 1 else 4]


def _cell_of(rows: list[dict], title: str) -> str | None:
    """The row's count where every column that shows it agrees (None: they do not, or no row)."""
    row = next((r for r in rows if r["row"] == title), None)
    if row is None or row["disagree"] or row.get("simulator") is None:
        return None
    return row["simulator"]


def protocols(rows: list[dict]) -> str:
    """The protocol matrix read: how many counts agree, what the counts say, where columns differ
    and why, and which columns did not run.

    >>> from course_lib.experiments.protocol_matrix import COLUMNS, EXPERIMENTS, compute_run, protocol_rows
    >>> rows = protocol_rows({(e, "simulator"): (compute_run(e, COLUMNS[0]), None) for e in EXPERIMENTS})
    >>> print(protocols(rows))  # doctest: +NORMALIZE_WHITESPACE
    **9 of 9 counts** show no disagreement between the columns that ran them (simulator). A crashed
    member's partitions go to the other member, which reads them again from the start (nothing was
    committed): **10 twice (20 + 10 read)**. A handler slower than max.poll.interval.ms costs twice
    that: **20 twice (20 + 20 read)** - its member leaves, the other reads its partitions again, then
    it rejoins at its next poll and reads what it gets back again; only the partitions that move stop.
    In the share group the stalled worker's lock ran out and its records went to the others (**6
    held, 6 redelivered**), a poison record was delivered **2 more, then archived** - given up on
    purpose - and nothing accepted was processed twice (**22 once, 0 twice**). Not run here:
    wire java, wire confluent-kafka, Kafka java and Kafka confluent-kafka (not asked for).
    """
    agree = sum(1 for r in rows if not r["disagree"])
    ran = [
        k
        for k in ("simulator", "wire java", "wire confluent-kafka", "Kafka java", "Kafka confluent-kafka")
        if any(r.get(k) is not None for r in rows)
    ]
    text = f"**{agree} of {len(rows)} counts** show no disagreement between the columns that ran them ({listing(ran)})."
    crash, slow = _cell_of(rows, "KIP-848: a member crashes"), _cell_of(rows, "KIP-848: a slow handler")
    if crash and slow:
        ratio = int(slow.split()[0]) / max(1, int(crash.split()[0]))
        than = "twice that" if ratio == 2 else f"{ratio:g} times that" if ratio > 1 else "no more"
        text += (
            " A crashed member's partitions go to the other member, which reads them again from the start "
            f"(nothing was committed): **{crash}**. A handler slower than max.poll.interval.ms costs {than}: "
            f"**{slow}** - its member leaves, the other reads its partitions again, then it rejoins at its next "
            "poll and reads what it gets back again; only the partitions that move stop."
        )
    lock = _cell_of(rows, "share: a stalled worker's lock expires")
    poison = _cell_of(rows, "share: a poison record (limit 3)")
    once = _cell_of(rows, "share: accepted, of 24")
    if lock and poison and once:
        text += (
            f" In the share group the stalled worker's lock ran out and its records went to the others (**{lock}**), "
            f"a poison record was delivered **{poison}** - given up on purpose - and nothing accepted was "
            f"processed twice (**{once}**)."
        )
    differ = [f"{r['row']}: {pair}" for r in rows for pair in r["disagree"]]
    if differ:
        text += f" Where columns differ: {'; '.join(differ)}."
    missing: dict[str, list[str]] = {}
    for r in rows:
        for key, why in r["not run"].items():
            if key not in missing.setdefault(why, []):
                missing[why].append(key)
    if missing:
        text += " Not run here: " + "; ".join(f"{listing(keys)} ({why})" for why, keys in missing.items()) + "."
    return text


# ---- from one Kafka release to the next -----------------------------------------------------------
#: every experiment on each release the course measures, as ``python -m bench versions`` last
#: measured it (bench/kafka_versions.py writes it; nothing else does)
VERSIONS_FILE = Path(__file__).with_name("kafka_versions.json")
VERSIONS_START = "<!-- kafka-versions: generated by python -m bench versions, do not edit -->"
VERSIONS_END = "<!-- /kafka-versions -->"


def version_table() -> dict:
    """The measured table (:data:`VERSIONS_FILE`): ``versions``, ``seconds`` per release, ``rows``."""
    return json.loads(VERSIONS_FILE.read_text())


def _kafka_rows(table: dict) -> list[dict]:
    """The rows measured on Kafka; a table of the simulator alone (``bench versions --quick``): its rows."""
    return [r for r in table["rows"] if r["client"] != "simulator"] or table["rows"]


#: how a cell not measured starts (the reason follows) -> its mark in the table: a client that
#: did not run, or one that ran but does not show the value (``protocol_matrix.NOT_SHOWN``)
_UNMEASURED = {"not run: ": "not run (*)", "not shown: ": "not shown (**)"}
_FOOTNOTE = {"not run (*)": "(*) not run:", "not shown (**)": "(**) not shown:"}
_NOT_RUN = "not run: "


def _unmeasured(cell: str) -> tuple[str, str] | None:
    """(the cell's mark, why) for a cell not measured, else None.

    >>> _unmeasured("not shown: no epoch"), _unmeasured("3")
    (('not shown (**)', 'no epoch'), None)
    """
    for prefix, mark in _UNMEASURED.items():
        if cell.startswith(prefix):
            return mark, cell[len(prefix) :]
    return None


def changed(row: dict, versions: list[str]) -> bool:
    """Whether a row's cells differ between the releases that measured it - not counting a row
    whose outcome depends on timing by design (``timing``: :data:`course_lib.experiments.fidelity.BY_DESIGN`),
    nor a release on which it was not run.

    >>> v = ["4.3.1", "4.4.0"]
    >>> changed({"4.3.1": "1", "4.4.0": "2"}, v), changed({"4.3.1": "1"}, v)
    (True, False)
    >>> changed({"4.3.1": "1", "4.4.0": "2", "timing": True}, v), changed({"4.3.1": "not run: no JVM", "4.4.0": "2"}, v)
    (False, False)
    """
    cells = [row[v] for v in versions if v in row and not _unmeasured(row[v])]
    return len(set(cells)) > 1 and not row.get("timing")


def version_changes(table: dict) -> str:
    """What changed on Kafka from one release to the next, in words: each changed row, or that
    nothing did; and whether the simulator changed with it (its rows of the same experiment).

    >>> table = {"versions": ["4.3.1", "4.4.0"], "rows": [
    ...     {"experiment": "e", "observable": "o", "client": "java", "4.3.1": "refused", "4.4.0": "accepted"},
    ...     {"experiment": "e", "observable": "o", "client": "simulator", "4.3.1": "refused", "4.4.0": "accepted"},
    ...     {"experiment": "f", "observable": "p", "client": "java", "4.3.1": "1", "4.4.0": "1"}]}
    >>> print(version_changes(table))
    From Kafka 4.3.1 to 4.4.0, 1 of 2 observations changed:
    - e, o (java): refused -> accepted; the simulator too
    """
    versions = table["versions"]
    rows = _kafka_rows(table)
    sim = {(r["experiment"], r["observable"]): r for r in table["rows"] if r["client"] == "simulator"}
    moved = [r for r in rows if changed(r, versions)]
    head = f"From Kafka {' to '.join(versions)}, {len(moved)} of {count(len(rows), 'observation')} changed"
    if not moved:
        return head + ": none."
    lines = [head + ":"]
    for r in moved:
        s = sim.get((r["experiment"], r["observable"]))
        follows = s is not None and all(s.get(v) == r.get(v) for v in versions)
        cells = " -> ".join(r.get(v, "not measured") for v in versions)
        lines.append(
            f"- {r['experiment']}, {r['observable']} ({r['client']}): {cells}; "
            + ("the simulator too" if follows else "the simulator does not follow")
        )
    return "\n".join(lines)


def _simulator_column(row: dict, sim: dict | None, versions: list[str]) -> str:
    """Whether the simulator of each release gives what the row's client gave on Kafka."""
    if any(_unmeasured(row.get(v, "")) for v in versions):
        return "-"  # nothing measured on Kafka to hold it to
    if row.get("timing"):
        return "by design"  # the client's outcome depends on timing (course_lib.experiments.fidelity.BY_DESIGN)
    return "same" if sim is not None and all(sim.get(v) == row.get(v) for v in versions) else "differs"


def version_markdown(table: dict) -> str:
    """The README's and lesson 09's table: every observation on Kafka per release, whether it
    changed, and whether the simulator of each release gives the same (between
    :data:`VERSIONS_START` and :data:`VERSIONS_END`); a cell not measured says ``not run (*)``
    (or ``not shown (**)``), and why is listed once below the table.

    >>> row = {"experiment": "e", "observable": "o", "client": "java", "4.3.1": "not run: no JVM", "4.4.0": "1"}
    >>> print(version_markdown({"versions": ["4.3.1", "4.4.0"], "rows": [row]}).splitlines()[4])
    | e | o | java | not run (*) | 1 | no | - |
    """
    versions = table["versions"]
    sim = {(r["experiment"], r["observable"]): r for r in table["rows"] if r["client"] == "simulator"}
    out = [
        VERSIONS_START,
        "",
        "| experiment | observable | client | "
        + " | ".join(f"Kafka {v}" for v in versions)
        + " | changed | simulator |",
        "|---|---|---|" + "---|" * len(versions) + "---|---|",
    ]
    why_not: dict[str, dict[str, list[str]]] = {mark: {} for mark in _UNMEASURED.values()}
    for r in _kafka_rows(table):
        cells = [r.get(v, _NOT_RUN + "not measured") for v in versions]
        for mark, why in filter(None, map(_unmeasured, cells)):
            names = why_not[mark].setdefault(why, [])
            if f"{r['experiment']} ({r['client']})" not in names:
                names.append(f"{r['experiment']} ({r['client']})")
        shown = " | ".join((_unmeasured(c) or (c,))[0] for c in cells)
        measured = any(not _unmeasured(c) for c in cells)
        moved = (
            "**yes**"
            if changed(r, versions)
            else "-"
            if not measured
            else "timing (by design)"
            if r.get("timing")
            else "no"
        )
        same = _simulator_column(r, sim.get((r["experiment"], r["observable"])), versions)
        out.append(f"| {r['experiment']} | {r['observable']} | {r['client']} | {shown} | {moved} | {same} |")
    for mark, whys in why_not.items():
        if whys:
            out += ["", _FOOTNOTE[mark], ""]
            out += [f"- {', '.join(names)}: {why}" for why, names in whys.items()]
    return "\n".join([*out, "", version_changes(table), "", VERSIONS_END])


def readme_with_versions(readme: str, table: dict) -> str:
    """``readme`` with its version table replaced by ``table``'s."""
    start, end = readme.index(VERSIONS_START), readme.index(VERSIONS_END) + len(VERSIONS_END)
    return readme[:start] + version_markdown(table) + readme[end:]


#: lesson 09's prediction: what changed from one release to the next
VERSION_CHOICES = [
    "nothing: every experiment observes the same",
    "share groups only",
    "producer and consumer cases only (the fidelity matrix)",
    "both: share groups and producer/consumer cases",
]


def _share(row: dict) -> bool:
    return row["experiment"].startswith(("share", "consumer group"))


def version_answer(table: dict) -> str:
    """Which of :data:`VERSION_CHOICES` the measured table answers.

    >>> row = {"experiment": "share group: x", "observable": "o", "client": "java", "4.3.1": "a", "4.4.0": "b"}
    >>> version_answer({"versions": ["4.3.1", "4.4.0"], "rows": [row]}) == VERSION_CHOICES[1]
    True
    """
    moved = [r for r in _kafka_rows(table) if changed(r, table["versions"])]
    share, cases = any(_share(r) for r in moved), any(not _share(r) for r in moved)
    return VERSION_CHOICES[0 if not moved else 3 if share and cases else 1 if share else 2]


def versions_explained(table: dict) -> str:
    """The measured changes, and what the course does about them.

    >>> row = {"experiment": "e", "observable": "o", "client": "java", "4.3.1": "1", "4.4.0": "1"}
    >>> print(versions_explained({"versions": ["4.3.1", "4.4.0"], "rows": [row]}))
    From Kafka 4.3.1 to 4.4.0, 0 of 1 observation changed: none.
    <BLANKLINE>
    The simulator takes the release as an option (`ClusterOptions(kafka_version=...)`, or `COURSE_KAFKA_VERSION` for the whole lab), as a broker takes its feature levels: a learner on either release gets that release's numbers.
    """
    return (
        version_changes(table)
        + "\n\nThe simulator takes the release as an option (`ClusterOptions(kafka_version=...)`, "
        "or `COURSE_KAFKA_VERSION` for the whole lab), as a broker takes its feature levels: a learner on either "
        "release gets that release's numbers."
    )
