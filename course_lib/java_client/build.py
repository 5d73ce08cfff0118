"""Compile ``Driver.java`` (the Java client's driver) at first use, once per source and classpath.

The classes go to ``<cache>/java-client-driver/<key>/`` where ``<key>`` hashes the source, the
classpath (its jar names carry the Kafka version) and the ``javac`` version: editing the driver or
moving to other jars builds anew, everything else reuses the classes. It is an entry of the course
cache (:func:`course_lib.cache.prepared`): a second process asking for it while the first compiles
waits for that build and reuses it. Nothing compiled is committed: only ``Driver.java`` ships
(package data).

With a JDK and the cached Kafka jars (so skipped as a doctest; tests/java_client/test_build.py
runs it):

>>> build = driver_build()                                 # doctest: +SKIP
>>> build.built_now, build.classes.name == build.key       # doctest: +SKIP
(False, True)
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path

from course_lib import cache
from course_lib.clusters import jars

#: shipped as package data next to this module (pyproject.toml), found without a repository path
SOURCE = Path(str(files("course_lib.java_client").joinpath("Driver.java")))
MAIN_CLASS = "Driver"

JDK_HINT = (
    "The Java client's driver is compiled with javac, which comes with a JDK (a JRE alone lacks it):\n"
    "    sudo apt-get install openjdk-17-jdk-headless maven\n"
    "or use the course's conda environment, which brings both:\n"
    "    conda env create -f environment.yml && conda activate kafka-delivery-course"
)


class BuildFailed(RuntimeError):
    """javac refused the driver's source (its output is in the message)."""


@dataclass(frozen=True)
class DriverBuild:
    """Where the compiled driver is and how to run it."""

    classes: Path  #: the directory holding Driver.class
    kafka_classpath: str  #: the cached jars of the lab's Kafka version (kafka-clients among them)
    key: str  #: hash of source, classpath and javac version
    built_now: bool  #: False when the classes came from the cache

    @property
    def classpath(self) -> str:
        return os.pathsep.join([str(self.classes), self.kafka_classpath])


def javac_executable() -> str:
    """The ``javac`` next to the Java 17+ that :func:`jars.java_executable` picks, or
    :class:`jars.JvmToolMissing` saying what to install."""
    java = Path(jars.java_executable()).resolve()
    javac = java.parent / "javac"
    if javac.exists():
        return str(javac)
    found = shutil.which("javac")
    if found:
        # `javac -version` prints 'javac 17.0.15' (or 'javac 1.8.0_392')
        said = subprocess.run([found, "-version"], capture_output=True, text=True, timeout=60)
        m = re.search(r"javac (?:1\.)?(\d+)", said.stdout + said.stderr)
        if m and int(m.group(1)) >= jars.MIN_JAVA:
            return found
    raise jars.JvmToolMissing(f"No 'javac' next to {java} (a JDK {jars.MIN_JAVA}+ is needed).\n{JDK_HINT}")


def build_root() -> Path:
    return jars.cache_dir() / "java-client-driver"


def driver_build(
    root: Path | None = None, source: str | None = None, progress: bool = False, kafka_version: str | None = None
) -> DriverBuild:
    """Compile the driver unless the cache holds it for this source, classpath and javac.

    ``kafka_version``: whose kafka-clients to compile and run against (default:
    :func:`jars.kafka_version`, so ``$COURSE_KAFKA_VERSION``); each version gets its own build
    since the key hashes the classpath. ``root`` and ``source`` exist for tests (a private cache,
    an edited source); missing Java, javac or Maven raise :class:`jars.JvmToolMissing` with what
    to install."""
    jars.check_jvm_tools()
    javac = javac_executable()
    classpath = jars.kafka_classpath(progress=progress, version=kafka_version)
    text = SOURCE.read_text() if source is None else source
    version = subprocess.run([javac, "-version"], capture_output=True, text=True, timeout=60)
    digest = hashlib.sha256("\0".join([text, classpath, version.stdout + version.stderr]).encode())
    key = digest.hexdigest()[:20]
    built: list[bool] = []

    def compile_into(folder: Path) -> None:
        src = folder / "src" / f"{MAIN_CLASS}.java"
        src.parent.mkdir()
        src.write_text(text)
        run = subprocess.run(
            [javac, "-nowarn", "-encoding", "UTF-8", "-cp", classpath, "-d", str(folder), str(src)],
            capture_output=True,
            text=True,
            timeout=300,
        )
        if run.returncode != 0:
            raise BuildFailed(f"javac could not compile the Java client's driver:\n{run.stdout}{run.stderr}")
        built.append(True)

    # the cache's lock and rename: a second process waits for the first build and reuses it
    classes = cache.prepared(key, compile_into, root=build_root() if root is None else root, what="the Java driver")
    return DriverBuild(classes, classpath, key, built_now=bool(built))
