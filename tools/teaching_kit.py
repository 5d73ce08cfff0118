"""Each lesson's teaching kit from one source: the lesson, its recorded run and its notes.

    python -m tools.teaching_kit            # rewrite the guide's generated parts
    python -m tools.teaching_kit --check    # exit 1 if the guide differs from what the lessons say

What a lesson's kit is made of, and where each part comes from:

- **the lesson** (``notebooks/NN_*.ipynb``): its ``##`` sections, its predictions (the code cell
  ``name = Prediction(...)``, under which section) and its summary;
- **its run** (``tests/notebook_expectations/NN_*.json``, written by ``tools/notebook_outputs.py
  --execute``): what every prediction reveals once locked in (the measured answer and its
  explanation) and how long Run All took - nbval checks the same run's outputs on every test run;
- **its graded exercises** (``exercises_src/NN_*.ipynb``): the solutions, which ``check()`` passes;
- **its notes** (``workshop/notes/NN.md``): ``minutes: N`` (its slot in the day plans), what to
  say on the title slide, and a ``## heading`` section of talking points per section of the lesson
  (``## Claim *`` covers every heading that starts with "Claim "); a section whose notes start
  with ``optional: N min - why`` is left out of the one-day plan and placed in the two-day plan.

From these, the instructor guide's timetable, Run All table and answer key (workshop/
INSTRUCTOR_GUIDE.md, between ``<!-- kit:NAME -->`` and ``<!-- /kit:NAME -->``) and the slides
(tools/lesson_slides.py) are generated, so a changed answer changes everywhere and a new lesson or
section without notes fails tests/workshop/test_teaching_kit.py.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NOTES_DIR = ROOT / "workshop" / "notes"
GUIDE = ROOT / "workshop" / "INSTRUCTOR_GUIDE.md"
EXPECTATIONS = ROOT / "tests" / "notebook_expectations"
EXERCISES_SRC = ROOT / "exercises_src"
#: the workshop's lessons (09 and 10 are labs: a cluster, Spark; the guide plans them on their own)
KIT_LESSONS = ("00", "01", "02", "03", "04", "05", "05b", "05c", "06", "07", "08")
#: sections every lesson ends with: their slides come from the lesson itself, no notes needed
NO_NOTES = ("summary", "exercises")
_PREDICTION = re.compile(r"^(\w+)\s*=\s*Prediction\(", re.M)
_OPTIONAL = re.compile(r"^optional:\s*(\d+)\s*min\s*-\s*(.+)$", re.M)
_SOLUTION = re.compile(r"^(ex\w+)\s*=\s*(.+?)\s*# SOLUTION\s*$", re.M)


class KitError(ValueError):
    """A lesson's kit is incomplete or does not fit the lesson (what is missing, where to add it)."""


def key(heading: str) -> str:
    """A heading as notes and lessons are matched: no ``#``, no backquotes, spaces collapsed.

    >>> key("## `max.poll.interval.ms`:  the slow handler")
    'max.poll.interval.ms: the slow handler'
    """
    return re.sub(r"\s+", " ", heading.strip().lstrip("#").replace("`", "")).strip().lower()


@dataclass
class Notes:
    minutes: int | None
    title: str
    sections: dict[str, str]  # heading key -> talking points (an "optional:" line removed)
    optional: dict[str, tuple[int, str]]  # heading key -> (minutes, why)

    def for_heading(self, heading: str) -> str | None:
        k = key(heading)
        if k in self.sections:
            return self.sections[k]
        for pattern, text in self.sections.items():
            if pattern.endswith(" *") and k.startswith(pattern[:-1]):
                return text
        return None


