"""The checker: reads a history, names what went wrong, and says whether the configuration
allowed it.

Anomalies (named as Jepsen's Kafka checker names them):

- ``lost`` - the producer was told the write succeeded (``ok``), yet the final read does not
  have it;
- ``duplicate`` - the same message is in the log at more than one offset;
- ``reordered`` - a message is in the log *after* one the same producer sent later to the same
  partition;
- ``phantom`` - the producer was told the write definitely failed (``fail``), yet it is there.

Messages whose outcome was unknown (``info``) may or may not be in the log; either is fine.

Each anomaly is *allowed* or not by the configuration (:func:`allowed_anomalies`, in
:mod:`course_lib.judge.guarantees`): ``acks=1``
allows loss, retries without idempotence allow duplicates and, with more than one request in
flight, reordering. So a check can fail both ways: a safe configuration that shows an anomaly
violates its guarantee, and a test can demand that an unsafe one shows its anomaly.

The checker only reads the history format of :mod:`course_lib.history`: the simulator, the
real-Kafka lab and the Spark lab are judged by the same code.

Taught in notebooks/02_acks_and_durability (and every notebook after it).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Callable, Iterator

from .check_result import ANOMALIES, Anomaly, CheckResult, Message
from .guarantees import allowed_anomalies, allowed_consumer_anomalies, allowed_share_anomalies
from ..history import FAIL, INFO, INVOKE, OK, History, Nemesis, OpName


# ---- the check ---------------------------------------------------------------------------------
@dataclass
class Observed:
    """What a history says about the messages, folded once; every detector reads this."""

    messages: dict[tuple, Message]  # (topic, message id) -> Message
    order: dict[tuple, list[tuple]]  # (producer, topic, partition) -> message keys in send order
    final: dict[str, dict[str, list[int]]]  # topic -> message -> offsets in the final read
    final_rows: dict[tuple, str]  # (topic, partition, offset) -> message
    events: list  # nemesis and controller operations, truncations: what explains a loss


def observe(history: History) -> Observed:
    messages: dict[tuple, Message] = {}
    order: dict[tuple, list[tuple]] = defaultdict(list)
    final: dict[str, dict[str, list[int]]] = {}
    final_isolation: dict[str, str] = {}
    final_rows: dict[tuple, str] = {}
    events = []
    txn_of: dict[tuple, tuple] = {}  # message key -> (producer, transaction number)
    current_txn: dict[str, int] = {}
    txn_outcome: dict[tuple, bool] = {}  # (producer, n) -> committed?
    for op in history:
        f = op.f
        if f == OpName.SEND:
            key = (op.topic, op.value)
            m = messages.get(key)
            if op.type == INVOKE:
                if m is None:
                    m = messages[key] = Message(op.value, op.topic, op.partition, op.process, time_ms=op.time_ms)
                    order[(op.process, op.topic, op.partition)].append(key)
                m.sends += 1
                if op.process in current_txn:
                    txn_of[key] = (op.process, current_txn[op.process])
            elif m is not None and m.outcome != OK:  # an earlier ok is not undone by a later resend's failure
                m.outcome, m.error, m.evidence = op.type, op.error, op.evidence
                if op.type == OK:
                    m.acked_offset, m.time_ms = op.offset, op.time_ms
        elif f == OpName.FINAL_READ and op.type == OK:
            topic = op.topic or ""
            per_topic = final.setdefault(topic, {})
            final_isolation[topic] = (op.evidence or {}).get("isolation_level", "read_uncommitted")
            for partition, offset, value in op.value:
                final_rows[(topic, partition, offset)] = value
                per_topic.setdefault(value, []).append(offset)
        elif f == OpName.BEGIN_TRANSACTION:
            current_txn[op.process] = op.value
        elif f == OpName.END_TRANSACTION and op.type == OK:
            txn_outcome[(op.process, op.value["transaction"])] = op.value["commit"]
            current_txn.pop(op.process, None)
        elif op.type == INFO and op.process in ("nemesis", "controller") or f == OpName.TRUNCATE:
            events.append(op)
    # a transaction's writes count only if it committed; an aborted one's must stay invisible
    for key, txn in txn_of.items():
        m = messages[key]
        committed = txn_outcome.get(txn)
        if committed is None:
            m.outcome = INFO if m.outcome == OK else m.outcome
        elif not committed and final_isolation.get(m.topic or "") == "read_committed":
            m.outcome = FAIL
        elif not committed:
            m.outcome = INFO
    for m in messages.values():
        m.offsets = sorted(final.get(m.topic or "", {}).get(m.id, []))
    return Observed(messages, order, final, final_rows, events)


#: a finding: (message, explanation, reason it is allowed regardless of the configuration, time)
Finding = tuple[str, str, "str | None", float]


def _judged(obs: Observed) -> Iterator[Message]:
    """Messages of the topics that had a final read (the others cannot be judged)."""
    return (m for m in obs.messages.values() if m.topic in obs.final)


def detect_lost(obs: Observed) -> Iterator[Finding]:
    for m in _judged(obs):
        if m.fate == "lost":
            yield m.id, _explain_lost(m, obs.events, obs.final_rows), None, m.time_ms


def detect_phantom(obs: Observed) -> Iterator[Finding]:
    for m in _judged(obs):
        if m.fate == "phantom":
            yield m.id, f"{m.id} was reported failed ({m.error}) yet is at offset {m.offsets[0]}", None, m.time_ms


def detect_duplicate(obs: Observed) -> Iterator[Finding]:
    for m in _judged(obs):
        if len(m.offsets) > 1:
            resent = m.sends > 1
            why = (
                f"the application sent it {m.sends} times (idempotence only removes the producer's own "
                f"retries, within one producer session)"
                if resent
                else _explain_duplicate(m)
            )
            yield (
                m.id,
                f"{m.id} is at offsets {', '.join(map(str, m.offsets))}: {why}",
                "the application itself sent it again" if resent else None,
                m.time_ms,
            )


def detect_reordered(obs: Observed) -> Iterator[Finding]:
    for (producer, _topic, partition), keys in obs.order.items():
        placed = [(k, obs.messages[k].offsets[0]) for k in keys if obs.messages[k].offsets]
        suffix_min = None
        for k, offset in reversed(placed):
            if suffix_min is not None and offset > suffix_min[1]:
                later = suffix_min[0][1]
                obs.messages[k].reordered_after = later
                yield (
                    k[1],
                    f"{k[1]} was sent before {later} by {producer} but sits at offset "
                    f"{offset}, after {later} at offset {suffix_min[1]} (partition {partition}): "
                    f"its first attempt failed and the retry landed behind the later batch",
                    None,
                    obs.messages[k].time_ms,
                )
            if suffix_min is None or offset < suffix_min[1]:
                suffix_min = (k, offset)


#: the producer-side detectors, by the anomaly (a key of :data:`ANOMALIES`) each finds
DETECTORS: dict[str, Callable[[Observed], Iterator[Finding]]] = {
    "lost": detect_lost,
    "phantom": detect_phantom,
    "duplicate": detect_duplicate,
    "reordered": detect_reordered,
}
assert set(DETECTORS) <= set(ANOMALIES)


def check(
    history: History,
    producer_config: dict | None = None,
    topic_config=None,
    allowed: dict[str, str] | None = None,
    consumer: dict | None = None,
) -> CheckResult:
    """Judge a history. Pass the producer's and topic's configuration (or ``allowed`` directly).

    ``consumer`` (optional) describes a consuming application: ``{"semantics": ..., "isolation_level":
    ..., "input": topic, "output": topic or sink name}``; then processing anomalies are judged too
    (see :func:`check_processing`).
    """
    allowed = allowed_anomalies(producer_config, topic_config) if allowed is None else dict(allowed)
    if consumer is not None:
        allowed.update(allowed_consumer_anomalies(consumer.get("semantics"), consumer.get("isolation_level")))
    obs = observe(history)
    notes = []
    final_read = bool(obs.final) and all(m.topic in obs.final for m in obs.messages.values())
    if obs.messages and not final_read:
        notes.append("some topics had no final read: lost writes were not judged for them")
    anomalies = [
        Anomaly(kind, message, explanation, allowed.get(kind, reason), time_ms)
        for kind, detect in DETECTORS.items()
        for message, explanation, reason, time_ms in detect(obs)
    ]
    if consumer is not None:
        anomalies += check_processing(history, consumer, allowed, obs.final)
    anomalies.sort(key=lambda a: (list(ANOMALIES).index(a.kind), a.time_ms))
    return CheckResult(obs.messages, anomalies, allowed, final_read, notes, consumer)


def check_processing(history: History, consumer: dict, allowed: dict, final: dict) -> list:
    """Compare what the application output with its input, and check its polls."""
    input_topic, output = consumer["input"], consumer.get("output")
    out: list[Anomaly] = []
    if input_topic not in final or (output is not None and output not in final):
        return out
    inputs, outputs = final[input_topic], final.get(output) if output is not None else None
    polled: dict[str, list] = defaultdict(list)  # message -> [(process, time)]
    commits: list = []  # (time, process, {(topic, partition): offset})
    crashes: dict[str, float] = {}
    input_rows, aborted = {}, set()
    for op in history:
        if op.f == OpName.POLL and op.type == OK:
            for partition, offset, value in op.value:
                polled[value].append((op.process, op.time_ms, partition, offset))
        elif op.f == OpName.COMMIT and op.type == OK:
            commits.append((op.time_ms, op.process, {(t, p): o for t, p, o in op.value}))
        elif op.f == Nemesis.CRASH_CLIENT:
            crashes[op.value["client"]] = op.time_ms
        elif op.f == OpName.FINAL_READ and op.topic == input_topic and op.type == OK:
            input_rows = {value: (partition, offset) for partition, offset, value in op.value}
            aborted |= set((op.evidence or {}).get("aborted", ()))

    def add(kind, message, text, t=0.0):
        out.append(Anomaly(kind, message, text, allowed.get(kind), t))

    for message in sorted(inputs, key=lambda v: input_rows.get(v, (0, 0))) if outputs is not None else ():
        n = len(outputs.get(message, ()))  # type: ignore[union-attr]  # (the loop runs only with outputs)
        where = input_rows.get(message)
        if n == 0:
            add("lost_in_processing", message, _explain_unprocessed(message, where, polled, commits, crashes))
        elif n > 1:
            readers = [f"{proc} at {t:g} ms" for proc, t, _, _ in polled.get(message, ())]
            add(
                "duplicate_processing",
                message,
                f"{message} was processed {n} times (read by {', '.join(readers) or 'several instances'}): an "
                f"instance processed it and crashed before its progress was committed, and the next instance "
                f"started from the last committed offset",
            )
    # polls: aborted reads, skips, going backwards
    last: dict[tuple, int] = {}
    committed_offsets: dict[int, list] = defaultdict(list)
    for partition, offset in input_rows.values():
        committed_offsets[partition].append(offset)
    for op in history:
        if op.f in (OpName.ASSIGNED, OpName.SEEK):
            for key in [k for k in last if k[0] == op.process]:
                del last[key]
        if op.f != OpName.POLL or op.type != OK or op.topic != input_topic:
            continue
        for partition, offset, value in op.value:
            if value in aborted:
                add(
                    "aborted_read",
                    value,
                    f"{op.process} read {value} (partition {partition}, offset {offset}) at "
                    f"{op.time_ms:g} ms, but its transaction was aborted",
                    op.time_ms,
                )
            key = (op.process, partition)
            prev = last.get(key)
            if prev is not None and offset <= prev:
                add(
                    "nonmonotonic_poll",
                    value,
                    f"{op.process} polled offset {offset} of partition {partition} after offset {prev}",
                    op.time_ms,
                )
            elif prev is not None and any(prev < o < offset for o in committed_offsets[partition]):
                add(
                    "poll_skip",
                    value,
                    f"{op.process} jumped from offset {prev} to {offset} of partition "
                    f"{partition}, over committed records",
                    op.time_ms,
                )
            last[key] = offset
    return out


def _explain_unprocessed(message, where, polled, commits, crashes) -> str:
    if where is None:
        return f"{message} was never processed"
    partition, offset = where
    reads = polled.get(message, ())
    if not reads:
        return (
            f"{message} (partition {partition}, offset {offset}) was never even polled: the group's committed "
            f"offset had already moved past it"
        )
    proc, t, _, _ = reads[0]
    text = f"{message} (partition {partition}, offset {offset}) was polled by {proc} at {t:g} ms"
    covering = [
        (ct, cp, o)
        for ct, cp, offs in commits
        for (tp, o) in offs.items()
        if tp[1] == partition and o > offset and ct >= t
    ]
    if covering:
        ct, cp, o = covering[0]
        text += f"; {cp} committed offset {o} at {ct:g} ms"
    if proc in crashes:
        text += f"; {proc} crashed at {crashes[proc]:g} ms before processing it"
    return text + "; the next instance resumed after it - never processed."


def _explain_lost(m: Message, events, final_rows) -> str:
    ev = m.evidence or {}
    if m.acked_offset is None:
        head = f"{m.id} was sent with acks=0 (no acknowledgement, no offset)"
    else:
        head = f"{m.id} was acknowledged at offset {m.acked_offset}"
        if "leader" in ev:
            head += f" by broker {ev['leader']} (leader epoch {ev['leader_epoch']}"
            if "hw" in ev:
                head += (
                    f", high watermark {ev['hw']}: the followers did not have it yet"
                    if ev["hw"] <= m.acked_offset
                    else f", high watermark {ev['hw']}"
                )
            head += ")"
    later = []
    for op in events:
        if op.time_ms < m.time_ms - 1e-9:
            continue
        v = op.value
        if op.f == Nemesis.CRASH and (not ev or v.get("broker") == ev.get("leader")):
            later.append(f"broker {v['broker']} crashed at {op.time_ms:g} ms")
        elif op.f == OpName.ELECT and v.get("topic") == m.topic and v.get("partition") == m.partition:
            kind = "an UNCLEAN election" if v["unclean"] else "a clean election"
            later.append(
                f"broker {v['leader']} became leader in epoch {v['leader_epoch']} ({kind})"
                if v["leader"] is not None
                else "the partition went offline"
            )
        elif op.f == OpName.TRUNCATE and m.id in (op.value or []):
            later.append(f"{op.process} truncated it away (from offset {op.offset}) when it rejoined as a follower")
    if m.acked_offset is not None and (m.topic, m.partition, m.acked_offset) in final_rows:
        later.append(f"offset {m.acked_offset} now holds {final_rows[(m.topic, m.partition, m.acked_offset)]}")
    return head + (": " + "; ".join(later) if later else "") + " - it is not in the log."


def _explain_duplicate(m: Message) -> str:
    retried = (m.evidence or {}).get("retried_after")
    if retried:
        return (
            f"the producer retried after {', '.join(retried)} although an earlier attempt had been "
            f"appended, and nothing told the broker it was a retry (no idempotence)"
        )
    return "an attempt whose answer never arrived had been appended, and the retry appended it again"


# ---- share groups (KIP-932) ----------------------------------------------------------------------
@dataclass
class Delivery:
    worker: str
    time_ms: float
    delivery_count: int
    message: str


@dataclass
class ShareObserved:
    """What a history says about one topic read by a share group, record by record
    (``(partition, offset)``): every delivery, acknowledgement and archiving, and the processing."""

    topic: str
    deliveries: dict  # (partition, offset) -> [Delivery] in time order
    accepted: dict  # (partition, offset) -> time its ACCEPT was acknowledged (ok)
    archived: dict  # (partition, offset) -> (why, time)
    processed: dict  # message -> [(worker, time)]
    start_offsets: dict  # partition -> the share group's start offset (share.auto.offset.reset)
    events: list  # what explains a redelivery: lock expiries, releases, closes, crashes, elections
    #: (partition, offset) -> where its dead letter went, "dlq.x partition p offset o", or why it
    #: was not written (KIP-1191: archived *to the dead-letter topic*, or archived all the same)
    dead_letters: dict = field(default_factory=dict)

    @property
    def redelivered(self) -> int:
        """Records delivered more than once."""
        return sum(1 for d in self.deliveries.values() if len(d) > 1)

    @property
    def extra_deliveries(self) -> int:
        return sum(len(d) - 1 for d in self.deliveries.values())

    @property
    def processed_twice(self) -> int:
        """Messages processed more than once."""
        return sum(1 for p in self.processed.values() if len(p) > 1)

    def archived_by(self, why: str) -> int:
        return sum(1 for w, _ in self.archived.values() if w.startswith(why))

    @property
    def archived_to_dead_letter_topic(self) -> int:
        """Archived records whose dead letter was written (the rest were archived only)."""
        return sum(1 for k in self.archived if self.dead_letters.get(k, (False,))[0])

    def delivery_counts(self) -> dict:
        """message -> the delivery counts it was handed out with, in order."""
        return {d[0].message: [x.delivery_count for x in d] for d in self.deliveries.values()}


def observe_share(history: History, topic: str) -> ShareObserved:
    deliveries: dict = defaultdict(list)
    accepted: dict = {}
    archived: dict = {}
    processed: dict = defaultdict(list)
    starts: dict = {}
    events = []
    dead_letters: dict = {}
    for op in history:
        f, value = op.f, op.value
        if f == OpName.SHARE_POLL and op.type == OK and op.topic == topic:
            for partition, offset, message, count in value:
                deliveries[(partition, offset)].append(Delivery(op.process, op.time_ms, count, message))
        elif f == OpName.SHARE_ACK and op.type != INVOKE and op.topic == topic:
            events.append(op)
            if op.type == OK:
                for partition, offset, kind in value:
                    if kind == "accept":
                        accepted.setdefault((partition, offset), op.time_ms)
        elif f == OpName.PROCESS and op.topic == topic:
            processed[value].append((op.process, op.time_ms))
        elif f.startswith("share_") and isinstance(value, dict) and value.get("topic") == topic:
            partition = value["partition"]
            if f == "share_start":
                starts.setdefault(partition, value["start_offset"])
            elif f == "share_dead_lettered":
                where = f"{value['dlq_topic']} partition {value['dlq_partition']} offset {value['dlq_offset']}"
                dead_letters[(partition, value["offset"])] = (True, where)
            elif f == "share_dlq_failed":
                dead_letters[(partition, value["offset"])] = (False, value["error"])
            elif f == "share_archived":
                for offset in value["rejected"]:
                    archived.setdefault((partition, offset), ("rejected by its worker", op.time_ms))
                for offset in value["delivery_limit"]:
                    archived.setdefault((partition, offset), ("released at the delivery count limit", op.time_ms))
            else:  # share_lock_expired, share_released_on_close, share_released_on_disconnect
                events.append(op)
                for offset in value.get("archived", ()):
                    archived.setdefault((partition, offset), ("its last allowed delivery's lock expired", op.time_ms))
        elif op.type == INFO and op.process in ("nemesis", "controller"):
            events.append(op)
    for d in deliveries.values():
        d.sort(key=lambda x: x.time_ms)
    return ShareObserved(topic, dict(deliveries), accepted, archived, dict(processed), starts, events, dead_letters)


def _dead_letter_note(obs: ShareObserved, key) -> str:
    """How an archived record's dead letter went, if its group has a dead-letter topic."""
    letter = obs.dead_letters.get(key)
    if letter is None:
        return ""
    written, detail = letter
    if written:
        return f"; archived to the dead-letter topic ({detail})"
    return f"; archived without a dead letter ({detail})"


