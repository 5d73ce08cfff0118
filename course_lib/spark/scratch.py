"""A Spark driver's scratch folder in the system temporary directory, owned by a live process.

A local session's JVM writes its temporary files (``spark-<uuid>``, ``blockmgr-<uuid>``,
``liblz4-java-*``) into a folder of ours, removed when the Python process that made it exits. A
process that is SIGKILLed runs no exit hook: Jupyter kills a kernel's whole process group when it
is shut down "now" (nbval does so after every notebook), and the folder would stay in /tmp for
good. So the owner holds an ``flock`` on the folder for its life - the kernel drops it when the
owner dies, however it dies - and :func:`remove_abandoned` removes every folder whose lock is
free: called by each new session, and by the test suite at its end.

The folder is made under a claiming name, locked, then renamed: a folder under the final name is
always locked by its owner or abandoned, never in between.
"""

from __future__ import annotations

import atexit
import fcntl
import os
import shutil
import tempfile
from pathlib import Path

PREFIX = "course-spark-session-"
#: the name a folder has while its owner takes the lock
CLAIMING = "course-spark-claiming-"

#: the open folders whose locks this process holds (closed only at exit)
_held: list[int] = []


def make_owned() -> Path:
    """A new scratch folder, locked by this process and removed at its exit.

    >>> path = make_owned()
    >>> path.name.startswith(PREFIX), path in abandoned()
    (True, False)
    """
    claiming = Path(tempfile.mkdtemp(prefix=CLAIMING))
    fd = os.open(claiming, os.O_RDONLY | os.O_DIRECTORY)
    fcntl.flock(fd, fcntl.LOCK_EX)
    path = claiming.with_name(PREFIX + claiming.name.removeprefix(CLAIMING))
    os.rename(claiming, path)  # the lock is the folder's (its inode's), not its name's
    _held.append(fd)
    atexit.register(shutil.rmtree, path, ignore_errors=True)
    return path


def abandoned(root: str | Path | None = None) -> list[Path]:
    """The scratch folders in ``root`` (the system temporary directory) whose owner has died."""
    found = []
    for path in Path(root or tempfile.gettempdir()).glob(PREFIX + "*"):
        try:
            fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
        except OSError:  # gone meanwhile, or not a folder
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            continue  # its owner lives
        finally:
            os.close(fd)
        found.append(path)
    return found


def remove_abandoned(root: str | Path | None = None) -> list[Path]:
    """Remove the folders :func:`abandoned` lists; returns them."""
    gone = abandoned(root)
    for path in gone:
        shutil.rmtree(path, ignore_errors=True)
    return gone