def read_notes(text: str) -> Notes:
    """A notes file: ``minutes:``, title-slide notes, and a section per ``## heading``.

    >>> n = read_notes("# 05c\\nminutes: 30\\nSay what changes.\\n## A crash\\noptional: 5 min - 4 JVMs\\nAsk when.\\n")
    >>> n.minutes, n.title, n.sections, n.optional
    (30, 'Say what changes.', {'a crash': 'Ask when.'}, {'a crash': (5, '4 JVMs')})
    """
    title: list[str] = []
    sections: dict[str, list[str]] = {}
    current, minutes = title, None
    for line in text.splitlines():
        if line.startswith("## "):
            current = sections.setdefault(key(line), [])
        elif line.startswith("# "):
            continue
        elif current is title and re.fullmatch(r"minutes:\s*\d+", line.strip()):
            minutes = int(line.split(":")[1])
        else:
            current.append(line)
    optional, kept = {}, {}
    for k, lines in sections.items():
        body = "\n".join(lines).strip()
        m = _OPTIONAL.search(body)
        if m:
            optional[k] = (int(m[1]), m[2].strip())
            body = _OPTIONAL.sub("", body).strip()
        kept[k] = body
    return Notes(minutes, "\n".join(title).strip(), kept, optional)


@dataclass
class Prediction:
    name: str
    section: str  # the ## heading it is under
    question: str
    kind: str
    choices: list | None
    answer: str | None
    explanation: str | None
    predict_text: str = ""  # the lesson's "**Predict:** ..." paragraph above it


@dataclass
class Kit:
    number: str
    lesson: Path
    title: str
    sections: list[str]  # the lesson's ## headings, in order
    notes: Notes
    predictions: list[Prediction]
    run_all_s: float | None
    exercises: list[tuple[str, str]] = field(default_factory=list)  # (id, the solution's answer)

    @property
    def minutes(self) -> int:
        return self.notes.minutes or 0

    @property
    def optional_minutes(self) -> int:
        return sum(m for m, _ in self.notes.optional.values())


def lesson_path(number: str) -> Path:
    found = sorted((ROOT / "notebooks").glob(f"{number}_*.ipynb"))
    if not found:
        raise KitError(f"no lesson notebooks/{number}_*.ipynb")
    return found[0]


def _predictions(nb, reveals: list[dict]) -> list[Prediction]:
    by_name = {r["name"]: r for r in reveals}
    found, section, predict_text = [], "", ""
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            for line in cell.source.split("\n"):
                if line.startswith("## "):
                    section = line[3:].strip()
            m = re.search(r"\*\*Predict:\*\*(.*)", cell.source, re.S)
            if m:
                predict_text = " ".join(m[1].split())
            continue
        for name in _PREDICTION.findall(cell.source):
            r = by_name.get(name)
            if r is None:
                raise KitError(
                    f"{name} has no recorded reveal: run `python tools/notebook_outputs.py --execute` on the lesson"
                )
            found.append(
                Prediction(
                    name,
                    section,
                    r["question"],
                    r["kind"],
                    r["choices"],
                    r["actual"],
                    r["explanation"],
                    predict_text,
                )
            )
            predict_text = ""
    return found


def _exercises(number: str, lesson: Path) -> list[tuple[str, str]]:
    src = EXERCISES_SRC / lesson.name
    if not src.exists():
        return []
    import nbformat

    nb = nbformat.read(src, as_version=4)
    return [(m[1], m[2]) for c in nb.cells if c.cell_type == "code" for m in _SOLUTION.finditer(c.source)]


def kit(number: str) -> Kit:
    """The kit of lesson ``number``, read from its sources (:class:`KitError` if one is missing)."""
    import nbformat

    lesson = lesson_path(number)
    notes_file = NOTES_DIR / f"{number}.md"
    if not notes_file.exists():
        raise KitError(f"lesson {number} has no notes: write {notes_file.relative_to(ROOT)}")
    nb = nbformat.read(lesson, as_version=4)
    stored = EXPECTATIONS / f"{lesson.stem}.json"
    body = json.loads(stored.read_text()) if stored.exists() else {}
    headings = [line for c in nb.cells if c.cell_type == "markdown" for line in c.source.split("\n")]
    title = next((h[2:].strip() for h in headings if h.startswith("# ")), lesson.stem)
    return Kit(
        number,
        lesson,
        title,
        [h[3:].strip() for h in headings if h.startswith("## ")],
        read_notes(notes_file.read_text(encoding="utf-8")),
        _predictions(nb, body.get("reveals", [])),
        body.get("run_all_s"),
        _exercises(number, lesson),
    )


