"""The demos as the lightest page that runs them: ``demos/<name>.html`` of the site.

A demo is one app: it needs Python, the simulator and the app's widgets - not JupyterLab's shell,
a kernel or the rest of course_lib. So each demo page is static HTML - the demo's text already
drawn (its markdown rendered here, at build time), a line saying what is loading - and one script,
tools/demo_page.js, that starts every download at once: the Pyodide runtime, the demo's modules
(one zip holding only what the demo imports, measured by tools/import_graph.py, with the bytecode
the site build compiled), and the widget manager (``@jupyter-widgets/html-manager``, npm). Python
then runs the demo's cells and the manager draws their widgets (tools/widget_bridge.py carries
their messages). The Voici copy of each demo stays in ``demos/voici/`` (JupyterLite: slower to
start); ``python -m bench site`` times both.
"""

from __future__ import annotations

import html
import json
import os
import shutil
from pathlib import Path

import mistune

from course_lib.cache import npm_packages
from tools import import_graph, memory_snapshot

HTML_MANAGER = "1.0.15"
REQUIREJS = "2.3.8"
MARKED = "18.2.1"
ASSETS = "app"  # demos/app/: the script, the widget manager, each demo's modules
SCRIPT = Path(__file__).with_name("demo_page.js")


def npm_assets() -> Path:
    """node_modules with the widget manager, require.js (its AMD bundle needs a loader) and marked
    (the markdown of the apps' explanations), in the course cache."""
    return npm_packages(
        f"npm-demo-page-{HTML_MANAGER}-{REQUIREJS}-{MARKED}",
        f"@jupyter-widgets/html-manager@{HTML_MANAGER}",
        f"requirejs@{REQUIREJS}",
        f"marked@{MARKED}",
    )


def _assets(folder: Path) -> dict[str, str]:
    """Copy the page's scripts into ``folder``; their URLs as the pages (one level up) see them."""
    modules = npm_assets()
    files = {
        "marked": modules / "marked/lib/marked.umd.js",
        "requirejs": modules / "requirejs/require.js",
        "widgets": modules / "@jupyter-widgets/html-manager/dist/libembed-amd.js",
        "script": SCRIPT,
    }
    folder.mkdir(parents=True, exist_ok=True)
    # the widget manager's style sheets ask for their fonts beside the AMD module's name
    fonts = folder.parent / "@jupyter-widgets"
    fonts.mkdir(exist_ok=True)
    for font in (modules / "@jupyter-widgets/html-manager/dist").iterdir():
        if font.suffix in (".woff", ".woff2", ".ttf", ".eot", ".svg"):
            shutil.copy2(font, fonts / font.name)
    urls = {}
    for key, source in files.items():
        shutil.copy2(source, folder / source.name)
        urls[key] = f"{ASSETS}/{source.name}"
    # the buttons' icons: the manager's copy of Font Awesome's solid font, asked for only once a
    # button is drawn (icons missing for a moment) unless the page preloads it
    solid = modules / "@fortawesome/fontawesome-free/webfonts/fa-solid-900.woff2"  # the manager's dependency
    for font in sorted(fonts.glob("*.woff2")):
        if solid.exists() and font.read_bytes() == solid.read_bytes():
            urls["icons"] = f"{fonts.name}/{font.name}"
    return urls


_PAGE = """<!doctype html>
<html lang="en"><head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title>
{preload}<style>
/* compact: at 1366x768 each verdict a "Try" step leads to is on the first screen, under the text */
body {{ font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; max-width: 1100px; margin: 0 auto;
  padding: 6px 20px 40px; color: #222; }}
h1 {{ font-size: 1.7em; margin: .3em 0; }}
p, ol, ul {{ margin: .5em 0; }}
code {{ background: #f3f3f3; padding: 0 3px; border-radius: 3px; }}
/* over the page, not in it: the app appearing and this line going must not move the text */
#demo-status {{ position: fixed; z-index: 10; left: 50%; bottom: 24px; transform: translateX(-50%); padding: 8px 16px;
  background: #e3f2fd; border-left: 4px solid #1976d2; box-shadow: 0 2px 8px rgba(0,0,0,.2); }}
#demo-status:empty {{ display: none; }}
.course-runtime-error {{ background: #c62828; color: white; padding: 12px 16px; margin: 8px 0; }}
.demo-error {{ color: #c62828; white-space: pre-wrap; }}
.demo-output {{ margin: 4px 0 10px; }}
nav {{ font-size: 13px; color: #555; }}
</style>
<script src="{pyodide}" defer></script>
<script type="application/json" id="demo-config">{config}</script>
<script src="{script}" defer></script>
</head><body>
<nav><a href="../index.html">All of the course</a> · <a href="voici/render/{stem}.html">the same demo in
JupyterLite (Voici)</a></nav>
<div id="demo-status" role="status">Loading Python (Pyodide) and the simulator ({megabytes} MB)...</div>
{cells}
</body></html>
"""


