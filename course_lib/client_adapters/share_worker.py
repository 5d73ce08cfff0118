"""The share-group workload's worker: a share consumer driven as the share-group experiments'
applications drive it.

A worker keeps one share consumer of the workload's contract (:func:`course_lib.client_adapters.share_consumer`,
any client's) and makes its calls - subscribe, poll, acknowledge, commit, kill, freeze, close -
in the experiments' words (``"accept"``, not ``AcknowledgeType.ACCEPT``; a commit's error by
Kafka's name). What keeps a client and drives it is a client adapter (``tests/test_layers.py``),
so it lives here; what the experiments do with workers - the records, the faults, the waits, what
they count - stays in :mod:`course_lib.experiments.share_group_experiments` and the modules that
take its ``make()``, which builds one (:func:`course_lib.experiments.share_group_experiments.worker`).

The share scenarios (:mod:`course_lib.experiments.share_scenarios`) run their applications on the
simulator alone, stepped in its virtual time: :class:`SteppedWorker`, a share worker that
processes what it polls on a schedule (renewing, crashing, freezing), and
:class:`SteppedGroupWorker`, the same application on a consumer group. Those keep their
simulator's clients here too; a scenario gives them its decisions as plain callables and data -
how long a record takes and which acknowledgement it gets (:data:`Handler`), what a finished
record means (:data:`Processed`), when a worker crashes - and steps them.
"""

from __future__ import annotations

from typing import Any, Callable, Protocol

from . import library_consumer, share_consumer
from .share_sequences import error_name
from ..clients.share_consumer import AcknowledgeType, IllegalStateException


def _lock_expired(error) -> bool:
    """Is a commit's per-partition error INVALID_RECORD_STATE (a ``KafkaException`` of the share
    workload's contract, whatever the client)?"""
    return error_name(error) == "INVALID_RECORD_STATE"


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
        return error_name(errors[0]) if errors else "ok"

    def crash(self, host_lost: bool = False) -> None:
        """The worker's process dies (SIGKILL: its connections close) or, ``host_lost``, its
        machine is gone (SIGSTOP: they stay open); a worker made with ``own_process=True``."""
        if host_lost:
            self.c.freeze()
        else:
            self.c.kill()

    def close(self) -> None:
        self.c.close()


# ---- the share scenarios' workers: the simulator's clients, stepped in virtual time ---------------
#: the client the stepped workers run: the simulator's, in the simulated cluster's virtual time
SIMULATOR = "simulator"
#: a stepped worker's poll blocks the (single-threaded) simulation for at most this long, so the
#: other workers' steps are not held up; an idle worker looks again after IDLE_MS
POLL_S, IDLE_MS = 0.01, 20

#: what a stepped worker's handler says of one record: how long it takes (ms), and its outcome -
#: True (succeeded: ACCEPT), False (failed: RELEASE) or an acknowledgement by name ("reject")
Handler = Callable[[Any], tuple[float, Any]]
#: what the application does with a record it finished processing: ``(worker, value, partition,
#: offset)`` - the scenario's bookkeeping, not the client's
Processed = Callable[[str, bytes, int, int], None]


def _ack_word(ok: Any) -> str:
    """A handler's outcome as the acknowledgement it sends: True - "accept", False - "release",
    or the acknowledgement it names."""
    if isinstance(ok, str):
        return ok
    return "accept" if ok else "release"


class Stepped(Protocol):
    """A worker the share scenarios step in virtual time (their ``run_workers``)."""

    #: when it next has something to do (the simulated cluster's ms)
    next_ms: float
    crashed: bool
    #: ``(finishes at, record, ...)``: what it holds, in the order it processes it
    queue: list

    def step(self) -> None: ...

    def finish(self) -> None: ...


