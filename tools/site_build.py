"""Build the course as a static site: lessons 00-08 and their exercises in JupyterLite, the demos
as Voici apps, a landing page. Python runs in the visitor's browser (Pyodide); any static web
server can serve the folder. ``make site`` runs ``python tools/site_build.py --out _site``.

The site is built from the course's own notebooks (no second copy is kept). The build copies
them into a staging folder and changes two things in the copies: the kernel becomes JupyterLite's
Pyodide kernel, and a first cell installs the course library from the wheels bundled with the
site (``pypi/``: course_lib, kafka-python, tqdm, ipywidgets...), so nothing comes from PyPI when
the site runs. Plots need matplotlib, which comes from the Pyodide distribution like the runtime
itself; a copy of the site that cannot reach it says so and runs everything else.

Not in the site: lessons 09 (real Kafka) and 10 (PySpark) and their exercises, which need a JVM,
threads and sockets; the landing page says where to get them.
"""

from __future__ import annotations

import argparse
import html
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from tools.pyodide_local import CACHE, PYODIDE_VERSION, npm_install  # noqa: E402

CDN_PYODIDE_URL = f"https://cdn.jsdelivr.net/pyodide/v{PYODIDE_VERSION}/full/pyodide.js"
# Lessons that run in a browser: 00-08 and lettered extras such as 05b (not 09/10: real Kafka, Spark).
BROWSER_NOTEBOOK = re.compile(r"^0[0-8][a-z]?_.+\.ipynb$")
# The course's pure-Python dependencies, bundled at the versions installed here (the ones the
# CPython tests ran with). matplotlib comes from the Pyodide distribution; nbformat only serves
# the exercise generator and the instructor's grader, which do not run in the browser.
BUNDLED = ("kafka-python", "tqdm", "ipywidgets", "comm", "jupyterlab_widgets")
SITE_CELL_TAG = "site-setup"
# Voici's page template links Font Awesome 5 (the demos' button icons) from a CDN; the build
# copies it into the site from npm so the demos need no other server.
FONTAWESOME = "5.15.4"
_FONTAWESOME_CDN = re.compile(r"https://cdn\.jsdelivr\.net/npm/@fortawesome/fontawesome-free@[^/\"]*/css/")

_SETUP = """\
# In the browser only (added by the site build; not part of the course's notebooks): install the
# course library bundled with this site.
import piplite
await piplite.install(["ssl", "sqlite3", "kafka-python", "tqdm", "ipywidgets"])
await piplite.install("kafka-delivery-course", deps=False)
"""
_PLOTS = """\
try:  # plots: matplotlib comes from the Pyodide distribution
    await piplite.install("matplotlib")
except Exception as error:
    get_ipython().register_magic_function(lambda line: None, magic_name="matplotlib")
    print("Plots are off in this copy of the site (matplotlib could not be loaded from the Pyodide "
          f"distribution: {type(error).__name__}); every other cell works.")
"""


def browser_notebooks(folder: Path) -> list[Path]:
    """The notebooks of ``folder`` that belong in the site (00-08, 05b...), in course order."""
    return sorted(p for p in folder.glob("*.ipynb") if BROWSER_NOTEBOOK.match(p.name))


DEMO_ORDER = ("delivery_simulator", "consumer_crash", "transactions")


def demos() -> list[Path]:
    """The Voila/Voici apps, the delivery simulator first (the course's order), then any others."""
    rank = {name: i for i, name in enumerate(DEMO_ORDER)}
    # index.ipynb is `make demo`'s gallery page; the site has a landing page of its own
    return sorted(
        (p for p in (ROOT / "notebooks" / "demos").glob("*.ipynb") if p.name != "index.ipynb"),
        key=lambda p: (rank.get(p.stem, len(rank)), p.name),
    )


def for_the_browser(notebook: Path, plots: bool) -> dict:
    """The notebook as the site serves it: Pyodide kernel, setup cell first, outputs kept."""
    nb = json.loads(notebook.read_text())
    nb["metadata"]["kernelspec"] = {"name": "python", "display_name": "Python (Pyodide)", "language": "python"}
    source = _SETUP + (_PLOTS if plots else "")
    cell = {
        "cell_type": "code",
        "execution_count": None,
        "id": "site-setup",
        "metadata": {"tags": [SITE_CELL_TAG]},
        "outputs": [],
        "source": source.splitlines(keepends=True),
    }
    nb["cells"].insert(0, cell)
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
    cache = CACHE / "site-wheels"
    pins = [f"{name}=={metadata.version(name)}" for name in BUNDLED]
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--quiet",
            "--no-deps",
            "--only-binary=:all:",
            "--python-version",
            "3.14",
            "--implementation",
            "py",
            "--platform",
            "any",
            "--dest",
            str(cache),
            *pins,
        ],
        check=True,
    )
    for pin in pins:
        name, version = pin.split("==")
        prefix = re.sub(r"[-_.]+", "_", name).lower() + "-" + version + "-"
        found = [p for p in cache.glob("*.whl") if p.name.lower().startswith(prefix)]
        if not found:
            raise RuntimeError(f"pip downloaded no wheel for {pin} into {cache}")
        shutil.copy2(found[0], folder / found[0].name)
    return sorted(folder.glob("*.whl"))


