"""The slides as the room and the instructor see them: in Chromium (Playwright), offline, every
slide of three lessons' decks fits reveal.js's 1280x720 canvas - nothing cut at the bottom or the
right edge, no scrolled text - and the speaker view (S) shows the answer beside the slide.
Screenshots go to artifacts/slides-shots/."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from course_lib import cache
from tests.browser_support import ARTIFACTS, skip_reason
from tools import lesson_slides

ROOT = Path(__file__).resolve().parents[2]
LESSONS = ("01_replicated_log", "02_acks_and_durability", "05c_share_groups")

pytestmark = [
    pytest.mark.skipif(skip_reason("jupyter") is not None, reason=str(skip_reason("jupyter"))),
    pytest.mark.skipif(
        shutil.which("npm") is None and not cache.is_complete(cache.cache_dir() / lesson_slides.NPM_ENTRY),
        reason="reveal.js comes from npm (not installed, not cached)",
    ),
]

#: per slide: its kind, and whatever sticks out of it (the slide itself, a <pre> or an image)
MEASURE = """() => {
  const s = Reveal.getCurrentSlide();
  const out = [];
  if (s.scrollHeight > s.clientHeight + 1) out.push(`slide: ${s.scrollHeight} px tall`);
  if (s.scrollWidth > s.clientWidth + 1) out.push(`slide: ${s.scrollWidth} px wide`);
  const box = s.getBoundingClientRect();
  for (const e of s.querySelectorAll('h1, h2, p, li, pre, img')) {
    if (e.closest('aside')) continue;
    const r = e.getBoundingClientRect();
    if (r.bottom > box.bottom + 1 || r.right > box.right + 1) out.push(`${e.tagName} outside the slide`);
    if (e.tagName === 'PRE' && (e.scrollWidth > e.clientWidth + 1 || e.scrollHeight > e.clientHeight + 1))
      out.push('PRE scrolls');
  }
  return {kind: s.dataset.kind, problems: out};
}"""


@pytest.fixture(scope="module")
def decks(tmp_path_factory):
    out = tmp_path_factory.mktemp("slides")
    return {name: lesson_slides.build(ROOT / "notebooks" / f"{name}.ipynb", out) for name in LESSONS}


def _open(browser, deck: Path):
    page = browser.new_page(viewport={"width": 1280, "height": 720})
    # offline: anything but the deck's own files is refused
    page.route("**/*", lambda r: r.continue_() if r.request.url.startswith("file://") else r.abort())
    page.goto(deck.as_uri())
    page.wait_for_function("window.Reveal && Reveal.isReady()")
    return page


@pytest.mark.parametrize("name", LESSONS)
def test_no_slide_overflows_1280x720(browser, decks, name):
    page = _open(browser, decks[name])
    shots = ARTIFACTS / "slides-shots"
    shots.mkdir(parents=True, exist_ok=True)
    assert page.evaluate("[Reveal.getConfig().width, Reveal.getConfig().height]") == [1280, 720]
    bad, kinds = {}, []
    for i in range(page.evaluate("Reveal.getTotalSlides()")):
        page.evaluate(f"Reveal.slide({i})")
        m = page.evaluate(MEASURE)
        kinds.append(m["kind"])
        if m["problems"]:
            bad[i] = m
            page.screenshot(path=str(shots / f"{name}-{i:02d}-overflow.png"))
    page.close()
    assert not bad, f"{name}: slides that do not fit 1280x720: {bad}"
    assert kinds[0] == "title" and "question" in kinds and "result" in kinds


def test_the_speaker_view_shows_the_answer_beside_the_question(browser, decks):
    page = _open(browser, decks["05c_share_groups"])
    i = page.evaluate(
        "[...document.querySelectorAll('.slides > section')].findIndex(s => s.dataset.kind === 'question')"
    )
    page.evaluate(f"Reveal.slide({i})")
    with page.expect_popup() as popup:
        page.keyboard.press("s")
    view = popup.value
    view.set_viewport_size({"width": 1280, "height": 720})
    view.wait_for_function(
        "document.querySelector('.speaker-controls-notes') && "
        "document.querySelector('.speaker-controls-notes').innerText.includes('Answer')"
    )
    notes = view.inner_text(".speaker-controls-notes")
    assert "Answer (the run, seed 1):" in notes and "Talking points" in notes
    shots = ARTIFACTS / "slides-shots"
    shots.mkdir(parents=True, exist_ok=True)
    view.screenshot(path=str(shots / "05c-speaker-view.png"))
    view.close()
    page.close()
