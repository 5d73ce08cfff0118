"""What a demo imports, measured, and the bundle that holds just that (tools/demo_page.py).

A demo page ships no wheels: one zip with the modules the demo's code imports when it runs -
course_lib's, ipywidgets', traitlets', IPython's (ipywidgets imports it) - and nothing else of
them. Which modules is not guessed: :func:`measure` runs the demo in the site's own Pyodide under
Node (the same versions and files the browser gets), its code cells through
tools/widget_bridge.py as the page runs them, then presses every button with each option of its
widgets picked (what a visitor's clicks import later, e.g. a scenario module), and lists the files
``sys.modules`` then holds. :func:`bundle` copies those files, with the bytecode the site build
compiled for them (tools/pyodide_bytecode.py), from the site's wheels into one zip.

``ssl`` (kafka-python imports it; no demo opens a connection) is bundled too: the pure-Python shim
of the local runtime (tools/pyodide_local.py), not the distribution's compiled package, whose
shared library a memory snapshot (tools/memory_snapshot.py) could not carry.
"""

from __future__ import annotations

import json
import shutil
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BRIDGE = ROOT / "tools" / "widget_bridge.py"

_MEASURE = r"""
import json, os, sys
opened = set()
# data files read through importlib.resources (kafka-python's protocol schemas...): every open seen
sys.addaudithook(lambda event, args: event == "open" and isinstance(args[0], str) and opened.add(args[0]))
sys.path.insert(0, "/host")
cells = json.load(open("/host/cells.json"))
import widget_bridge
widget_bridge.connect(None)
namespace = {"__name__": "__main__"}
for source in cells:
    widget_bridge.run_cell(source, namespace)
# what a visitor's clicks would import: every button pressed with every option picked, every box
# ticked and unticked (the consumer crash's external store imports sqlite3 only when it is the
# chosen consumer and crashes). Errors are the app's business, not the measurement's.
from ipywidgets import Button, Checkbox, Widget
shown = list(Widget.widgets.values())
buttons = [w for w in shown if isinstance(w, Button)]
def press_every_button():
    for button in buttons:
        try:
            button.click()
        except Exception:
            pass
press_every_button()
for widget in shown:
    if isinstance(widget, Checkbox):
        choices = [not widget.value, widget.value]
    elif hasattr(widget, "options") and hasattr(widget, "value"):
        choices = [o[1] if isinstance(o, tuple) else o for o in widget.options]
    else:
        continue
    for choice in choices:
        try:
            widget.value = choice
        except Exception:
            continue
        press_every_button()
# and what a failing click imports to say so (the widget's logger: traitlets.log, logging)
shown[0].log
here = os.getcwd() + "/"
files = sorted(
    {m.__file__ for m in list(sys.modules.values()) if (getattr(m, "__file__", None) or "").endswith(".py")}
    | {f for f in opened if f.startswith(here) and os.path.isfile(f) and not f.endswith((".pyc", ".py"))}
)
print("@@imports@@" + json.dumps({"files": files, "cwd": here, "modules": sorted(sys.modules)}))
"""


@dataclass(frozen=True)
class Imports:
    """What one demo imported: files of its wheels (paths inside them)."""

    files: tuple[str, ...]  # e.g. "ipywidgets/widgets/widget.py", "widget_bridge.py", "kafka/.../x.json"
    modules: int  # how many modules were imported in all (standard library included)


def code_cells(notebook: Path) -> list[str]:
    """The sources of a notebook's code cells, in order."""
    nb = json.loads(notebook.read_text())
    return ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code"]


def measure(notebook: Path, wheels: list[Path]) -> Imports:
    """Run ``notebook``'s code (and its widgets' every button) in Pyodide under Node with
    ``wheels`` installed."""
    from tools import build_cache
    from tools.pyodide_local import PYODIDE_VERSION

    cells = json.dumps(code_cells(notebook))
    inputs = [PYODIDE_VERSION, _MEASURE, BRIDGE, cells, *wheels]
    entry = build_cache.cached("imports", inputs, lambda folder: _run(notebook.name, cells, wheels, folder), keep=KEPT)
    report = json.loads((entry / REPORT).read_text())
    files = set()
    for path in report["files"]:
        if path.startswith("/host/"):
            files.add(path.removeprefix("/host/"))
        elif path.startswith(report["cwd"]):
            files.add(path.removeprefix(report["cwd"]))
    return Imports(tuple(sorted(files)), len(report["modules"]))


#: measurements kept in the cache (tools/build_cache.py): a few builds' worth of demos
KEPT = 16
REPORT = "imports.json"


def _run(name: str, cells: str, wheels: list[Path], folder: Path) -> None:
    """Run the cells in Pyodide under Node; what they imported into ``folder``/:data:`REPORT`."""
    from tools.pyodide_local import run_python

    with tempfile.TemporaryDirectory(prefix="imports-") as tmp:
        host = Path(tmp)
        shutil.copy2(BRIDGE, host / BRIDGE.name)
        (host / "cells.json").write_text(cells)
        done = run_python(_MEASURE, wheels, timeout_s=900, mount=host)
    marker = done.stdout.rfind("@@imports@@")
    if done.returncode != 0 or marker < 0:
        raise RuntimeError(f"measuring what {name} imports failed:\n{done.stderr[-3000:]}")
    (folder / REPORT).write_text(done.stdout[marker + len("@@imports@@") :].splitlines()[0])


def bundle(imports: Imports, wheels: list[Path], out: Path) -> Path:
    """A zip of ``imports.files`` taken from ``wheels`` (with each one's compiled
    ``__pycache__/*.pyc`` when the wheel has it) and tools/widget_bridge.py; returns ``out``."""
    wanted = set(imports.files)
    found: set[str] = set()
    out.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zout:
        for wheel in wheels:
            with zipfile.ZipFile(wheel) as whl:
                names = set(whl.namelist())
                for name in sorted(wanted & names):
                    zout.writestr(name, whl.read(name))
                    found.add(name)
                    folder, _, module = name.rpartition("/")
                    for pyc in names:
                        if pyc.startswith(
                            f"{folder}/__pycache__/{module[:-3]}." if folder else f"__pycache__/{module[:-3]}."
                        ):
                            zout.writestr(pyc, whl.read(pyc))
        zout.write(BRIDGE, BRIDGE.name)
        found.add(BRIDGE.name)
    missing = wanted - found
    if missing:
        raise RuntimeError(f"the demo imported files no wheel of the site has: {sorted(missing)[:10]}")
    return out
