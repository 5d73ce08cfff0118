"""The lessons' kernel (JupyterLite's pyodide-kernel) starting fast: what the site build gives it.

A lesson's kernel used to start the way every Pyodide starts: the runtime, then every preloaded
wheel fetched and unpacked file by file, then ``import pyodide_kernel`` (IPython and the rest)
executing every module, each import looked up in the drive first (a synchronous request per
module). The build now gives it:

- one standard library zip (:func:`standard_library`): Pyodide's, with the pure-Python packages
  the kernel preloads merged in (their bytecode where zipimport reads it, beside each source), so
  they are imported from the zip instead of being unpacked. The packages that need their files on
  disk stay ordinary packages (:data:`UNPACKED`): the course library reads its data sets from
  files, jedi its type stubs, micropip and piplite manage packages, and the distribution's sqlite3
  and ssl carry shared libraries. The lock file then lists only those (:func:`lock_without`), so
  ``pyodide.loadPackagesFromImports`` fetches nothing again for an ``import IPython``;
- a memory snapshot (tools/memory_snapshot.py, :func:`memory_snapshot.make_for_kernel`) of a
  Pyodide that imported what the kernel and the course import at start, restored instead;
- the imports before the drive is mounted (tools/site_build.py edits the kernel's worker).
"""

from __future__ import annotations

import re
import zipfile
from pathlib import Path

from tools import memory_snapshot

STDLIB = "lessons_stdlib.zip"  # in the site's bytecode/ folder
SNAPSHOT = "lessons.snapshot.bin"  # gzipped there (``.gz``)
# what stays an ordinary package, unpacked into site-packages (and what they depend on)
UNPACKED = ("micropip", "piplite", "sqlite3", "ssl", "jedi", "kafka-delivery-course")


def norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def closure(packages: dict, roots) -> list[str]:
    """The lock's keys of ``roots`` and of everything they depend on.

    >>> closure({"a": {"depends": ["B"]}, "b": {"depends": []}, "c": {"depends": []}}, ["a"])
    ['a', 'b']
    """
    seen: list[str] = []
    todo = [norm(r) for r in roots]
    while todo:
        key = todo.pop(0)
        if key in packages and key not in seen:
            seen.append(key)
            todo += [norm(d) for d in packages[key]["depends"]]
    return seen


def zipped(lock: dict, preload) -> list[str]:
    """The packages of ``preload``'s closure that go into the standard library's zip."""
    kept = set(closure(lock["packages"], UNPACKED))
    return [k for k in closure(lock["packages"], preload) if k not in kept]


def lock_without(lock: dict, keys) -> dict:
    """``lock`` without the packages ``keys`` (they are in the standard library's zip), nor any
    dependency on them.

    >>> lock_without({"packages": {"a": {"depends": ["b", "c"]}, "b": {"depends": []}}}, ["b"])
    {'packages': {'a': {'depends': ['c']}}}
    """
    gone = {norm(k) for k in keys}
    packages = {
        k: {**entry, "depends": [d for d in entry["depends"] if norm(d) not in gone]}
        for k, entry in lock["packages"].items()
        if k not in gone
    }
    return {**lock, "packages": packages}


def zip_member(name: str) -> str | None:
    """Where a wheel's member goes in the standard library's zip: the same path, but bytecode
    beside its source (where zipimport looks, not ``__pycache__``); None for a wheel's ``.data``.

    >>> zip_member("pkg/__pycache__/mod.cpython-313.pyc"), zip_member("pkg/mod.py")
    ('pkg/mod.pyc', 'pkg/mod.py')
    >>> zip_member("x-1.0.data/scripts/x") is None, zip_member("x-1.0.dist-info/METADATA")
    (True, 'x-1.0.dist-info/METADATA')
    """
    top = name.split("/")[0]
    if top.endswith(".data"):
        return None
    folder, _, base = name.rpartition("/__pycache__/")
    if base and base.endswith(".pyc"):
        return f"{folder}/{base.split('.')[0]}.pyc" if folder else f"{base.split('.')[0]}.pyc"
    return name


def standard_library(stdlib: Path, wheels: list[Path], out: Path) -> Path:
    """``stdlib`` (Pyodide's zip, compiled) with every member of ``wheels`` added; returns ``out``."""
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zout:
        seen = set()
        for archive in [stdlib, *wheels]:
            with zipfile.ZipFile(archive) as zin:
                for info in zin.infolist():
                    member = zip_member(info.filename) if archive != stdlib else info.filename
                    if member is None or info.is_dir() or member in seen:
                        continue
                    seen.add(member)
                    target = zipfile.ZipInfo(member, info.date_time)
                    target.compress_type = zipfile.ZIP_DEFLATED
                    zout.writestr(target, zin.read(info))
    return out


def wheel_files(lock: dict, keys, root: Path, elsewhere: dict[str, Path]) -> list[Path]:
    """The wheel files of the lock's packages ``keys``: in the site (a path relative to build
    ``root``) or, for those the lock fetches from a CDN, this machine's wheel of the package
    (``elsewhere``: lock key -> wheel, the local runtime's). A shared library the CDN serves
    (libopenssl for ssl) holds no module: left out."""
    found = []
    for key in keys:
        entry = lock["packages"][key]
        local = root / entry["file_name"]
        if "://" not in entry["file_name"] and local.is_file():
            found.append(local.resolve())
        elif key in elsewhere:
            found.append(elsewhere[key])
        elif entry.get("package_type") == "shared_library":
            continue
        else:
            raise RuntimeError(f"the site build has no wheel of {key} (the lessons' kernel preloads it)")
    return found


def build(
    root: Path, lock: dict, preload, bytecode: Path, stdlib: Path, elsewhere: dict[str, Path]
) -> tuple[dict, list]:
    """The lessons' standard library zip and memory snapshot in ``bytecode`` (the site's folder of
    compiled files), from build ``root``'s ``lock`` and the packages it preloads; returns the lock
    file to write (without the zipped packages) and the modules that failed to import into the
    snapshot."""
    inside = zipped(lock, preload)
    merged = standard_library(stdlib, wheel_files(lock, inside, root, elsewhere), bytecode / STDLIB)
    unpacked = [k for k in closure(lock["packages"], preload) if k not in inside]
    failed = memory_snapshot.make_for_kernel(
        wheel_files(lock, unpacked, root, elsewhere),
        merged,
        bytecode / f"{SNAPSHOT}.gz",
        measured_with=wheel_files(lock, closure(lock["packages"], preload), root, elsewhere),
    )
    return lock_without(lock, inside), failed
