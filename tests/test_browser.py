"""The Voila demos in a real browser: Debian's chromium driven by Playwright.

Starts Voila (as ``make demo`` does) on a free port on 127.0.0.1, opens each demo, clicks like a
visitor and asserts what the page shows; screenshots go to ``artifacts/`` (git-ignored).
Skipped, with the reason, when chromium or playwright is missing.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from tests import demo_tries
from tests.browser_support import ARTIFACTS, ROOT, TIMEOUT_MS, Server, free_port, skip_reason

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def voila():
    reason = skip_reason("voila")
    if reason:
        print(f"skipping browser tests: {reason}")
        pytest.skip(reason)
    port = free_port()
    server = Server(
        "voila",
        [
            str(Path(sys.executable).parent / "voila"),
            "notebooks/demos",
            "--no-browser",
            "--template=course",
            "--Voila.ip=127.0.0.1",
            f"--port={port}",
            "--strip_sources=True",
            "--show_tracebacks=False",
            "--MappingKernelManager.cull_idle_timeout=600",
            "--MappingKernelManager.cull_interval=60",
        ],  # as `make demo`
        f"http://127.0.0.1:{port}",
        env={"JUPYTER_PATH": str(ROOT / "share" / "jupyter")},
    )
    try:
        server.wait()
        yield server.url
    finally:
        server.stop()


def _open(browser, url):
    page = browser.new_page(viewport={"width": 1300, "height": 1100})
    page.set_default_timeout(TIMEOUT_MS)
    page.goto(url)
    page.get_by_role("button", name="crash leader").wait_for()
    return page


_click, _summary, _on_first_screen = demo_tries.click, demo_tries.summary, demo_tries.on_first_screen


def test_delivery_simulator_loses_with_acks_1_and_not_with_acks_all(voila, browser):
    page = _open(browser, f"{voila}/voila/render/delivery_simulator.ipynb")
    assert "DeliverySimulator(" not in page.content()  # sources stripped
    page.get_by_label("idempotence (enable_idempotence)").uncheck()
    _click(page, "1", exact=True)
    page.get_by_label("lagging followers").check()
    page.locator(".sim-log", has_text="are paused").wait_for()
    _click(page, "send 5 messages")
    page.locator(".sim-log", has_text="5 of 5 acknowledged").wait_for()
    _click(page, "crash leader")
    _click(page, "heal and check")
    text = _summary(page, "lost after being acknowledged")
    assert text.startswith("5 messages lost after being acknowledged")
    assert page.locator("tr[data-outcome='lost (acknowledged)'] .oc-count").inner_text() == "5"
    page.screenshot(path=str(ARTIFACTS / "delivery_simulator_acks1_lost.png"), full_page=True)

    _click(page, "all", exact=True)
    page.get_by_label("idempotence (enable_idempotence)").check()
    page.locator(".sim-log", has_text="idempotence on").wait_for()
    _click(page, "send 5 messages")
    _click(page, "crash leader")
    _click(page, "heal and check")
    assert _summary(page, "No anomalies").startswith("No anomalies")
    page.screenshot(path=str(ARTIFACTS / "delivery_simulator_acks_all_safe.png"), full_page=True)
    page.close()


def test_delivery_simulator_lost_ack_duplicates_only_without_idempotence(voila, browser):
    page = _open(browser, f"{voila}/voila/render/delivery_simulator.ipynb")
    page.get_by_label("idempotence (enable_idempotence)").uncheck()
    page.locator(".sim-log", has_text="idempotence off").wait_for()
    _click(page, "lose next ACK")
    _click(page, "send 5 messages")
    _click(page, "heal and check")
    assert _summary(page, "duplicated").startswith("5 messages duplicated")
    assert "dropped" in page.locator(".sim-wire").inner_text()  # the lost ACK, on the wire
    page.screenshot(path=str(ARTIFACTS / "delivery_simulator_lost_ack_duplicates.png"), full_page=True)

    page.get_by_label("idempotence (enable_idempotence)").check()
    page.locator(".sim-log", has_text="idempotence on").wait_for()
    _click(page, "lose next ACK")
    _click(page, "send 5 messages")
    _click(page, "heal and check")
    assert _summary(page, "No anomalies").startswith("No anomalies")
    page.close()


def _open_crash_demo(voila, browser):
    page = browser.new_page(viewport={"width": 1366, "height": 768})
    page.set_default_timeout(TIMEOUT_MS)
    page.goto(f"{voila}/voila/render/consumer_crash.ipynb")
    page.get_by_role("button", name="crash consumer").wait_for()
    return page


def test_consumer_crash_demo(voila, browser):
    page = _open_crash_demo(voila, browser)
    page.locator("select").first.select_option(label="at-most-once (commit, then process)")
    page.locator("select").nth(1).select_option(label="after committing, before processing")
    _click(page, "crash consumer")
    summary = page.locator(".cc-summary", has_text="never processed")
    summary.wait_for()
    assert summary.inner_text().startswith("5 messages never processed")
    assert page.locator("tr[data-count='never processed'] .cc-count").inner_text() == "5"
    page.screenshot(path=str(ARTIFACTS / "consumer_crash_at_most_once.png"), full_page=True)
    page.locator("select").first.select_option(label="exactly-once: Kafka transaction (read_committed)")
    _click(page, "crash consumer")
    page.locator(".cc-summary", has_text="processed exactly once").wait_for()
    page.close()


def test_transactions_demo(voila, browser):
    """Its "Try", literally, at 1366x768: commit, abort, commit another, leave one open, compare the
    consumers, wait for the timeout. Each point is on the first screen, lesson 06's figure of the
    log (records, COMMIT and ABORT markers, LSO and HW) included."""
    page = browser.new_page(viewport={"width": 1366, "height": 768})
    page.set_default_timeout(TIMEOUT_MS)
    page.goto(f"{voila}/voila/render/transactions.ipynb")
    demo_tries.transactions(page)
    page.screenshot(path=str(ARTIFACTS / "transactions.png"))
    page.close()


def test_share_groups_demo(voila, browser):
    """Its first two "try" steps at 1366x768: a crash costs one redelivery with explicit
    acknowledgement, two jobs processed twice with implicit; the job rows show it."""
    page = browser.new_page(viewport={"width": 1366, "height": 768})
    page.set_default_timeout(TIMEOUT_MS)
    page.goto(f"{voila}/voila/render/share_groups.ipynb")
    page.get_by_role("button", name="run the workers").wait_for()
    page.get_by_label("crash worker 1").check()
    _click(page, "run the workers")
    page.locator(".sg-summary", has_text="processed twice: 0; delivered again: 1").wait_for()
    page.locator(".widget-dropdown", has_text="acknowledgement").locator("select").select_option(
        label="implicit: the next poll accepts the batch"
    )
    page.locator(".widget-checkbox", has_text="RENEW").locator("input:disabled").wait_for()  # implicit: no RENEW
    _click(page, "run the workers")
    page.locator(".sg-summary", has_text="processed twice: 2; delivered again: 3").wait_for()
    assert page.locator(".sg-job[data-outcome='twice']").count() == 2
    page.screenshot(path=str(ARTIFACTS / "share_groups_crash_implicit.png"), full_page=True)
    page.close()


def _record_requests(page) -> list[str]:
    urls: list[str] = []
    page.on("request", lambda request: urls.append(request.url))
    return urls


def _offsite(urls) -> list[str]:
    from urllib.parse import urlsplit

    return [
        u for u in urls if urlsplit(u).scheme in ("http", "https", "ws", "wss") and urlsplit(u).hostname != "127.0.0.1"
    ]


def test_landing_page_is_a_gallery_of_the_demos(voila, browser):
    page = browser.new_page(viewport={"width": 1366, "height": 768})
    page.set_default_timeout(TIMEOUT_MS)
    urls = _record_requests(page)
    page.goto(f"{voila}/voila/render/index.ipynb")
    items = page.locator(".demo-gallery .demo-item")
    items.first.wait_for()
    texts = items.all_inner_texts()
    assert [t.splitlines()[0] for t in texts] == [
        "Consumer crash",
        "Kafka delivery simulator",
        "Queues: share groups",
        "Transactions",
    ]
    assert all(len(t.splitlines()) == 2 for t in texts)  # a title and one line each
    page.screenshot(path=str(ARTIFACTS / "demo_gallery.png"))
    # JupyterLab's renderer opens links in a new tab: follow the href in this one
    from urllib.parse import urljoin

    href = page.get_by_role("link", name="Kafka delivery simulator").get_attribute("href")
    page.goto(urljoin(page.url, href))
    page.get_by_role("button", name="crash leader").wait_for()
    assert _offsite(urls) == [], _offsite(urls)
    page.close()


def test_delivery_simulator_try_text_followed_literally(voila, browser):
    """The demo's "Three things to try", in order, on a 1366x768 laptop screen: experiment 2 right
    after experiment 1 (lagging followers still ticked) must still show the duplicates, and each
    verdict must be on the first screen. Nothing may be fetched from outside 127.0.0.1."""
    page = browser.new_page(viewport={"width": 1366, "height": 768})
    page.set_default_timeout(TIMEOUT_MS)
    urls = _record_requests(page)
    page.goto(f"{voila}/voila/render/delivery_simulator.ipynb")
    page.get_by_role("button", name="crash leader").wait_for()
    demo_tries.delivery_thing_1(page)
    demo_tries.delivery_thing_2(page)
    page.screenshot(path=str(ARTIFACTS / "delivery_try_2_1366x768.png"))
    assert _offsite(urls) == [], _offsite(urls)
    page.close()


def test_delivery_simulator_thing_3_shows_nothing_acknowledged_on_the_first_screen(voila, browser):
    """Thing 3 of "Three things to try", followed literally after things 1 and 2 (lagging followers
    and idempotence left as those leave them): its point - nothing is acknowledged, the brokers
    refuse - must be on the first screen at 1366x768, not only as the newest log line below it.
    A refused write must never show as delivered on the wire."""
    page = browser.new_page(viewport={"width": 1366, "height": 768})
    page.set_default_timeout(TIMEOUT_MS)
    page.goto(f"{voila}/voila/render/delivery_simulator.ipynb")
    page.get_by_role("button", name="crash leader").wait_for()
    text = page.locator("body").inner_text()
    assert "start a new run" in text and "untick lagging followers" in text.replace("**", "")
    # as things 1 and 2 leave the app: lagging followers ticked, idempotence on, a run checked
    page.get_by_label("lagging followers").check()
    page.locator(".sim-log", has_text="are paused").wait_for()
    _click(page, "send 5 messages")
    _click(page, "heal and check")
    _summary(page, "No anomalies")
    demo_tries.delivery_thing_3(page)  # 3. "start a new run: untick lagging followers, ..."
    page.screenshot(path=str(ARTIFACTS / "delivery_try_3_1366x768.png"))
    page.close()


def test_consumer_crash_demo_draws_where_the_consumer_resumes(voila, browser):
    page = _open_crash_demo(voila, browser)
    page.locator("select").nth(1).select_option(label="after processing, before committing")
    _click(page, "crash consumer")
    figure = page.locator(".of-figure")
    figure.wait_for()
    # lesson 05's picture: at-least-once crashed after processing - offsets 0-4 twice, resume at 0
    assert figure.locator(".of-box[data-count='2']").count() == 5
    assert "committed offset (Kafka) = 0" in figure.inner_text()
    assert "consumed position at the crash = 5" in figure.inner_text()
    assert _on_first_screen(page, page.locator(".cc-summary"))
    page.screenshot(path=str(ARTIFACTS / "consumer_crash_figure.png"), full_page=True)
    page.close()


def test_the_readme_link_of_make_demo_opens_the_gallery(voila, browser):
    import re

    link = re.search(r"http://127\.0\.0\.1:8866(/\S*?)[,)\s]", (ROOT / "README.md").read_text())
    assert link, "README gives no make demo link"
    page = browser.new_page(viewport={"width": 1366, "height": 768})
    page.set_default_timeout(TIMEOUT_MS)
    page.goto(voila + link.group(1))
    page.locator(".demo-gallery .demo-item").first.wait_for()  # the gallery, not a bare file list
    page.close()
