"""Each demo's "Try" text (notebooks/demos/), followed literally in a browser: one function per
demo, given the Playwright page the demo is on. The same steps whoever serves the demo - Voila
(tests/test_browser.py) or the static site's demo pages (tests/test_site.py) - so the two cannot
drift; each asserts what the text promises the visitor will see."""

from __future__ import annotations

SCREEN_HEIGHT = 768  # a laptop screen, 1366x768: each verdict must be on it without scrolling


def click(page, name, exact=False):
    # buttons with an icon have it in their accessible name: match the words, not the whole name
    page.get_by_role("button", name=name, exact=exact).click()


def summary(page, contains):
    locator = page.locator(".oc-summary", has_text=contains)
    locator.wait_for()
    return locator.inner_text()


def on_first_screen(page, locator, height=SCREEN_HEIGHT):
    """``locator`` is visible without scrolling on a ``height``-pixel-high window."""
    page.evaluate("window.scrollTo(0, 0)")
    box = locator.bounding_box()
    return box is not None and box["y"] >= 0 and box["y"] + box["height"] <= height


def verdict_on_first_screen(page, contains):
    text = summary(page, contains)
    assert on_first_screen(page, page.locator(".oc-summary", has_text=contains)), f"below the fold: {contains}"
    return text


def delivery_thing_1(page):
    """1. A leader crash: acks 1, untick idempotence, tick lagging followers; send, crash leader,
    heal and check - then acks all, tick idempotence again, and repeat."""
    idempotence = page.get_by_label("idempotence (enable_idempotence)")
    click(page, "1", exact=True)
    idempotence.uncheck()
    page.get_by_label("lagging followers").check()
    page.locator(".sim-log", has_text="are paused").wait_for()
    click(page, "send 5 messages")
    page.locator(".sim-log", has_text="5 of 5 acknowledged").wait_for()
    click(page, "crash leader")
    click(page, "heal and check")
    assert verdict_on_first_screen(page, "lost after being acknowledged").startswith("5 messages lost")
    assert page.locator("tr[data-outcome='lost (acknowledged)'] .oc-count").inner_text() == "5"
    click(page, "all", exact=True)
    idempotence.check()
    page.locator(".sim-log", has_text="idempotence on").wait_for()
    click(page, "send 5 messages")
    click(page, "crash leader")
    click(page, "heal and check")
    assert verdict_on_first_screen(page, "No anomalies").startswith("No anomalies")


def delivery_thing_2(page):
    """2. A lost ACK: acks all, untick idempotence; lose next ACK, send, heal and check - then tick
    idempotence and repeat. "lagging followers" stays as thing 1 leaves it, as a learner leaves it."""
    idempotence = page.get_by_label("idempotence (enable_idempotence)")
    click(page, "all", exact=True)
    idempotence.uncheck()
    page.locator(".sim-log", has_text="idempotence off").wait_for()
    click(page, "lose next ACK")
    click(page, "send 5 messages")
    click(page, "heal and check")
    assert verdict_on_first_screen(page, "duplicated").startswith("5 messages duplicated")
    assert "dropped" in page.locator(".sim-wire").inner_text()  # the lost ACK, on the wire
    idempotence.check()
    page.locator(".sim-log", has_text="idempotence on").wait_for()
    click(page, "lose next ACK")
    click(page, "send 5 messages")
    click(page, "heal and check")
    assert verdict_on_first_screen(page, "No anomalies").startswith("No anomalies")


def delivery_thing_3(page):
    """3. Too few copies: start a new run (untick lagging followers, min.insync.replicas 3); crash
    leader, send 5 messages, run 1000 ms: nothing is acknowledged, and the point of it - the brokers
    refuse - is on the first screen; a refused write never shows as delivered. Then heal and check:
    all 5 are written, once."""
    page.get_by_label("lagging followers").uncheck()
    page.locator(".sim-log", has_text="New run").wait_for()
    slider = (
        page.locator(".widget-slider", has_text="min.insync.replicas").locator(".ui-slider-handle, .noUi-handle").first
    )
    slider.focus()
    page.keyboard.press("End")  # the slider's maximum: 3
    page.locator(".sim-log", has_text="min.insync.replicas=3").wait_for()
    click(page, "crash leader")
    click(page, "send 5 messages")
    click(page, "run 1000 ms")
    page.locator(".sim-log", has_text="Ran the clock 1000 ms").wait_for()  # the app has done it all
    status = page.locator(".oc-summary", has_text="0 of 5 acknowledged")
    status.wait_for()
    assert "No check yet" not in status.inner_text()
    assert "refuse" in status.inner_text() and "NotEnoughReplicas" in status.inner_text()
    assert on_first_screen(page, status), "the point of thing 3 is below the fold"
    refused = page.locator(".sim-wire tr", has_text="NotEnoughReplicasError")
    assert refused.count() > 0
    for i in range(refused.count()):
        fate = refused.nth(i).locator("td").last
        assert fate.inner_text() != "delivered", refused.nth(i).inner_text()
        assert "write refused" in fate.inner_text()
        assert fate.evaluate("el => getComputedStyle(el).color") != "rgb(46, 125, 50)"  # not the green
    click(page, "heal and check")
    assert summary(page, "No anomalies").startswith("No anomalies")


