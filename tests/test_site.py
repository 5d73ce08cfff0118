"""The course as a static site (``make site``, tools/site_build.py).

- fast checks of the build's pieces (which notebooks, the setup cell, the landing page);
- ``site``-marked: the parity test (every checked cell of lessons 00-08 prints in Pyodide what
  CPython printed) and the browser test (the built site served on 127.0.0.1 with a local Pyodide,
  opened in Chromium: a demo's first experiment, lesson 02 run top to bottom, one exercise checked;
  no request leaves the machine). They need node and npm (the Pyodide runtime comes from npm into
  ~/.cache/kafka-delivery-course) and are skipped with the reason when these are missing.
Screenshots go to artifacts/ (git-ignored).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tools import site_build

ROOT = Path(__file__).resolve().parents[1]
ARTIFACTS = ROOT / "artifacts"
LESSON_RE = re.compile(r"^(0[0-8])[a-z]?_")
TIMEOUT_MS = 300_000  # a cold Pyodide start and the 100-schedule experiment on a busy 2-core machine


# ---------------------------------------------------------------- the build's pieces (fast)


def test_the_site_holds_lessons_00_to_08_and_their_exercises_not_the_labs():
    lessons = [p.name for p in site_build.browser_notebooks(ROOT / "notebooks")]
    exercises = [p.name for p in site_build.browser_notebooks(ROOT / "exercises")]
    assert lessons[0].startswith("00_") and any(n.startswith("08_") for n in lessons)
    assert not any(n.startswith(("09_", "10_")) for n in lessons + exercises)
    on_disk = sorted(p.name for p in (ROOT / "notebooks").glob("*.ipynb") if LESSON_RE.match(p.name))
    assert lessons == on_disk  # includes lettered lessons such as 05b_consumer_groups
    demos = [p.name for p in site_build.demos()]
    assert demos[0] == "delivery_simulator.ipynb"  # the landing page lists it first
    on_disk = (ROOT / "notebooks/demos").glob("*.ipynb")
    assert sorted(demos) == sorted(p.name for p in on_disk if p.name != "index.ipynb")  # index: `make demo`'s page


def test_a_lettered_lesson_belongs_in_the_site(tmp_path):
    for name in (
        "05b_consumer_groups.ipynb",
        "08_claims_tested.ipynb",
        "09_real_kafka_lab.ipynb",
        "10_x.ipynb",
        "notes.ipynb",
    ):
        (tmp_path / name).write_text("{}")
    assert [p.name for p in site_build.browser_notebooks(tmp_path)] == [
        "05b_consumer_groups.ipynb",
        "08_claims_tested.ipynb",
    ]


def test_the_browser_copy_is_the_lesson_plus_one_setup_cell():
    lesson = ROOT / "notebooks" / "02_acks_and_durability.ipynb"
    original = json.loads(lesson.read_text())
    served = site_build.for_the_browser(lesson, plots=True)
    assert served["cells"][1:] == original["cells"]  # no second copy of the lesson's content
    setup = "".join(served["cells"][0]["source"])
    assert 'piplite.install("kafka-delivery-course", deps=False)' in setup and "matplotlib" in setup
    assert served["metadata"]["kernelspec"]["name"] == "python"  # JupyterLite's Pyodide kernel
    assert "matplotlib" not in "".join(
        site_build.for_the_browser(site_build.demos()[0], plots=False)["cells"][0]["source"]
    )


def test_landing_page_has_one_line_per_demo_and_says_where_the_labs_are():
    page = site_build.landing_page(
        site_build.browser_notebooks(ROOT / "notebooks"),
        site_build.browser_notebooks(ROOT / "exercises"),
        site_build.demos(),
        "https://example.org/course",
    )
    for demo in site_build.demos():
        assert page.count(f'href="demos/voici/render/{demo.stem}.html"') == 1
    assert 'href="lab/index.html?path=lessons/02_acks_and_durability.ipynb"' in page
    assert "Lesson 09" in page and "lesson 10" in page and "make lab" in page
    assert 'href="https://example.org/course"' in page


# ---------------------------------------------------------------- Pyodide (node, npm)


def _skip_without_node():
    from tools.pyodide_local import missing_tools

    reason = missing_tools()
    if reason:
        print(f"skipping site tests: {reason}")
        pytest.skip(reason)


@pytest.fixture(scope="module")
def wheels(tmp_path_factory):
    _skip_without_node()
    return site_build.wheels(tmp_path_factory.mktemp("wheels"))


@pytest.mark.site
def test_checked_cells_of_lessons_00_to_08_print_the_same_in_pyodide(wheels):
    from tools.notebook_pyodide import differences, parity_wheels, run_notebooks

    lessons = site_build.browser_notebooks(ROOT / "notebooks")
    runs, _ = run_notebooks(lessons, parity_wheels(wheels))
    checked = [r for r in runs if r.checked]
    assert len(checked) >= 50 and {r.notebook for r in checked} == {p.name for p in lessons}
    skipped = [r for r in runs if r.error and not r.checked]
    for r in skipped:  # unchecked cells that need what the npm runtime lacks: plots
        print(f"not run in Pyodide/Node: {r.notebook} cell {r.index} ({r.first_line[:50]}): {r.error}")
        assert "matplotlib" in r.error, f"{r.notebook} cell {r.index} failed in Pyodide: {r.error}"
    diffs = differences(runs)
    assert not diffs, "\n\n".join(
        f"{r.notebook} cell {r.index}: {r.error or ''}\n--- CPython\n{r.expected}\n--- Pyodide\n{r.got}" for r in diffs
    )


@pytest.mark.site
def test_every_exercise_check_passes_the_instructors_answers_in_pyodide(wheels):
    """check() works in the browser's Python: the solutions of exercises 01-08 all pass there."""
    from tools.notebook_pyodide import run_notebooks

    solutions = site_build.browser_notebooks(ROOT / "solutions")
    runs, _ = run_notebooks(solutions, _parity_wheels(wheels))
    checks = [r for r in runs if r.source.strip().startswith("check(")]
    assert len(checks) >= len(solutions)
    failed = [r for r in runs if r.error or (r in checks and not r.got.lstrip().startswith("✅"))]
    assert not failed, "\n".join(f"{r.notebook} cell {r.index}: {r.error or r.got}" for r in failed)


