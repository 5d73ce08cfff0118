"""Build the course as a static site: lessons 00-08 and their exercises in JupyterLite, the demos
as Voici apps, a landing page. Python runs in the visitor's browser (Pyodide); any static web
server can serve the folder. ``make site`` runs ``python tools/site_build.py --out _site``.

The site is built from the course's own notebooks (no second copy is kept). The build copies
them into a staging folder; in the copies the kernel becomes JupyterLite's Pyodide kernel and the
stored outputs and prompts are dropped (nothing shows before it ran here). No install cell: each
build root has a Pyodide lock file, ``course-lock.json``, that lists the course library and its
dependencies (the wheels bundled in ``pypi/``) next to the Pyodide distribution's packages, and
the kernel settings tell Pyodide to load them all while it starts (``loadPyodideOptions``): one
parallel download instead of three rounds of installs in the notebook. Plots need matplotlib,
which Pyodide loads from its distribution when a cell imports it.

``--offline`` (``make site-offline``) builds a copy that needs no internet: the Pyodide runtime
from npm and the kernel's packages are copied into ``pyodide/`` and every URL is relative, so a
USB stick served with ``python -m http.server`` works. That runtime has no matplotlib (it is not
on npm): a collapsed first cell makes plot cells say they were skipped instead of failing.

Every page that starts Python checks first that the runtime can be fetched, and says so on the
page within 15 s when it cannot (instead of "Starting up kernel..." for ever).

What makes a cold start short (``python -m bench site`` times the first demo): the bytecode of
every module the kernel and the course import while starting is compiled into the site's copies
of the wheels and of Pyodide's standard library (``bytecode/``, tools/pyodide_bytecode.py), not
in each visitor's browser; the demos' kernel starts without jedi (code completion) and without
the drive (:func:`without_drive`: the demos read no file). The lessons' kernel restores a memory
snapshot and imports the preloaded packages from its standard library zip (tools/lesson_kernel.py),
and imports what it starts with before it mounts the drive (:func:`imports_before_drive`).

Not in the site: lessons 09 (real Kafka) and 10 (PySpark) and their exercises, which need a JVM,
threads and sockets; the landing page says where to get them.
"""

from __future__ import annotations

import argparse
import hashlib
import html
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from course_lib.cache import npm_packages, prepared  # noqa: E402
from tools.pyodide_local import PYODIDE_VERSION, npm_pyodide, pip_download_pure  # noqa: E402
from tools.pyodide_bytecode import STDLIB, precompile  # noqa: E402
from tools import demo_page, lesson_kernel  # noqa: E402

CDN_PYODIDE_URL = f"https://cdn.jsdelivr.net/pyodide/v{PYODIDE_VERSION}/full/pyodide.js"
# Lessons that run in a browser: 00-08 and lettered extras such as 05b (not 09/10: real Kafka, Spark).
BROWSER_NOTEBOOK = re.compile(r"^0[0-8][a-z]?_.+\.ipynb$")
# exercises beyond 08 that need only the simulator (the capstone): in the site too
SIMULATOR_ONLY = ("11_capstone.ipynb",)
# the progress overview reads the saved exercise notebooks from disk: a local checkout's, not the site's
LOCAL_ONLY = ("00_progress.ipynb",)
# The course's pure-Python dependencies, bundled at the versions installed here (the ones the
# CPython tests ran with). matplotlib comes from the Pyodide distribution; nbformat only serves
# the exercise generator and the instructor's grader, which do not run in the browser.
BUNDLED = ("kafka-python", "tqdm", "ipywidgets", "comm", "jupyterlab_widgets")
COURSE_DIST = "kafka-delivery-course"
SITE_CELL_TAG = "site-setup"
LOCK_NAME = "course-lock.json"
# What Pyodide loads while it starts (one parallel batch): what the JupyterLite kernel itself
# would install one by one (micropip, piplite, ipykernel, ...; it skips those listed here, by the
# names it uses: "pyodide_kernel", not "pyodide-kernel", or it asks piplite for it once more), the
# widgets, and the course library with its dependencies.
PRELOAD = (
    "micropip",
    "piplite",
    "sqlite3",
    "ssl",
    "ipykernel",
    "comm",
    "pyodide_kernel",
    "jedi",
    "ipython",
    "widgetsnbextension",
    "jupyterlab-widgets",
    "ipywidgets",
    "kafka-python",
    "tqdm",
    COURSE_DIST,
)
# The demos' kernel does without jedi (IPython's code completion: a demo shows no code): 1,900
# files fewer to unpack while it starts. The kernel's worker would install it anyway (its list of
# what it needs, in the extension's bundles, names it); :func:`kernel_without` takes it out there.
# Nor does it start the package manager (piplite, micropip: `%pip install`; a demo runs no code
# but its own), which the worker would import first thing.
NOT_IN_DEMOS = ("jedi", "micropip", "piplite")
# what the lessons' kernel loads once it is idle, not while it starts: jedi (and parso) serve
# IPython's completions only, and unpacking their files (type stubs, grammars) delayed the kernel
LESSONS_LATER = ("jedi",)
KERNEL_STATIC = "extensions/@jupyterlite/pyodide-kernel-extension/static"
KERNEL_WHEELS = f"{KERNEL_STATIC}/pypi"
# the compiled copies (tools/pyodide_bytecode.py) of the standard library and of the wheels the
# kernel loads that the site does not serve from pypi/: one folder for both build roots
BYTECODE = "bytecode"
SERVICE_WORKER = "service-worker.js"  # JupyterLite registers it from the build root
# build root -> the folder of its pages that start Python (lessons: lab/, demos: voici/render/)
PAGES = {"": "lab", "demos": "demos/voici/render"}
LESSONS = ""  # the lessons' build root
# what a page that cannot load Pyodide from the internet suggests
OFFLINE_HINT = (
    "This copy of the course loads it from the internet; without one, use a copy built with `make site-offline`."
)
# seconds until a page that has not reached the runtime says so
PYODIDE_PROBE_S = 12
# Voici's page template links Font Awesome 5 (the demos' button icons) from a CDN; the build
# copies it into the site from npm so the demos need no other server.
FONTAWESOME = "5.15.4"
_FONTAWESOME_CDN = re.compile(r"https://cdn\.jsdelivr\.net/npm/@fortawesome/fontawesome-free@[^/\"]*/css/")

