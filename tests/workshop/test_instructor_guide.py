"""workshop/INSTRUCTOR_GUIDE.md: every file it names exists, its timetables add up, and every
lesson of the day has a slot and facilitator notes (issue 22)."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
GUIDE = (ROOT / "workshop" / "INSTRUCTOR_GUIDE.md").read_text()
DAY_LESSONS = ("00", "01", "02", "03", "04", "05", "05b", "06", "07", "08")


def test_every_file_the_guide_names_is_in_the_repository():
    named = set(re.findall(r"`((?:workshop|course_lib|notebooks|tests|tools|exercises)/[\w./-]+?)`", GUIDE))
    named |= set(re.findall(r"\b([A-Z]+\.md)\b", GUIDE))  # FACTS.md, README.md...
    assert named
    patterns = {n for n in named if "NN" in n}  # exercises/NN_topic.ipynb: a pattern, not a file
    missing = sorted(n for n in named - patterns if not (ROOT / n).exists() and not (ROOT / "workshop" / n).exists())
    assert not missing, f"the guide names files that are not in the repository: {missing}"


def _table(heading: str) -> list[tuple[str, str, int]]:
    """(time, what, minutes) rows of the timetable under ``heading``."""
    section = GUIDE.split(heading, 1)[1].split("\n#", 1)[0]
    rows = re.findall(r"^\| (\d\d:\d\d) \| (.+?) \|\s*(\d*)\s*\|$", section, re.M)
    return [(t, what, int(m) if m else 0) for t, what, m in rows]


def _minutes(clock: str) -> int:
    h, m = clock.split(":")
    return int(h) * 60 + int(m)


def test_the_timetables_add_up_to_a_6_hour_day_and_a_half_day():
    for heading, length in (("### A 6-hour day", 6 * 60), ("### A half day", 4 * 60)):
        rows = _table(heading)
        for (t, what, minutes), (next_t, _, _) in zip(rows, rows[1:]):
            assert _minutes(t) + minutes == _minutes(next_t), (
                f"{heading}: {what} at {t} ({minutes} min) ends before {next_t}"
            )
        total = _minutes(rows[-1][0]) - _minutes(rows[0][0])
        assert total == sum(m for _, _, m in rows) and total <= length, (heading, total)
    day = _table("### A 6-hour day")
    assert _minutes(day[-1][0]) - _minutes(day[0][0]) == 6 * 60
    slots = " ".join(what for _, what, _ in day)
    for lesson in DAY_LESSONS:
        assert re.search(rf"(^| ){lesson} ", slots), f"lesson {lesson} has no slot in the day"
    assert "capstone" in slots


def test_every_lesson_of_the_day_has_facilitator_notes():
    notes = GUIDE.split("## 4. Facilitator notes", 1)[1].split("\n## ", 1)[0]
    notes = " ".join(notes.split())  # the notes' words, wherever their lines break
    for lesson in DAY_LESSONS + ("05c",):
        assert f"**{lesson} " in notes, f"no facilitator notes for lesson {lesson}"
    # the answer key (generated: tests/workshop/test_teaching_kit.py) and what to say
    assert notes.count("**.") + notes.count("** ") >= 8 and notes.count("wrong answer") >= 6
    assert notes.count("*In-lesson exercises:*") >= 7 and notes.count("Graded exercises") >= 8
    assert "### Plan B: the hub fails" in GUIDE and "make site-offline" in GUIDE


def test_the_two_day_plan_places_every_lesson_05c_and_the_kip_848_section():
    section = GUIDE.split("### Two days", 1)[1].split("\n### ", 1)[0]
    days = section.split("**Day 2**")
    assert len(days) == 2
    for day in days:
        rows = re.findall(r"^\| (\d\d:\d\d) \| (.+?) \|\s*(\d*)\s*\|$", day, re.M)
        for (t, what, minutes), (next_t, _, _) in zip(rows, rows[1:]):
            assert _minutes(t) + int(minutes or 0) == _minutes(next_t), (what, t, next_t)
        assert _minutes(rows[-1][0]) <= 17 * 60, "a day of the two-day plan ends after 17:00"
    for lesson in DAY_LESSONS + ("05c", "09", "10"):
        assert re.search(rf"\| {lesson} ", section), f"lesson {lesson} has no slot in the two days"
    assert "The consumer protocol (Kafka 4): who waits" in section
    one_day = GUIDE.split("### A 6-hour day", 1)[1].split("\n### ", 1)[0]
    assert "05c" in one_day and "two-day plan" in one_day  # left out of the day, and it says why


def _lesson_05b_real_kafka_default() -> bool:
    """What lesson 05b's ``REAL_KAFKA = ...`` line sets: does Run All start a real cluster?"""
    import nbformat

    nb = nbformat.read(ROOT / "notebooks" / "05b_consumer_groups.ipynb", as_version=4)
    found = [
        m.group(1)
        for c in nb.cells
        if c.cell_type == "code"
        for m in [re.search(r"^REAL_KAFKA = (\w+)", c.source, re.M)]
        if m
    ]
    assert len(found) == 1, f"lesson 05b sets REAL_KAFKA {len(found)} times"
    return found[0] == "True"


def test_the_guide_s_05b_run_all_matches_the_lesson():
    """The guide said Run All of 05b takes 51.8 s (a real cluster starting) and to warn learners,
    after the real-Kafka part became opt-in. What it says must follow the lesson's switch."""
    row = next(line for line in GUIDE.splitlines() if line.startswith("| 05b · "))
    if _lesson_05b_real_kafka_default():
        assert "Tell learners" in row
    else:
        assert "opt-in" in row and "REAL_KAFKA = True" in row and "Tell learners" not in row, row
        assert "51.8" not in GUIDE
