"""What lesson 06 says about its transactions, written from the measured runs, for
``prediction.reveal(actual, explanation=...)``.

>>> from course_lib.experiments.scenarios import run_scenario
>>> runs = {iso: run_scenario("aborted_transaction", seed=1, isolation_level=iso)
...         for iso in ("read_committed", "read_uncommitted")}
>>> transactions_seen(runs["read_uncommitted"])
'a, b and c'
>>> print(isolation_levels(runs))  # doctest: +NORMALIZE_WHITESPACE
**Measured:** `read_committed` sees a-0..a-2 and c-0..c-2; `read_uncommitted` also sees
b-0..b-2, which were aborted, and the checker calls that an *aborted read*. 9 records end at
log end offset 12: the 3 markers took offsets 3, 7 and 11, so offsets have gaps. "All or
nothing" is a promise to `read_committed` readers only.

Used in notebooks/06_transactions (the last three: its "Kafka 4's transactions").
"""

from __future__ import annotations

from collections.abc import Mapping


def _names(values) -> str:
    """'a, b and c' for the transactions a list of values like 'a-0' belongs to."""
    names = sorted({v.split("-")[0] for v in values})
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def transactions_seen(run) -> str:
    """Whose records a consumer of the aborted-transaction run saw: 'a and c', 'a, b and c'."""
    return _names(v for _, v in run.notes["seen"])


def _ranges(values) -> str:
    """'a-0..a-2 and c-0..c-2'."""
    by: dict[str, list[str]] = {}
    for v in values:
        by.setdefault(v.split("-")[0], []).append(v)
    spans = [f"{vs[0]}..{vs[-1]}" if len(vs) > 1 else vs[0] for vs in by.values()]
    return spans[0] if len(spans) == 1 else ", ".join(spans[:-1]) + " and " + spans[-1]


def isolation_levels(runs: Mapping) -> str:
    """``runs``: the aborted-transaction run per isolation level."""
    committed = [v for _, v in runs["read_committed"].notes["seen"]]
    everything = runs["read_uncommitted"].notes["seen"]
    extra = [v for _, v in everything if v not in committed]
    end = runs["read_uncommitted"].notes["log_end_offset"]
    markers = sorted(set(range(end)) - {o for o, _ in everything})
    aborted = runs["read_uncommitted"].result.by_kind("aborted_read")
    called = ", and the checker calls that an *aborted read*" if aborted else ""
    return (
        f"**Measured:** `read_committed` sees {_ranges(committed)}; `read_uncommitted` also sees\n"
        f"{_ranges(extra)}, which were aborted{called}. {len(everything)} records end at\n"
        f'log end offset {end}: the {len(markers)} markers took offsets {_and(markers)}, so offsets have gaps. "All or\n'
        'nothing" is a promise to `read_committed` readers only.'
    )


def _and(items) -> str:
    items = [str(i) for i in items]
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def open_transaction(view: Mapping, read: list[str]) -> str:
    """The hand-built log (``log_view``) with an open transaction, and what ``read_committed`` read.

    >>> view = {"entries": [{"offset": 0, "text": "a-0", "state": "committed"},
    ...     {"offset": 1, "text": "COMMIT", "state": "marker"}, {"offset": 2, "text": "c-0", "state": "open"},
    ...     {"offset": 3, "text": "x-0", "state": "plain"}], "hw": 4, "lso": 2}
    >>> print(open_transaction(view, ["a-0"]))  # doctest: +NORMALIZE_WHITESPACE
    **Measured:** the COMMIT marker takes offset 1. The HW is 4: every replica has `x-0`, and a
    `read_uncommitted` consumer reads it. The LSO is 2, the first offset of the open transaction:
    `read_committed` consumers stop there and read only `a-0` - `x-0` waits behind someone
    else's open transaction.
    """
    markers = [e for e in view["entries"] if e["state"] == "marker"]
    plain = [e["text"] for e in view["entries"] if e["state"] == "plain"]
    kinds = " and ".join(dict.fromkeys(e["text"] for e in markers))
    taking = f"the {kinds} marker{'s' if len(markers) > 1 else ''} take{'' if len(markers) > 1 else 's'}"
    where = f"offset{'s' if len(markers) > 1 else ''} {_and([e['offset'] for e in markers])}"
    other = f"`{plain[-1]}`" if plain else "the last record"
    waits = f" - {other} waits behind someone\nelse's open transaction" if plain and plain[-1] not in read else ""
    return (
        f"**Measured:** {taking} {where}. The HW is {view['hw']}: every replica has {other}, and a\n"
        f"`read_uncommitted` consumer reads it. The LSO is {view['lso']}, the first offset of the open transaction:\n"
        f"`read_committed` consumers stop there and read only {', '.join(f'`{v}`' for v in read) or 'nothing'}{waits}."
    )


