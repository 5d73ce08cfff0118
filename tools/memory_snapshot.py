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

import gzip
import json
import shutil
import subprocess
import tempfile
from pathlib import Path

from tools.pyodide_local import npm_pyodide

_MAKER = r"""
const fs = require("fs");
const [pyodideJs, stdLib, configFile, out] = process.argv.slice(2);
const { loadPyodide } = require(pyodideJs);
(async () => {
  const config = JSON.parse(fs.readFileSync(configFile, "utf8"));
  const py = await loadPyodide({ _makeSnapshot: true, stdLibURL: stdLib, env: { HOME: "/home/pyodide" } });
  const site = py.runPython("import site; site.getsitepackages()[0]");
  for (const archive of config.archives) {
    py.unpackArchive(new Uint8Array(fs.readFileSync(archive)), "zip", { extractDir: site });
  }
  py.globals.set("_names", JSON.stringify(config.modules));
  py.globals.set("_refused", JSON.stringify(config.refused));
  py.runPython(config.prelude);
  const failed = py.runPython(`
import importlib, json, sys


class _Refuse:  # what must be imported where the page runs (the module's docstring says why)
    refused = set(json.loads(_refused))

    @classmethod
    def find_spec(cls, name, path=None, target=None):
        if name in cls.refused or name.split(".")[0] in cls.refused:
            raise ImportError(f"{name} is imported where the page runs")


sys.meta_path.insert(0, _Refuse)
_failed = []
for _name in json.loads(_names):
    try:
        importlib.import_module(_name)
    except Exception as e:
        _failed.append(f"{_name}: {type(e).__name__}: {e}")
sys.meta_path.remove(_Refuse)
del _names, _refused, _Refuse
json.dumps(_failed)`);
  process.stdout.write("@@failed@@" + failed + "\n");
  fs.writeFileSync(out, py.makeMemorySnapshot());
})().catch((e) => { process.stderr.write(String(e && e.stack || e) + "\n"); process.exit(1); });
"""


def compressed(snapshot: Path) -> Path:
    """``snapshot`` gzipped beside it (``<name>.gz``; the raw file removed): Python's memory is
    mostly zeros and repeats, a third of it goes over the wire. Served as a plain file - any
    static host can, no Content-Encoding needed - and inflated by the page while it downloads
    (``DecompressionStream``: tools/demo_page.js, the lessons' kernel worker)."""
    out = snapshot.with_name(snapshot.name + ".gz")
    with snapshot.open("rb") as source, gzip.GzipFile(out, "wb", compresslevel=6, mtime=0) as target:
        shutil.copyfileobj(source, target, 1 << 20)
    snapshot.unlink()
    return out


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
    """Write to ``out`` the gzipped snapshot of a Pyodide that unpacked ``bundle`` (a demo's zip,
    tools/import_graph.py) and imported its modules; returns the modules that failed to import."""
    return take([bundle], module_names(files), stdlib, out)


#: snapshots kept in the cache (tools/build_cache.py): a few builds' worth (~13 MB each)
KEPT = 12


def take(archives: list[Path], modules: list[str], stdlib: Path, out: Path, prelude: str = "", refused=()) -> list[str]:
    """Write to ``out`` the gzipped snapshot (:func:`compressed`) of a Pyodide that unpacked
    ``archives`` into site-packages, ran ``prelude`` and imported ``modules`` in that order,
    refusing to import those of ``refused`` (names or top-level packages); returns the modules
    that failed to import. Taken once per content of its inputs (tools/build_cache.py)."""
    from tools import build_cache
    from tools.pyodide_local import PYODIDE_VERSION

    options = json.dumps({"modules": modules, "prelude": prelude, "refused": list(refused)})
    inputs = [PYODIDE_VERSION, _MAKER, options, stdlib, *archives]
    entry = build_cache.cached(
        "snapshot", inputs, lambda folder: _take(archives, options, stdlib, folder, out.name), keep=KEPT
    )
    shutil.copy2(entry / "snapshot.bin.gz", out)
    return json.loads((entry / "failed.json").read_text())


def _take(archives: list[Path], options: str, stdlib: Path, folder: Path, name: str) -> None:
    node = shutil.which("node")
    if node is None:
        raise RuntimeError("node is not on PATH: the site's memory snapshots are taken under Node")
    config = {"archives": [str(a) for a in archives], **json.loads(options)}
    raw = folder / "snapshot.bin"
    with tempfile.TemporaryDirectory(prefix="snapshot-") as tmp:
        maker, config_file = Path(tmp) / "maker.js", Path(tmp) / "config.json"
        maker.write_text(_MAKER)
        config_file.write_text(json.dumps(config))
        done = subprocess.run(
            [node, str(maker), str(npm_pyodide() / "pyodide.js"), str(stdlib), str(config_file), str(raw)],
            capture_output=True,
            text=True,
            timeout=900,
            env={},  # nothing of this machine's environment in the published memory
        )
    marker = done.stdout.rfind("@@failed@@")
    if done.returncode != 0 or marker < 0:
        raise RuntimeError(f"taking the memory snapshot {name} failed:\n{done.stderr[-3000:]}")
    (folder / "failed.json").write_text(done.stdout[marker + len("@@failed@@") :].splitlines()[0])
    compressed(raw)


