"""What the Voila demos (notebooks/demos) say about the experiment they ask a visitor to predict,
written from a run of that same experiment, for ``prediction.reveal(actual, explanation=...)``.

>>> from course_lib.viz import DeliverySimulator
>>> result = acks_1_leader_crash(DeliverySimulator(seed=1))
>>> result.outcome_table()["lost (acknowledged)"]
5
>>> print(leader_crash(result))  # doctest: +NORMALIZE_WHITESPACE
**Measured:** 5 of the 5 acknowledged messages are lost. With `acks=1` the leader acknowledges a
message as soon as it has it; the lagging followers never fetched it, so when the leader crashes
a follower without it becomes leader, and nobody tells the producer.

Used in notebooks/demos.
"""

from __future__ import annotations

LOST = "lost (acknowledged)"


def acks_1_leader_crash(app):
    """Thing 1 of the simulator demo, done on ``app`` (a ``DeliverySimulator`` nobody sees):
    ``acks=1``, idempotence off, lagging followers; send, crash the leader, heal and check.
    Returns the checker's result."""
    app.control("acks").value = "1"
    app.control("idempotence").value = False
    app.control("lagging_followers").value = True
    for button in ("send", "crash", "check"):
        app.button(button).click()
    return app.result


def leader_crash(result) -> str:
    """The simulator demo's first experiment, from its checked result."""
    table = result.outcome_table()
    acknowledged = table["delivered once"] + table[LOST] + table["duplicated"]
    return (
        f"**Measured:** {table[LOST]} of the {acknowledged} acknowledged messages are lost. With `acks=1` the leader "
        "acknowledges a\nmessage as soon as it has it; the lagging followers never fetched it, so when the leader "
        "crashes\na follower without it becomes leader, and nobody tells the producer."
    )


def commit_first_crash(run) -> str:
    """The consumer-crash demo: at-most-once, crashed after committing, before processing.

    >>> from course_lib.experiments.scenarios import run_scenario
    >>> r = run_scenario("consumer_crash", seed=1, semantics="at-most-once", crash_point="after_commit")
    >>> print(commit_first_crash(r))  # doctest: +NORMALIZE_WHITESPACE
    **Measured:** 5 of the 20 messages are never processed: the batch whose offsets were committed
    before the crash. The restarted copy continues after them. Processing first, then committing
    (at-least-once) turns that into messages processed twice; storing the output and the offset
    together (exactly-once) into neither.
    """
    from ..viz.consumers import processing_counts

    counts = processing_counts(run)
    return (
        f"**Measured:** {counts['never processed']} of the {counts['input messages']} messages are never processed: "
        "the batch whose offsets were committed\nbefore the crash. The restarted copy continues after them. "
        "Processing first, then committing\n(at-least-once) turns that into messages processed twice; storing the "
        "output and the offset\ntogether (exactly-once) into neither."
    )


def share_crash_implicit(result) -> str:
    """The share-group demo: worker 1 crashes in its first poll's last job, implicit
    acknowledgement (``run_share_scenario("job_queue", crash=True, acknowledgement="implicit")``).

    >>> from course_lib.experiments.share_scenarios import run_share_scenario
    >>> r = run_share_scenario("job_queue", seed=1, records=12, crash=True, acknowledgement="implicit")
    >>> print(share_crash_implicit(r))  # doctest: +NORMALIZE_WHITESPACE
    **Measured:** 2 jobs are processed twice. Worker 1 held 3 jobs and crashed in the middle of
    the last one. In implicit mode a batch is accepted by the next poll, which never came. The
    broker handed all 3 to the others 63 ms after the crash, not after the 30 000 ms lock: a killed
    process's connections close, and the broker releases what it held at once (lesson 05c). The 2
    it had finished went through a handler again. With explicit acknowledgement each job is
    ACCEPTed as it ends: only the one in progress comes back, and nothing is processed twice.
    """
    n = result.numbers
    held, twice, after = n["held_at_crash"], n["processed_twice"], n["redelivery_after_crash_ms"]
    lock = f"{result.settings['lock_ms']:,.0f}".replace(",", " ")
    back = (
        f"The\nbroker handed all {n['redelivered']} to the others {after} ms after the crash, not after the {lock} ms "
        "lock: a killed\nprocess's connections close, and the broker releases what it held at once (lesson 05c)."
        if after is not None and after < result.settings["lock_ms"]
        else f"The\nbroker handed all {n['redelivered']} to the others when their {lock} ms locks ran out."
    )
    return (
        f"**Measured:** {twice} job{'s are' if twice != 1 else ' is'} processed twice. Worker 1 held {held} jobs "
        "and crashed in the middle of\nthe last one. In implicit mode a batch is accepted by the next poll, which "
        f"never came. {back} The {held - 1}\nit had finished went through a handler again. With explicit "
        "acknowledgement each job is\nACCEPTed as it ends: only the one in progress comes back, and nothing is "
        "processed twice."
    )