def hung_transaction(run) -> str:
    """A transaction left open past ``transaction_timeout_ms``, committed late.

    >>> from course_lib.experiments.scenarios import run_scenario
    >>> r = run_scenario("transaction_timeout", seed=1, transaction_timeout_ms=5000)
    >>> print(hung_transaction(r).split("What the late")[0])  # doctest: +NORMALIZE_WHITESPACE
    **Measured:** while it is open the last stable offset stays at 0, so `read_committed` consumers
    read nothing past it - not only this producer's records: records *other* producers write and
    commit after the hung transaction's first record are held back too, because the LSO is the first
    offset of the oldest open transaction. After the timeout the coordinator aborts the transaction
    and bumps the producer epoch, and the late commit fails with `ProducerFencedError`: the 3 records
    are never visible to `read_committed` consumers.
    <BLANKLINE>
    <BLANKLINE>
    """
    error = run.notes["late_commit_error"]
    hidden = run.result.outcome_table()["not delivered (producer told)"]
    late = f"the late commit fails with `{error}`" if error else "the late commit succeeds"
    return (
        f"**Measured:** while it is open the last stable offset stays at {run.notes['lso_while_open']}, "
        "so `read_committed` consumers\nread nothing past it - not only this producer's records: records *other* "
        "producers write and\ncommit after the hung transaction's first record are held back too, because the LSO "
        "is the first\noffset of the oldest open transaction. After the timeout the coordinator aborts the "
        f"transaction\nand bumps the producer epoch, and {late}: the {hidden} records\n"
        "are never visible to `read_committed` consumers.\n\n"
        "What the late producer sees depends on the client. kafka-python 3.0.12 (the course's client):\n"
        "the commit fails with `ProducerFencedError` and the producer can only be closed. The Java client\n"
        "since Kafka 2.7 (KIP-588) gets `InvalidProducerEpochException`, aborts, and carries on with the\n"
        "same producer. A send of the zombie itself is answered `INVALID_PRODUCER_EPOCH` by the broker in\n"
        "both cases; only the transaction coordinator says `PRODUCER_FENCED`."
    )


def zombie_answer(run) -> str:
    """'yes' if the zombie's commit left any input processed twice, else 'no'."""
    return "yes" if run.result.by_kind("duplicate_processing") or run.result.by_kind("duplicate") else "no"


def zombie(run) -> str:
    """A frozen instance wakes up after its replacement took over.

    >>> from course_lib.experiments.scenarios import run_scenario
    >>> r = run_scenario("zombie_fencing", seed=1)
    >>> zombie_answer(r)
    'no'
    >>> print(zombie(r))  # doctest: +NORMALIZE_WHITESPACE
    **Measured:** B's `init_transactions()` fenced A and aborted its open transaction; A's commit fails
    with `ProducerFencedError`, and every input is processed exactly once in the output.
    """
    error = run.notes["zombie_error"]
    outcome = (
        "every input is processed exactly once in the output"
        if zombie_answer(run) == "no" and run.result.valid
        else "some inputs are processed twice"
    )
    fails = f"A's commit fails\nwith `{error}`" if error else "A's commit succeeds"
    return f"**Measured:** B's `init_transactions()` fenced A and aborted its open transaction; {fails}, and {outcome}."