# The lessons' kernel (JupyterLite's pyodide-kernel): what its worker imports while it starts
# (``import pyodide_kernel``: IPython, traitlets, comm...), kafka-python and the course library,
# measured in the site's Pyodide under Node (:func:`kernel_modules`). Not in the snapshot, imported
# in the browser as before: the kernel's own packages and Pyodide's (they hold JavaScript objects,
# which a snapshot cannot), and what looks at the running kernel when imported - ipywidgets registers
# its comm target only if a shell runs then, tqdm.auto picks its notebook bars only in one.
KERNEL_ROOTS = ("pyodide_kernel", "kafka", "course_lib")
KERNEL_WALKED = ("course_lib",)  # every submodule imported too (what the lessons import)
KERNEL_REFUSED = (
    "pyodide_kernel",
    "piplite",
    "micropip",
    "pyodide",
    "_pyodide",
    "pyodide_js",
    "js",
    "ipywidgets",
    "widgetsnbextension",
    "jupyterlab_widgets",
    "tqdm.auto",
    "tqdm.autonotebook",
    "tqdm.notebook",
)
# pyodide_kernel puts stand-ins for modules a browser lacks (termios, fcntl...) into sys.modules
# before IPython imports them; the snapshot's imports must see the same
# (the module found, not its package imported: that would start the kernel)
KERNEL_PRELUDE = """
import importlib.machinery, importlib.util
_where = importlib.util.find_spec("pyodide_kernel").submodule_search_locations
_spec = importlib.machinery.PathFinder.find_spec("pyodide_kernel.mocks", _where)
_mocks = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_mocks)
_mocks.apply_mocks()
del _where, _spec, _mocks
"""

_KERNEL_IMPORTS = r"""
import importlib, json, pkgutil, sys
for _root in ROOTS:
    _module = importlib.import_module(_root)
    for _info in pkgutil.walk_packages(_module.__path__, _root + ".") if _root in WALKED else ():
        try:
            importlib.import_module(_info.name)
        except Exception:  # needs what a browser lacks (threads, sockets): not imported there either
            pass
sys.stdout = sys.__stdout__  # pyodide_kernel sends it to the kernel's stream
print("@@modules@@" + json.dumps(list(sys.modules)))
"""


def kernel_modules(wheels: list[Path]) -> list[str]:
    """The modules, in the order they were imported, that the lessons' kernel and course import
    (:data:`KERNEL_ROOTS`, and every submodule of :data:`KERNEL_WALKED`); measured once per
    content of ``wheels`` (tools/build_cache.py)."""
    from tools import build_cache
    from tools.pyodide_local import PYODIDE_VERSION

    code = f"ROOTS = {KERNEL_ROOTS!r}\nWALKED = {KERNEL_WALKED!r}\n{_KERNEL_IMPORTS}"
    entry = build_cache.cached(
        "kernel-imports", [PYODIDE_VERSION, code, *wheels], lambda f: _kernel_imports(code, wheels, f), keep=4
    )
    return json.loads((entry / "modules.json").read_text())


def _kernel_imports(code: str, wheels: list[Path], folder: Path) -> None:
    from tools.pyodide_local import run_python

    done = run_python(code, wheels, timeout_s=900)
    marker = done.stdout.rfind("@@modules@@")
    if done.returncode != 0 or marker < 0:
        raise RuntimeError(f"measuring what the kernel imports failed:\n{done.stderr[-3000:]}")
    (folder / "modules.json").write_text(done.stdout[marker + len("@@modules@@") :].splitlines()[0])


def make_for_kernel(wheels: list[Path], stdlib: Path, out: Path, measured_with: list[Path]) -> list[str]:
    """Write to ``out`` the gzipped snapshot of a Pyodide started with ``stdlib`` (the lessons' standard
    library zip, tools/lesson_kernel.py), ``wheels`` unpacked and :func:`kernel_modules` imported
    (measured with the wheels ``measured_with``, the same packages as wheels); returns what
    failed to import."""
    wanted = [m for m in kernel_modules(measured_with) if not refuses(m)]
    return take(wheels, wanted, stdlib, out, prelude=KERNEL_PRELUDE, refused=KERNEL_REFUSED)


def refuses(module: str) -> bool:
    """Whether the kernel's snapshot leaves ``module`` to the browser (:data:`KERNEL_REFUSED`).

    >>> [refuses(m) for m in ("ipywidgets.widgets", "tqdm.auto", "tqdm.std", "IPython.core")]
    [True, True, False, False]
    """
    return module in KERNEL_REFUSED or module.split(".")[0] in KERNEL_REFUSED
