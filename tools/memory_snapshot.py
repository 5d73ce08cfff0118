"""A warm Python for a demo page, taken at build time: a Pyodide memory snapshot.

Starting Python and importing what a demo needs (ipywidgets, IPython, traitlets, kafka-python,
the simulator) is most of a cold demo's time, and the same for every visitor. So the build does
it once, in the site's own Pyodide under Node (the same wasm and compiled standard library the
browser gets), and saves the interpreter's memory (``loadPyodide({_makeSnapshot: true})`` then
``makeMemorySnapshot()``, Pyodide >= 0.26, still marked private in 0.29: the site pins the
version, tools/pyodide_local.PYODIDE_VERSION). A visit restores it (``_loadSnapshot``) instead of
starting and importing.

What a snapshot keeps: Python's memory (every imported module). What it does not: files (the page
unpacks the demo's modules again, for what a click imports later), and JavaScript objects (none
may be referenced when it is taken: nothing here touches ``js``). Node runs with an empty
environment, so no variable of the build machine ends up in the published file.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
from pathlib import Path

from tools.pyodide_local import npm_pyodide

_MAKER = r"""
const fs = require("fs");
const [pyodideJs, stdLib, bundle, modulesFile, out] = process.argv.slice(2);
const { loadPyodide } = require(pyodideJs);
(async () => {
  const py = await loadPyodide({ _makeSnapshot: true, stdLibURL: stdLib, env: { HOME: "/home/pyodide" } });
  const site = py.runPython("import site; site.getsitepackages()[0]");
  py.unpackArchive(new Uint8Array(fs.readFileSync(bundle)), "zip", { extractDir: site });
  py.globals.set("_names", fs.readFileSync(modulesFile, "utf8"));
  const failed = py.runPython(`
import importlib, json
_failed = []
for _name in json.loads(_names):
    try:
        importlib.import_module(_name)
    except Exception as e:
        _failed.append(f"{_name}: {type(e).__name__}: {e}")
del _names
json.dumps(_failed)`);
  process.stdout.write("@@failed@@" + failed + "\n");
  fs.writeFileSync(out, py.makeMemorySnapshot());
})().catch((e) => { process.stderr.write(String(e && e.stack || e) + "\n"); process.exit(1); });
"""


def module_names(files: tuple[str, ...]) -> list[str]:
    """The importable modules among a demo's measured files (``pkg/__init__.py`` -> ``pkg``).

    >>> module_names(("a/__init__.py", "a/b.py", "a/data.json", "c.py"))
    ['a', 'a.b', 'c']
    """
    names = []
    for f in files:
        if f.endswith(".py"):
            names.append(f.removesuffix(".py").removesuffix("/__init__").replace("/", "."))
    return sorted(names)


def make(bundle: Path, files: tuple[str, ...], stdlib: Path, out: Path) -> list[str]:
    """Write to ``out`` the snapshot of a Pyodide that unpacked ``bundle`` (a demo's zip,
    tools/import_graph.py) and imported its modules; returns the modules that failed to import."""
    node = shutil.which("node")
    if node is None:
        raise RuntimeError("node is not on PATH: the demos' memory snapshots are taken under Node")
    with tempfile.TemporaryDirectory(prefix="snapshot-") as tmp:
        maker, modules = Path(tmp) / "maker.js", Path(tmp) / "modules.json"
        maker.write_text(_MAKER)
        modules.write_text(json.dumps(module_names(files)))
        done = subprocess.run(
            [node, str(maker), str(npm_pyodide() / "pyodide.js"), str(stdlib), str(bundle), str(modules), str(out)],
            capture_output=True,
            text=True,
            timeout=600,
            env={},  # nothing of this machine's environment in the published memory
        )
    marker = done.stdout.rfind("@@failed@@")
    if done.returncode != 0 or marker < 0:
        raise RuntimeError(f"taking the memory snapshot of {bundle.name} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout[marker + len("@@failed@@") :].splitlines()[0])
