"""The course's download cache: every artifact made once, atomically, by one process at a time.

Jars from Maven Central, the Java client's compiled driver, npm packages (reveal.js, Pyodide,
the hub's proxy), the local Pyodide distribution: each is an *entry*, a folder under
:func:`cache_dir` (``$COURSE_CACHE_DIR``, by default ``~/.cache/kafka-delivery-course``) that
:func:`prepared` returns only once it is complete. Three rules make that hold on a fresh machine,
with two notebooks (or two test processes) asking for the same entry at once:

- **once**: an exclusive lock file beside the entry (``.NAME.lock``) makes a second process wait
  for the first instead of starting its own download; when it gets the lock it finds the entry
  complete and returns it;
- **atomically**: the entry is made in a temporary folder next to it (``.NAME.partial-*``) and
  renamed into place with its stamp inside, so nobody ever lists a half-filled folder;
- **redone, not trusted**: a folder without its stamp (a fetch killed half-way, an older course's
  layout) and any ``.partial-*`` folder left by a killed process are removed under the lock before
  the entry is made again. The lock is the operating system's (``flock``): it dies with its process.

>>> import tempfile
>>> root = Path(tempfile.mkdtemp())
>>> calls = []
>>> def make(folder):
...     calls.append(folder.name)
...     (folder / "data.txt").write_text("complete")
>>> entry = prepared("demo/v1", make, root=root)
>>> (entry / "data.txt").read_text(), entry == root / "demo" / "v1"
('complete', True)
>>> prepared("demo/v1", make, root=root) == entry, len(calls)   # made once
(True, 1)

With ``COURSE_CACHE_FROZEN`` set (the test suite sets it under ``CI=true``, after ``.ci/run`` has
prepared everything), a missing entry of the default cache raises :class:`CacheMissing` naming it
and the command that prepares it, instead of downloading in the middle of a test.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import uuid
from collections.abc import Callable
from pathlib import Path

STAMP = ".complete"  # written last, inside the temporary folder, before the rename
PREPARE_HINT = "python -m tools.prepare (which .ci/run and `make prepare` run)"


class CacheMissing(RuntimeError):
    """The cache lacks an entry and may not download it now (``COURSE_CACHE_FROZEN``)."""


def cache_dir() -> Path:
    """``$COURSE_CACHE_DIR`` or ``~/.cache/kafka-delivery-course``, read at each call so that a
    process pointed at an empty cache (``.ci/run --fresh``) uses it everywhere."""
    env = os.environ.get("COURSE_CACHE_DIR")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "kafka-delivery-course"


def is_complete(entry: Path) -> bool:
    return (entry / STAMP).is_file()


def prepared(
    name: str, make: Callable[[Path], None], *, root: Path | None = None, what: str = "", frozen_ok: bool = False
) -> Path:
    """The complete cache entry ``name`` (a relative path such as ``jars/kafka-4.3.1``), made by
    ``make(folder)`` into an empty temporary folder if it is missing.

    ``make`` fills the folder it is given and raises on failure; the folder is then discarded and
    the exception propagates, the cache unchanged. ``root``: another cache (tests); ``what``: how
    :class:`CacheMissing` names the entry; ``frozen_ok``: made from local inputs, downloads
    nothing, so it is made even in a frozen cache."""
    base = cache_dir() if root is None else root
    entry = base / name
    if is_complete(entry):
        return entry  # the common case: no lock taken
    if root is None and not frozen_ok and os.environ.get("COURSE_CACHE_FROZEN"):
        raise CacheMissing(
            f"{what or name} is not in the course cache ({entry}), and COURSE_CACHE_FROZEN forbids "
            f"downloading it now. Prepare the cache first: {PREPARE_HINT}."
        )
    entry.parent.mkdir(parents=True, exist_ok=True)
    # imported here: the browser course (Pyodide) imports this module but never makes an entry,
    # and filelock is not among its packages
    from filelock import FileLock

    with FileLock(str(entry.parent / f".{entry.name}.lock")):
        if is_complete(entry):
            return entry  # another process made it while this one waited
        _remove_leftovers(entry)
        # mkdir, not mkdtemp: the entry keeps the umask's permissions (mkdtemp's are 0700)
        work = entry.parent / f".{entry.name}.partial-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        work.mkdir()
        try:
            make(work)
            (work / STAMP).write_text(f"{what or name}\n")
            os.rename(work, entry)  # atomic: a reader sees no entry or a complete one
        finally:
            shutil.rmtree(work, ignore_errors=True)
    return entry


def _remove_leftovers(entry: Path) -> None:
    """Under the lock: what killed processes left - a stampless entry, their temporary folders."""
    if entry.exists() or entry.is_symlink():
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry)
        else:
            entry.unlink()
    for partial in entry.parent.glob(f".{entry.name}.partial-*"):
        shutil.rmtree(partial, ignore_errors=True)


def npm_packages(name: str, *specs: str, root: Path | None = None) -> Path:
    """The ``node_modules`` folder of the cache entry ``name``, made by *one* ``npm install`` of
    every spec (``reveal.js@4.6.0``...): npm prunes what an earlier install in the same prefix put
    there, so two installs into one folder keep only the second package."""

    def install(folder: Path) -> None:
        if shutil.which("npm") is None:
            raise RuntimeError(
                f"{' and '.join(specs)} come from npm, which is not on PATH (Debian: apt-get install npm)"
            )
        subprocess.run(
            [
                "npm",
                "install",
                "--loglevel=error",
                "--no-save",
                "--no-audit",
                "--no-fund",
                "--prefix",
                str(folder),
                *specs,
            ],
            check=True,
            stdout=subprocess.DEVNULL,
        )

    return prepared(name, install, root=root, what=" and ".join(specs)) / "node_modules"
