"""Python bytecode for the site's Pyodide, compiled once when the site is built instead of on every
page load.

The wheels the kernel loads (IPython, traitlets, micropip..., ipywidgets, kafka-python, the course
library) and Pyodide's standard library (``python_stdlib.zip``) hold ``.py`` files only, so every
visitor's browser compiled each module it imported, every time: a cold demo spent more time
compiling IPython than running it. :func:`precompile` imports what the kernel and the course import
at start-up (:data:`WARM_IMPORTS`) in the site's own Pyodide under Node, and writes copies of the
wheels and of the standard library that carry the bytecode of exactly those modules:

- in a wheel, next to ``pkg/mod.py``: ``pkg/__pycache__/mod.cpython-313.pyc``, the place CPython's
  importer looks first;
- in the standard library's zip, next to ``mod.py``: ``mod.pyc`` (where zipimport looks).

Sources stay (tracebacks and ``inspect`` show them); modules nothing imports at start-up are not
compiled (the download grows by what is compiled, about half again). The bytecode is of the
"unchecked hash" kind (PEP 552): the importer uses it without comparing it with the source's time
stamp, which a wheel unpacked in the browser does not keep. It is compiled by the very Pyodide
version the site runs, so its format is the one that version reads. Results are cached by the
inputs' content, in the course cache (:mod:`course_lib.cache`).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from tools import build_cache
from tools.pyodide_local import PYODIDE_VERSION, run_python

STDLIB = "python_stdlib.zip"
# What a kernel imports while it starts (piplite, pyodide_kernel: IPython...), what the demos and
# lessons import first (ipywidgets, tqdm, the course library: every course_lib module that
# imports in the browser), and jedi (IPython's completer in the lessons).
WARM_IMPORTS = ("piplite.piplite", "pyodide_kernel", "ipywidgets", "tqdm.auto", "kafka", "jedi", "course_lib")
WALKED = ("course_lib",)  # packages whose every submodule is imported too

_COMPILER = r"""
import importlib, importlib.util, json, os, pkgutil, sys, traceback, zipfile
from importlib._bootstrap_external import _code_to_hash_pyc

SITE = next(p for p in sys.path if p.endswith("site-packages"))
STDLIB = next(p for p in sys.path if p.endswith(".zip"))
TAG = sys.implementation.cache_tag
stdout, stderr = sys.stdout, sys.stderr
failed = []
for name in WARM_IMPORTS:
    try:
        module = importlib.import_module(name)
        if name in WALKED:
            for info in pkgutil.walk_packages(module.__path__, name + "."):
                try:
                    importlib.import_module(info.name)
                except Exception as e:  # a module that needs what a browser lacks (threads, sockets)
                    failed.append(f"{info.name}: {type(e).__name__}: {e}")
    except Exception:
        failed.append(f"{name}: {traceback.format_exc()}")
sys.stdout, sys.stderr = stdout, stderr  # pyodide_kernel redirects them to the kernel's streams
used = {m.__file__ for m in list(sys.modules.values()) if (getattr(m, "__file__", None) or "").endswith(".py")}
# the wheels were unpacked into the working directory here; in the browser they are in SITE
unpacked = os.getcwd() + "/"
used_in_wheels = {f.removeprefix(unpacked) for f in used if f.startswith(unpacked)}


def pyc(source, filename):
    code = compile(source, filename, "exec", dont_inherit=True)
    return bytes(_code_to_hash_pyc(code, importlib.util.source_hash(source), checked=False))


def add(zout, name, data, like):
    info = zipfile.ZipInfo(name, like.date_time)
    info.compress_type = zipfile.ZIP_DEFLATED
    zout.writestr(info, data)


counts = {}
for name in sorted(os.listdir("/host/in")):
    source, target = f"/host/in/{name}", f"/host/out/{name}"
    n = 0
    with zipfile.ZipFile(source) as zin, zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as zout:
        infos = zin.infolist()
        if name == STDLIB_NAME:
            for info in infos:
                data = zin.read(info)
                zout.writestr(info, data)
                if f"{STDLIB}/{info.filename}" in used:
                    add(zout, info.filename[:-3] + ".pyc", pyc(data, f"{STDLIB}/{info.filename}"), info)
                    n += 1
        else:
            record = next(i for i in infos if i.filename.endswith(".dist-info/RECORD"))
            lines = zin.read(record).decode()
            for info in infos:
                if info is record:
                    continue
                data = zin.read(info)
                zout.writestr(info, data)
                if info.filename in used_in_wheels:
                    folder, _, module = info.filename.rpartition("/")
                    member = (folder + "/" if folder else "") + f"__pycache__/{module[:-3]}.{TAG}.pyc"
                    compiled = pyc(data, f"{SITE}/{info.filename}")
                    add(zout, member, compiled, info)
                    digest = base64.urlsafe_b64encode(hashlib.sha256(compiled).digest()).rstrip(b"=").decode()
                    lines += f"{member},sha256={digest},{len(compiled)}\n"
                    n += 1
            add(zout, record.filename, lines.encode(), record)
    counts[name] = n
print("@@bytecode@@" + json.dumps({"compiled": counts, "failed": failed}))
"""


KEPT = 4  # compiled sets kept in the cache (each course change makes a new one, ~15 MB)


def precompile(wheels: list[Path], stdlib: Path) -> Path:
    """A folder with a compiled copy of each of ``wheels`` and of ``stdlib`` (Pyodide's
    python_stdlib.zip), under the same file names. ``wheels`` must hold everything
    :data:`WARM_IMPORTS` needs (what is missing is reported, and left uncompiled)."""
    names = [w.name for w in wheels]
    if len(set(names)) != len(names) or STDLIB in names:
        raise ValueError(f"precompile: file names must differ: {sorted(names)}")
    inputs = [
        PYODIDE_VERSION,
        str(WARM_IMPORTS),
        str(WALKED),
        _COMPILER,
        *sorted([*wheels, stdlib], key=lambda p: p.name),
    ]
    return build_cache.cached("bytecode", inputs, lambda folder: _compile(folder, wheels, stdlib), keep=KEPT)


def _compile(folder: Path, wheels: list[Path], stdlib: Path) -> None:
    (folder / "in").mkdir()
    (folder / "out").mkdir()
    for f in [*wheels, stdlib]:
        shutil.copy2(f, folder / "in" / f.name)
    code = (
        f"import base64, hashlib\nWARM_IMPORTS = {WARM_IMPORTS!r}\nWALKED = {WALKED!r}\n"
        f"STDLIB_NAME = {stdlib.name!r}\n{_COMPILER}"
    )
    done = run_python(code, wheels, timeout_s=900, mount=folder)
    marker = done.stdout.rfind("@@bytecode@@")
    if done.returncode != 0 or marker < 0:
        raise RuntimeError(f"compiling the site's bytecode in Pyodide failed:\n{done.stderr[-3000:]}")
    report = json.loads(done.stdout[marker + len("@@bytecode@@") :].splitlines()[0])
    if not report["compiled"].get(stdlib.name):
        raise RuntimeError(f"no module of the standard library was compiled: {report}")
    if report["failed"]:  # e.g. the grader's modules: they need what Pyodide lacks (sqlite3...)
        names = ", ".join(line.split(":", 1)[0] for line in report["failed"])
        print(f"bytecode: not importable in Pyodide, left uncompiled: {names}")
    for f in (folder / "out").iterdir():
        f.rename(folder / f.name)
    shutil.rmtree(folder / "in")
    (folder / "out").rmdir()
    (folder / "compiled.json").write_text(json.dumps(report["compiled"], indent=1))
