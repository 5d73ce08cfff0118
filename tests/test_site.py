"""The course as a static site (``make site``, tools/site_build.py).

- fast checks of the build's pieces (which notebooks, no install cell, no stored outputs, the
  landing page);
- ``site``-marked: the parity test (every checked cell of lessons 00-08 prints in Pyodide what
  CPython printed) and the browser tests of the offline copy (``--offline``: the Pyodide runtime
  from npm inside the site), served on 127.0.0.1 and opened in Chromium that resolves no other
  host: a demo's first experiment, lesson 02's Run All to the end (plots say they were skipped),
  one exercise checked, no request leaving the machine; and the default (CDN) build with the
  network blocked says on the page that Python cannot start, within 15 s. They need node and npm
  (the Pyodide runtime comes from npm into ~/.cache/kafka-delivery-course) and are skipped with
  the reason when these are missing.
Screenshots go to artifacts/ (git-ignored).
"""

from __future__ import annotations

import json
import re
import sys
import time
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


def _without_outputs(cells):
    return [{k: v for k, v in c.items() if k not in ("outputs", "execution_count")} for c in cells]


def test_the_browser_copy_is_the_lesson_without_outputs_and_without_an_install_cell():
    lesson = ROOT / "notebooks" / "02_acks_and_durability.ipynb"
    original = json.loads(lesson.read_text())
    served = site_build.for_the_browser(lesson)
    # no second copy of the lesson's content; nothing installs anything in a cell
    assert _without_outputs(served["cells"]) == _without_outputs(original["cells"])
    assert "piplite" not in json.dumps(served)
    # nothing a CPython run printed, no "[12]" prompt, before anything ran in the browser
    code = [c for c in served["cells"] if c["cell_type"] == "code"]
    assert all(c["outputs"] == [] and c["execution_count"] is None for c in code)
    assert served["metadata"]["kernelspec"]["name"] == "python"  # JupyterLite's Pyodide kernel


def test_an_exercise_set_links_its_lesson_where_the_site_keeps_it_and_no_progress_page():
    """On the site lessons are in lessons/, beside exercises/; a checkout's ../notebooks/ link
    opened nothing there, nor did the link to 00_progress.ipynb (not in the site)."""
    served = site_build.for_the_browser(ROOT / "exercises" / "05c_share_groups.ipynb")
    header = "".join(served["cells"][0]["source"])
    assert "](../lessons/05c_share_groups.ipynb)" in header and "../notebooks/" not in header
    assert "(00_progress.ipynb)" not in header and "make lab" in header
    for name in re.findall(r"\]\(\.\./lessons/([^)]+)\)", header):
        assert (ROOT / "notebooks" / name).name in {p.name for p in site_build.browser_notebooks(ROOT / "notebooks")}


def test_the_offline_copy_adds_one_collapsed_cell_that_skips_plots():
    lesson = ROOT / "notebooks" / "02_acks_and_durability.ipynb"
    served = site_build.for_the_browser(lesson, offline=True)
    first = served["cells"][0]
    assert first["metadata"]["jupyter"]["source_hidden"] is True  # collapsed: one line shows
    assert _without_outputs(served["cells"][1:]) == _without_outputs(json.loads(lesson.read_text())["cells"])
    source = "".join(first["source"])
    assert "piplite" not in source and "Plot skipped" in source