# The offline copy's first cell (collapsed): its runtime has no matplotlib, so a cell that needs
# it says it was skipped (any other error shows as usual).
_OFFLINE_PLOTS = """\
# Offline copy of the site (added by the site build): it has no matplotlib, plots are skipped.
def _skip_plots(shell, kind, error, tb, tb_offset=None):
    if (getattr(error, "name", None) or "").split(".")[0] == "matplotlib":
        print("Plot skipped: this offline copy of the site has no matplotlib (the online site and `make lab` draw it).")
    else:
        shell.showtraceback((kind, error, tb), tb_offset=tb_offset)
get_ipython().set_custom_exc((ImportError,), _skip_plots)
get_ipython().register_magic_function(lambda line: None, magic_name="matplotlib")
"""


def browser_notebooks(folder: Path) -> list[Path]:
    """The notebooks of ``folder`` that belong in the site (00-08, 05b..., the capstone), in course order."""
    return sorted(
        p
        for p in folder.glob("*.ipynb")
        if (BROWSER_NOTEBOOK.match(p.name) or p.name in SIMULATOR_ONLY) and p.name not in LOCAL_ONLY
    )


def number_of(notebook: Path) -> str:
    """The lesson's own number, from its file name: "05b" for 05b_consumer_groups.ipynb."""
    return notebook.name.split("_", 1)[0]


def _numbered(p: Path, href: str) -> str:
    """One line of a numbered list: the notebook's own number (00, 05b...: never an <ol>'s
    count, which calls the 7th lesson "7"), then its title without that number."""
    title = re.sub(rf"^(Exercises?\s+)?{re.escape(number_of(p))}\s*[·—:-]\s*", "", title_of(p))
    return f'<li><span class="num">{html.escape(number_of(p))}</span> <a href="{href}">{html.escape(title)}</a></li>'


DEMO_ORDER = ("delivery_simulator", "consumer_crash", "transactions", "share_groups")


def demos() -> list[Path]:
    """The Voila/Voici apps, the delivery simulator first (the course's order), then any others."""
    rank = {name: i for i, name in enumerate(DEMO_ORDER)}
    # index.ipynb is `make demo`'s gallery page; the site has a landing page of its own
    return sorted(
        (p for p in (ROOT / "notebooks" / "demos").glob("*.ipynb") if p.name != "index.ipynb"),
        key=lambda p: (rank.get(p.stem, len(rank)), p.name),
    )


def site_markdown(text: str) -> str:
    """A markdown cell's links as the site needs them: its lessons live in ``lessons/`` beside
    ``exercises/`` (a checkout's ``../notebooks/`` is no folder there, and JupyterLite would open
    nothing), and it has no progress page (:data:`LOCAL_ONLY`): that link says where it is.

    >>> site_markdown("lesson [05c](../notebooks/05c_share_groups.ipynb)")
    'lesson [05c](../lessons/05c_share_groups.ipynb)'
    >>> site_markdown("Your progress: [00_progress.ipynb](00_progress.ipynb).")
    'Your progress: `exercises/00_progress.ipynb`, in a local copy of the course (`make lab`): this site has no progress page.'
    """
    text = text.replace("](../notebooks/", "](../lessons/")
    for name in LOCAL_ONLY:
        text = text.replace(
            f"[{name}]({name})",
            f"`exercises/{name}`, in a local copy of the course (`make lab`): this site has no progress page",
        )
    return text