def _why_redelivered(obs: ShareObserved, key, before: Delivery, after: Delivery) -> str | None:
    """What, between two deliveries of a record, explains the second; None if nothing does."""
    partition, offset = key
    for op in obs.events:
        if not before.time_ms - 1e-9 <= op.time_ms <= after.time_ms + 1e-9:
            continue
        v = op.value
        if op.f == "share_lock_expired" and v["partition"] == partition and offset in v["offsets"]:
            held = op.time_ms - before.time_ms
            return f"{before.worker}'s lock on it expired after {held:g} ms without an acknowledgement"
        if op.f == "share_released_on_close" and v["partition"] == partition and offset in v["offsets"]:
            return f"{before.worker} closed holding it, which released it"
        if op.f == "share_released_on_disconnect" and v["partition"] == partition and offset in v["offsets"]:
            return f"{before.worker}'s connection closed while it held it (a killed process, a dropped connection), which released it"
        if (
            op.f == OpName.SHARE_ACK
            and op.process == before.worker
            and op.type == OK
            and [partition, offset, "release"] in [list(x) for x in v]
        ):
            return f"{before.worker} released it"
        if op.f == OpName.ELECT and v.get("topic") == obs.topic and v.get("partition") == partition:
            return (
                f"the partition's leader changed (broker {v['leader']}, epoch {v['leader_epoch']}) while "
                f"{before.worker} held it: acquisitions are not persisted"
            )
    return None


