"""What a check says: one line per part that passed or failed, a hint, and under each failure the
exact code that reproduces it.

>>> parts = [Part(f"producer under faults, seed {s}", s != 3, "found ['lost']", s, side="producer") for s in range(2, 6)]
>>> parts += [Part(f"consumer under crashes, seed {s}", False, "found ['duplicate_processing']", s, side="consumer",
...                rerun=f'random_processing({s}, "at-least-once", messages=12)') for s in range(2, 6)]
>>> print(Report("ex11_q1", FAILED, 0, 3, parts=parts).text())
✗ ex11_q1: failed (0/3 points)
   3 of 8 checks passed
   producer: 1 of 4 checks failed
   ✗ producer under faults, seed 3: found ['lost']
     reproduce: check("ex11_q1", seeds=[3])
   consumer: 4 of 4 checks failed
   ✗ consumer under crashes, seeds 2, 3, 4, 5: found ['duplicate_processing']
     reproduce: random_processing(2, "at-least-once", messages=12)

Parts that fail the same way on several seeds are one line (``seeds 2, 3, 4, 5``), reproduced by
the first.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, field

PASSED, FAILED, NOT_ATTEMPTED, WRONG_TYPE, ERROR, SKIPPED = (
    "passed",
    "failed",
    "not attempted",
    "wrong type",
    "error",
    "skipped",
)

#: One symbol per status, from the fonts every system has (DejaVu, Liberation): emoji such as a green
#: check mark box render as empty boxes in a browser without an emoji font (Debian's Chromium).
STATUS_SYMBOLS = {PASSED: "✓", FAILED: "✗", NOT_ATTEMPTED: "✏", WRONG_TYPE: "⚠", ERROR: "‼", SKIPPED: "–"}


_HEADS = (PASSED, FAILED, NOT_ATTEMPTED, WRONG_TYPE, ERROR, SKIPPED)
_SEED = re.compile(r",? \(?seed[ =]-?\d+\)?")  # "random faults, seed 7" -> "random faults"


def _unseeded(text: str, seed: int | None) -> str:
    """``text`` without its seed: neither "seed 7" nor the number itself (a hidden seed)."""
    text = _SEED.sub("", text)
    return text.replace(str(seed), "a hidden scenario") if seed is not None else text


@dataclass
class Part:
    """One graded part of an exercise (for example: one seeded fault schedule)."""

    name: str
    passed: bool
    detail: str = ""
    seed: int | None = None
    skipped: bool = False
    #: which half of the answer the check is about ("producer", "consumer"; "" for one-sided exercises)
    side: str = ""
    #: the code that reruns exactly this check's experiment (default: the check itself on its seed)
    rerun: str = ""


def _same_failure(parts: list[Part]) -> list[list[Part]]:
    """Failed parts grouped when only their seed differs (the same experiment, the same verdict):
    a prediction wrong on 3 seeds is one line, not 3."""
    groups: dict[tuple, list[Part]] = {}
    for p in parts:
        key = (_SEED.sub("", p.name), p.detail, p.side) if p.seed is not None else (id(p),)
        groups.setdefault(key, []).append(p)
    return list(groups.values())


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

    def text(self, show_seeds: bool = True) -> str:
        """The feedback. ``show_seeds=False`` (the instructor's grader, which runs hidden seeds a
        learner cannot use) leaves the seed numbers out."""
        head = STATUS_SYMBOLS
        lines = [
            f"{head.get(self.status, '')} {self.exercise}: {self.status} ({self.points:g}/{self.max_points:g} points)"
        ]
        if self.message:
            lines.append(f"   {self.message}")
        graded = [p for p in self.parts if not p.skipped]
        failed = [p for p in graded if not p.passed]
        seeded = [p for p in graded if p.seed is not None]
        if graded and self.status in (PASSED, FAILED):
            if show_seeds or not seeded:
                lines.append(f"   {len(graded) - len(failed)} of {len(graded)} checks passed")
            else:  # the grader's seeds are of no use to a learner: count scenarios instead
                bad = sum(not p.passed for p in seeded)
                lines.append(f"   failed on {bad} of {len(seeded)} hidden scenarios")
                if len(seeded) < len(graded):
                    other = [p for p in graded if p.seed is None]
                    lines.append(f"   {sum(p.passed for p in other)} of {len(other)} other checks passed")
        sides = list(dict.fromkeys(p.side for p in failed))
        shown = 3 if len(sides) == 1 else 2  # every side gets lines: one side's failures never hide another's
        for side in sides:
            on_side = [p for p in failed if p.side == side]
            if side:
                total = sum(1 for p in graded if p.side == side)
                lines.append(f"   {side}: {len(on_side)} of {total} checks failed")
            groups = _same_failure(on_side)
            for group in groups[:shown]:
                lines.extend(self._failure(group, show_seeds))
            rest = sum(len(g) for g in groups[shown:])
            if rest:
                lines.append(f"   ... and {rest} more failing {side + ' ' if side else ''}checks")
        for p in self.parts:
            if p.skipped:
                lines.append(f"   – {p.name}: {p.detail}")
        if self.hint and self.status in (FAILED, WRONG_TYPE):
            lines.append(f"   Hint: {self.hint}")
        return "\n".join(lines)

    def _failure(self, group: list[Part], show_seeds: bool) -> list[str]:
        """Failed parts that say the same on several seeds: one line, and the code that reproduces
        the first (never a hidden seed)."""
        p = group[0]
        if not show_seeds:
            return [f"   ✗ {_unseeded(p.name, p.seed)}: {_unseeded(p.detail, p.seed)}"]
        name = p.name
        if len(group) > 1:
            name = f"{_SEED.sub('', p.name)}, seeds {', '.join(str(q.seed) for q in group)}"
        lines = [f"   ✗ {name}: {p.detail}"]
        rerun = p.rerun or (f'check("{self.exercise}", seeds=[{p.seed}])' if p.seed is not None else "")
        if rerun:
            lines.append(f"     reproduce: {rerun}")
        return lines

    __str__ = text

    def __repr__(self) -> str:
        return self.text()

    def _repr_html_(self) -> str:
        # JupyterLab breaks an output <pre> anywhere (word-break: break-all): wrap at spaces instead
        return f"<pre style='word-break:normal;overflow-wrap:break-word'>{html.escape(self.text())}</pre>"

    def to_dict(self) -> dict:
        return {
            "exercise": self.exercise,
            "status": self.status,
            "points": self.points,
            "max_points": self.max_points,
            "message": self.message,
            "hint": self.hint,
            "parts": [
                {
                    "name": p.name,
                    "passed": p.passed,
                    "detail": p.detail,
                    "seed": p.seed,
                    "skipped": p.skipped,
                    "side": p.side,
                    "rerun": p.rerun,
                }
                for p in self.parts
            ],
        }

    @classmethod
    def from_dict(cls, data: dict, max_points: float) -> "Report":
        """A report written by a process that ran learner code: untrusted. Types are checked,
        texts shortened, points kept within 0..max_points (the grader's own maximum)."""

        def text(value, limit=500):
            return str(value)[:limit]

        status = data["status"] if data.get("status") in _HEADS else ERROR
        points = min(max(float(data.get("points", 0)), 0.0), max_points)
        parts = [
            Part(
                text(p["name"], 200),
                bool(p["passed"]),
                text(p.get("detail", "")),
                p["seed"] if isinstance(p.get("seed"), int) else None,
                bool(p.get("skipped")),
                text(p.get("side", ""), 20),
                text(p.get("rerun", "")),
            )
            for p in data.get("parts", [])[:500]
        ]
        return cls(
            text(data["exercise"], 50),
            status,
            points,
            max_points,
            text(data.get("message", "")),
            text(data.get("hint", "")),
            parts,
        )