def crashed_anywhere(counts: Mapping) -> str:
    """``counts``: :func:`~course_lib.viz.processing_counts` per crash point.

    >>> c = {"input messages": 20, "processed once": 20, "never processed": 0, "processed twice or more": 0}
    >>> print(crashed_anywhere({"after_poll": c, "mid_batch": c}))  # doctest: +NORMALIZE_WHITESPACE
    **Measured:** 20 inputs, 20 processed once, at every crash point: the crashed instance's
    transaction is aborted, so its partial output is invisible and its offsets uncommitted.
    >>> bad_points({"after_poll": c, "mid_batch": dict(c, **{"never processed": 1})})
    1
    """
    bad = bad_points(counts)
    first = next(iter(counts.values()))
    if bad:
        return f"**Measured:** an anomaly at {bad} of the {len(counts)} crash points."
    return (
        f"**Measured:** {first['input messages']} inputs, {first['processed once']} processed once, at every "
        "crash point: the crashed instance's\ntransaction is aborted, so its partial output is invisible and its "
        "offsets uncommitted."
    )


def bad_points(counts: Mapping) -> int:
    """How many crash points left a message never processed or processed twice."""
    return sum(1 for c in counts.values() if c["never processed"] or c["processed twice or more"])


def epoch_bumps(runs: Mapping) -> str:
    """``runs``: :func:`~course_lib.experiments.transaction_versions.epochs_per_transaction` per transaction
    version (1 and 2), same seed and number of transactions.

    >>> from course_lib.experiments.transaction_versions import epochs_per_transaction
    >>> runs = {tv: epochs_per_transaction(tv, seed=1) for tv in (1, 2)}
    >>> print(epoch_bumps(runs))  # doctest: +NORMALIZE_WHITESPACE
    **Measured:** under v1 the producer keeps epoch 0 through all 3 transactions, and sends
    AddPartitionsToTxn 5 times; under v2 its epoch goes 0, 1, 2, 3 - one bump at the end of every
    transaction, commit or abort (EndTxn v5 answers the new epoch) - and it sends no
    AddPartitionsToTxn: the partition leaders add the partitions from its produce requests. A
    `read_committed` consumer reads the same records under both: the bump changes what a broker
    accepts from an *old* epoch, not what a consumer sees.
    """
    v1, v2 = runs[1], runs[2]
    transactions = len(v1.epochs) - 1
    kept = (
        f"keeps epoch {v1.epochs[0]} through all {transactions} transactions"
        if len(set(v1.epochs)) == 1
        else f"goes through epochs {_and(v1.epochs)}"
    )
    added = (
        f"sends AddPartitionsToTxn {v2.add_partitions_sent_by_producer} times"
        if v2.add_partitions_sent_by_producer
        else "sends no\nAddPartitionsToTxn"
    )
    same = "the same records under both" if v1.read_committed == v2.read_committed else "different records"
    return (
        f"**Measured:** under v1 the producer {kept}, and sends\n"
        f"AddPartitionsToTxn {v1.add_partitions_sent_by_producer} times; under v2 its epoch goes "
        f"{', '.join(map(str, v2.epochs))} - one bump at the end of every\ntransaction, commit or abort "
        f"(EndTxn v5 answers the new epoch) - and it {added}: the partition leaders add the partitions "
        f"from its produce requests. A\n`read_committed` consumer reads {same}: the bump changes what a "
        "broker\naccepts from an *old* epoch, not what a consumer sees."
    )


