"""Histories: what every client did, in the order it happened, for any backend.

A history is a list of operations in the style of Jepsen and Maelstrom. Every client call is
recorded twice: once when it is *invoked* and once when its outcome is known:

- ``ok``   - it definitely happened (a send was acknowledged, a poll returned records);
- ``fail`` - it definitely did not happen (the broker rejected the batch before appending it);
- ``info`` - nobody knows (a request timed out after a lost ACK: the write may or may not be in
  the log). Treating ``info`` as ``fail`` is how checkers go wrong.

The simulator, the real-Kafka lab and the Spark lab all write this format, and one checker
(:mod:`course_lib.judge.checker`) reads it. Operations serialise to one JSON object per line, so a
seeded simulator run can be compared byte for byte with a golden trace.

Taught in notebooks/02_acks_and_durability and notebooks/03_retries_ordering_duplicates.

>>> h = History(clock=lambda: 0.0)
>>> op = h.invoke("producer-1", "send", "m-0", topic="orders", partition=0)
>>> done = h.complete(op, "ok", offset=41)
>>> done.type, done.value, done.offset
('ok', 'm-0', 41)
>>> History.from_jsonl(h.to_jsonl()) == h
True
"""

from __future__ import annotations

import json
import threading
from typing import Any, Callable, Iterable, Iterator, NamedTuple

INVOKE, OK, FAIL, INFO = "invoke", "ok", "fail", "info"
_BATCH = object()  # marks a pending entry holding a whole batch's outcome
OUTCOMES = (OK, FAIL, INFO)
TYPES = (INVOKE, *OUTCOMES)


class OpName:
    """Names of client operations (``Op.f``), the same for every backend and the checker.

    Plain ``str`` constants on purpose, not a StrEnum: the producer's hot path records and
    compares these per record, and enum members (Python-level ``__eq__``/``__hash__``) cost 15-17%
    of ``python -m bench sim``'s batch throughput (measured)."""

    SEND = "send"
    POLL = "poll"
    COMMIT = "commit"
    PROCESS = "process"
    SEEK = "seek"
    ASSIGNED = "assigned"
    FINAL_READ = "final_read"
    INIT_TRANSACTIONS = "init_transactions"
    BEGIN_TRANSACTION = "begin_transaction"
    SEND_OFFSETS = "send_offsets"
    END_TRANSACTION = "end_transaction"
    LEFT_GROUP = "left_group"
    TRUNCATION_DETECTED = "truncation_detected"
    ELECT = "elect"
    TRUNCATE = "truncate"
    #: share groups (KIP-932): a share consumer's poll (value: ``[partition, offset, message,
    #: delivery count]`` per record) and the acknowledgements it sent (``[partition, offset, type]``)
    SHARE_POLL = "share_poll"
    SHARE_ACK = "share_ack"


class Nemesis:
    """Names of nemesis operations (process ``nemesis``), one spelling on every backend."""

    CRASH = "crash"
    RESTART = "restart"
    PAUSE = "pause"
    RESUME = "resume"
    ISOLATE = "isolate"
    HEAL = "heal"
    LOSE_NEXT_ACK = "lose_next_ack"
    #: the request never reaches the broker (lost on the network: the client hears nothing)
    LOSE_NEXT_REQUEST = "lose_next_request"
    #: the next ShareAcknowledge answer is lost (share groups): the consumer does not know
    #: whether its acknowledgements counted
    LOSE_NEXT_SHARE_ACK = "lose_next_share_ack"
    #: the broker refuses the request with a retriable error, answered late (the lab proxy's)
    REFUSE_NEXT_REQUEST = "refuse_next_request"
    CRASH_CLIENT = "crash_client"
    FREEZE_CLIENT = "freeze"
    WAKE_CLIENT = "wake"
    SCHEDULE = "schedule"  # a random fault schedule (the simulator and the wire cluster)
    #: faults at set ms of an application's run (run_pipeline): the simulator's clock moves with
    #: the application's own steps; a wall-clock backend runs timed actions only inside wait()
    TIMED_FAULTS = "timed_faults"