def for_the_browser(notebook: Path, offline: bool = False) -> dict:
    """The notebook as the site serves it: the Pyodide kernel, no stored outputs or prompts (the
    learner sees what ran here, nothing before); the offline copy's lessons get a collapsed first
    cell that turns plots into a "skipped" line."""
    nb = json.loads(notebook.read_text())
    nb["metadata"]["kernelspec"] = {"name": "python", "display_name": "Python (Pyodide)", "language": "python"}
    for cell in nb["cells"]:
        if cell["cell_type"] == "code":
            cell["outputs"], cell["execution_count"] = [], None
        elif cell["cell_type"] == "markdown":
            text = "".join(cell["source"])
            if site_markdown(text) != text:
                cell["source"] = site_markdown(text).splitlines(keepends=True)
    if offline:
        nb["cells"].insert(
            0,
            {
                "cell_type": "code",
                "execution_count": None,
                "id": "site-setup",
                "metadata": {"tags": [SITE_CELL_TAG], "jupyter": {"source_hidden": True}},
                "outputs": [],
                "source": _OFFLINE_PLOTS.splitlines(keepends=True),
            },
        )
    return nb


def title_of(notebook: Path) -> str:
    """The first markdown heading, without the '#'s."""
    for cell in json.loads(notebook.read_text())["cells"]:
        if cell["cell_type"] == "markdown":
            for line in "".join(cell["source"]).splitlines():
                if line.startswith("#"):
                    return line.lstrip("#").strip()
    return notebook.stem


def demo_summary(notebook: Path) -> str:
    """The first sentence after the heading: one line per demo on the landing page."""
    for cell in json.loads(notebook.read_text())["cells"]:
        if cell["cell_type"] == "markdown":
            text = " ".join(line for line in "".join(cell["source"]).splitlines()[1:] if line.strip())
            return re.sub(r"\*\*?|`", "", text).split(". ")[0].rstrip(".") + "."
    return ""


def wheels(folder: Path) -> list[Path]:
    """course_lib as a wheel plus its pure-Python dependencies (cached; pip's ordinary download)."""
    folder.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--wheel-dir", str(folder), str(ROOT)],
        check=True,
    )
    for wheel in bundled_wheels():
        shutil.copy2(wheel, folder / wheel.name)
    return sorted(folder.glob("*.whl"))


def bundled_wheels() -> list[Path]:
    """The installed versions of :data:`BUNDLED` as pure-Python wheels from PyPI: a cache entry
    per set of versions (tools/prepare.py prepares it before the tests)."""
    pins = [f"{name}=={metadata.version(name)}" for name in BUNDLED]
    key = hashlib.sha256(" ".join(pins).encode()).hexdigest()[:12]
    entry = prepared(
        f"site-wheels-{key}",
        lambda folder: pip_download_pure(folder, pins, "3.14"),
        what=f"the site's wheels ({', '.join(pins)})",
    )
    found = []
    for pin in pins:
        name, version = pin.split("==")
        prefix = re.sub(r"[-_.]+", "_", name).lower() + "-" + version + "-"
        matches = [p for p in entry.glob("*.whl") if p.name.lower().startswith(prefix)]
        if not matches:
            raise RuntimeError(f"pip downloaded no wheel for {pin} into {entry}")
        found.append(matches[0])
    return found


def landing_page(lessons: list[Path], exercises: list[Path], demo_list: list[Path], source_url: str | None) -> str:
    where = f'<a href="{html.escape(source_url)}">the course repository</a>' if source_url else "the course repository"
    lesson_items = "\n".join(_numbered(p, f"lab/index.html?path=lessons/{p.name}") for p in lessons)
    exercise_items = "\n".join(_numbered(p, f"lab/index.html?path=exercises/{p.name}") for p in exercises)
    demo_items = "\n".join(
        f'<li><a href="demos/{p.stem}.html"><b>{html.escape(title_of(p))}</b></a> — {html.escape(demo_summary(p))}</li>'
        for p in demo_list
    )
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Kafka delivery semantics, hands-on — in your browser</title>
<!-- JupyterLite's pages read their settings from every index.html up to the site root: this
     page replaces JupyterLite's root page (which only redirects to the lab), so it keeps its
     (empty) settings block. -->
