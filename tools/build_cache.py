"""The site build's slow steps, each made once per content of its inputs.

Compiling the bytecode (tools/pyodide_bytecode.py), measuring what a demo imports
(tools/import_graph.py) and taking a memory snapshot (tools/memory_snapshot.py) each run the site's
Pyodide under Node, seconds to a minute apiece, and give the same result for the same inputs: the
online and the offline copy of the site share them, and so does a rebuild after a change to a
lesson's text. Each result is kept in the course cache (:mod:`course_lib.cache`) under its kind and
the digest of its inputs; the least recently used of a kind are dropped beyond ``keep``.

An input is a file - a zip or wheel by what it holds (:func:`content_digest`), anything else by its
bytes - or a string: the step's own script and options, the Pyodide version.
"""

from __future__ import annotations

import functools
import hashlib
import shutil
import zipfile
from collections.abc import Callable, Iterable
from pathlib import Path

from course_lib.cache import STAMP, cache_dir, is_complete, prepared


def content_digest(path: Path) -> bytes:
    """The digest of a file; of a wheel or zip, of what it holds - each member's name and bytes,
    not the archive's own bytes: ``pip wheel`` stamps every member with the build's time, so the
    course's wheel, rebuilt from the same sources, would otherwise miss the cache on every build."""
    stat = path.stat()
    return _digest(str(path.resolve()), stat.st_mtime_ns, stat.st_size)


@functools.lru_cache(maxsize=512)
def _digest(path: str, _mtime_ns: int, _size: int) -> bytes:
    # once per file as it is now: a build digests the same wheels for every demo
    if not zipfile.is_zipfile(path):
        return hashlib.sha256(Path(path).read_bytes()).digest()
    digest = hashlib.sha256()
    with zipfile.ZipFile(path) as z:
        for name in sorted(z.namelist()):
            digest.update(name.encode() + b"\0" + hashlib.sha256(z.read(name)).digest())
    return digest.digest()


def key(inputs: Iterable[Path | str]) -> str:
    """The digest of ``inputs``, in their order (a file by its name and content).

    >>> key(["a", "b"]) == key(["a", "b"]), key(["a", "b"]) == key(["b", "a"])
    (True, False)
    """
    digest = hashlib.sha256()
    for item in inputs:
        if isinstance(item, Path):
            digest.update(b"file\0" + item.name.encode() + b"\0" + content_digest(item))
        else:
            digest.update(b"text\0" + hashlib.sha256(item.encode()).digest())
    return digest.hexdigest()[:20]


def cached(kind: str, inputs: Iterable[Path | str], make: Callable[[Path], None], keep: int) -> Path:
    """The cache folder of ``kind``'s result for ``inputs``, filled by ``make(folder)`` the first
    time (made from local inputs, so even in a frozen cache); the ``keep`` most recently used
    results of ``kind`` stay."""
    name = f"{kind}-{key(inputs)}"
    entry = cache_dir() / name
    if is_complete(entry):
        (entry / STAMP).touch()  # recently used: kept by _prune
        return entry
    _prune(kind, keep - 1)
    return prepared(name, make, frozen_ok=True)


def _prune(kind: str, keep: int) -> None:
    """Remove all but the ``keep`` most recently used results of ``kind`` from the cache."""
    found = sorted(cache_dir().glob(f"{kind}-*"), key=lambda d: (d / STAMP).stat().st_mtime if is_complete(d) else 0)
    for old in found[: max(0, len(found) - keep)]:
        shutil.rmtree(old, ignore_errors=True)