class SteppedWorker(ShareWorker):
    """An application instance of the share scenarios on the simulator's share consumer, stepped
    in virtual time (``step()`` when ``next_ms`` comes): it polls, processes its records one after
    the other - ``handler(message)`` says how long one takes and its outcome (:data:`Handler`) -
    and acknowledges each as it finishes, committing; with ``renew_every_ms``, it RENEWs what it
    still holds while it works. A record finished successfully goes to ``processed``
    (:data:`Processed`). ``cluster``: the simulated Cluster, its bootstrap and its clock.

    ``acknowledgement="implicit"`` (confluent-kafka's default mode) acknowledges nothing itself:
    its next poll ACCEPTs the whole previous batch - a record its handler failed on too (it
    cannot RELEASE or RENEW). What the worker does - the handler, which acknowledgement, when it
    crashes or freezes - is the scenario's; calling the client is this class's."""

    def __init__(
        self,
        cluster: Any,
        group: str,
        topic: str,
        handler: Handler,
        processed: Processed,
        max_poll_records: int,
        renew_every_ms: float | None = None,
        acknowledgement: str = "explicit",
        poll_s: float = POLL_S,
        idle_ms: float = IDLE_MS,
    ):
        if acknowledgement == "implicit" and renew_every_ms is not None:
            raise ValueError("RENEW needs share.acknowledgement.mode=explicit: choose explicit, or no RENEW")
        self.cluster = cluster
        self.poll_s, self.idle_ms = poll_s, idle_ms
        self.explicit = acknowledgement == "explicit"
        config = {
            "bootstrap.servers": cluster,
            "group.id": group,
            "share.acknowledgement.mode": acknowledgement,
            "max.poll.records": max_poll_records,
        }
        super().__init__(share_consumer(SIMULATOR, config), topic)
        self.name = self.c.node_id
        self.handler, self.processed = handler, processed
        self.renew_every_ms = renew_every_ms
        self.queue: list[tuple[float, Any, Any]] = []  # (finishes at, message, outcome)
        self.next_ms = cluster.now
        self.next_renew: float | None = None
        self.lost: set[tuple] = set()  # (partition, offset) whose RENEW the broker refused
        self.crashed = False

    def step(self) -> None:
        """Do what is due now; a crash (a scheduled fault) may strike in the middle."""
        if self.crashed:
            return
        try:
            self._step()
        except IllegalStateException:
            if not self.crashed:
                raise

    def _step(self) -> None:
        self._finish_done()
        if self.queue:
            if self.renew_every_ms is not None and self.next_renew is not None and self.cluster.now >= self.next_renew:
                for _, m, _ in self.queue:
                    self.acknowledge(m, "renew")
                self.c.commit_sync()
                # as with the Java client: the renewed records come back from the next poll(),
                # to be acknowledged when their handler is done; one whose RENEW failed is no
                # longer this worker's to acknowledge (its handler still runs to the end)
                back = {(m.partition(), m.offset()) for m in self.c.poll(self.poll_s)}
                self.lost |= {(m.partition(), m.offset()) for _, m, _ in self.queue} - back
                self.next_renew = self.cluster.now + self.renew_every_ms
            wake = self.queue[0][0]
            if self.renew_every_ms is not None and self.next_renew is not None:
                wake = min(wake, self.next_renew)
            self.next_ms = max(wake, self.cluster.now)
            return
        messages = self.c.poll(self.poll_s)
        t = self.cluster.now
        for m in messages:
            ms, ok = self.handler(m)
            t += ms
            self.queue.append((t, m, ok))
        self.next_renew = self.cluster.now + self.renew_every_ms if self.renew_every_ms is not None else None
        self.next_ms = self.queue[0][0] if self.queue else self.cluster.now + self.idle_ms
        if self.queue and self.next_renew is not None:
            self.next_ms = min(self.next_ms, self.next_renew)

    def take_first(self) -> None:
        """Poll, alone, until it holds records: the first ones, before any other worker polls."""
        while not self.queue:
            self.step()

    def finish(self) -> None:
        """The run is over: finish what is in hand (no more polls)."""
        while self.queue and not self.crashed:
            self.cluster.run_for(max(self.queue[0][0] - self.cluster.now, 0))
            self._finish_done()

    def _finish_done(self) -> None:
        """Hand on and acknowledge what is finished by now."""
        now = self.cluster.now
        done = [q for q in self.queue if q[0] <= now]
        if done:
            for _, m, ok in done:
                if ok is True:
                    self.processed(self.name, m.value(), m.partition(), m.offset())
                if self.explicit and (m.partition(), m.offset()) not in self.lost:
                    self.acknowledge(m, _ack_word(ok))
            self.queue = self.queue[len(done) :]
            if self.explicit:  # implicit: the next poll (or close) accepts the batch
                self.c.commit_sync()

    def crash(self, host_lost: bool = False) -> None:
        """Dies where it is: what it finished is handed on as processed, nothing is acknowledged
        (``host_lost``: its machine is gone, not just its process: ``ShareConsumer.crash``)."""
        now = self.cluster.now
        for finish, m, ok in self.queue:
            if finish <= now and ok is True:
                self.processed(self.name, m.value(), m.partition(), m.offset())
        self.queue = []
        self.c.crash(host=host_lost)
        self.crashed = True

    def freeze(self, until_ms: float) -> None:
        """A long pause (a GC's): its client stops until :meth:`wake`; its next step is at ``until_ms``."""
        self.c.freeze()
        self.next_ms = until_ms

    def wake(self) -> None:
        self.c.wake()

    def assigned(self) -> bool:
        """Whether its share consumer has a partition assigned."""
        return bool(self.c.assignment())