def test_the_lock_file_lists_every_preloaded_package_with_its_real_checksum(tmp_path):
    import hashlib
    import shutil

    from tools.pyodide_local import local_distribution

    _skip_without_node()
    root = tmp_path / "demos"
    (root / "pypi").mkdir(parents=True)
    for wheel in site_build.wheels(tmp_path / "wheels"):
        shutil.copy2(wheel, root / "pypi" / wheel.name)
    kernel_wheels = Path(sys.prefix) / "share/jupyter/labextensions/@jupyterlite/pyodide-kernel-extension/static/pypi"
    shutil.copytree(kernel_wheels, root / site_build.KERNEL_WHEELS)
    dist = local_distribution()
    core = json.loads((dist / "pyodide-lock.json").read_text())
    lock = site_build.course_lock(root, core, "../pyodide/")
    for name in site_build.PRELOAD:
        entry = lock["packages"][re.sub(r"[-_.]+", "-", name).lower()]
        if entry["file_name"].startswith("../pyodide/"):
            path = dist / entry["file_name"].removeprefix("../pyodide/")
        else:
            path = root / entry["file_name"]
        assert hashlib.sha256(path.read_bytes()).hexdigest() == entry["sha256"], name  # Pyodide checks it
    assert lock["packages"]["kafka-delivery-course"]["imports"] == ["course_lib"]
    assert lock["packages"]["widgetsnbextension"]["version"].startswith("4.")  # ipywidgets 8's
    # with compiled copies in the site's bytecode folder, the packages that have one load it
    bytecode = tmp_path / site_build.BYTECODE
    bytecode.mkdir()
    ipython = next(dist.glob("ipython-*.whl"))
    shutil.copy2(ipython, bytecode / ipython.name)
    (bytecode / ipython.name).write_bytes(ipython.read_bytes() + b"\0")  # not the same file
    lock = site_build.course_lock(root, core, "../pyodide/", bytecode=bytecode)
    entry = lock["packages"]["ipython"]
    assert entry["file_name"] == f"../{site_build.BYTECODE}/{ipython.name}"
    assert entry["sha256"] == hashlib.sha256((bytecode / ipython.name).read_bytes()).hexdigest()
    assert lock["packages"]["traitlets"]["file_name"].startswith("../pyodide/")


def test_the_demos_kernel_starts_without_jedi_or_package_manager(tmp_path):
    static = tmp_path / "demos" / site_build.KERNEL_STATIC
    static.mkdir(parents=True)
    worker = static / "352.worker.js"
    worker.write_text(
        'let n=["sqlite3","ipykernel","comm","pyodide_kernel","jedi","ipython"],s=[];'
        "await this.initFilesystem(e),await this.initPackageManager(e),await this.initKernel(e),"
    )
    site_build.kernel_without(tmp_path / "demos", site_build.NOT_IN_DEMOS)
    assert worker.read_text() == (
        'let n=["sqlite3","ipykernel","comm","pyodide_kernel","ipython"],s=[];'
        "await this.initFilesystem(e),await this.initKernel(e),"  # no piplite: no package manager
    )
    # a kernel extension that no longer lists its packages this way: the build stops and says so
    with pytest.raises(RuntimeError, match="jupyterlite-pyodide-kernel changed"):
        site_build.kernel_without(tmp_path / "demos", ("jedi",))
    settings = site_build._kernel_settings("../pyodide/pyodide.js", "demos")["loadPyodideOptions"]
    assert not {"jedi", "micropip", "piplite"} & set(settings["packages"])
    assert settings["stdLibURL"] == "../bytecode/python_stdlib.zip"
    lessons = site_build._kernel_settings("../pyodide/pyodide.js", "")["loadPyodideOptions"]["packages"]
    assert {"micropip", "piplite"} <= set(lessons)  # %pip in the lessons
    assert "jedi" not in lessons and site_build.LESSONS_LATER == ("jedi",)  # completion, once idle


def test_jupyterlab_saves_its_workspace_at_once(tmp_path):
    """The lessons' JupyterLab does not wait 500 ms, twice, for its workspace's save while it
    starts; a JupyterLab whose script reads otherwise stops the build, naming what to update."""
    (tmp_path / "build").mkdir()
    core = tmp_path / "build" / "jlab_core.js"
    core.write_text("x;" + site_build._WORKSPACE_SAVE + ";y")
    site_build.workspace_saved_at_once(tmp_path)
    assert core.read_text() == "x;" + site_build._WORKSPACE_SAVE[:-1] + ",0);y"
    with pytest.raises(RuntimeError, match="JupyterLab changed"):
        site_build.workspace_saved_at_once(tmp_path)


