"""A Pyodide runtime on this machine, for the site's tests and benchmark (no request leaves it).

The deployed site loads Pyodide from the standard distribution (a CDN). Tests and ``bench site``
use the same Pyodide version (:data:`PYODIDE_VERSION`), assembled locally:

- the core runtime from the npm package ``pyodide`` (installed with npm into a cache folder);
- the pure-Python packages the JupyterLite kernel loads from the distribution (micropip, IPython,
  jedi and their dependencies) as wheels of the same versions from PyPI, fetched once with pip;
- ``ssl``: Pyodide's own pure-Python ssl shim (see :data:`SSL_SHIM_FROM`); ``sqlite3``: an empty
  placeholder, so that the kernel's start-up ``install("sqlite3")`` succeeds and ``import sqlite3``
  raises ImportError, which IPython handles (no command history);
- a rewritten ``pyodide-lock.json`` listing only what is really there. Other compiled packages of
  the full distribution (matplotlib, numpy...) are not on npm or PyPI: they are left out, so asking
  for them fails fast instead of waiting for a missing file.

``run_python(code, wheels)`` runs Python under Node with that runtime (the parity test and the
benchmark use it). Needs ``node`` and ``npm`` on PATH; :func:`missing_tools` says what is missing.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

from course_lib.cache import cache_dir, npm_packages, prepared

# The site pins this Pyodide (tools/site_build.py points the kernel at it on the CDN). It is the
# one the JupyterLite kernel (0.7.x) is built for: Pyodide 314 needs module workers, which that
# kernel does not start.
PYODIDE_VERSION = "0.29.3"
# kafka-python imports ssl when imported; in Pyodide 0.29 ssl is a compiled package of the full
# distribution (the site gets it from the CDN). Pyodide 314 replaced it with a pure-Python ssl
# shim in its standard library: the local runtime uses that shim, taken from the npm package.
SSL_SHIM_FROM = "314.0.7"
# the kernel extension asks the distribution for these at start-up (plus sqlite3, see below)
KERNEL_PACKAGES = ("micropip", "packaging", "ipython", "jedi", "sqlite3", "ssl")


def missing_tools() -> str | None:
    """Why a local Pyodide cannot be assembled here, or None."""
    for tool in ("node", "npm"):
        if shutil.which(tool) is None:
            return f"{tool} is not on PATH (Debian: apt-get install nodejs npm)"
    return None


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def npm_pyodide(version: str | None = None) -> Path:
    """The npm package ``pyodide`` (core runtime), installed into the cache on first use."""
    version = version or PYODIDE_VERSION
    return npm_packages(f"npm-pyodide-{version}", f"pyodide@{version}") / "pyodide"


def _closure(packages: dict, roots) -> list[str]:
    by_norm = {_norm(k): k for k in packages}
    seen: list[str] = []
    todo = list(roots)
    while todo:
        key = by_norm.get(_norm(todo.pop()))
        if key is not None and key not in seen:  # None: in this version's standard library
            seen.append(key)
            todo += packages[key]["depends"]
    return seen


def _pypi_wheel(name: str, version: str, folder: Path, python: str) -> Path:
    """The pure-Python wheel name==version from PyPI (pip's ordinary download, cached)."""
    prefix = _norm(name).replace("-", "_")
    found = [
        p
        for p in folder.glob("*.whl")
        if _norm(p.name.split("-")[0]).replace("-", "_") == prefix and p.name.split("-")[1] == version
    ]
    if not found:
        pip_download_pure(folder, [f"{name}=={version}"], python)
        return _pypi_wheel(name, version, folder, python)
    return found[0]


def pip_download_pure(folder: Path, pins: list[str], python: str) -> None:
    """pip's ordinary download of pure-Python wheels (``name==version``) for Pyodide's ``python``
    (``3.13``), whatever this machine runs."""
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary=:all:"]
        + ["--python-version", python, "--implementation", "py", "--platform", "any", "--dest", str(folder), *pins],
        check=True,
    )


def _ssl_shim() -> dict[str, bytes]:
    """ssl.py and _ssl.py from the standard library of the npm package pyodide@SSL_SHIM_FROM."""
    with zipfile.ZipFile(npm_pyodide(SSL_SHIM_FROM) / "python_stdlib.zip") as stdlib:
        return {name: stdlib.read(name) for name in ("ssl.py", "_ssl.py")}


