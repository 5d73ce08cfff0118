"""A client-side fault: the learner's own clients, crashing right after a call.

The grader (:mod:`course_lib.grading.harness`) hands the learner's loop a kafka-python consumer
or a transactional producer that dies in the middle of the learner's work - after a poll, a
commit, a send... - as the process running it would. What kills it is the caller's: ``reached``
is told the name of each call the client made and answered (it raises to crash: the grader's
countdown raises a BaseException no ``except Exception`` of the learner's swallows). The fault
is the client's, so it lives here with the other clients' adapters; which call dies and when is
the grader's plan, handed in.
"""

from __future__ import annotations

from typing import Any, Callable


def _nothing() -> None:
    return None


class CrashingConsumer:
    """kafka-python's consumer, telling ``reached`` after each ``poll`` and ``commit`` (crash points);
    ``before_poll`` runs before each poll (the grader's clock: it raises when the loop overran)."""

    def __init__(self, consumer: Any, reached: Callable[[str], None], before_poll: Callable[[], None] = _nothing):
        self._consumer, self._reached, self._before_poll = consumer, reached, before_poll

    def poll(self, timeout_ms: int = 500, max_records: int | None = None):
        self._before_poll()
        batches = self._consumer.poll(timeout_ms=timeout_ms, max_records=max_records)
        self._reached("poll")
        return batches

    def __iter__(self):
        """``for record in consumer`` as in kafka-python: records one by one, polling forever."""
        while True:
            for records in self.poll(timeout_ms=500).values():
                yield from records

    def commit(self, offsets=None):
        if offsets is None and not self._consumer.assignment():
            # nothing assigned (the group is still forming): commit() sends nothing (kafka-python
            # and the simulated client), so it is no crash point either
            return None
        result = self._consumer.commit(offsets) if offsets is not None else self._consumer.commit()
        self._reached("commit")
        return result

    def __getattr__(self, name):
        return getattr(self._consumer, name)


class CrashingProducer:
    """kafka-python's transactional producer, telling ``reached`` after each ``send``,
    ``send_offsets_to_transaction`` and ``commit_transaction`` (crash points)."""

    def __init__(self, producer: Any, reached: Callable[[str], None]):
        self._producer, self._reached = producer, reached

    def send(self, *args, **kwargs):
        future = self._producer.send(*args, **kwargs)
        self._reached("send")
        return future

    def send_offsets_to_transaction(self, offsets, group_metadata):
        result = self._producer.send_offsets_to_transaction(offsets, group_metadata)
        self._reached("send_offsets_to_transaction")
        return result

    def commit_transaction(self, *args, **kwargs):
        result = self._producer.commit_transaction(*args, **kwargs)
        self._reached("commit_transaction")
        return result

    def __getattr__(self, name):
        return getattr(self._producer, name)