def _parity_wheels(wheels):
    from tools.notebook_pyodide import parity_wheels

    return parity_wheels(wheels)


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    from tools.site_server import CHROMIUM, LOCAL_PYODIDE_URL

    _skip_without_node()
    if not Path(CHROMIUM).exists():
        pytest.skip(f"{CHROMIUM} not found (apt-get install -y chromium)")
    pytest.importorskip("playwright.sync_api", reason="pip install -e '.[browser]'")
    from tools.pyodide_local import local_distribution

    out = site_build.build(tmp_path_factory.mktemp("site") / "_site", pyodide_url=LOCAL_PYODIDE_URL)
    for config in (out / "jupyter-lite.json", out / "demos" / "jupyter-lite.json"):  # lessons' and demos' builds
        kernel = json.loads(config.read_text())["jupyter-config-data"]["litePluginSettings"][
            "@jupyterlite/pyodide-kernel-extension:kernel"
        ]
        assert kernel["pyodideUrl"] == LOCAL_PYODIDE_URL and kernel["disablePyPIFallback"] is True, config
    return out, local_distribution()


@pytest.fixture(scope="module")
def served(site):
    """(server, new_page): each page in a fresh browser profile, as a new visitor's; every request
    of every page is recorded, and at the end none may have left the machine."""
    from playwright.sync_api import sync_playwright

    from tools.site_server import CHROMIUM, OFFLINE_ARGS, RequestLog, serve

    ARTIFACTS.mkdir(exist_ok=True)
    out, dist = site
    with serve(out, dist) as server, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=OFFLINE_ARGS, headless=True)
        logs = []

        def new_page():
            context = browser.new_context(viewport={"width": 1300, "height": 1000})
            context.set_default_timeout(TIMEOUT_MS)
            logs.append(RequestLog(context, server.base_url))
            return context.new_page()

        try:
            yield server, new_page
        finally:
            browser.close()
    outside = [url for log in logs for url in log.outside()]
    assert logs and not outside, f"requests left the machine: {outside}"


def _click(page, name, exact=False):
    page.get_by_role("button", name=name, exact=exact).click()


@pytest.mark.site
@pytest.mark.browser
def test_landing_page_links_the_demos_and_lessons(served):
    server, new_page = served
    page = new_page()
    page.goto(server.base_url + "/")
    assert page.locator("a[href^='demos/voici/render/']").count() == len(site_build.demos())
    page.screenshot(path=str(ARTIFACTS / "site_landing.png"), full_page=True)
    page.close()


@pytest.mark.site
@pytest.mark.browser
def test_delivery_simulator_demo_runs_its_first_experiment_in_the_browser(served):
    server, new_page = served
    page = new_page()
    page.goto(server.base_url + "/demos/voici/render/delivery_simulator.html")
    page.get_by_role("button", name="crash leader").wait_for()
    # a Voici app shows no code (the notebook travels inside the page, as the browser runs it)
    assert "DeliverySimulator(" not in page.locator("body").inner_text()
    # "Lose data": acks=1, idempotence off, lagging followers; send 5, crash the leader, check
    page.get_by_label("idempotence (enable_idempotence)").uncheck()
    _click(page, "1", exact=True)
    page.get_by_label("lagging followers").check()
    _click(page, "send 5 messages")
    page.locator(".sim-log", has_text="5 of 5 acknowledged").wait_for()
    _click(page, "crash leader")
    _click(page, "heal and check")
    summary = page.locator(".oc-summary", has_text="lost after being acknowledged")
    summary.wait_for()
    assert summary.inner_text().startswith("5 messages lost after being acknowledged")
    page.screenshot(path=str(ARTIFACTS / "site_delivery_simulator.png"), full_page=True)
    page.close()
    assert any(p.endswith("/pyodide/pyodide.asm.wasm") for p in server.paths)  # the local runtime ran it


