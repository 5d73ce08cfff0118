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

    >>> from course_lib.scenarios import run_scenario
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
