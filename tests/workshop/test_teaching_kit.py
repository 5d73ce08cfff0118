"""Each lesson's teaching kit comes from one source (tools/teaching_kit.py): the lesson, its
recorded run and its notes. A lesson or ``##`` section without its notes, slot or answers fails
here; so does a guide whose answers are not what the lesson's run reveals."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import nbformat
import pytest

from tools import teaching_kit
from tools.notebook_outputs import execute, load_reveals

ROOT = Path(__file__).resolve().parents[2]
GUIDE = (ROOT / "workshop" / "INSTRUCTOR_GUIDE.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("number", teaching_kit.KIT_LESSONS)
def test_every_lesson_and_section_has_its_kit(number):
    kit = teaching_kit.kit(number)
    assert teaching_kit.missing(kit) == []
    assert kit.predictions, f"lesson {number} has no prediction: nothing to put on its slides"
    # its rows in the guide: Run All, a slot in a day plan, the answer key
    assert f"| {kit.title} | " in GUIDE
    plans = GUIDE.split("### A 6-hour day", 1)[1].split("### A half day", 1)[0]
    assert f"| {kit.title}" in plans
    answers = GUIDE.split("<!-- kit:answers -->", 1)[1].split("<!-- /kit:answers -->", 1)[0]
    assert f"**{kit.title}**" in answers
    for p in kit.predictions:
        assert f"{p.question}" in answers and f"**{p.answer}**" in answers


def test_a_section_without_notes_or_a_lesson_without_minutes_is_reported():
    kit = teaching_kit.kit("05c")
    kit.sections.append("A new section")
    kit.notes.minutes = None
    problems = teaching_kit.missing(kit)
    assert any("`## A new section`" in p for p in problems) and any("minutes" in p for p in problems)


def test_the_guide_says_what_the_lessons_runs_say():
    """The generated parts of the guide are what tools/teaching_kit.py makes of the lessons' runs
    today (`python -m tools.teaching_kit` rewrites them)."""
    kits = teaching_kit.kits()
    assert teaching_kit.render_guide(GUIDE, teaching_kit.generated(kits)) == GUIDE


def test_a_changed_answer_changes_the_guide():
    kits = teaching_kit.kits()
    changed = copy.deepcopy(kits)
    p = next(k for k in changed if k.number == "05c").predictions[0]
    p.answer = f"{p.answer}-changed"
    assert teaching_kit.render_guide(GUIDE, teaching_kit.generated(changed)) != GUIDE


@pytest.mark.parametrize("number", ("00", "04", "05c"))
def test_the_recorded_answers_are_the_lesson_s_run(number, monkeypatch):
    """The guide's answers come from the reveals ``--execute`` recorded: run the lesson again and
    compare what every prediction reveals (nbval compares its printed outputs, not the reveals).
    They are the default release's: under ``COURSE_KAFKA_VERSION=4.3.1`` lesson 05c truthfully
    reveals that the release refuses dead-letter queues, which is not what the guide records."""
    monkeypatch.delenv("COURSE_KAFKA_VERSION", raising=False)
    lesson = teaching_kit.lesson_path(number)
    fresh: list[dict] = []
    execute(nbformat.read(lesson, as_version=4), lesson, fresh)
    recorded = load_reveals(lesson)
    assert json.loads(json.dumps(fresh)) == recorded