def test_the_lessons_kernel_restores_a_snapshot_imports_before_the_drive_and_installs_nothing_zipped(tmp_path):
    """tools/lesson_kernel.py: the lessons' worker restores the memory snapshot its settings name,
    imports what it starts with before it mounts the drive, installs none of the packages the
    standard library's zip holds, and loads jedi only once it is ready."""
    from tools import lesson_kernel

    static = tmp_path / site_build.KERNEL_STATIC
    static.mkdir(parents=True)
    worker = static / "352.worker.js"
    worker.write_text(
        'this._pyodide=await t({indexURL:s,...e.loadPyodideOptions}),x;n=["sqlite3","ipykernel","comm",'
        '"pyodide_kernel","jedi","ipython"],s=[];async initFilesystem(e){if(e.mountDrive){let t="/drive"'
        "await this.initGlobals(e),null==(t=this._initializer)||t.resolve()}"
    )
    site_build.restore_snapshot(tmp_path)
    site_build.imports_before_drive(tmp_path, "pyodide_kernel")
    site_build.load_when_idle(tmp_path, site_build.LESSONS_LATER)
    lock = {"packages": {k: {"depends": []} for k in ("ipykernel", "comm", "pyodide-kernel", "ipython", "jedi")}}
    lock["packages"]["ipython"]["depends"] = ["traitlets"]
    lock["packages"]["traitlets"] = {"depends": []}
    inside = lesson_kernel.zipped(lock, ["pyodide_kernel", "ipython", "ipykernel", "comm", "jedi"])
    assert inside == ["pyodide-kernel", "ipython", "ipykernel", "comm", "traitlets"]  # jedi stays a package
    site_build.kernel_without(tmp_path, (*inside, *site_build.LESSONS_LATER))
    script = worker.read_text()
    assert "_loadSnapshot:fetch(o.snapshotURL)" in script and 'DecompressionStream("gzip")' in script
    assert script.index('runPythonAsync("import pyodide_kernel")') < script.index('let t="/drive"')
    assert 'n=["sqlite3"]' in script  # jedi is not installed while the kernel starts...
    assert script.endswith(
        't.resolve(),this._pyodide.loadPackage(["jedi"]).catch(e=>console.error(e))}'
    )  # ...but once ready
    settings = site_build._kernel_settings("../pyodide/pyodide.js", "")["loadPyodideOptions"]
    assert settings["snapshotURL"] == f"{site_build.BYTECODE}/{lesson_kernel.SNAPSHOT}.gz"
    assert settings["stdLibURL"] == f"{site_build.BYTECODE}/{lesson_kernel.STDLIB}"
    # every package the worker would install is preloaded or in the zip (else piplite installs it again)
    needed = {lesson_kernel.norm(name.strip('"')) for name in site_build._KERNEL_NEEDS.split(",")}
    assert needed <= {lesson_kernel.norm(p) for p in (*settings["packages"], *site_build.LESSONS_LATER)} | set(inside)
    assert lesson_kernel.lock_without(lock, inside)["packages"] == {"jedi": {"depends": []}}


@pytest.mark.site
def test_the_sites_wheels_carry_the_bytecode_pyodide_imports(wheels):
    """What tools/pyodide_bytecode.py compiles is used as it is: importing traitlets from the
    compiled wheel compiles no source, and the standard library's zip has the pycs zipimport reads
    (unchecked-hash, not compared with the source)."""
    import zipfile

    from tools.pyodide_bytecode import STDLIB
    from tools.pyodide_local import local_distribution, run_python

    compiled = site_build.compile_for_the_site(wheels)  # the module's wheels: built once
    traitlets = compiled / next(local_distribution().glob("traitlets-*.whl")).name
    probe = """
import importlib.machinery as m
compiled = []
original = m.SourceFileLoader.source_to_code
m.SourceFileLoader.source_to_code = lambda self, data, path, **kw: compiled.append(path) or original(self, data, path, **kw)
import traitlets, traitlets.config
print("@@compiled", [p for p in compiled if "traitlets" in p])
"""
    done = run_python(probe, [traitlets])
    assert "@@compiled []" in done.stdout, done.stdout + done.stderr[-2000:]
    with zipfile.ZipFile(compiled / STDLIB) as stdlib:
        header = stdlib.read("json/__init__.pyc")[:8]
        assert int.from_bytes(header[4:8], "little") == 0b01  # hash-based, source not checked
        assert "json/__init__.py" in stdlib.namelist()  # the source stays, for tracebacks