def missing(k: Kit) -> list[str]:
    """What the kit lacks, one line each (empty: complete)."""
    problems = []
    if k.notes.minutes is None:
        problems.append(f"workshop/notes/{k.number}.md has no `minutes: N` line (its slot in the day plans)")
    for heading in k.sections:
        if key(heading) not in NO_NOTES and not k.notes.for_heading(heading):
            problems.append(f"workshop/notes/{k.number}.md has no notes for the section `## {heading}`")
    known = {key(h) for h in k.sections}
    for h in k.notes.sections:
        if h not in known and not (h.endswith(" *") and any(s.startswith(h[:-1]) for s in known)):
            problems.append(f"workshop/notes/{k.number}.md has notes for `## {h}`, which the lesson does not have")
    if k.run_all_s is None:
        problems.append(f"no Run All time recorded for {k.lesson.name}: run tools/notebook_outputs.py --execute on it")
    for p in k.predictions:
        if p.answer is None:
            problems.append(f"{p.name} in {k.lesson.name} reveals nothing: its reveal() did not run")
    return problems


# ---- the guide's generated parts -----------------------------------------------------------------
def _first_sentence(markdown: str | None) -> str:
    text = " ".join((markdown or "").split())
    text = re.sub(r"^\*\*[^*]+\*\*\s*", "", text)  # the "**Measured:**" head
    m = re.match(r"(.+?[.!?])(\s|$)", text)
    return m[1] if m else text


def _s(seconds: float | None) -> str:
    return f"{seconds:.1f} s" if seconds is not None else "not recorded"


def run_all_table(kits: list[Kit]) -> str:
    rows = ["| lesson | Run All (measured by its last `--execute`) |", "|---|---|"]
    for k in kits:
        opt_in = "REAL_KAFKA = False" in k.lesson.read_text(encoding="utf-8")
        what = " (the simulator part; its real-Kafka part is opt-in: `REAL_KAFKA = True`)" if opt_in else ""
        rows.append(f"| {k.title} | {_s(k.run_all_s)}{what} |")
    return "\n".join(rows)


def _clock(minutes: int) -> str:
    return f"{minutes // 60:02d}:{minutes % 60:02d}"


def _plan(items: list[tuple[str, int]], start: int) -> tuple[str, int]:
    rows = ["| time | what | minutes |", "|---|---|---|"]
    t = start
    for what, minutes in items:
        rows.append(f"| {_clock(t)} | {what} | {minutes} |")
        t += minutes
    rows.append(f"| {_clock(t)} | end | |")
    return "\n".join(rows), t


def _slot(k: Kit, with_optional: bool) -> tuple[str, int]:
    optional = [s for s in k.sections if key(s) in k.notes.optional]
    what = k.title
    if optional and not with_optional:
        skipped = "; ".join(f"*{s}* ({k.notes.optional[key(s)][1]})" for s in optional)
        what += f" - without {skipped}"
    elif optional:
        what += " - with " + ", ".join(f"*{s}*" for s in optional)
    return what, k.minutes + (k.optional_minutes if with_optional else 0)


#: where the one-day plan breaks (after which lesson: break, minutes)
DAY_BREAKS = {"02": ("*break*", 15), "05": ("*lunch*", 45), "07": ("*break*", 10)}
#: lessons the one-day plan leaves to the two-day plan, and why
NOT_IN_ONE_DAY = {
    "05c": "a second model of consumption (KIP-932), best after a day with consumer groups; for a room that "
    "runs job queues, swap it for 08"
}


def one_day(kits: list[Kit]) -> str:
    items = [("preflight (everyone green before going on)", 10)]
    for k in kits:
        if k.number in NOT_IN_ONE_DAY:
            continue
        items.append(_slot(k, with_optional=False))
        if k.number in DAY_BREAKS:
            items.append(DAY_BREAKS[k.number])
    items.append(("the capstone (exercise 11): read it together, start it; finish as homework", 15))
    table, _ = _plan(items, 9 * 60)
    left = [f"**{k.title}** ({k.minutes} min: {NOT_IN_ONE_DAY[k.number]})" for k in kits if k.number in NOT_IN_ONE_DAY]
    optional = [
        f"*{s}* of {k.number} ({k.notes.optional[key(s)][0]} min: {k.notes.optional[key(s)][1]})"
        for k in kits
        for s in k.sections
        if key(s) in k.notes.optional
    ]
    return (
        f"{table}\n\nLeft out of this day, in the two-day plan: {'; '.join(left) or 'nothing'}. Optional sections "
        f"(skipped here, taught in the two-day plan): {'; '.join(optional) or 'none'}."
    )