def _wheel(folder: Path, name: str, version: str, files: dict[str, bytes]) -> Path:
    """A minimal pure-Python wheel holding ``files`` (a wheel is a zip with a dist-info folder)."""
    info = f"{name}-{version}.dist-info"
    files = {
        **files,
        f"{info}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n".encode(),
        f"{info}/WHEEL": b"Wheel-Version: 1.0\nGenerator: tools/pyodide_local.py\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = "".join(f"{path},,\n" for path in files) + f"{info}/RECORD,,\n"
    path = folder / f"{name}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as whl:
        for member, data in files.items():
            whl.writestr(member, data)
        whl.writestr(f"{info}/RECORD", record)
    return path


def local_distribution(version: str | None = None) -> Path:
    """A folder to serve as ``pyodideUrl``'s parent: the npm core, the kernel's pure-Python
    packages from PyPI and a lock file that lists exactly those (a cache entry, made once)."""
    version = version or PYODIDE_VERSION
    core = npm_pyodide(version)
    return prepared(f"pyodide-local-{version}", lambda dist: _assemble(core, dist), what=f"the local Pyodide {version}")


def _assemble(core: Path, dist: Path) -> None:
    for f in core.iterdir():
        if f.is_file():
            shutil.copy2(f, dist / f.name)
    lock = json.loads((core / "pyodide-lock.json").read_text())
    python = ".".join(lock["info"]["python"].split(".")[:2])
    packages = lock["packages"]
    kept = {}
    for key in _closure(packages, KERNEL_PACKAGES):
        entry = dict(packages[key])
        if key == "ssl":
            wheel = _wheel(dist, "ssl", entry["version"], _ssl_shim())
        elif key == "sqlite3":
            wheel = _wheel(dist, "sqlite3", entry["version"], {})
        elif entry["package_type"] != "package" or not entry["file_name"].endswith("-none-any.whl"):
            continue  # compiled (openssl...): only in the full distribution
        else:
            wheel = _pypi_wheel(entry["name"], entry["version"], dist, python)
        entry["file_name"] = wheel.name
        entry["sha256"] = hashlib.sha256(wheel.read_bytes()).hexdigest()
        kept[key] = entry
    for entry in kept.values():
        entry["depends"] = [d for d in entry["depends"] if any(_norm(d) == _norm(k) for k in kept)]
    lock["packages"] = kept
    (dist / "pyodide-lock.json").write_text(json.dumps(lock, indent=1))


_NODE_RUNNER = r"""
const fs = require("fs");
const { loadPyodide } = require(process.argv[2]);
(async () => {
  const started = Date.now();
  const pyodide = await loadPyodide({ stdout: (s) => process.stdout.write(s + "\n"),
                                      stderr: (s) => process.stderr.write(s + "\n") });
  for (const wheel of JSON.parse(process.argv[4])) {
    pyodide.unpackArchive(new Uint8Array(fs.readFileSync(wheel)), "wheel");
  }
  if (process.argv[5]) pyodide.mountNodeFS("/host", process.argv[5]);
  process.stderr.write(`pyodide-startup-ms ${Date.now() - started}\n`);
  await pyodide.runPythonAsync(fs.readFileSync(process.argv[3], "utf8"));
})().catch((e) => { process.stderr.write(String(e) + "\n"); process.exit(1); });
"""


def run_python(
    code: str, wheels, version: str | None = None, timeout_s: float = 600, mount: Path | None = None
) -> subprocess.CompletedProcess:
    """Run ``code`` in Pyodide ``version`` under Node with ``wheels`` unpacked into site-packages;
    returns the finished process (stdout: what the code printed; stderr has ``pyodide-startup-ms N``).
    ``mount``: a folder of this machine the code sees as ``/host`` (read and write)."""
    core = npm_pyodide(version)
    work = cache_dir() / "node-run"
    work.mkdir(parents=True, exist_ok=True)
    # per process: another process writing the same file at once would hand node half a script
    runner = work / f"run-{os.getpid()}.js"
    runner.write_text(_NODE_RUNNER)
    script = work / f"script-{os.getpid()}.py"
    script.write_text(code)
    try:
        return subprocess.run(
            [
                "node",
                str(runner),
                str(core / "pyodide.js"),
                str(script),
                json.dumps([str(w) for w in wheels]),
                *([str(mount)] if mount else []),
            ],
            capture_output=True,
            text=True,
            timeout=timeout_s,
        )
    finally:
        script.unlink(missing_ok=True)
        runner.unlink(missing_ok=True)


if __name__ == "__main__":  # python -m tools.pyodide_local: fill the cache (.ci/run does, before the tests)
    for v in (PYODIDE_VERSION, SSL_SHIM_FROM):
        print(f"Pyodide {v} ready in {local_distribution(v)}")