def test_the_demo_pages_python_side_passes_its_doctests():
    """tools/ is not collected for doctests (course_lib is): the demo pages' Python runs them here."""
    import doctest

    from tools import demo_page, lesson_kernel, memory_snapshot, widget_bridge

    for module in (demo_page, lesson_kernel, memory_snapshot, widget_bridge):
        result = doctest.testmod(module)
        assert result.attempted and not result.failed, module.__name__


def test_landing_page_has_one_line_per_demo_and_says_where_the_labs_are():
    page = site_build.landing_page(
        site_build.browser_notebooks(ROOT / "notebooks"),
        site_build.browser_notebooks(ROOT / "exercises"),
        site_build.demos(),
        "https://example.org/course",
    )
    for demo in site_build.demos():
        assert page.count(f'href="demos/{demo.stem}.html"') == 1  # the demo's own page, not Voici's
    assert 'href="lab/index.html?path=lessons/02_acks_and_durability.ipynb"' in page
    # lessons carry their own numbers (an <ol> called lesson 06 "7"), 05b included
    assert "<ol" not in page
    assert '<span class="num">05b</span> <a href="lab/index.html?path=lessons/05b_consumer_groups.ipynb">' in page
    assert '<span class="num">06</span> <a href="lab/index.html?path=lessons/06_transactions.ipynb">' in page
    # the capstone needs only the simulator: it is on the site
    assert 'href="lab/index.html?path=exercises/11_capstone.ipynb"' in page
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
    failed = [r for r in runs if r.error or (r in checks and not r.got.lstrip().startswith("✓"))]
    assert not failed, "\n".join(f"{r.notebook} cell {r.index}: {r.error or r.got}" for r in failed)


def _parity_wheels(wheels):
    from tools.notebook_pyodide import parity_wheels

    return parity_wheels(wheels)


@pytest.fixture(scope="module")
def site(request):
    """The offline copy (``make site-offline``): the runtime inside it, every URL relative. Built
    once per run (``offline_site``, tests/conftest.py: tests/test_browser_predictions.py serves it
    too), once this machine can show it."""
    from tools.site_server import CHROMIUM

    _skip_without_node()
    if not Path(CHROMIUM).exists():
        pytest.skip(f"{CHROMIUM} not found (apt-get install -y chromium)")
    pytest.importorskip("playwright.sync_api", reason="pip install -e '.[browser]'")
    out = request.getfixturevalue("offline_site")
    for root, page in (("", "../pyodide/pyodide.js"), ("demos", "../../../pyodide/pyodide.js")):  # lessons', demos'
        kernel = json.loads((out / root / "jupyter-lite.json").read_text())["jupyter-config-data"][
            "litePluginSettings"
        ]["@jupyterlite/pyodide-kernel-extension:kernel"]
        assert kernel["pyodideUrl"] == page and kernel["disablePyPIFallback"] is True, root
        assert kernel["loadPyodideOptions"]["lockFileURL"] == "./course-lock.json"
    assert (out / "pyodide" / "pyodide.asm.wasm").exists()
    return out


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    from tools.site_server import CHROMIUM, OFFLINE_ARGS

    ARTIFACTS.mkdir(exist_ok=True)
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=OFFLINE_ARGS, headless=True)
        try:
            yield b
        finally:
            b.close()


@pytest.fixture(scope="module")
def served(site, browser):
    """(server, new_page): each page in a fresh browser profile, as a new visitor's; every request
    of every page is recorded, and at the end none may have left the machine. The server serves
    the site folder alone (its own pyodide/ included)."""
    from tools.site_server import RequestLog, serve

    with serve(site, site / "pyodide") as server:
        logs = []

        def new_page():
            context = browser.new_context(viewport={"width": 1366, "height": 768})
            context.set_default_timeout(TIMEOUT_MS)
            logs.append(RequestLog(context, server.base_url))
            return context.new_page()

        yield server, new_page
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
    assert page.locator("a[href^='demos/'][href$='.html']").count() == len(site_build.demos())
    page.screenshot(path=str(ARTIFACTS / "site_landing.png"), full_page=True)
    page.close()