def preload_links(urls: dict[str, str], runtime: dict, snapshot_url: str) -> str:
    """``<link rel=preload>`` of what the page fetches first, asked for while the browser still
    reads the page instead of once its scripts run: the runtime (asked for by pyodide.js, the
    standard library and the wasm with ``fetch``, pyodide.asm.js as a script), the memory snapshot
    the page's scripts and the buttons' icon font (asked for only once a button is drawn: icons
    missing for a moment).
    ``crossorigin`` as their requests are made (else the browser downloads each twice).

    >>> print(preload_links({}, {"indexURL": "../p/", "stdLibURL": "s.zip"}, "app/x.gz"))
    <link rel="preload" href="app/x.gz" as="fetch" crossorigin>
    <link rel="preload" href="../p/pyodide.asm.wasm" as="fetch" crossorigin>
    <link rel="preload" href="s.zip" as="fetch" crossorigin>
    <link rel="preload" href="../p/pyodide.asm.js" as="script" crossorigin>
    <BLANKLINE>
    """
    links = [
        (snapshot_url, "fetch"),
        (runtime["indexURL"] + "pyodide.asm.wasm", "fetch"),
        (runtime["stdLibURL"], "fetch"),
        (runtime["indexURL"] + "pyodide.asm.js", "script"),  # pyodide.js adds it with crossorigin too
    ]
    lines = [f'<link rel="preload" href="{html.escape(href)}" as="{kind}" crossorigin>' for href, kind in links]
    # the page's own scripts (tools/demo_page.js adds them without crossorigin): the widget
    # manager's is the largest, and parsed last it kept a ready runtime waiting
    lines += [
        f'<link rel="preload" href="{urls[key]}" as="script">'
        for key in ("marked", "requirejs", "widgets")
        if key in urls
    ]
    if "icons" in urls:
        lines.append(f'<link rel="preload" href="{urls["icons"]}" as="font" type="font/woff2" crossorigin>')
    return "".join(line + "\n" for line in lines)


def page(notebook: Path, urls: dict[str, str], runtime: dict, bundle_url: str, snapshot_url: str, size: int) -> str:
    """The HTML of ``notebook``'s page: its markdown drawn, an empty area under each code cell."""
    from tools.site_build import site_markdown

    nb = json.loads(notebook.read_text())
    parts, cells = [], []
    for cell in nb["cells"]:
        source = "".join(cell["source"])
        if cell["cell_type"] == "markdown":
            parts.append(f'<div class="demo-text">{mistune.html(site_markdown(source))}</div>')
        elif cell["cell_type"] == "code":
            cells.append(source)
            parts.append('<div class="demo-output"></div>')
    title = next((c for c in ("".join(nb["cells"][0]["source"]).splitlines()) if c.startswith("# ")), notebook.stem)
    config = {**runtime, **urls, "bundle": bundle_url, "snapshot": snapshot_url, "cells": cells}
    return _PAGE.format(
        title=html.escape(title.removeprefix("# ")),
        preload=preload_links(urls, runtime, snapshot_url),
        pyodide=html.escape(runtime["pyodide"]),
        script=urls["script"],
        config=json.dumps(config).replace("</", "<\\/"),
        stem=notebook.stem,
        megabytes=f"{size / 1e6:.0f}",
        cells="\n".join(parts),
    )


def build(
    demos_dir: Path, demo_list: list[Path], pyodide_url: str, wheels: list[Path], stdlib: Path, offline_hint: str
) -> list[Path]:
    """The demo pages in ``demos_dir`` (the site's ``demos/``), one per notebook of ``demo_list``.
    ``pyodide_url``: pyodide.js as the pages see it; ``wheels``: the site's (compiled) wheels the
    bundles are cut from, the local runtime's included; ``stdlib``: the site's compiled standard
    library (the snapshot's Python was started with it, the page's must be too)."""
    urls = _assets(demos_dir / ASSETS)
    index_url = pyodide_url.rsplit("/", 1)[0] + "/"
    runtime = {
        "pyodide": pyodide_url,
        "indexURL": index_url,
        "stdLibURL": os.path.relpath("bytecode/python_stdlib.zip", "demos"),
        "offlineHint": offline_hint,
    }
    pages = []
    for notebook in demo_list:
        imports = import_graph.measure(notebook, wheels)
        bundle = import_graph.bundle(imports, wheels, demos_dir / ASSETS / f"{notebook.stem}.zip")
        snapshot = demos_dir / ASSETS / f"{notebook.stem}.snapshot.bin.gz"
        failed = memory_snapshot.make(bundle, imports.files, stdlib, snapshot)
        # what was measured, for whoever wonders why a module is (not) in the bundle
        (demos_dir / ASSETS / f"{notebook.stem}.imports.json").write_text(
            json.dumps({"files": imports.files, "modules": imports.modules, "not_in_snapshot": failed}, indent=1)
        )
        size = sum(
            (demos_dir / u).stat().st_size
            for u in (urls["widgets"], f"{ASSETS}/{bundle.name}", f"{ASSETS}/{snapshot.name}")
        )
        text = page(notebook, urls, runtime, f"{ASSETS}/{bundle.name}", f"{ASSETS}/{snapshot.name}", size)
        target = demos_dir / f"{notebook.stem}.html"
        target.write_text(text)
        pages.append(target)
    return pages
