"""Instructor slides (tools/lesson_slides.py, `make slides`), designed as slides from each lesson's
teaching kit: a question slide per prediction with its choices, the run's table or figure, the
answer and talking points in the speaker notes, no code; offline. (That every slide fits
1280x720: tests/workshop/test_slides_browser.py, in Chromium.)"""

from __future__ import annotations

import html
import re
import shutil
import subprocess
from pathlib import Path

import nbformat
import pytest

from course_lib import cache
from tools import lesson_slides, teaching_kit

ROOT = Path(__file__).resolve().parents[2]
#: what plumbing looks like on a slide: code of the lessons, never shown to the room
CODE = re.compile(r"Prediction\(|\.reveal\(|run_share_scenario\(|run_scenario\(|NBVAL_|^\s*(import|from) \w", re.M)


def _deck(number: str):
    kit = teaching_kit.kit(number)
    return kit, lesson_slides.slides_of(kit, nbformat.read(kit.lesson, as_version=4))


@pytest.mark.parametrize("number", teaching_kit.KIT_LESSONS)
def test_every_prediction_and_section_has_its_slides_and_notes(number):
    kit, deck = _deck(number)
    questions = [s for s in deck if s.kind == "question"]
    assert len(questions) == len(kit.predictions) and deck[0].kind == "title"
    for p, s in zip(kit.predictions, questions):
        assert html.escape(p.question) in s.body
        for choice in p.choices or ():
            assert f"<li>{html.escape(choice)}</li>" in s.body
        # the answer, the run's explanation and the talking points: in the notes, never on the slide
        assert f"**Answer (the run, seed 1):** {p.answer}" in s.notes and (p.explanation or "") in s.notes
    sections = [s for s in deck if s.kind == "section"]
    shown = [h for h in kit.sections if teaching_kit.key(h) not in teaching_kit.NO_NOTES]
    assert len(sections) == len(shown)
    assert all(s.notes for s in sections), "a section slide without talking points"
    assert any(s.kind == "summary" for s in deck)
    for s in deck:
        assert not CODE.search(html.unescape(re.sub(r"<[^>]+>", " ", s.body))), s.body[:300]


def test_a_result_slide_shows_the_run_s_table_and_figure():
    kit = teaching_kit.kit("02")
    nb = nbformat.read(kit.lesson, as_version=4)
    p = next(p for p in kit.predictions if p.name == "predict_rates")
    cell = next(c for c in nb.cells if "predict_rates.experiment()" in c.source)
    cell.outputs = [
        nbformat.v4.new_output("stream", name="stdout", text="acks=0  trials with loss  79/100\n"),
        nbformat.v4.new_output("display_data", data={"image/png": "iVBORw0KGgo="}),
    ]
    deck = lesson_slides.slides_of(kit, nb)
    i = next(i for i, s in enumerate(deck) if s.kind == "question" and html.escape(p.question) in s.body)
    assert [s.kind for s in deck[i : i + 3]] == ["question", "result", "figure"]
    assert "trials with loss" in deck[i + 1].body and "data:image/png;base64,iVBORw0KGgo=" in deck[i + 2].body


@pytest.mark.skipif(
    shutil.which("npm") is None and not cache.is_complete(cache.cache_dir() / lesson_slides.NPM_ENTRY),
    reason="reveal.js comes from npm (not installed, not cached)",
)
def test_one_lesson_s_slides_build_offline_with_the_notes_in_them(tmp_path):
    target = lesson_slides.build(ROOT / "notebooks" / "01_replicated_log.ipynb", tmp_path)
    page = target.read_text()
    # every script and style sheet the page loads is a file beside it
    loaded = re.findall(r"<script[^>]*\ssrc=\"([^\"]+)\"|<link[^>]*\shref=\"([^\"]+)\"", page)
    urls = [a or b for a, b in loaded]
    assert urls and not [u for u in urls if "://" in u or u.startswith("//")], urls
    for url in urls:
        assert (tmp_path / url).exists(), url
    assert "reveal.js/plugin/notes/notes.js" in page and "data:image/png;base64," in page  # the run's figure
    asides = re.findall(r"<aside class='notes'>(.*?)</aside>", page, re.S)
    text = " ".join(html.unescape(re.sub(r"<[^>]+>", "", " ".join(asides))).split())
    kit = teaching_kit.kit("01")
    for notes in kit.notes.sections.values():
        assert " ".join(notes.split()[:6]).replace("`", "") in text, notes
    assert "NBVAL_CHECK_OUTPUT" not in page and page.count("<section") >= 2 * len(kit.predictions)


def test_make_slides_runs_the_tool(tmp_path):
    out = subprocess.run(
        ["make", "-n", "slides", f"VENV={tmp_path / 'venv'}"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    assert "-m tools.lesson_slides" in out


def test_doctests():
    import doctest

    assert doctest.testmod(lesson_slides).failed == 0