def _landed(result) -> str:
    """Where the late write ``t1-late`` ended up in a run of :func:`~course_lib.experiments.transaction_versions.late_write`."""
    if result.late_write_error:
        return "refused"
    if result.numbers["landed_in_next_transaction"]:
        return "in transaction 2"
    return "left hanging" if result.numbers["hanging"] else "appended"


def late_write_answer(runs: Mapping) -> str:
    """``runs``: :func:`~course_lib.experiments.transaction_versions.late_write` per transaction version (1, 2),
    with ``next_transaction=True``: 'in transaction 2 under v1, refused under v2', or '... under both'.

    >>> from course_lib.experiments.transaction_versions import late_write
    >>> late_write_answer({tv: late_write(tv, seed=1) for tv in (1, 2)})
    'in transaction 2 under v1, refused under v2'
    """
    v1, v2 = _landed(runs[1]), _landed(runs[2])
    return f"{v1} under both" if v1 == v2 else f"{v1} under v1, {v2} under v2"


def late_write_landing(runs: Mapping, hanging: Mapping) -> str:
    """``runs`` as for :func:`late_write_answer`; ``hanging``: the same per version with
    ``next_transaction=False`` (no transaction 2 to carry the late write).

    >>> from course_lib.experiments.transaction_versions import late_write
    >>> runs = {tv: late_write(tv, seed=1) for tv in (1, 2)}
    >>> hanging = {tv: late_write(tv, seed=1, next_transaction=False) for tv in (1, 2)}
    >>> print(late_write_landing(runs, hanging))  # doctest: +NORMALIZE_WHITESPACE
    **Measured:** under v1 the late request carries the producer's current epoch, so partition 0's
    leader takes it, and `t1-late` is committed as part of transaction 2: a `read_committed`
    consumer reads t1-a, t1-late, t2-a - a write of a transaction that had already committed,
    now inside another one. Under v2 transaction 1's end bumped the epoch, and the leader answers
    `InvalidProducerEpochError`: read_committed reads t1-a, t2-first, t2-a, nothing late.
    <BLANKLINE>
    With no transaction 2, v1's late write opens a transaction nobody ends: the last stable offset
    stays at 2 below the log end offset 3, a *hanging transaction* that holds every
    `read_committed` consumer of the partition back. v2 refuses it too
    (`InvalidProducerEpochError`).
    """
    v1, v2 = runs[1], runs[2]
    if v1.numbers["landed_in_next_transaction"]:
        first = (
            "under v1 the late request carries the producer's current epoch, so partition 0's\nleader takes it, "
            "and `t1-late` is committed as part of transaction 2: a `read_committed`\nconsumer reads "
            f"{', '.join(v1.read_committed)} - a write of a transaction that had already committed,\n"
            "now inside another one."
        )
    else:
        first = f"under v1 the late write is {_landed(v1)}; `read_committed` reads {', '.join(v1.read_committed)}."
    second = (
        f"Under v2 transaction 1's end bumped the epoch, and the leader answers\n`{v2.late_write_error}`: "
        if v2.late_write_error
        else f"Under v2 the late write is {_landed(v2)}: "
    )
    second += f"read_committed reads {', '.join(v2.read_committed)}"
    second += ", nothing late." if not v2.numbers["landed_in_next_transaction"] else "."
    h1, h2 = hanging[1], hanging[2]
    if h1.numbers["hanging"]:
        third = (
            "With no transaction 2, v1's late write opens a transaction nobody ends: the last stable offset\n"
            f"stays at {h1.last_stable_offset} below the log end offset {h1.log_end_offset}, a *hanging "
            "transaction* that holds every\n`read_committed` consumer of the partition back."
        )
    else:
        third = f"With no transaction 2, v1's late write is {_landed(h1)}."
    third += (
        f" v2 refuses it too\n(`{h2.late_write_error}`)." if h2.late_write_error else f" Under v2 it is {_landed(h2)}."
    )
    return f"**Measured:** {first} {second}\n\n{third}"