def check_share(
    history: History,
    topic: str,
    acknowledgement_mode: str = "implicit",
    delivery_count_limit: int = 5,
    producer_config: dict | None = None,
) -> CheckResult:
    """Judge a share group's run on ``topic``: every redelivery (with what caused it), records
    delivered again after an acknowledged ACCEPT, archived records (and why), records never
    delivered, processing twice and out of order - each against :func:`allowed_share_anomalies`.
    Records are judged against the final read of ``topic`` when there is one."""
    allowed = allowed_anomalies(producer_config)
    allowed.update(allowed_share_anomalies(acknowledgement_mode, delivery_count_limit))
    producer_side = check(history, producer_config, allowed=allowed)
    obs = observe_share(history, topic)
    out: list[Anomaly] = [a for a in producer_side.anomalies if a.kind in ("lost", "phantom", "duplicate")]

    def add(kind, message, text, t, reason=None):
        out.append(Anomaly(kind, message, text, reason if reason is not None else allowed.get(kind), t))

    for key, ds in sorted(obs.deliveries.items()):
        partition, offset = key
        acked = obs.accepted.get(key)
        steps, unexplained = [], False
        for before, after in zip(ds, ds[1:]):
            if acked is not None and after.time_ms > acked:
                add(
                    "redelivered_after_ack",
                    after.message,
                    f"{after.message} (partition {partition}, offset {offset}) was delivered to {after.worker} "
                    f"at {after.time_ms:g} ms, after its ACCEPT was acknowledged at {acked:g} ms",
                    after.time_ms,
                )
                continue
            why = _why_redelivered(obs, key, before, after)
            unexplained |= why is None
            steps.append(
                f"delivery {after.delivery_count} to {after.worker} at {after.time_ms:g} ms because "
                + (why or "nothing released it - the broker handed out a held record")
            )
        if steps:
            first = ds[0]
            text = (
                f"{first.message} (partition {partition}, offset {offset}) was delivered {len(ds)} times: first to "
                f"{first.worker} at {first.time_ms:g} ms; " + "; ".join(steps)
            )
            out.append(
                Anomaly(
                    "redelivered", first.message, text, None if unexplained else allowed["redelivered"], ds[1].time_ms
                )
            )
    for key, (why, t) in sorted(obs.archived.items()):
        ds = obs.deliveries.get(key, [])
        message = ds[0].message if ds else f"offset {key[1]}"
        add(
            "archived",
            message,
            f"{message} (partition {key[0]}, offset {key[1]}) was archived at {t:g} ms after {len(ds)} "
            f"deliver{'y' if len(ds) == 1 else 'ies'}: {why}{_dead_letter_note(obs, key)}",
            t,
        )
    for message, runs in sorted(obs.processed.items()):
        if len(runs) > 1:
            who = ", ".join(f"{w} at {t:g} ms" for w, t in runs)
            add("duplicate_processing", message, f"{message} was processed {len(runs)} times ({who})", runs[1][1])
    for message, earlier, t in _reordered(obs):
        add(
            "reordered_across_workers",
            message,
            f"{message} was processed after {earlier}, a later record of its partition",
            t,
        )
    final = [op for op in history if op.f == OpName.FINAL_READ and op.type == OK and op.topic == topic]
    if final:
        for partition, offset, message in final[-1].value:
            start = obs.start_offsets.get(partition)
            if (
                start is None
                or offset < start
                or (partition, offset) in obs.deliveries
                or (partition, offset) in obs.archived
            ):
                continue
            add(
                "never_delivered",
                message,
                f"{message} (partition {partition}, offset {offset}) is above the share group's start offset "
                f"{start} but was never delivered",
                0.0,
            )
    out.sort(key=lambda a: (list(ANOMALIES).index(a.kind), a.time_ms))
    spec = {"share_group": topic, "acknowledgement_mode": acknowledgement_mode}
    return CheckResult(producer_side.messages, out, allowed, bool(final), producer_side.notes, spec)


def _reordered(obs: ShareObserved) -> Iterator[tuple[str, str, float]]:
    """Messages processed (first time) after a higher offset of their partition was."""
    first: dict = {}
    for key, ds in obs.deliveries.items():
        runs = obs.processed.get(ds[0].message)
        if runs:
            first[key] = (runs[0][1], ds[0].message)
    by_partition: dict = defaultdict(list)
    for (partition, offset), (t, message) in first.items():
        by_partition[partition].append((t, offset, message))
    for rows in by_partition.values():
        rows.sort()
        highest = None
        for t, offset, message in rows:
            if highest is not None and offset < highest[0]:
                yield message, highest[1], t
            if highest is None or offset > highest[0]:
                highest = (offset, message)
