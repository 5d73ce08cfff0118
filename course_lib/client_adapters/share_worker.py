"""The share-group workload's worker: a share consumer driven as the share-group experiments'
applications drive it.

A worker keeps one share consumer of the workload's contract (:func:`course_lib.client_adapters.share_consumer`,
any client's) and makes its calls - subscribe, poll, acknowledge, commit, kill, freeze, close -
in the experiments' words (``"accept"``, not ``AcknowledgeType.ACCEPT``; a commit's error by
Kafka's name). What keeps a client and drives it is a client adapter (``tests/test_layers.py``),
so it lives here; what the experiments do with workers - the records, the faults, the waits, what
they count - stays in :mod:`course_lib.experiments.share_group_experiments` and the modules that
take its ``make()``, which builds one (:func:`course_lib.experiments.share_group_experiments.worker`).
"""

from __future__ import annotations


def _lock_expired(error) -> bool:
    """Is a commit's per-partition error INVALID_RECORD_STATE (a ``KafkaException`` of the share
    workload's contract, whatever the client)?"""
    return error.args[0].name() == "INVALID_RECORD_STATE"


class ShareWorker:
    """A worker of the share-group experiments: ``poll(seconds)`` ->
    ``[(offset, value, delivery count, message)]``, ``acknowledge(message, "accept" | "release" |
    "reject" | "renew")``, ``commit()``, ``close()``, over ``consumer``, a share consumer of any
    client (the share workload's contract: :func:`course_lib.client_adapters.share_consumer`),
    subscribed here to ``topic``."""

    def __init__(self, consumer, topic: str):
        self.c = consumer
        self.c.subscribe([topic])

    def poll(self, seconds: float) -> list:
        return [(m.offset(), m.value(), m.delivery_count(), m) for m in self.c.poll(seconds) if m.error() is None]

    def acknowledge(self, m, kind: str) -> None:
        from course_lib.clients.share_consumer import AcknowledgeType

        self.c.acknowledge(m, AcknowledgeType[kind.upper()])

    def commit(self, expired_ok: bool = False) -> None:
        """Commit the acknowledgements; ``expired_ok``: a partition answering INVALID_RECORD_STATE
        (a record's lock ran out before its acknowledgement reached the broker - on a loaded
        machine, records a client fetched ahead wait in its buffer while their locks run) is no
        error: those records come back to the group."""
        errors = {tp: e for tp, e in self.c.commit_sync().items() if e and not (expired_ok and _lock_expired(e))}
        assert not errors, errors

    def commit_outcome(self) -> str:
        """Commit the acknowledgements; the answer in Kafka's words: "ok", or a partition's error
        (INVALID_RECORD_STATE: a record no longer this worker's)."""
        errors = [e for e in self.c.commit_sync().values() if e]
        return errors[0].args[0].name() if errors else "ok"

    def crash(self, host_lost: bool = False) -> None:
        """The worker's process dies (SIGKILL: its connections close) or, ``host_lost``, its
        machine is gone (SIGSTOP: they stay open); a worker made with ``own_process=True``."""
        if host_lost:
            self.c.freeze()
        else:
            self.c.kill()

    def close(self) -> None:
        self.c.close()
