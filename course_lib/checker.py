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

Each anomaly is *allowed* or not by the configuration (:func:`allowed_anomalies`): ``acks=1``
allows loss, retries without idempotence allow duplicates and, with more than one request in
flight, reordering. So a check can fail both ways: a safe configuration that shows an anomaly
violates its guarantee, and a test can demand that an unsafe one shows its anomaly.

The checker only reads the history format of :mod:`course_lib.history`: the simulator, the
real-Kafka lab and the Spark lab are judged by the same code.

Taught in notebooks/02_acks_and_durability (and every notebook after it).
"""
from __future__ import annotations

import html
import warnings
from collections import Counter, defaultdict
from dataclasses import dataclass, field

from .history import FAIL, INFO, INVOKE, OK, History

ANOMALIES = {
    "lost": "acknowledged, then missing from the log",
    "duplicate": "in the log more than once",
    "reordered": "in the log after a message its producer sent later to the same partition",
    "phantom": "reported as definitely failed, yet in the log",
}

FATES = ("delivered", "lost", "duplicated", "undelivered", "unacknowledged but present", "phantom")


# ---- what a configuration allows -------------------------------------------------------------
def _effective_producer_config(producer: dict | None) -> dict:
    from .clients.config import resolve_producer_config
    user = {k: v for k, v in (producer or {}).items() if k != "bootstrap_servers"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return resolve_producer_config(**user)


def _topic_settings(topic) -> dict:
    if topic is None or isinstance(topic, dict):
        return topic or {}
    return {name: getattr(topic, name) for name in ("min_insync_replicas", "unclean_leader_election_enable")
            if hasattr(topic, name)}


def allowed_anomalies(producer: dict | None = None, topic=None) -> dict[str, str]:
    """Which anomalies this producer/topic configuration allows, each with the reason.

    ``producer`` is the keyword arguments given to ``KafkaProducer`` (kafka-python's names and
    defaults apply); ``topic`` has ``min_insync_replicas`` and ``unclean_leader_election_enable``
    (a dict or the simulator's ``TopicConfig``).

    >>> sorted(allowed_anomalies({"acks": 1, "enable_idempotence": False}))
    ['duplicate', 'lost', 'reordered']
    >>> allowed_anomalies({})   # kafka-python 3 defaults: acks='all', idempotent
    {}
    """
    config = _effective_producer_config(producer)
    topic = _topic_settings(topic)
    allowed: dict[str, str] = {}
    acks = config["acks"]
    if acks == 0:
        allowed["lost"] = ("acks=0: the producer never hears back, so a record that dies with a broker "
                           "(or in the network) is gone without anyone knowing")
    elif acks == 1:
        allowed["lost"] = ("acks=1: the leader acknowledges before any follower has the record; if it "
                           "dies before they fetch it, a follower without it becomes leader")
    if topic.get("unclean_leader_election_enable"):
        allowed.setdefault("lost", "unclean.leader.election.enable: an out-of-sync replica may become "
                                   "leader and the records it never had are dropped")
    retrying = acks != 0 and config["retries"] > 0
    if retrying and not config["enable_idempotence"]:
        allowed["duplicate"] = ("retries without idempotence: when an ACK is lost the producer sends "
                                "the batch again and the broker appends it a second time")
        if config["max_in_flight_requests_per_connection"] > 1:
            allowed["reordered"] = ("retries with max_in_flight_requests_per_connection > 1 and no "
                                    "idempotence: a later batch can be appended before a retried "
                                    "earlier one")
    return allowed


# ---- results -----------------------------------------------------------------------------------
@dataclass
class Message:
    """What happened to one message (one value sent by the workload)."""
    id: str
    topic: str | None
    partition: int | None
    producer: str
    sends: int = 0  # how many times the application called send() with it
    outcome: str | None = None  # last completion: ok / fail / info / None (never completed)
    acked_offset: int | None = None
    offsets: list = field(default_factory=list)  # where it is in the final read
    evidence: dict | None = None
    error: str | None = None
    time_ms: float = 0.0
    reordered_after: str | None = None

    @property
    def fate(self) -> str:
        n = len(self.offsets)
        if n > 1:
            return "duplicated"
        if self.outcome == OK:
            return "delivered" if n == 1 else "lost"
        if self.outcome == FAIL:
            return "phantom" if n else "undelivered"
        return "unacknowledged but present" if n else "undelivered"


@dataclass
class Anomaly:
    kind: str
    message: str
    explanation: str
    reason_allowed: str | None  # None: the configuration promises this cannot happen

    @property
    def allowed(self) -> bool:
        return self.reason_allowed is not None


@dataclass
class CheckResult:
    messages: dict[str, Message]
    anomalies: list[Anomaly]
    allowed: dict[str, str]
    final_read: bool
    notes: list[str] = field(default_factory=list)

    @property
    def counts(self) -> Counter:
        c = Counter(m.fate for m in self.messages.values())
        c["reordered"] = sum(1 for a in self.anomalies if a.kind == "reordered")
        return c

    def by_kind(self, kind: str) -> list[Anomaly]:
        return [a for a in self.anomalies if a.kind == kind]

    @property
    def found(self) -> set[str]:
        return {a.kind for a in self.anomalies}

    @property
    def unexpected(self) -> list[Anomaly]:
        return [a for a in self.anomalies if not a.allowed]

    @property
    def valid(self) -> bool:
        """True when nothing the configuration promises to prevent happened."""
        return not self.unexpected

    def outcome_table(self) -> dict[str, int]:
        c = self.counts
        return {"sent": len(self.messages), "delivered once": c["delivered"] + c["unacknowledged but present"],
                "lost (acknowledged)": c["lost"], "duplicated": c["duplicated"], "reordered": c["reordered"],
                "not delivered (producer told)": c["undelivered"], "phantom": c["phantom"]}

    def summary(self) -> str:
        """One sentence: what happened and whether the configuration allowed it."""
        if not self.final_read:
            return "No final read in the history, so lost writes cannot be judged: call final_read() first."
        parts = []
        counts = Counter(a.kind for a in self.anomalies)
        for kind in ANOMALIES:
            if counts[kind]:
                n = counts[kind]
                parts.append(f"{n} {'message' if n == 1 else 'messages'} {_verb(kind, n)}")
        if not parts:
            told = self.counts["undelivered"]
            tail = (f"; {told} send(s) failed and the producer was told so" if told else "")
            return f"No anomalies: every acknowledged message is in the log exactly once, in order{tail}."
        what = _join(parts)
        if self.valid:
            reasons = "; ".join(sorted({a.reason_allowed for a in self.anomalies}))
            return f"{what} - allowed by this configuration ({reasons})."
        bad = sorted({a.kind for a in self.unexpected})
        return (f"GUARANTEE VIOLATED: {what}; this configuration promises no {', no '.join(bad)}. "
                f"First case: {self.unexpected[0].explanation}")

    def explain(self, message_id: str) -> str:
        for a in self.anomalies:
            if a.message == message_id:
                return a.explanation
        m = self.messages.get(message_id)
        if m is None:
            raise KeyError(f"no message {message_id!r} in this history")
        return f"{message_id}: {m.fate}" + (f" at offset {m.offsets[0]}" if m.offsets else "")

    def rows(self) -> list[dict]:
        return [{"message": m.id, "partition": m.partition, "outcome": m.outcome or "none",
                 "acked offset": m.acked_offset, "offsets in log": m.offsets, "fate": m.fate,
                 "reordered": bool(m.reordered_after)} for m in self.messages.values()]

    def _repr_html_(self) -> str:
        table = "".join(f"<tr><td>{html.escape(k)}</td><td>{v}</td></tr>" for k, v in self.outcome_table().items())
        colour = "#2e7d32" if self.valid else "#c62828"
        items = "".join(f"<li><b>{a.kind}</b> {'(allowed)' if a.allowed else '(VIOLATION)'}: "
                        f"{html.escape(a.explanation)}</li>" for a in self.anomalies[:8])
        more = f"<li>... and {len(self.anomalies) - 8} more</li>" if len(self.anomalies) > 8 else ""
        return (f"<div><p style='color:{colour}'><b>{html.escape(self.summary())}</b></p>"
                f"<table>{table}</table><ul>{items}{more}</ul></div>")

    def __repr__(self) -> str:
        return f"<CheckResult valid={self.valid}: {self.summary()}>"


def _verb(kind: str, n: int) -> str:
    return {"lost": "lost after being acknowledged", "duplicate": "duplicated",
            "reordered": "reordered", "phantom": "present although reported failed"}[kind]


def _join(parts: list[str]) -> str:
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


# ---- the check ---------------------------------------------------------------------------------
def check(history: History, producer_config: dict | None = None, topic_config=None,
          allowed: dict[str, str] | None = None) -> CheckResult:
    """Judge a history. Pass the producer's and topic's configuration (or ``allowed`` directly)."""
    allowed = allowed_anomalies(producer_config, topic_config) if allowed is None else dict(allowed)
    messages: dict[str, Message] = {}
    order: dict[tuple, list[str]] = defaultdict(list)  # (producer, topic, partition) -> ids in send order
    final: dict[str, dict[str, list[int]]] = {}  # topic -> message -> offsets
    final_rows: dict[tuple, str] = {}
    events = []
    for op in history:
        if op.f == "send":
            m = messages.get(op.value)
            if op.type == INVOKE:
                if m is None:
                    m = messages[op.value] = Message(op.value, op.topic, op.partition, op.process,
                                                     time_ms=op.time_ms)
                    order[(op.process, op.topic, op.partition)].append(op.value)
                m.sends += 1
            elif m is not None:
                if m.outcome != OK:  # an earlier ok is not undone by a later resend's failure
                    m.outcome = op.type
                    m.error = op.error
                    m.evidence = op.evidence
                    if op.type == OK:
                        m.acked_offset = op.offset
                        m.time_ms = op.time_ms
        elif op.f == "final_read" and op.type == OK:
            per_topic = final.setdefault(op.topic, {})
            for partition, offset, value in op.value:
                final_rows[(op.topic, partition, offset)] = value
                per_topic.setdefault(value, []).append(offset)
        elif op.type == INFO and op.process in ("nemesis", "controller") or op.f == "truncate":
            events.append(op)
    notes = []
    for m in messages.values():
        found = final.get(m.topic)
        if found is None:
            continue
        m.offsets = sorted(found.get(m.id, []))
    final_read = bool(final) and all(m.topic in final for m in messages.values())
    if messages and not final_read:
        notes.append("some topics had no final read: lost writes were not judged for them")

    anomalies: list[Anomaly] = []

    def add(kind, message, explanation, reason=None):
        anomalies.append(Anomaly(kind, message, explanation, allowed.get(kind, reason)))

    for m in messages.values():
        if m.topic not in final:
            continue
        fate = m.fate
        if fate == "lost":
            add("lost", m.id, _explain_lost(m, events, final_rows))
        elif fate == "phantom":
            add("phantom", m.id, f"{m.id} was reported failed ({m.error}) yet is at offset {m.offsets[0]}")
        if len(m.offsets) > 1:
            resent = m.sends > 1
            why = (f"the application sent it {m.sends} times (idempotence only removes the producer's own "
                   f"retries, within one producer session)" if resent else _explain_duplicate(m))
            add("duplicate", m.id, f"{m.id} is at offsets {', '.join(map(str, m.offsets))}: {why}",
                reason="the application itself sent it again" if resent else None)

    for (producer, topic, partition), ids in order.items():
        placed = [(i, messages[i].offsets[0]) for i in ids if messages[i].offsets]
        suffix_min = None
        for i, offset in reversed(placed):
            if suffix_min is not None and offset > suffix_min[1]:
                later = suffix_min[0]
                messages[i].reordered_after = later
                add("reordered", i, f"{i} was sent before {later} by {producer} but sits at offset "
                                    f"{offset}, after {later} at offset {suffix_min[1]} (partition {partition}): "
                                    f"its first attempt failed and the retry landed behind the later batch")
            if suffix_min is None or offset < suffix_min[1]:
                suffix_min = (i, offset)
    anomalies.sort(key=lambda a: (list(ANOMALIES).index(a.kind), messages[a.message].time_ms))
    return CheckResult(messages, anomalies, allowed, final_read, notes)


def _explain_lost(m: Message, events, final_rows) -> str:
    ev = m.evidence or {}
    if m.acked_offset is None:
        head = f"{m.id} was sent with acks=0 (no acknowledgement, no offset)"
    else:
        head = f"{m.id} was acknowledged at offset {m.acked_offset}"
        if "leader" in ev:
            head += f" by broker {ev['leader']} (leader epoch {ev['leader_epoch']}"
            if "hw" in ev:
                head += (f", high watermark {ev['hw']}: the followers did not have it yet" if ev["hw"] <= m.acked_offset
                         else f", high watermark {ev['hw']}")
            head += ")"
    later = []
    for op in events:
        if op.time_ms < m.time_ms - 1e-9:
            continue
        v = op.value
        if op.f == "crash" and (not ev or v.get("broker") == ev.get("leader")):
            later.append(f"broker {v['broker']} crashed at {op.time_ms:g} ms")
        elif op.f == "elect" and v.get("topic") == m.topic and v.get("partition") == m.partition:
            kind = "an UNCLEAN election" if v["unclean"] else "a clean election"
            later.append(f"broker {v['leader']} became leader in epoch {v['leader_epoch']} ({kind})"
                         if v["leader"] is not None else "the partition went offline")
        elif op.f == "truncate" and m.id in (op.value or []):
            later.append(f"{op.process} truncated it away (from offset {op.offset}) when it rejoined as a follower")
    if m.acked_offset is not None and (m.topic, m.partition, m.acked_offset) in final_rows:
        later.append(f"offset {m.acked_offset} now holds {final_rows[(m.topic, m.partition, m.acked_offset)]}")
    return head + (": " + "; ".join(later) if later else "") + " - it is not in the log."


def _explain_duplicate(m: Message) -> str:
    retried = (m.evidence or {}).get("retried_after")
    if retried:
        return (f"the producer retried after {', '.join(retried)} although an earlier attempt had been "
                f"appended, and nothing told the broker it was a retry (no idempotence)")
    return "an attempt whose answer never arrived had been appended, and the retry appended it again"
