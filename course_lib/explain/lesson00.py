"""Explanations for notebooks/00_start_here: a lost ACK, without and with idempotence."""

from __future__ import annotations

from .words import count, listing, with_fate


def duplicates(run) -> str:
    """The first experiment: which messages a lost ACK duplicated, and whether the configuration
    allows it (``run``: ``run_scenario("lost_ack_retry", ...)``).

    >>> from course_lib.experiments.scenarios import run_scenario
    >>> print(duplicates(run_scenario("lost_ack_retry", seed=1, idempotent=False)))  # doctest: +NORMALIZE_WHITESPACE +ELLIPSIS
    **3 of the 7 messages are in the log twice**: m-2, m-3 and m-4, the messages of the request
    whose ACK was lost. The checker says this configuration *allows* it: retries without
    idempotence... `acks="all"` protects against losing acknowledged writes, not against writing
    twice.
    """
    table = run.result.outcome_table()
    twice = with_fate(run.result, "duplicated")
    reason = run.result.allowed.get("duplicate") if twice else None
    verdict = (
        f"The checker says this configuration *allows* it: {reason}."
        if reason
        else "The checker found nothing this configuration forbids."
    )
    return (
        f"**{len(twice)} of the {table['sent']} messages are in the log twice**: {listing(twice)}, the messages "
        f'of the request whose ACK was lost. {verdict} `acks="all"` protects against losing acknowledged '
        "writes, not against writing twice."
    )


def idempotent(run) -> str:
    """The same lost ACK with the idempotent producer.

    >>> from course_lib.experiments.scenarios import run_scenario
    >>> print(idempotent(run_scenario("lost_ack_retry", seed=1, idempotent=True)))  # doctest: +NORMALIZE_WHITESPACE +ELLIPSIS
    **0 messages in the log twice**: all 7 are in the log once, in order. The retry carried the
    same producer id and sequence numbers, so the broker recognised the batch...
    """
    table = run.result.outcome_table()
    once = table["delivered once"]
    how = f"all {once}" if once == table["sent"] else f"{once} of {table['sent']}"
    order = ", in order" if not table["reordered"] else ""
    return (
        f"**{count(table['duplicated'], 'message')} in the log twice**: {how} are in the log once{order}. "
        "The retry carried the same producer id and sequence numbers, so the broker recognised the batch "
        "it already had and answered with the first copy's offsets instead of appending it again."
    )