@pytest.mark.site
@pytest.mark.browser
def test_delivery_simulator_demo_runs_its_first_experiment_offline(served):
    server, new_page = served
    page = new_page()
    asked_before = len(server.paths)
    # the first frame, as served (before any script ran): the demo's text and what is loading
    from urllib.request import urlopen

    with urlopen(server.base_url + "/demos/delivery_simulator.html") as served_page:
        first_frame = served_page.read().decode()
    assert "Three things to try" in first_frame and 'id="demo-status"' in first_frame
    assert "Loading Python (Pyodide)" in first_frame
    # the buttons' icon font comes with the first frame, not once the buttons are drawn
    assert re.search(r'<link rel="preload" href="@jupyter-widgets/\w+\.woff2" as="font"', first_frame)
    page.goto(server.base_url + "/demos/delivery_simulator.html")
    page.get_by_role("button", name="crash leader").wait_for()
    asked = server.paths[asked_before:]
    # the fast path: a warm interpreter restored; no JupyterLite, no kernel, no wheel, no service
    # worker
    assert "/demos/app/delivery_simulator.snapshot.bin.gz" in asked
    assert not [p for p in asked if "/voici/" in p or "/build/" in p or p.endswith((".whl", "service-worker.js"))]
    # the demo's module files (written to disk for what reads a file later) come once the app is up
    page.wait_for_function("() => window.demoMarks && 'modules fetched' in window.demoMarks")
    marks = page.evaluate("window.demoMarks")
    assert marks["modules fetched"] > marks["app on screen"]
    assert "/demos/app/delivery_simulator.zip" in server.paths[asked_before:]
    # the page shows no code (the cells travel in the page's settings, as the browser runs them)
    assert "DeliverySimulator(" not in page.locator("body").inner_text()
    assert page.locator(".course-runtime-error").count() == 0
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
    assert any(p.endswith("/pyodide/pyodide.asm.wasm") for p in server.paths)  # the bundled runtime ran it


@pytest.mark.site
@pytest.mark.browser
def test_the_voici_copy_of_a_demo_still_runs(served):
    """The demo page links the same app in JupyterLite (Voici): it starts there too."""
    server, new_page = served
    page = new_page()
    page.goto(server.base_url + "/demos/voici/render/delivery_simulator.html")
    page.get_by_role("button", name="crash leader").wait_for()
    assert page.locator(".course-runtime-error").count() == 0
    page.close()


@pytest.mark.site
@pytest.mark.browser
@pytest.mark.parametrize("demo", [p.stem for p in site_build.demos()])
def test_each_demo_page_does_what_its_try_text_says(served, demo):
    """Each demo's own page (tools/demo_page.py), as a visitor on a 1366x768 screen uses it: the
    prediction locked in first (its measured answer then shows), then the demo's "Try" text
    followed literally (tests/demo_tries.py, the steps the Voila tests follow too)."""
    from tests import demo_tries

    server, new_page = served
    page = new_page()
    page.goto(f"{server.base_url}/demos/{demo}.html")
    page.locator("body.demo-ready").wait_for()
    assert page.locator(".course-runtime-error, .demo-error").count() == 0
    assert page.locator("#demo-status").inner_text() == ""  # "Loading..." gone once the app is up
    page.screenshot(path=str(ARTIFACTS / f"site_demo_{demo}_ready.png"))
    prediction = page.locator(".prediction")
    assert "Measured:" not in prediction.inner_text()  # hidden until locked in
    _lock_in(prediction, then=prediction.get_by_text("Measured:"))  # the demo's experiment has run
    demo_tries.TRIES[demo](page)
    assert page.locator(".course-runtime-error, .demo-error").count() == 0
    page.screenshot(path=str(ARTIFACTS / f"site_demo_{demo}_tried.png"), full_page=True)
    page.close()


