"""What a check found: each message's fate (:class:`Message`), the anomalies with their
explanation and whether the configuration allowed them (:class:`Anomaly`), and the verdict
(:class:`CheckResult`, which notebooks display). :mod:`course_lib.judge.checker` builds them.
"""

from __future__ import annotations

import html
from collections import Counter
from dataclasses import dataclass, field

from ..history import FAIL, OK

ANOMALIES = {
    "lost": "acknowledged, then missing from the log",
    "duplicate": "in the log more than once",
    "reordered": "in the log after a message its producer sent later to the same partition",
    "phantom": "reported as definitely failed, yet in the log",
    "lost_in_processing": "in the input, but never processed into the output",
    "duplicate_processing": "processed into the output more than once",
    "aborted_read": "a consumer read a record of an aborted transaction",
    "uncommitted_read": "a consumer read a record before its transaction committed",
    "poll_skip": "a consumer's polls jumped over committed records of a partition",
    "nonmonotonic_poll": "a consumer's polls went backwards in a partition without a seek or rebalance",
    # share groups (KIP-932)
    "redelivered": "a share group delivered the record more than once",
    "redelivered_after_ack": "a share group delivered the record again after its ACCEPT was acknowledged",
    "archived": "a share group gave the record up (archived) without it being accepted",
    "never_delivered": "in the input, above the share group's start offset, yet never delivered nor archived",
    "reordered_across_workers": "processed after a later record of the same partition",
}

FATES = ("delivered", "lost", "duplicated", "undelivered", "unacknowledged but present", "phantom")


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
    time_ms: float = 0.0

    @property
    def allowed(self) -> bool:
        return self.reason_allowed is not None


@dataclass
class CheckResult:
    messages: dict[tuple, Message]  # (topic, message id) -> what happened to it
    anomalies: list[Anomaly]
    allowed: dict[str, str]
    final_read: bool
    notes: list[str] = field(default_factory=list)
    consumer: dict | None = None  # the consuming application judged, if any

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
        return {
            "sent": len(self.messages),
            "delivered once": c["delivered"] + c["unacknowledged but present"],
            "lost (acknowledged)": c["lost"],
            "duplicated": c["duplicated"],
            "reordered": c["reordered"],
            "not delivered (producer told)": c["undelivered"],
            "phantom": c["phantom"],
        }

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
            tail = (
                f"; {told} message(s) were not written (failed sends or aborted transactions), as their "
                f"producer was told"
                if told
                else ""
            )
            processed = (
                " and every input message was processed exactly once"
                if self.consumer and self.consumer.get("output")
                else ""
            )
            return f"No anomalies: every acknowledged message is in the log exactly once, in order{processed}{tail}."
        what = _join(parts)
        if self.valid:
            reasons = "; ".join(sorted({a.reason_allowed for a in self.anomalies if a.reason_allowed}))
            return f"{what} - allowed by this configuration ({reasons})."
        bad = sorted({a.kind for a in self.unexpected})
        return (
            f"GUARANTEE VIOLATED: {what}; this configuration promises no {', no '.join(bad)}. "
            f"First case: {self.unexpected[0].explanation}"
        )

    def explain(self, message_id: str) -> str:
        for a in self.anomalies:
            if a.message == message_id:
                return a.explanation
        m = next((m for m in self.messages.values() if m.id == message_id), None)
        if m is None:
            raise KeyError(f"no message {message_id!r} in this history")
        return f"{message_id}: {m.fate}" + (f" at offset {m.offsets[0]}" if m.offsets else "")

    def rows(self) -> list[dict]:
        return [
            {
                "message": m.id,
                "partition": m.partition,
                "outcome": m.outcome or "none",
                "acked offset": m.acked_offset,
                "offsets in log": m.offsets,
                "fate": m.fate,
                "reordered": bool(m.reordered_after),
            }
            for m in self.messages.values()
        ]

    def _repr_html_(self) -> str:
        table = "".join(f"<tr><td>{html.escape(k)}</td><td>{v}</td></tr>" for k, v in self.outcome_table().items())
        colour = "#2e7d32" if self.valid else "#c62828"
        items = "".join(
            f"<li><b>{a.kind}</b> {'(allowed)' if a.allowed else '(VIOLATION)'}: {html.escape(a.explanation)}</li>"
            for a in self.anomalies[:8]
        )
        more = f"<li>... and {len(self.anomalies) - 8} more</li>" if len(self.anomalies) > 8 else ""
        return (
            f"<div><p style='color:{colour}'><b>{html.escape(self.summary())}</b></p>"
            f"<table>{table}</table><ul>{items}{more}</ul></div>"
        )

    def __repr__(self) -> str:
        return f"<CheckResult valid={self.valid}: {self.summary()}>"


def _verb(kind: str, n: int) -> str:
    return {
        "lost": "lost after being acknowledged",
        "duplicate": "duplicated",
        "reordered": "reordered",
        "phantom": "present although reported failed",
        "lost_in_processing": "never processed",
        "duplicate_processing": "processed more than once",
        "aborted_read": "read from aborted transactions",
        "uncommitted_read": "read before their commit",
        "poll_skip": "skipped by a poll",
        "nonmonotonic_poll": "polled out of order",
        "redelivered": "delivered more than once by the share group",
        "redelivered_after_ack": "delivered again after their ACCEPT was acknowledged",
        "archived": "given up (archived)",
        "never_delivered": "never delivered by the share group",
        "reordered_across_workers": "processed out of partition order",
    }[kind]


def _join(parts: list[str]) -> str:
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]