class SteppedGroupWorker:
    """The same application on a *consumer group* (the simulator's kafka-python KafkaConsumer in
    ``group``): processes what it polls in partition order, ``handler_ms`` a record, commits after
    each batch; finished records go to ``processed``. Stepped like :class:`SteppedWorker`."""

    def __init__(
        self, cluster: Any, group: str, topic: str, handler_ms: float, processed: Processed, max_poll_records: int
    ):
        self.cluster, self.handler_ms, self.processed = cluster, handler_ms, processed
        config = {
            "group_id": group,
            "auto_offset_reset": "earliest",
            "enable_auto_commit": False,
            "max_poll_records": max_poll_records,
        }
        self.consumer = library_consumer(SIMULATOR, cluster, config, (topic,))
        self.name = self.consumer.node_id
        self.queue: list = []
        self.next_ms = cluster.now
        self.crashed = False

    def step(self) -> None:
        now = self.cluster.now
        done = [q for q in self.queue if q[0] <= now]
        for _, record in done:
            self.processed(self.name, record.value, record.partition, record.offset)
        self.queue = self.queue[len(done) :]
        if done and not self.queue:
            self.consumer.commit()
        if self.queue:
            self.next_ms = self.queue[0][0]
            return
        batches = self.consumer.poll(timeout_ms=POLL_S * 1000)
        t = self.cluster.now
        for records in batches.values():
            for record in records:
                t += self.handler_ms
                self.queue.append((t, record))
        self.next_ms = self.queue[0][0] if self.queue else self.cluster.now + IDLE_MS

    def finish(self) -> None:
        while self.queue:
            self.cluster.run_for(max(self.queue[0][0] - self.cluster.now, 0))
            self.step()

    def joined(self) -> bool:
        """Whether its consumer is a member of the group's current generation."""
        return self.consumer._generation > 0 and not self.consumer._needs_join

    def close(self) -> None:
        self.consumer.close()


def join_group(workers: list[SteppedGroupWorker], polls: int = 200) -> None:
    """Every worker polls (50 ms, what it gets left unprocessed: nothing is written yet) until
    the group is stable with all of them, at most ``polls`` rounds."""
    for _ in range(polls):
        for w in workers:
            w.consumer.poll(timeout_ms=50)
        if all(w.joined() for w in workers):
            break