@pytest.mark.site
def test_a_seeded_demo_action_has_the_same_outcome_in_pyodide_as_in_cpython(wheels, tmp_path):
    """The demo page's way of running a demo (tools/widget_bridge.py, no kernel), then thing 1 of
    the simulator on seed 1: the same outcome in CPython and in the site's Pyodide."""
    import shutil
    import subprocess

    from tools.import_graph import BRIDGE, code_cells
    from tools.pyodide_local import local_distribution, run_python

    cells = code_cells(ROOT / "notebooks" / "demos" / "delivery_simulator.ipynb")
    shutil.copy2(BRIDGE, tmp_path / BRIDGE.name)
    code = """
import json, sys
sys.path.insert(0, HOST)
import widget_bridge
widget_bridge.connect(None)
namespace = {}
shown = [json.loads(widget_bridge.run_cell(c, namespace)) for c in CELLS]
from course_lib.explain import demos
from course_lib.viz import DeliverySimulator
result = demos.acks_1_leader_crash(DeliverySimulator(seed=1))
print("@@outcome@@" + json.dumps({"shown": [len(s) for s in shown], "outcome": result.outcome_table(),
    "messages": len(widget_bridge.sent)}, default=str, sort_keys=True))
"""

    def program(host):
        return f"HOST = {host!r}\nCELLS = {cells!r}\n{code}"

    in_cpython = subprocess.run(
        [sys.executable, "-c", program(str(tmp_path))], capture_output=True, text=True, cwd=ROOT
    )
    in_pyodide = run_python(program("/host"), [*wheels, *sorted(local_distribution().glob("*.whl"))], mount=tmp_path)

    def outcome(done):
        marker = done.stdout.rfind("@@outcome@@")
        assert done.returncode == 0 and marker >= 0, done.stderr[-3000:]
        return json.loads(done.stdout[marker + len("@@outcome@@") :].splitlines()[0])

    cpython = outcome(in_cpython)
    assert cpython["shown"] == [1, 1, 1] and cpython["messages"] > 0  # three widgets, through the bridge
    assert cpython["outcome"]["lost (acknowledged)"] > 0  # thing 1 loses acknowledged messages
    assert outcome(in_pyodide) == cpython


LESSON_02 = "02_acks_and_durability.ipynb"


def _open_notebook(new_page, base_url, path):
    page = new_page()
    page.goto(f"{base_url}/lab/index.html?path={path}")
    page.locator(".jp-Notebook .jp-Cell").first.wait_for()
    return page


def _open_lesson_02(served):
    """(lesson 02 with its checked outputs, its page in the browser)"""
    from tools.notebook_outputs import with_expectations  # the lessons themselves carry no outputs

    server, new_page = served
    lesson = with_expectations(ROOT / "notebooks" / LESSON_02)
    return lesson, _open_notebook(new_page, server.base_url, f"lessons/{LESSON_02}")


@pytest.mark.site
@pytest.mark.browser
def test_lesson_02_run_all_completes_offline_and_skips_its_plots(served):
    lesson, page = _open_lesson_02(served)
    # before anything ran: no output, no prompt number, no install code on screen
    assert page.locator(".jp-OutputArea-output").count() == 0
    assert not re.search(r"\[\d+\]", " ".join(page.locator(".jp-InputPrompt").all_inner_texts()))
    assert "piplite" not in page.locator(".jp-Notebook").inner_text()
    page.get_by_text("Python (Pyodide) | Idle").wait_for()  # the status bar, once the kernel is up
    page.get_by_role("menuitem", name="Run").click()
    page.get_by_text("Run All Cells", exact=True).click()
    # Run All stops at the first cell that fails: the last code cell getting its prompt number
    # means every cell ran. JupyterLab renders only the cells near the view, so the text of the
    # whole notebook is collected while scrolling to the end.
    code_cells = sum(1 for c in lesson["cells"] if c["cell_type"] == "code") + 1  # + the offline cell
    last_prompt = page.locator(".jp-Notebook .jp-Cell.jp-CodeCell .jp-InputPrompt").last
    seen = []
    deadline = time.monotonic() + TIMEOUT_MS / 1000
    while time.monotonic() < deadline:
        page.keyboard.press("Escape")
        page.keyboard.press("Control+End")  # to the last cell (command mode)
        seen.append(page.locator(".jp-Notebook").inner_text())
        if f"[{code_cells}]" in last_prompt.inner_text() and page.get_by_text("Python (Pyodide) | Idle").count():
            break
        time.sleep(1)
    assert f"[{code_cells}]" in last_prompt.inner_text(), "Run All did not reach the last cell"
    page.screenshot(path=str(ARTIFACTS / "site_lesson_02_run_all.png"))
    # and once it has run, cell by cell from the top, so no output is read only if it happened to
    # be on screen while the cells ran (a quick run went straight past the plots' cells)
    page.keyboard.press("Escape")
    page.keyboard.press("Control+Home")
    for _ in lesson["cells"]:
        page.keyboard.press("j")  # the next cell, scrolled into view (command mode)
        seen.append(page.locator(".jp-Notebook").inner_text())
    shown = "\n".join(seen)
    assert "Plot skipped: this offline copy of the site has no matplotlib" in shown
    for wrong in ("ModuleNotFoundError", "Traceback", "TqdmMonitorWarning"):
        assert wrong not in shown, wrong
    page.close()