def _open_notebook(new_page, base_url, path):
    page = new_page()
    page.goto(f"{base_url}/lab/index.html?path={path}")
    page.locator(".jp-Notebook .jp-Cell").first.wait_for()
    page.get_by_text("Python (Pyodide) | Idle").wait_for()  # the status bar, once the kernel is up
    # the stored outputs carry CPython's execution counts: clear them, so that a cell's "[n]"
    # prompt below means it ran here (its stored output stays in the file, to compare with)
    page.get_by_role("menuitem", name="Edit").click()
    page.get_by_text("Clear Outputs of All Cells").click()
    return page


def _run_cell(page, index):
    """Select cell ``index``, run it, wait for it to finish; returns the text of its outputs."""
    cell = page.locator(".jp-Notebook .jp-Cell").nth(index)
    cell.locator(".jp-InputPrompt").click()
    page.keyboard.press("Escape")
    page.keyboard.press("Control+Enter")
    prompt = cell.locator(".jp-InputPrompt")
    page.wait_for_function("(el) => /\\[\\d+\\]/.test(el.textContent)", arg=prompt.element_handle(), timeout=TIMEOUT_MS)
    outputs = cell.locator(".jp-OutputArea-output")  # without the "[n]:" prompt of a result
    return "\n".join(outputs.nth(i).inner_text() for i in range(outputs.count()))


def _normal(text):
    return "\n".join(line.rstrip() for line in text.strip().splitlines())


@pytest.mark.site
@pytest.mark.browser
def test_lesson_02_runs_top_to_bottom_in_the_browser(served):
    server, new_page = served
    from tools.notebook_outputs import with_expectations  # the lesson with its checked outputs

    lesson = with_expectations(ROOT / "notebooks" / "02_acks_and_durability.ipynb")
    page = _open_notebook(new_page, server.base_url, "lessons/02_acks_and_durability.ipynb")
    from tools.notebook_pyodide import CHECK_MARK, stored_output

    skipped, outputs = [], {}
    cells = page.locator(".jp-Notebook .jp-Cell")
    assert cells.count() == len(lesson["cells"]) + 1  # + the site's setup cell
    for index in range(cells.count()):
        if "jp-CodeCell" not in (cells.nth(index).get_attribute("class") or ""):
            continue
        output = outputs[index] = _run_cell(page, index)
        source = "" if index == 0 else "".join(lesson["cells"][index - 1]["source"])
        if "Error" in output and "Traceback" in output or "Error:" in output:
            # the npm Pyodide has no matplotlib; the deployed site loads it from the Pyodide CDN
            assert "No module named 'matplotlib'" in output, f"cell {index} failed:\n{source}\n{output}"
            skipped.append((index, source.splitlines()[0]))
        elif CHECK_MARK in source:  # the numbers the text quotes hold in the browser
            assert _normal(output) == _normal(stored_output(lesson["cells"][index - 1])), f"cell {index}:\n{source}"
    for index, first_line in skipped:
        print(
            f"lesson 02 cell {index} skipped in this offline test ({first_line}): matplotlib is not in the npm "
            "pyodide package; the deployed site loads it from the Pyodide distribution"
        )
    assert len(skipped) <= 2
    if skipped:  # the learner is told why (JupyterLab detaches cells scrolled out of view: use what the run showed)
        assert "Plots are off in this copy of the site" in outputs[0]
    page.screenshot(path=str(ARTIFACTS / "site_lesson_02.png"), full_page=False)
    page.close()


@pytest.mark.site
@pytest.mark.browser
def test_an_exercise_is_answered_and_checked_in_the_browser(served):
    server, new_page = served
    from course_lib.grading import check

    solution = json.loads((ROOT / "solutions" / "02_acks_and_durability.ipynb").read_text())
    answer_line = next("".join(c["source"]) for c in solution["cells"] if "".join(c["source"]).startswith("ex02_q1 ="))
    answer = eval(answer_line.split("=", 1)[1].split("#")[0])  # the instructor's answer, e.g. 10
    exercise = json.loads((ROOT / "exercises" / "02_acks_and_durability.ipynb").read_text())
    sources = ["".join(c["source"]) for c in exercise["cells"]]
    answer_cell = next(i for i, s in enumerate(sources) if s.startswith("ex02_q1 = ...")) + 1
    page = _open_notebook(new_page, server.base_url, "exercises/02_acks_and_durability.ipynb")
    for index in range(answer_cell):  # setup cell, imports
        if "jp-CodeCell" in (page.locator(".jp-Notebook .jp-Cell").nth(index).get_attribute("class") or ""):
            _run_cell(page, index)
    editor = page.locator(".jp-Notebook .jp-Cell").nth(answer_cell).locator(".cm-content")
    editor.click()
    page.keyboard.press("Control+a")
    page.keyboard.type(f"ex02_q1 = {answer!r}")
    _run_cell(page, answer_cell)
    verdict = _run_cell(page, answer_cell + 1)
    expected = check("ex02_q1", {"ex02_q1": answer})
    assert _normal(verdict) == _normal(expected.text()), verdict
    assert expected.passed
    page.screenshot(path=str(ARTIFACTS / "site_exercise_02.png"), full_page=False)
    page.close()
