"""Instructor slides (tools/lesson_slides.py, `make slides`): built from a lesson, offline (no script
or style sheet from the network), with the facilitator notes as reveal.js speaker notes."""

from __future__ import annotations

import html
import re
import shutil
import subprocess
from pathlib import Path

import nbformat
import pytest

from course_lib import cache
from tools import lesson_slides

ROOT = Path(__file__).resolve().parents[2]
DAY_LESSONS = ("00", "01", "02", "03", "04", "05", "05b", "06", "07", "08")


def test_every_lesson_of_the_day_has_notes_that_fit_its_headings():
    for number in DAY_LESSONS:
        lesson = next((ROOT / "notebooks").glob(f"{number}_*.ipynb"))
        notes = (lesson_slides.NOTES_DIR / f"{number}.md").read_text()
        deck = lesson_slides.slide_notebook(nbformat.read(lesson, as_version=4), notes, number)
        notes_cells = [c.source for c in deck.cells if c.metadata.get("slideshow", {}).get("slide_type") == "notes"]
        _, sections = lesson_slides.read_notes(notes)
        assert len(notes_cells) >= 1 and all(any(t in n for n in notes_cells) for t in sections.values())
        assert lesson_slides.guide_notes(number) in notes_cells[0]  # the guide's paragraph, on the title slide


def test_notes_for_a_heading_the_lesson_lacks_are_an_error():
    lesson = nbformat.read(ROOT / "notebooks" / "01_replicated_log.ipynb", as_version=4)
    with pytest.raises(lesson_slides.NotesError, match="no such heading|does not have"):
        lesson_slides.slide_notebook(lesson, "## No such heading\nlost notes\n", "01")


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
    assert not re.search(r"import [^;]+ from '(https?:)?//", page)
    for url in urls:
        assert (tmp_path / url).exists(), url
    for plugin in ("reveal.js/dist/reveal.js", "reveal.js/plugin/notes/notes.js"):
        assert f'"{plugin}"' in page and (tmp_path / plugin).exists()
    asides = re.findall(r'<aside class="notes">(.*?)</aside>', page, re.S)
    text = html.unescape(re.sub(r"<[^>]+>", "", " ".join(asides)))
    _, sections = lesson_slides.read_notes((lesson_slides.NOTES_DIR / "01.md").read_text())
    for notes in sections.values():
        assert " ".join(notes.split()[:6]).replace("`", "") in " ".join(text.split()), notes
    assert "NBVAL_CHECK_OUTPUT" not in page and page.count("<section") >= 4


def test_make_slides_runs_the_tool(tmp_path):
    out = subprocess.run(
        ["make", "-n", "slides", f"VENV={tmp_path / 'venv'}"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    assert "-m tools.lesson_slides" in out


def test_doctests():
    import doctest

    assert doctest.testmod(lesson_slides).failed == 0
