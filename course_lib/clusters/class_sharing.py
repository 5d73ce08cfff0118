"""Class-data sharing for the lab's JVMs: a JVM that starts from an archive of the classes an
earlier one loaded spends about a third less CPU starting (``bench/jvm_cpu.py`` measures it).

A Kafka node loads ~thousands of classes from ~90 jars, and each node - and each ``StorageTool``
that formats one - parses and verifies them again. On a 2-core laptop every cluster start costs
that four times over. So the first JVM of a classpath runs with ``-XX:+RecordDynamicDumpInfo``;
before it ends, :meth:`ClassSharing.record` asks it (``jcmd <pid> VM.cds dynamic_dump``) to
write what it loaded into the course cache. Every later JVM with the same ``java`` and classpath
maps that archive (``-XX:SharedArchiveFile``) instead.

Nothing depends on it. Without ``jcmd`` (a JRE rather than a JDK) no archive is written, and
the JVMs start as before. An archive's name includes the java binary's identity and the
classpath's jars (their sizes and times), so after a Java update or with other jars it is simply
not found. A half-written or cut-short archive would crash the JVM that maps it (SIGBUS, not a
warning), so an archive counts only once a JVM has started from it (``-Xshare:on``) and its size
is written beside it; a file that has another size since is recorded again. A process whose
recording failed does not try again (each try is a ``jcmd`` JVM of its own).

>>> sharing = ClassSharing("/usr/bin/java", "a.jar:b.jar", folder=Path("/nowhere"))
>>> sharing.options()  # no archive yet: this JVM records one
['-XX:+RecordDynamicDumpInfo']
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from pathlib import Path

from course_lib import cache


def archive_folder() -> Path:
    """Where the archives live: the course cache's ``class-archives``."""
    return cache.cache_dir() / "class-archives"


#: how long a dump may take (it pauses the JVM; ~2 s for a broker on 2 cores)
DUMP_TIMEOUT_S = 60


def _java_identity(java: str) -> str:
    """What changes when the JVM does: the resolved binary, its size and modification time (a
    Java update replaces ``libjvm.so`` and this binary together)."""
    real = Path(java).resolve()
    stat = real.stat()
    return f"{real}:{stat.st_size}:{stat.st_mtime_ns}"


def _stamp(path: str) -> str:
    try:
        stat = os.stat(path)
    except OSError:
        return "-"
    return f"{stat.st_size}:{stat.st_mtime_ns}"


#: archives this process could not record (jcmd refused to attach, the dump failed): not asked
#: again at every cluster's stop, each try a JVM of its own
_FAILED: set[Path] = set()


class ClassSharing:
    """The shared-class archive of one ``java`` and ``classpath``, in ``folder`` (by default
    :func:`archive_folder`)."""

    def __init__(self, java: str, classpath: str, folder: Path | None = None):
        self.java, self.classpath = java, classpath
        self.folder = folder if folder is not None else archive_folder()
        try:
            identity = _java_identity(java)
        except OSError:  # no such java: the JVM's own start will say so
            identity = java
        # the JVM ignores an archive whose jars changed since (their sizes and times are in it):
        # a changed jar names another archive, recorded anew
        jars = "\n".join(f"{entry}:{_stamp(entry)}" for entry in classpath.split(os.pathsep))
        key = hashlib.sha256(f"{identity}\n{jars}".encode()).hexdigest()[:16]
        self.archive = self.folder / f"{key}.jsa"
        #: the archive's size, written once a JVM started from it: what makes it count
        self.size_file = self.folder / f"{key}.bytes"

    def options(self) -> list[str]:
        """The JVM options: map the archive, or record what this JVM loads for the next one."""
        if self.recording:
            return ["-XX:+RecordDynamicDumpInfo"]
        return [f"-XX:SharedArchiveFile={self.archive}", "-Xshare:auto"]

    @property
    def recording(self) -> bool:
        """Whether JVMs started now record: no archive yet, or not the one that was checked."""
        try:
            return int(self.size_file.read_text()) != self.archive.stat().st_size
        except (OSError, ValueError):
            return True

    def record(self, pid: int) -> bool:
        """Have the running JVM ``pid`` (started with :meth:`options` while :attr:`recording`)
        write its loaded classes as the archive. False, and no archive, if it could not (no
        ``jcmd``, the JVM gone, the dump failed): the next process records again."""
        if not self.recording:
            return True
        if self.archive in _FAILED:
            return False
        if not self._dumped(pid):
            _FAILED.add(self.archive)
            return False
        return True

    def _dumped(self, pid: int) -> bool:
        jcmd = shutil.which("jcmd", path=str(Path(self.java).resolve().parent)) or shutil.which("jcmd")
        if jcmd is None:
            return False
        self.folder.mkdir(parents=True, exist_ok=True)
        partial = self.archive.with_name(f"{self.archive.stem}.{os.getpid()}.partial")
        try:
            done = subprocess.run(
                [jcmd, str(pid), "VM.cds", "dynamic_dump", str(partial)],
                capture_output=True,
                text=True,
                timeout=DUMP_TIMEOUT_S,
            )
            if done.returncode != 0 or not partial.is_file() or not self._starts_from(partial):
                return False
            size = partial.stat().st_size
            os.replace(partial, self.archive)  # whole or not at all
            written = self.size_file.with_name(partial.name + ".bytes")
            written.write_text(str(size))
            os.replace(written, self.size_file)
            return True
        except (OSError, subprocess.SubprocessError):
            return False
        finally:
            partial.unlink(missing_ok=True)

    def _starts_from(self, archive: Path) -> bool:
        """Whether a JVM of this java and classpath starts from ``archive`` (``-Xshare:on``
        refuses one it cannot map, where ``auto`` would go on without it)."""
        check = [self.java, f"-XX:SharedArchiveFile={archive}", "-Xshare:on", "-cp", self.classpath, "-version"]
        return subprocess.run(check, capture_output=True, timeout=DUMP_TIMEOUT_S).returncode == 0