@pytest.mark.site
@pytest.mark.browser
def test_checked_cells_of_lesson_02_print_in_the_browser_what_cpython_printed(served):
    """Cell by cell (each output read while it is on screen): the numbers the text quotes hold. The
    experiment of a prediction shows them only once the prediction is locked in."""
    lesson, page = _open_lesson_02(served)
    page.get_by_text("Python (Pyodide) | Idle").wait_for()
    from tests import spoilers
    from tools.notebook_pyodide import CHECK_MARK, stored_output

    from course_lib.viz.predict import HELD

    cells = page.locator(".jp-Notebook .jp-Cell")
    compared = 0
    for index in range(len(lesson["cells"]) + 1):
        source = "" if index == 0 else "".join(lesson["cells"][index - 1]["source"])
        if index and lesson["cells"][index - 1]["cell_type"] != "code":
            continue
        output = _run_cell(page, cells, index)
        if re.search(r"^\w+ = Prediction\(", source, re.M):
            prediction = cells.nth(index).locator(".prediction")  # answered after its experiment ran
        elif ".experiment():" in source:  # its output is hidden until the prediction is locked in
            expected = stored_output(lesson["cells"][index - 1])
            assert HELD in output and not spoilers.spoiled_lines(output, expected), f"cell {index}: {output}"
            _lock_in(prediction)
            cells.nth(index).locator(".jp-Cell-outputArea").filter(has_text=expected.splitlines()[0]).wait_for()
            output = _outputs(cells.nth(index))
        if CHECK_MARK in source:
            assert _normal(output) == _normal(stored_output(lesson["cells"][index - 1])), f"cell {index}:\n{source}"
            compared += 1
    assert compared >= 3
    page.close()


# a cell a learner could write: jedi's completion of a standard-library name needs jedi's files
# (its type stubs, parso's grammar), which the kernel unpacks only once it is idle
_JEDI_CELL = """import asyncio, os, time, jedi
started = time.monotonic()
for _ in range(300):
    if os.path.isdir(os.path.join(os.path.dirname(jedi.__file__), "third_party", "typeshed")):
        break
    await asyncio.sleep(0.1)
waited = time.monotonic() - started
started = time.monotonic()
print("jedi completes", [c.name for c in jedi.Script("import collections\\ncollections.OrderedD").complete()])
print(f"files there after {waited:.1f} s, completed in {time.monotonic() - started:.1f} s")"""


@pytest.mark.site
@pytest.mark.browser
def test_a_lessons_kernel_completes_with_jedi_once_idle(served):
    """The lessons' kernel starts without jedi's files and loads them once it is idle
    (tools/site_build.py, LESSONS_LATER): completion still has them."""
    _lesson, page = _open_lesson_02(served)
    page.get_by_text("Python (Pyodide) | Idle").wait_for()
    cells = page.locator(".jp-Notebook .jp-Cell")
    cells.nth(0).locator(".jp-InputPrompt").click()
    page.keyboard.press("Escape")
    page.keyboard.press("a")  # a new code cell above the first
    page.keyboard.press("Enter")
    page.keyboard.insert_text(_JEDI_CELL)
    output = _run_cell(page, cells, 0)
    assert "jedi completes ['OrderedDict']" in output, output
    print(output)
    page.close()


