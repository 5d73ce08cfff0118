"""What a check says: one line per part that passed or failed, a hint, and the seed to rerun."""
from __future__ import annotations

import html
from dataclasses import dataclass, field

PASSED, FAILED, NOT_ATTEMPTED, WRONG_TYPE, ERROR, SKIPPED = (
    "passed", "failed", "not attempted", "wrong type", "error", "skipped")


@dataclass
class Part:
    """One graded part of an exercise (for example: one seeded fault schedule)."""
    name: str
    passed: bool
    detail: str = ""
    seed: int | None = None
    skipped: bool = False


@dataclass
class Report:
    exercise: str
    status: str
    points: float
    max_points: float
    message: str = ""
    hint: str = ""
    parts: list[Part] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return self.status == PASSED

    def text(self) -> str:
        head = {PASSED: "✅", FAILED: "❌", NOT_ATTEMPTED: "✏️", WRONG_TYPE: "⚠️", ERROR: "💥", SKIPPED: "⏭️"}
        lines = [f"{head.get(self.status, '')} {self.exercise}: {self.status} "
                 f"({self.points:g}/{self.max_points:g} points)"]
        if self.message:
            lines.append(f"   {self.message}")
        graded = [p for p in self.parts if not p.skipped]
        if graded and self.status in (PASSED, FAILED):
            ok = sum(p.passed for p in graded)
            lines.append(f"   {ok} of {len(graded)} checks passed")
        failed = [p for p in graded if not p.passed]
        for p in failed[:3]:  # the first few failures say enough; each names its seed
            rerun = f" (reproduce with seed={p.seed})" if p.seed is not None else ""
            lines.append(f"   ✗ {p.name}{rerun}: {p.detail}")
        if len(failed) > 3:
            lines.append(f"   ... and {len(failed) - 3} more failing checks")
        for p in self.parts:
            if p.skipped:
                lines.append(f"   ⏭ {p.name}: {p.detail}")
        if self.hint and self.status in (FAILED, WRONG_TYPE):
            lines.append(f"   Hint: {self.hint}")
        return "\n".join(lines)

    __str__ = text

    def __repr__(self) -> str:
        return self.text()

    def _repr_html_(self) -> str:
        return f"<pre>{html.escape(self.text())}</pre>"

    def to_dict(self) -> dict:
        return {"exercise": self.exercise, "status": self.status, "points": self.points,
                "max_points": self.max_points, "feedback": self.text()}