#: the two-day plan: day 1 the producer side and the consumers (groups, queues); day 2
#: transactions, the claims, the labs and the capstone
TWO_DAY_SPLIT = "05c"  # the last lesson of day 1
TWO_DAY_BREAKS = {"02": ("*break*", 15), "05": ("*lunch*", 45), "07": ("*break*", 15)}
LABS = (
    ("*lunch*", 45),
    ("09 real Kafka lab (the shared cluster)", 60),
    ("*break*", 10),
    ("10 PySpark exactly-once lab (Spark Connect)", 60),
    ("the capstone (exercise 11)", 30),
)


def two_day(kits: list[Kit]) -> str:
    day1 = [("preflight", 10)]
    day2: list[tuple[str, int]] = [("recap of day 1: the decision guide", 10)]
    target = day1
    for k in kits:
        target.append(_slot(k, with_optional=True))
        if k.number in TWO_DAY_BREAKS:
            target.append(TWO_DAY_BREAKS[k.number])
        if k.number == TWO_DAY_SPLIT:
            target = day2
    day2 += list(LABS)
    first, _ = _plan(day1, 9 * 60)
    second, _ = _plan(day2, 9 * 60)
    return f"**Day 1**\n\n{first}\n\n**Day 2**\n\n{second}"


def answers(k: Kit) -> str:
    """The lesson's answer key: every prediction's question and the answer its run reveals, the
    graded exercises' solutions."""
    lines = [f"**{k.title}** ({k.minutes} min; Run All {_s(k.run_all_s)})"]
    for p in k.predictions:
        choices = f" ({' / '.join(p.choices)})" if p.choices else ""
        lines.append(f"- *{p.section}* - {p.question}{choices} **{p.answer}**. {_first_sentence(p.explanation)}")
    if k.exercises:
        lines.append(
            "- Graded exercises (the solutions `check()` passes): "
            + "; ".join(f"`{i}` = `{a}`" for i, a in k.exercises)
        )
    if k.notes.title:
        lines.append("")
        lines.append(k.notes.title)
    return "\n".join(lines)


def generated(kits: list[Kit]) -> dict[str, str]:
    return {
        "run-all": run_all_table(kits),
        "one-day": one_day(kits),
        "two-day": two_day(kits),
        "answers": "\n\n".join(answers(k) for k in kits),
    }


def render_guide(text: str, parts: dict[str, str]) -> str:
    """``text`` with each ``<!-- kit:NAME -->...<!-- /kit:NAME -->`` block replaced by its part."""
    for name, body in parts.items():
        pattern = re.compile(rf"(<!-- kit:{name} -->\n)(?:.*?\n)?(<!-- /kit:{name} -->)", re.S)
        if not pattern.search(text):
            raise KitError(f"the guide has no <!-- kit:{name} --> ... <!-- /kit:{name} --> block")
        text = pattern.sub(lambda m: m[1] + body + "\n" + m[2], text)
    return text


def kits() -> list[Kit]:
    return [kit(n) for n in KIT_LESSONS]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tools.teaching_kit", description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="exit 1 if the guide differs from the generated parts")
    args = ap.parse_args(argv)
    try:
        all_kits = kits()
        problems = [p for k in all_kits for p in missing(k)]
        if problems:
            print("incomplete teaching kits:\n  " + "\n  ".join(problems), file=sys.stderr)
            return 2
        text = GUIDE.read_text(encoding="utf-8")
        new = render_guide(text, generated(all_kits))
    except KitError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if args.check:
        if new != text:
            print(f"{GUIDE.relative_to(ROOT)} differs from the lessons: run python -m tools.teaching_kit")
            return 1
        print("the guide says what the lessons' runs say")
        return 0
    GUIDE.write_text(new, encoding="utf-8")
    print(f"wrote {GUIDE.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