def landing_page(lessons: list[Path], exercises: list[Path], demo_list: list[Path], source_url: str | None) -> str:
    where = f'<a href="{html.escape(source_url)}">the course repository</a>' if source_url else "the course repository"
    lesson_items = "\n".join(
        f'<li><a href="lab/index.html?path=lessons/{p.name}">{html.escape(title_of(p))}</a></li>' for p in lessons
    )
    exercise_items = "\n".join(
        f'<li><a href="lab/index.html?path=exercises/{p.name}">{html.escape(title_of(p))}</a></li>' for p in exercises
    )
    demo_items = "\n".join(
        f'<li><a href="demos/voici/render/{p.stem}.html"><b>{html.escape(title_of(p))}</b></a> — '
        f"{html.escape(demo_summary(p))}</li>"
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
<p>Open a lesson, then run its cells from the top (Shift+Enter). The first cell sets up the
course library in the browser.</p>
<ol start="0">
{lesson_items}
</ol>

<h2>Exercises</h2>
<p>Replace each <code>...</code> with your answer and run the <code>check(...)</code> cell under it.</p>
<ul>
{exercise_items}
</ul>

<h2>Not in the browser</h2>
<p class="note">Lesson 09 (a real 3-broker Apache Kafka cluster) and lesson 10 (PySpark
exactly-once), and their exercises, need Java, threads and sockets, which a browser does not
offer. Get them from {where}: <code>make lab</code> runs the whole course locally
(Python ≥ 3.11; Java 17 and Maven for the labs). Work in the browser is kept in this browser
only: download a notebook (File → Download) to keep it.</p>
</body></html>
"""


def vendor_fontawesome(out: Path) -> bool:
    """Copy Font Awesome into ``out/static/fontawesome`` and point Voici's pages at it. Without
    npm the pages keep the CDN links (the icons then need the internet); returns whether it did."""
    if shutil.which("npm") is None:
        print("warning: npm not found; the demos load Font Awesome from its CDN", file=sys.stderr)
        return False
    prefix = CACHE / f"npm-fontawesome-{FONTAWESOME}"
    package = prefix / "node_modules" / "@fortawesome" / "fontawesome-free"
    if not (package / "css" / "all.min.css").exists():
        npm_install(prefix, f"@fortawesome/fontawesome-free@{FONTAWESOME}")
    target = out / "static" / "fontawesome"
    shutil.copytree(package / "css", target / "css", dirs_exist_ok=True)
    shutil.copytree(package / "webfonts", target / "webfonts", dirs_exist_ok=True)
    for page in out.rglob("*.html"):
        text = page.read_text()
        if _FONTAWESOME_CDN.search(text):
            local = os.path.relpath(target / "css", page.parent) + "/"
            page.write_text(_FONTAWESOME_CDN.sub(local, text))
    return True


def _lite_build(command: list[str], contents: Path, out: Path, stage: Path, bundled: list[Path]) -> None:
    # each build in a lite dir of its own: a build keeps task state there (a doit database), and a
    # second build sharing it skipped merging our settings into its jupyter-lite.json
    lite = stage / f"lite-{out.name}"
    shutil.copytree(stage / "lite", lite)
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


def build(out: Path, pyodide_url: str = CDN_PYODIDE_URL, source_url: str | None = None) -> Path:
    """Build the site into ``out`` (replaced). ``pyodide_url``: where the kernel loads Pyodide
    (the CDN by default; tests pass a local copy)."""
    lessons = browser_notebooks(ROOT / "notebooks")
    exercises = browser_notebooks(ROOT / "exercises")
    demo_list = demos()
    with tempfile.TemporaryDirectory(prefix="site-") as tmp:
        stage = Path(tmp)
        for folder, notebooks, plots in (
            ("lab-content/lessons", lessons, True),
            ("lab-content/exercises", exercises, True),
            ("demos", demo_list, False),
        ):
            (stage / folder).mkdir(parents=True)
            for nb in notebooks:
                (stage / folder / nb.name).write_text(json.dumps(for_the_browser(nb, plots), indent=1))
        (stage / "lite").mkdir()
        kernel_settings = {"pyodideUrl": pyodide_url, "disablePyPIFallback": True}
        (stage / "lite" / "jupyter-lite.json").write_text(
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
        bundled = wheels(stage / "wheels")
        if out.exists():
            shutil.rmtree(out)
        # Two JupyterLite builds: Voici's replaces the shared build/ folder with its own app, so
        # the lessons (JupyterLab) and the demos (Voici) each get a complete site of their own.
        bin_dir = Path(sys.executable).parent
        _lite_build(
            [str(bin_dir / "jupyter-lite"), "build", "--apps", "lab"], stage / "lab-content", out, stage, bundled
        )
        _lite_build([str(bin_dir / "voici"), "build"], stage / "demos", out / "demos", stage, bundled)
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
    args = parser.parse_args(argv)
    out = build(args.out, args.pyodide_url, args.source_url)
    print(f"site built in {out} — serve it with: python -m http.server -d {out} -b 127.0.0.1 8000")
    return 0


if __name__ == "__main__":
    sys.exit(main())