def delivery_simulator(page):
    """ "Three things to try", in order."""
    page.get_by_role("button", name="crash leader").wait_for()
    delivery_thing_1(page)
    delivery_thing_2(page)
    delivery_thing_3(page)


def consumer_crash(page):
    """ "Choose a consumer and the moment it crashes (the list offers only the moments that consumer
    has), press crash consumer, and count the messages never processed or processed twice": every
    consumer, every moment its list offers; the counts on the page are the simulator's (CPython).
    Where Python has no sqlite3 (the offline site), the consumer that stores into SQLite says so."""
    from playwright.sync_api import expect

    from course_lib.application.processing import run_pipeline
    from course_lib.viz.consumers import CRASH_MOMENTS, SEMANTICS_LABELS, processing_counts

    consumer = page.locator(".widget-dropdown", has_text="consumer").locator("select")
    moment = page.locator(".widget-dropdown", has_text="crash it").locator("select")
    view = page.locator(".widget-html", has=page.locator(".cc-summary"))
    for semantics, label in SEMANTICS_LABELS.items():
        consumer.select_option(label=label)
        expect(moment.locator("option")).to_have_text(list(CRASH_MOMENTS[semantics].values()))  # once Python answers
        for point, moment_label in CRASH_MOMENTS[semantics].items():
            moment.select_option(label=moment_label)
            click(page, "crash consumer")
            ran = view.filter(has_text=label).filter(has_text=f"crashed {moment_label}, then restarted")
            ran.or_(view.filter(has_text="has no SQLite")).wait_for()
            if "has no SQLite" in view.inner_text():  # the offline site's Python: no sqlite3
                assert semantics == "exactly-once-external", view.inner_text()  # the SQLite store's alone
                continue
            expected = processing_counts(run_pipeline(semantics, point, seed=1))
            for name, count in expected.items():
                assert view.locator(f"tr[data-count='{name}'] .cc-count").inner_text() == str(count), (
                    semantics,
                    point,
                    name,
                )


def transactions(page):
    """Its "Try" (the prediction's question), at 1366x768: commit, abort, commit another, leave one
    open, compare the consumers, wait for the timeout. Each point is on the first screen, lesson
    06's figure of the log (records, COMMIT and ABORT markers, LSO and HW) included."""
    page.get_by_role("button", name="commit a transaction").wait_for()
    click(page, "commit a transaction")
    page.locator(".tx-committed", has_text="t1-2").wait_for()
    click(page, "abort a transaction")
    page.locator(".tx-uncommitted", has_text="t2-2").wait_for()
    assert "t2-" not in page.locator(".tx-committed").inner_text()
    click(page, "commit a transaction")  # "commit again"
    page.locator(".tx-committed", has_text="t3-2").wait_for()
    figure = page.locator(".lm-figure")
    states = figure.locator(".lm-box").evaluate_all("els => els.map(e => e.dataset.state)")
    assert states == (["committed"] * 3 + ["marker"] + ["aborted"] * 3 + ["marker"]) + ["committed"] * 3 + ["marker"]
    click(page, "leave one open")
    page.locator(".tx-uncommitted", has_text="t4-2").wait_for()
    assert page.locator(".tx-committed").inner_text() == "t1-0, t1-1, t1-2, t3-0, t3-1, t3-2"
    assert "LSO = 12" in figure.inner_text()  # read_committed stops before the open transaction
    for point in (page.locator(".tx-committed"), page.locator(".tx-uncommitted"), figure):
        assert on_first_screen(page, point), point
    click(page, "wait for the timeout")
    late = page.locator(".tx-view li", has_text="ProducerFencedError")
    late.wait_for()
    assert on_first_screen(page, late), "the refused late commit is below the fold"


def share_groups(page):
    """ "The numbered steps above the button", every one, as the app words them (its preset,
    course_lib.viz.shares.SHARE_PRESETS["queue"]): set each control, press run the workers, and the
    app shows what the step promises."""
    from course_lib.viz.shares import SHARE_CHECKBOXES, SHARE_CHOICES, SHARE_PRESETS

    steps = SHARE_PRESETS["queue"].steps
    listed = page.locator(".app-try li")
    assert listed.count() == len(steps)
    view = page.locator(".widget-html", has=page.locator(".sg-summary"))
    for number, step in enumerate(steps):
        assert step.question in listed.nth(number).inner_text()
        for name, value in step.settings.items():
            if name in SHARE_CHECKBOXES:
                box = page.get_by_label(SHARE_CHECKBOXES[name])
                box.check() if value else box.uncheck()
            else:
                description, options = SHARE_CHOICES[name]
                label = next(label for label, v in options if v == value)
                page.locator(".widget-dropdown", has_text=description).locator("select").select_option(label=label)
        assert step.press == ("run",)
        click(page, "run the workers")
        for text in step.expect:
            view.filter(has_text=text).wait_for()
        if number == 1:  # implicit acknowledgement: RENEW greyed out, the two jobs shown twice
            page.locator(".widget-checkbox", has_text="RENEW").locator("input:disabled").wait_for()
            assert page.locator(".sg-job[data-outcome='twice']").count() == 2


#: demo notebook stem -> its "Try", followed literally
TRIES = {
    "delivery_simulator": delivery_simulator,
    "consumer_crash": consumer_crash,
    "transactions": transactions,
    "share_groups": share_groups,
}