<script id="jupyter-config-data" type="application/json" data-jupyter-lite-root=".">{{}}</script>
<style>
body {{ font-family: system-ui, sans-serif; max-width: 46rem; margin: 2rem auto; padding: 0 1rem; line-height: 1.5; color: #222; }}
h1 {{ font-size: 1.7rem; }} h2 {{ font-size: 1.2rem; margin-top: 2rem; }}
li {{ margin: .3rem 0; }} .note {{ background: #f4f6f8; padding: .8rem 1rem; border-radius: 6px; }}
ul.numbered {{ list-style: none; padding-left: 0; }}
.num {{ display: inline-block; min-width: 2.4rem; font-variant-numeric: tabular-nums; color: #555; font-weight: 600; }}
</style></head>
<body>
<h1>Kafka delivery semantics, hands-on</h1>
<p>Crash leaders, lose ACKs, toggle idempotence — then <em>measure</em> what was lost or
duplicated. Everything on this page runs in your browser: a simulated, replicated Kafka cluster
in Python (Pyodide). Nothing to install; the first page load takes a little while.</p>

<h2>Demos (no code)</h2>
<ul>
{demo_items}
</ul>

<h2>Lessons</h2>
<p>Open a lesson, then run its cells from the top (Shift+Enter, or Run → Run All Cells). The
first run of a page starts Python in your browser (a few seconds).</p>
<ul class="numbered">
{lesson_items}
</ul>

<h2>Exercises</h2>
<p>Replace each <code>...</code> with your answer and run the <code>check(...)</code> cell under it.
Exercise 11, the capstone, puts everything together on the simulator.</p>
<ul class="numbered">
{exercise_items}
</ul>

<h2>Not in the browser</h2>
<p class="note">Lesson 09 (a real 3-broker Apache Kafka cluster) and lesson 10 (PySpark
exactly-once), and their exercises, need Java, threads and sockets, which a browser does not
offer (the capstone, exercise 11, needs only the simulator: it is above). Get them from {where}: <code>make lab</code> runs the whole course locally
(Python ≥ 3.11; Java 17 and Maven for the labs). Work in the browser is kept in this browser
only: download a notebook (File → Download) to keep it.</p>
</body></html>
"""


def fontawesome_package() -> Path:
    """The npm package of Font Awesome, in the course cache."""
    modules = npm_packages(f"npm-fontawesome-{FONTAWESOME}", f"@fortawesome/fontawesome-free@{FONTAWESOME}")
    return modules / "@fortawesome" / "fontawesome-free"


def vendor_fontawesome(out: Path) -> bool:
    """Copy Font Awesome into ``out/static/fontawesome`` and point Voici's pages at it. Without
    npm the pages keep the CDN links (the icons then need the internet); returns whether it did."""
    if shutil.which("npm") is None:
        print("warning: npm not found; the demos load Font Awesome from its CDN", file=sys.stderr)
        return False
    package = fontawesome_package()
    target = out / "static" / "fontawesome"
    shutil.copytree(package / "css", target / "css", dirs_exist_ok=True)
    shutil.copytree(package / "webfonts", target / "webfonts", dirs_exist_ok=True)
    for page in out.rglob("*.html"):
        text = page.read_text()
        if _FONTAWESOME_CDN.search(text):
            local = os.path.relpath(target / "css", page.parent) + "/"
            page.write_text(_FONTAWESOME_CDN.sub(local, text))
    return True


def _lite_build(
    command: list[str], contents: Path, out: Path, stage: Path, bundled: list[Path], kernel_settings: dict
) -> None:
    # each build in a lite dir of its own: a build keeps task state there (a doit database), and a
    # second build sharing it skipped merging our settings into its jupyter-lite.json. The kernel's
    # settings go in before the build: Voici copies them into every page it renders.
    lite = stage / f"lite-{out.name}"
    lite.mkdir()
    (lite / "jupyter-lite.json").write_text(
        json.dumps(
            {
                "jupyter-lite-schema-version": 0,
                "jupyter-config-data": {
                    "appName": "Kafka delivery semantics",
                    "litePluginSettings": {"@jupyterlite/pyodide-kernel-extension:kernel": kernel_settings},
                },
            }
        )
    )
    command = [
        *command,
        "--lite-dir",
        str(lite),
        "--contents",
        str(contents),
        "--output-dir",
        str(out.resolve()),
        "--no-sourcemaps",
    ]
    for wheel in bundled:
        command += ["--piplite-wheels", str(wheel)]
    done = subprocess.run(command, cwd=lite, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(
            f"{' '.join(command[:2])} failed ({done.returncode}):\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
        )


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _wheel_entry(wheel: Path, file_name: str) -> dict:
    """A Pyodide lock entry for a pure-Python wheel (name and version from its file name)."""
    name, version = wheel.name.split("-")[:2]
    with zipfile.ZipFile(wheel) as whl:
        tops = sorted(
            {n.split("/")[0] for n in whl.namelist() if not n.split("/")[0].endswith((".dist-info", ".data"))}
        )
    return {
        "name": name.replace("_", "-"),
        "version": version,
        "file_name": file_name,
        "install_dir": "site",
        "sha256": hashlib.sha256(wheel.read_bytes()).hexdigest(),
        "package_type": "package",
        "imports": [t.removesuffix(".py") for t in tops if t.isidentifier() or t.endswith(".py")],
        "depends": [],  # every dependency is in PRELOAD itself
    }


def course_lock(root: Path, core_lock: dict, core_prefix: str, bytecode: Path | None = None) -> dict:
    """The Pyodide lock file of one build root: the distribution's packages (``file_name`` made
    ``core_prefix + file_name``: an absolute URL, or a path relative to the lock file) plus the
    wheels this build serves itself - the course's (``pypi/``) and the JupyterLite kernel's.
    ``bytecode``: a folder of the site with compiled copies of wheels (tools/pyodide_bytecode.py);
    a package whose wheel has a copy there is loaded from it."""
    lock = json.loads(json.dumps(core_lock))
    compiled = {w.name: w for w in bytecode.glob("*.whl")} if bytecode else {}
    for entry in lock["packages"].values():
        if entry["file_name"] in compiled:
            wheel = compiled[entry["file_name"]]
            entry["file_name"] = _relative_path(wheel, root)
            entry["sha256"] = hashlib.sha256(wheel.read_bytes()).hexdigest()
        else:
            entry["file_name"] = core_prefix + entry["file_name"]
    own = sorted((root / "pypi").glob("*.whl")) + sorted((root / KERNEL_WHEELS).glob("*.whl"))
    for wheel in own:
        if wheel.name.startswith("widgetsnbextension-3."):
            continue  # JupyterLite ships a 3.x and a 4.x placeholder; ipywidgets 8 needs 4.x
        served = compiled.get(wheel.name, wheel)
        entry = _wheel_entry(served, _relative_path(served, root))
        lock["packages"][_norm(entry["name"])] = entry
    missing = [name for name in PRELOAD if _norm(name) not in lock["packages"]]
    if missing:
        raise RuntimeError(f"the site's lock file has no {missing}: the build cannot preload them")
    return lock


def _kernel_settings(pyodide_url: str, root: str) -> dict:
    """The kernel's settings: where Pyodide is, the lock file it loads :data:`PRELOAD` from while
    it starts, and the compiled standard library (``...URL`` options are resolved against the
    build's base URL: the copy works under any path). The lessons' kernel (root "") gets the
    standard library with the preloaded pure-Python packages inside, so it loads only those that
    stay packages, and a memory snapshot to restore (``snapshotURL``: read by the worker, see
    :func:`restore_snapshot`; tools/lesson_kernel.py)."""
    options: dict = {"lockFileURL": f"./{LOCK_NAME}"}
    if root == LESSONS:
        options["stdLibURL"] = _relative(f"{BYTECODE}/{lesson_kernel.STDLIB}", root)
        options["snapshotURL"] = _relative(f"{BYTECODE}/{lesson_kernel.SNAPSHOT}.gz", root)
        options["packages"] = [p for p in PRELOAD if p in lesson_kernel.UNPACKED and p not in LESSONS_LATER]
    else:
        options["stdLibURL"] = _relative(f"{BYTECODE}/{STDLIB}", root)
        options["packages"] = [p for p in PRELOAD if not (root == "demos" and p in NOT_IN_DEMOS)]
    return {"pyodideUrl": pyodide_url, "disablePyPIFallback": True, "loadPyodideOptions": options}


_PROBE = """<script data-course-probe>
/* Added by tools/site_build.py: Python (Pyodide) is loaded by a web worker that reports nothing
   when the runtime cannot be fetched, and the page would say "Starting up kernel..." for ever. */
(function () {
  var url = new URL(%(url)s, document.baseURI).href;
  function say(text) {
    function show() {
      var box = document.createElement("div");
      box.className = "course-runtime-error";
      box.setAttribute("role", "alert");
      box.style.cssText = "position:fixed;top:0;left:0;right:0;z-index:100000;background:#c62828;color:white;" +
        "padding:12px 16px;font:15px/1.4 system-ui,sans-serif";
      box.textContent = text;
      document.body.appendChild(box);
    }
    if (document.body) show(); else document.addEventListener("DOMContentLoaded", show);
  }
  var stop = new AbortController();
  var timer = setTimeout(function () { stop.abort(); }, %(ms)d);
  fetch(url, { method: "HEAD", mode: "no-cors", cache: "no-store", signal: stop.signal }).then(function () {
    clearTimeout(timer);
  }).catch(function (error) {
    clearTimeout(timer);
    say("Python cannot start on this page: the Pyodide runtime could not be loaded from " + url + " (" +
      (error.name === "AbortError" ? "no answer in %(s)d s" : "no network?") + "). This copy of the course " +
      "loads it from the internet; without one, use a copy built with `make site-offline`.");
  });
})();
</script>
"""


def add_runtime_probe(page: Path, pyodide_url: str) -> None:
    """Insert :data:`_PROBE` at the top of ``page``'s <head>: it says on the page, within
    PYODIDE_PROBE_S seconds, when the runtime cannot be fetched (offline, a blocked CDN...)."""
    text = page.read_text()
    if "data-course-probe" in text:
        return
    probe = _PROBE % {"url": json.dumps(pyodide_url), "ms": PYODIDE_PROBE_S * 1000, "s": PYODIDE_PROBE_S}
    page.write_text(text.replace("<head>", "<head>\n" + probe, 1))


def without_drive(root: Path) -> None:
    """No service worker in build ``root``: its kernels then mount no drive (a demo reads no file).
    With the drive mounted, the kernel starts in it and Python looks for every module it imports
    there first (the current directory is on sys.path), each look a synchronous request through
    the service worker: about 100 of them, 2-3 s of a demo's cold start. The page logs that
    registering the worker failed (the browser's console only)."""
    (root / SERVICE_WORKER).unlink()


# how the kernel's worker (jupyterlite-pyodide-kernel 0.7.0, minified) lists the packages it
# installs unless they were preloaded
_KERNEL_NEEDS = '"sqlite3","ipykernel","comm","pyodide_kernel","jedi","ipython"'


# ... and how it starts: the package manager (piplite), then the kernel
_KERNEL_STARTS = "await this.initPackageManager(e),await this.initKernel(e)"


def kernel_without(root: Path, packages: tuple[str, ...]) -> None:
    """Take ``packages`` out of the list of what the kernel's worker of build ``root`` installs
    while it starts (not preloaded: the kernel starts without them, or already in its standard
    library, tools/lesson_kernel.py); without piplite, the worker does not start the package
    manager (``%pip`` then does not work)."""
    gone = {lesson_kernel.norm(p) for p in packages}
    kept = ",".join(p for p in _KERNEL_NEEDS.split(",") if lesson_kernel.norm(p.strip('"')) not in gone)
    _edit_kernel_scripts(root, _KERNEL_NEEDS, kept)
    if "piplite" in packages:
        _edit_kernel_scripts(root, _KERNEL_STARTS, _KERNEL_STARTS.split(",", 1)[1])


# ... how it mounts the drive (JupyterLite's files, through the service worker) and starts there
_DRIVE_MOUNTS = "async initFilesystem(e){if(e.mountDrive){"


def imports_before_drive(root: Path, modules: str) -> None:
    """The kernel's worker of build ``root`` imports ``modules`` (what it imports next anyway)
    before it mounts the drive: mounted, its current directory is the drive, which Python searches
    first for every module - a synchronous request through the service worker per import, while
    the kernel starts."""
    _edit_kernel_scripts(
        root, _DRIVE_MOUNTS, f"{_DRIVE_MOUNTS}await this._pyodide.runPythonAsync({json.dumps(f'import {modules}')});"
    )


# ... and how it calls loadPyodide (with the kernel's settings' loadPyodideOptions last)
_LOADS_PYODIDE = "...e.loadPyodideOptions})"
# a memory snapshot, gzipped, fetched while the runtime loads and inflated as it arrives
_SNAPSHOT_OPTION = (
    "...(o=>o&&o.snapshotURL?{_loadSnapshot:fetch(o.snapshotURL).then(r=>{if(!r.ok)throw new Error("
    'o.snapshotURL+": HTTP "+r.status);return new Response(r.body.pipeThrough(new DecompressionStream("gzip")))'
    ".arrayBuffer()})}:{})(e.loadPyodideOptions)"
)


def restore_snapshot(root: Path) -> None:
    """The kernel's worker of build ``root`` restores the memory snapshot its settings name
    (``loadPyodideOptions.snapshotURL``, tools/memory_snapshot.py) instead of starting Python
    afresh: Pyodide's ``_loadSnapshot`` option takes the memory itself, not a URL."""
    _edit_kernel_scripts(root, _LOADS_PYODIDE, _LOADS_PYODIDE.replace("})", f",{_SNAPSHOT_OPTION}}})"))


# ... and how it says it is ready (the kernel then shows Idle)
_KERNEL_READY = "null==(t=this._initializer)||t.resolve()}"


def load_when_idle(root: Path, packages: tuple[str, ...]) -> None:
    """The kernel's worker of build ``root`` loads ``packages`` (from its lock file) right after
    it is ready, not awaited: a cell run meanwhile waits only for the unpacking under way."""
    load = f"this._pyodide.loadPackage({json.dumps(list(packages))}).catch(e=>console.error(e))"
    _edit_kernel_scripts(root, _KERNEL_READY, _KERNEL_READY[:-1] + "," + load + "}")


def _edit_kernel_scripts(root: Path, old: str, new: str) -> None:
    _edit_scripts(
        root / KERNEL_STATIC,
        old,
        new,
        "jupyterlite-pyodide-kernel changed; update _KERNEL_NEEDS, _KERNEL_STARTS, _DRIVE_MOUNTS, "
        "_LOADS_PYODIDE and _KERNEL_READY in tools/site_build.py",
    )


def _edit_scripts(folder: Path, old: str, new: str, changed: str) -> None:
    """Replace ``old`` by ``new`` in the scripts of ``folder``; ``changed`` says what to update when
    none has ``old`` (a new release of the package the scripts come from)."""
    patched = 0
    for script in sorted(folder.glob("*.js")):
        text = script.read_text()
        if old in text:
            script.write_text(text.replace(old, new))
            patched += 1
    if not patched:
        raise RuntimeError(f"no script in {folder} has {old}: {changed}")


# JupyterLab (4.5, its apputils-extension's state plugin) saves the workspace through a Debouncer
# of lumino's default 500 ms, and while it restores the page it waits for that save - twice: a
# lesson's page sat idle for a second before it opened the notebook and started the kernel
_WORKSPACE_SAVE = (
    "C=new u.Debouncer((async()=>{const e=A,t={id:e},n=await f.toJSON();await g.save(e,{data:n,metadata:t})}))"
)


def workspace_saved_at_once(root: Path) -> None:
    """JupyterLab of build ``root`` saves its workspace (the layout, into the browser's storage) on
    each change instead of 500 ms after the last: its start no longer waits for the delay."""
    _edit_scripts(
        root / "build",
        _WORKSPACE_SAVE,
        _WORKSPACE_SAVE[:-1] + ",0)",
        "JupyterLab changed; update _WORKSPACE_SAVE in tools/site_build.py",
    )


def _lessons_kernel(out: Path, lock: dict, compiled: Path) -> dict:
    """The lessons' standard library and memory snapshot (tools/lesson_kernel.py) in the site's
    bytecode folder; returns the lessons' lock file without the packages in that library, and
    takes them out of what the kernel's worker installs."""
    from tools.pyodide_local import local_distribution

    # for a package the CDN serves (sqlite3, ssl): the local runtime's wheel of it
    dist = local_distribution()
    elsewhere = {}
    for key, entry in json.loads((dist / "pyodide-lock.json").read_text())["packages"].items():
        wheel = compiled / entry["file_name"]
        elsewhere[lesson_kernel.norm(key)] = wheel if wheel.exists() else dist / entry["file_name"]
    kernel_without(out / LESSONS, (*lesson_kernel.zipped(lock, PRELOAD), *LESSONS_LATER))
    load_when_idle(out / LESSONS, LESSONS_LATER)
    lock, failed = lesson_kernel.build(out / LESSONS, lock, PRELOAD, out / BYTECODE, out / BYTECODE / STDLIB, elsewhere)
    # what was measured, for whoever wonders why a module is (not) in the snapshot
    (out / BYTECODE / f"{lesson_kernel.SNAPSHOT}.json").write_text(json.dumps({"not_in_snapshot": failed}, indent=1))
    return lock


def compile_for_the_site(course_wheels: list[Path]) -> Path:
    """The folder of compiled copies (tools/pyodide_bytecode.py) of the course's wheels, the
    kernel's, those of the Pyodide distribution the kernel loads, and the standard library."""
    from tools.pyodide_local import local_distribution

    dist_wheels = sorted(local_distribution().glob("*.whl"))
    return precompile([*course_wheels, *kernel_extension_wheels(), *dist_wheels], npm_pyodide() / STDLIB)


def _relative(target: str, page_dir: str) -> str:
    """``target`` (a path from the site root) as seen from a page in ``page_dir`` (from the root)."""
    return os.path.relpath(target, page_dir or ".").replace(os.sep, "/")


def _relative_path(target: Path, folder: Path) -> str:
    """The URL path of file ``target`` relative to ``folder`` (both in the site)."""
    return os.path.relpath(target.resolve(), folder.resolve()).replace(os.sep, "/")


def kernel_extension_wheels() -> list[Path]:
    """The wheels the JupyterLite kernel extension ships (the builds copy them into the site)."""
    folder = Path(sys.prefix) / "share/jupyter/labextensions/@jupyterlite/pyodide-kernel-extension/static/pypi"
    return sorted(w for w in folder.glob("*.whl") if not w.name.startswith("widgetsnbextension-3."))


def build(out: Path, pyodide_url: str = CDN_PYODIDE_URL, source_url: str | None = None, offline: bool = False) -> Path:
    """Build the site into ``out`` (replaced). ``pyodide_url``: where the kernel loads Pyodide
    (the CDN by default; tests pass a local copy's). ``offline``: bundle the runtime from npm
    (``out/pyodide``), every URL relative; ``pyodide_url`` is then ignored."""
    from tools.pyodide_local import local_distribution

    lessons = browser_notebooks(ROOT / "notebooks")
    exercises = browser_notebooks(ROOT / "exercises")
    demo_list = demos()
    online_runtime = pyodide_url.startswith(("http://", "https://")) and not offline
    # the distribution's lock: the whole one for the CDN; else the local runtime's (what is there)
    core_dir = npm_pyodide() if online_runtime else local_distribution()
    core_lock = json.loads((core_dir / "pyodide-lock.json").read_text())
    with tempfile.TemporaryDirectory(prefix="site-") as tmp:
        stage = Path(tmp)
        for folder, notebooks, plots_hint in (
            ("lab-content/lessons", lessons, offline),
            ("lab-content/exercises", exercises, offline),
            ("demos", demo_list, False),  # the demos draw no matplotlib figures
        ):
            (stage / folder).mkdir(parents=True)
            for nb in notebooks:
                (stage / folder / nb.name).write_text(json.dumps(for_the_browser(nb, plots_hint), indent=1))
        # every pure-Python wheel the kernel loads and the standard library, compiled once here
        # (tools/pyodide_bytecode.py); the course's wheels go into pypi/ compiled
        course_wheels = wheels(stage / "wheels")
        dist_wheels = sorted(local_distribution().glob("*.whl"))
        compiled = compile_for_the_site(course_wheels)
        bundled = [compiled / w.name for w in course_wheels]
        if out.exists():
            shutil.rmtree(out)
        # Two JupyterLite builds: Voici's replaces the shared build/ folder with its own app, so
        # the lessons (JupyterLab) and the demos (Voici) each get a complete site of their own.
        bin_dir = Path(sys.executable).parent
        for command, contents, root in (
            ([str(bin_dir / "jupyter-lite"), "build", "--apps", "lab"], stage / "lab-content", ""),
            ([str(bin_dir / "voici"), "build"], stage / "demos", "demos"),
        ):
            url = _relative("pyodide/pyodide.js", PAGES[root]) if offline else pyodide_url
            _lite_build(command, contents, out / root, stage, bundled, _kernel_settings(url, root))
    without_drive(out / "demos")
    kernel_without(out / "demos", NOT_IN_DEMOS)
    imports_before_drive(out / LESSONS, "piplite.piplite, pyodide_kernel")
    workspace_saved_at_once(out / LESSONS)
    restore_snapshot(out / LESSONS)
    # the compiled copies the lock files point to: the kernel's wheels, those of the distribution
    # this build's runtime would load (same file name), and the standard library
    loaded = {entry["file_name"] for entry in core_lock["packages"].values()}
    (out / BYTECODE).mkdir()
    for f in [*kernel_extension_wheels(), *(w for w in dist_wheels if w.name in loaded)]:
        shutil.copy2(compiled / f.name, out / BYTECODE / f.name)
    shutil.copy2(compiled / STDLIB, out / BYTECODE / STDLIB)
    if offline:  # without what the compiled copies replace
        replaced = shutil.ignore_patterns(".complete", STDLIB, *(w.name for w in (out / BYTECODE).glob("*.whl")))
        shutil.copytree(core_dir, out / "pyodide", ignore=replaced)
    for root, page_dir in PAGES.items():
        if offline:
            url, prefix = _relative("pyodide/pyodide.js", page_dir), _relative("pyodide", root) + "/"
        else:
            url, prefix = pyodide_url, pyodide_url.rsplit("/", 1)[0] + "/"
        lock = course_lock(out / root, core_lock, prefix, bytecode=out / BYTECODE)
        if root == LESSONS:
            lock = _lessons_kernel(out, lock, compiled)
        (out / root / LOCK_NAME).write_text(json.dumps(lock))
        for page in sorted((out / page_dir).glob("*.html")):
            add_runtime_probe(page, url)
    # the demos' own pages (tools/demo_page.py): no JupyterLite, only the modules each imports
    demo_pyodide = _relative("pyodide/pyodide.js", "demos") if offline else pyodide_url
    served_wheels = [compiled / w.name for w in course_wheels] + [
        compiled / w.name if (compiled / w.name).exists() else w for w in dist_wheels
    ]
    demo_page.build(
        out / "demos", demo_list, demo_pyodide, served_wheels, out / BYTECODE / STDLIB, "" if offline else OFFLINE_HINT
    )
    vendor_fontawesome(out)
    (out / "index.html").write_text(landing_page(lessons, exercises, demo_list, source_url))
    (out / ".nojekyll").write_text("")  # GitHub Pages: serve folders starting with '_' as they are
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "_site", help="output folder (replaced)")
    parser.add_argument(
        "--pyodide-url", default=CDN_PYODIDE_URL, help="URL of pyodide.js the kernel loads (default: the Pyodide CDN)"
    )
    default_source = (
        f"{os.environ['GITHUB_SERVER_URL']}/{os.environ['GITHUB_REPOSITORY']}"
        if os.environ.get("GITHUB_REPOSITORY")
        else None
    )
    parser.add_argument(
        "--source-url",
        default=default_source,
        help="link to the course repository on the landing page (default: $GITHUB_REPOSITORY)",
    )
    parser.add_argument(
        "--offline",
        action="store_true",
        help="bundle the Pyodide runtime (from npm) so the copy needs no internet (make site-offline)",
    )
    args = parser.parse_args(argv)
    out = build(args.out, args.pyodide_url, args.source_url, offline=args.offline)
    print(f"site built in {out} — serve it with: python -m http.server -d {out} -b 127.0.0.1 8000")
    return 0


if __name__ == "__main__":
    sys.exit(main())