class Op(NamedTuple):
    """One line of a history.

    ``f`` names the operation: ``send`` (value = message id), ``poll`` (value = list of
    ``[partition, offset, message]``), ``commit`` (value = ``{partition: next offset}``),
    ``final_read`` (value = list of ``[partition, offset, message]`` read after healing),
    ``share_poll`` (value = list of ``[partition, offset, message, delivery count]`` a share
    consumer acquired), ``share_ack`` (value = list of ``[partition, offset, type]`` sent),
    ``crash`` / ``restart`` / ``fault`` (nemesis operations, value = what was done).
    ``evidence`` carries backend facts that explain the outcome (leader, epoch, high watermark).
    (A NamedTuple: a simulator run records hundreds of thousands of these.)
    """

    index: int  # type: ignore[assignment]  # (shadows tuple.index: the position in the history)
    time_ms: float
    process: str
    type: str
    f: str
    value: Any = None
    topic: str | None = None
    partition: int | None = None
    offset: int | None = None
    error: str | None = None
    evidence: dict | None = None

    def to_json(self) -> str:
        return json.dumps(
            {k: v for k, v in self._asdict().items() if v is not None},
            sort_keys=True,
            separators=(",", ":"),
            default=str,
        )


class History:
    """An append-only list of :class:`Op`, with a clock supplied by the backend.

    The simulator passes its virtual clock (ms); the real lab passes wall-clock ms since start.
    The simulated producer (a hot path) appends raw invocation tuples to ``_pending`` and a whole
    batch's outcome as one entry (:meth:`note_completions`); :attr:`ops` expands them, in order,
    the first time someone looks. Every other write is thread-safe: kafka-python completes
    futures on its own I/O threads, and nobody has to pass a lock around.
    """

    def __init__(self, clock: Callable[[], float] | None = None, ops: Iterable[Op] = ()):
        self.clock = clock or (lambda: 0.0)
        self._ops: list[Op] = list(ops)
        self._pending: list[tuple] = []
        # kafka-python completes futures on its I/O threads: every append and the expansion of
        # pending entries hold this lock (re-entrant: _append reads self.ops)
        self._lock = threading.RLock()
        #: another history that also gets the recorded lines ``_copied`` selects (copy_into)
        self._copy_to: History | None = None
        self._copied: Callable[[Op], bool] = lambda op: False

    @property
    def ops(self) -> list[Op]:
        if self._pending:
            with self._lock:
                self._materialise()
        return self._ops

    def __len__(self) -> int:
        return len(self.ops)

    def __iter__(self) -> Iterator[Op]:
        return iter(self.ops)

    def __getitem__(self, i):
        return self.ops[i]

    def __eq__(self, other) -> bool:
        return isinstance(other, History) and self.ops == other.ops

    def __repr__(self) -> str:
        return f"<History of {len(self)} operations>"

    def _append(self, op_fields: tuple) -> Op:
        with self._lock:
            ops = self.ops
            op = Op(len(ops), round(self.clock(), 3), *op_fields)
            ops.append(op)
            return op

    def invoke(
        self, process: str, f: str, value: Any = None, topic: str | None = None, partition: int | None = None
    ) -> Op:
        """Record the start of an operation and return it (pass it to :meth:`complete`)."""
        return self._append((process, INVOKE, f, value, topic, partition))

    def complete(
        self,
        invoked: Op,
        type: str,
        offset: int | None = None,
        error: str | None = None,
        evidence: dict | None = None,
        **changed,
    ) -> Op:
        """Record the outcome (``ok``/``fail``/``info``) of an invoked operation.

        Fields not given are copied from the invocation, so a completion is self-contained.
        """
        if type not in OUTCOMES:
            raise ValueError(f"outcome type must be one of {OUTCOMES}, got {type!r}")
        if invoked.type != INVOKE:
            raise ValueError(f"can only complete an 'invoke' operation, got {invoked.type!r}")
        return self._append(
            (
                invoked.process,
                type,
                invoked.f,
                changed.get("value", invoked.value),
                changed.get("topic", invoked.topic),
                changed.get("partition", invoked.partition),
                offset,
                error,
                evidence,
            )
        )

    def record(self, process: str, type: str, f: str, value: Any = None, **fields) -> Op:
        """Record a single completed line (final reads, nemesis actions)."""
        if type not in TYPES:
            raise ValueError(f"type must be one of {TYPES}, got {type!r}")
        unknown = set(fields) - {"topic", "partition", "offset", "error", "evidence"}
        if unknown:
            raise TypeError(
                f"record() got unknown field(s) {sorted(unknown)}; an Op has topic, partition, "
                f"offset, error and evidence"
            )
        op = self._append(
            (
                process,
                type,
                f,
                value,
                fields.get("topic"),
                fields.get("partition"),
                fields.get("offset"),
                fields.get("error"),
                fields.get("evidence"),
            )
        )
        if self._copy_to is not None and self._copied(op):
            self._copy_to.record(process, type, f, value, **fields)  # stamped by that history's clock
        return op

    def copy_into(self, other: History | None, which: Callable[[Op], bool]) -> None:
        """From now on, every line :meth:`record` writes here that ``which`` selects is also
        recorded in ``other`` (None: stop): a cluster with a history of its own writes its
        elections and truncations into a run's history this way (one history per run).

        >>> cluster, run = History(), History()
        >>> cluster.copy_into(run, lambda op: op.process == "controller")
        >>> _ = cluster.record("controller", INFO, "elect", {"leader": 2})
        >>> _ = cluster.record("nemesis", INFO, "crash", {"broker": 1})
        >>> [(op.process, op.f) for op in run]
        [('controller', 'elect')]
        """
        with self._lock:
            self._copy_to, self._copied = other, which

    # ---- the fast path for clients -------------------------------------------------------
    def note_completions(
        self,
        handles: list,
        type: str,
        base_offset: int | None = None,
        error: str | None = None,
        evidence: dict | None = None,
    ) -> None:
        """One outcome for consecutive records of a batch: record ``i`` gets ``base_offset + i``.

        ``handles`` are the raw invocation tuples the simulated producer appended to ``_pending``
        (its hot path, single-threaded like the whole simulator)."""
        self._pending.append((_BATCH, self.clock(), type, handles, base_offset, error, evidence))

    def _materialise(self) -> None:
        ops, pending = self._ops, list(self._pending)
        self._pending.clear()  # in place: fast writers keep a reference to this list
        for entry in pending:
            if entry[0] is not _BATCH:
                t, process, type, f, value, topic, partition = entry
                ops.append(Op(len(ops), round(t, 3), process, type, f, as_text(value), topic, partition))
                continue
            _, time_ms, type, handles, base, error, evidence = entry
            time_ms = round(time_ms, 3)
            for i, h in enumerate(handles):
                ops.append(
                    Op(
                        len(ops),
                        time_ms,
                        h[1],
                        type,
                        h[3],
                        as_text(h[4]),
                        h[5],
                        h[6],
                        None if base is None else base + i,
                        error,
                        evidence,
                    )
                )

    # ---- serialisation ----------------------------------------------------------------
    def to_jsonl(self) -> str:
        return "".join(op.to_json() + "\n" for op in self.ops)

    @classmethod
    def from_jsonl(cls, text: str | Iterable[str]) -> "History":
        lines = text.splitlines() if isinstance(text, str) else text
        h = cls()
        for line in lines:
            if line.strip():
                h.ops.append(Op(**json.loads(line)))
        return h


def as_text(value: Any) -> Any:
    """A record's key or value as a history keeps it: bytes as text (as hex when they are not
    UTF-8), anything else as it is.

    >>> as_text(b"a-1"), as_text(bytearray(b"\\xff")), as_text(None)
    ('a-1', 'ff', None)
    """
    if isinstance(value, (bytes, bytearray)):
        try:
            return bytes(value).decode()
        except UnicodeDecodeError:
            return bytes(value).hex()
    return value