def _run_cell(page, cells, index):
    """Select cell ``index``, run it, wait for it to finish; returns the text of its outputs."""
    cell = cells.nth(index)
    cell.scroll_into_view_if_needed()
    cell.locator(".jp-InputPrompt").click()
    page.keyboard.press("Escape")
    page.keyboard.press("Control+Enter")
    prompt = cell.locator(".jp-InputPrompt")
    page.wait_for_function("(el) => /\\[\\d+\\]/.test(el.textContent)", arg=prompt.element_handle(), timeout=TIMEOUT_MS)
    return _outputs(cell)


def _outputs(cell):
    """The text of a cell's outputs as shown: without the "[n]:" prompt of a result, nor the
    outputs inside an Output widget a second time."""
    outputs = cell.locator(".jp-Cell-outputArea > .jp-OutputArea-child > .jp-OutputArea-output")
    return "\n".join(outputs.nth(i).inner_text() for i in range(outputs.count()))


def _lock_in(box, then=None):
    """Answer a prediction (its first choice, or 1) and lock it in; wait until ``then`` (a locator)
    shows - by default the status saying it is locked in (an experiment already run shows its
    result there instead)."""
    choices = box.locator(".widget-toggle-button")
    if choices.count():
        choices.first.click()
    else:
        box.locator("input").fill("1")
    box.get_by_role("button", name="lock in").click()
    (then or box.locator(".pr-status", has_text="Locked in")).wait_for()


def _normal(text):
    return "\n".join(line.rstrip() for line in text.strip().splitlines())


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
    answer_cell = next(i for i, s in enumerate(sources) if s.startswith("ex02_q1 = ...")) + 1  # + offline cell
    page = _open_notebook(new_page, server.base_url, "exercises/02_acks_and_durability.ipynb")
    page.get_by_text("Python (Pyodide) | Idle").wait_for()
    cells = page.locator(".jp-Notebook .jp-Cell")
    for index in range(answer_cell):  # the offline cell, imports
        if "jp-CodeCell" in (cells.nth(index).get_attribute("class") or ""):
            _run_cell(page, cells, index)
    editor = cells.nth(answer_cell).locator(".cm-content")
    editor.click()
    page.keyboard.press("Control+a")
    page.keyboard.type(f"ex02_q1 = {answer!r}")
    _run_cell(page, cells, answer_cell)
    verdict = _run_cell(page, cells, answer_cell + 1)
    expected = check("ex02_q1", {"ex02_q1": answer})
    assert _normal(verdict) == _normal(expected.text()), verdict
    assert expected.passed
    page.screenshot(path=str(ARTIFACTS / "site_exercise_02.png"), full_page=False)
    page.close()


@pytest.mark.site
@pytest.mark.browser
def test_a_copy_that_cannot_load_pyodide_says_so_within_15_s(tmp_path_factory, browser):
    """The default build loads Pyodide from its CDN; with the network blocked (this Chromium
    resolves no host but 127.0.0.1) the page must say why Python does not start."""
    from tools.site_server import serve

    _skip_without_node()
    out = site_build.build(tmp_path_factory.mktemp("cdn-site") / "_site")  # the CDN's runtime
    with serve(out, out / "no-local-runtime") as server:
        for path in ("/demos/voici/render/delivery_simulator.html", "/demos/delivery_simulator.html"):  # Voici, own
            page = browser.new_context(viewport={"width": 1366, "height": 768}).new_page()
            started = time.monotonic()
            page.goto(server.base_url + path)
            alert = page.locator(".course-runtime-error")
            alert.wait_for(timeout=15_000)
            print(f"{path} said it after {time.monotonic() - started:.1f} s")
            assert "Pyodide runtime could not be loaded from https://cdn.jsdelivr.net/pyodide/" in alert.inner_text()
            assert "make site-offline" in alert.inner_text()
            page.screenshot(path=str(ARTIFACTS / f"site_no_runtime_{Path(path).stem}.png"))
            page.close()
