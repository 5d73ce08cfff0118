"""Predict, then measure, as a learner sees it in the static site (JupyterLite, Python in
Pyodide): for two lessons, the text rendered above each *lock in* shows none of the values its
reveal prints; once locked in, the reveal shows the explanation with the measured numbers.

The same checks in JupyterLab, for every lesson with predictions (00-08, 05b, ...), are part of
the one Run All per lesson of tests/test_browser_lab.py
(``test_run_all_gives_no_prediction_away_and_lock_in_reveals_it``); what each reveal prints, and
how a leak is looked for, is in tests/browser_support.py (``Expected``). The site is the offline
copy built once per test run (``offline_site``, tests/conftest.py) and shared with
tests/test_site.py. Screenshots: ``artifacts/site_predictions_<lesson>_{before,after}_lock_in.png``.
"""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from tests.browser_support import ARTIFACTS, ROOT, Expected, leaks, missing_numbers, readable

pytestmark = pytest.mark.browser


def _lock_in(box) -> None:
    """Answer as a learner might (the first choice, a number, or a note) and lock it in."""
    choices = box.locator(".widget-toggle-button")
    if choices.count():
        choices.first.click()
    else:
        box.locator("input").fill("1")
    box.get_by_role("button", name="lock in").click()
    box.locator(".pr-status", has_text="measured:").wait_for()


# JupyterLite renders only the cells near the view, so the lesson is run cell
# by cell, each read while it is on screen (as tests/test_site.py does), and each prediction is
# locked in once its reveal cell has run.

SITE_LESSONS = ["00_start_here.ipynb", "01_replicated_log.ipynb"]


@pytest.fixture(scope="module")
def site_pages(offline_site):
    """``new_page`` on the offline site (built once per run), in a Chromium of its own with the
    site's offline command line (no host but 127.0.0.1)."""
    from playwright.sync_api import sync_playwright
    from tools.site_server import CHROMIUM, OFFLINE_ARGS, serve

    out = offline_site
    with sync_playwright() as p, serve(out, out / "pyodide") as server:
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=OFFLINE_ARGS, headless=True)
        try:

            def new_page(path: str):
                context = chromium.new_context(viewport={"width": 1366, "height": 768})
                context.set_default_timeout(300_000)  # a cold Pyodide start on a busy machine
                page = context.new_page()
                page.goto(f"{server.base_url}/lab/index.html?path={path}")
                page.locator(".jp-Notebook .jp-Cell").first.wait_for()
                page.get_by_text("Python (Pyodide) | Idle").wait_for()
                return page

            yield new_page
        finally:
            chromium.close()


@pytest.mark.site
@pytest.mark.parametrize("lesson", SITE_LESSONS)
def test_the_same_holds_in_the_site(site_pages, lesson):
    from tests.test_site import _run_cell

    expected = Expected(ROOT / "notebooks" / lesson)
    nb = nbformat.read(ROOT / "notebooks" / lesson, as_version=4)
    page = site_pages(f"lessons/{lesson}")
    cells = page.locator(".jp-Notebook .jp-Cell")
    shift = 1  # the offline copy adds one collapsed cell at the top (it skips plots)
    reveals = {reveal: (k, p) for k, p in enumerate(expected.predictions) for reveal in [p[2]]}
    _run_cell(page, cells, 0)
    for i, cell in enumerate(nb.cells):
        if cell.cell_type == "code":
            _run_cell(page, cells, i + shift)
        if i not in reveals:
            continue
        k, (name, made, reveal, secret, phrases, numbers) = reveals[i]
        above = []
        for j in range(made + 1 + shift):  # read each while it is on screen
            cells.nth(j).scroll_into_view_if_needed()
            above.append(cells.nth(j).inner_text())
        leaked = leaks(readable("\n".join(above)), expected, name, secret, phrases)
        assert not leaked, f"site {lesson}: above {name}'s lock-in a learner reads {leaked}"
        shown = cells.nth(reveal + shift)
        assert "Measured:" not in shown.inner_text()
        box = cells.nth(made + shift).locator(".prediction")
        box.scroll_into_view_if_needed()
        if k == 0:
            page.screenshot(path=str(ARTIFACTS / f"site_predictions_{Path(lesson).stem}_before_lock_in.png"))
        _lock_in(box)
        shown.scroll_into_view_if_needed()
        explained = shown.locator(".jp-Cell-outputArea")
        explained.filter(has_text="Measured:").wait_for()
        text = explained.inner_text()
        missing = missing_numbers(text, numbers)
        assert not missing, f"site {lesson}: {name}'s explanation shows without {missing}: {text[:300]!r}"
        if k == 0:
            page.screenshot(path=str(ARTIFACTS / f"site_predictions_{Path(lesson).stem}_after_lock_in.png"))
    page.close()
