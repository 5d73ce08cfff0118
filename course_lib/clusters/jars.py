"""The JVM jars of the real labs: the Apache Kafka broker and Spark's Kafka connector.

Nothing JVM-side is vendored. ``course_lib/real/pom.xml`` lists the artifacts; Maven resolves
them from Maven Central into a cache outside the repository (``COURSE_CACHE_DIR``, by default
``~/.cache/kafka-delivery-course``), once per version. Afterwards everything works offline.

**Which Kafka**: one setting switches the whole lab - the local cluster (``LocalCluster``), the
Java client's driver, the workshop cluster and ``python -m tools.prepare``::

    COURSE_KAFKA_VERSION=4.3.1 make test        # or export it before starting JupyterLab

The same setting picks the release the simulated and the wire clusters model
(``ClusterOptions.kafka_version``, :mod:`course_lib.broker.kafka_releases`), so a learner's
simulator, Java client and real brokers agree on one release.

:data:`SUPPORTED_KAFKA_VERSIONS` lists the values it takes (unset: :data:`KAFKA_VERSION`, the
default, which is also ``<kafka.version>`` in pom.xml); each version has its own cache entry,
``jars/kafka-<version>``, fetched by passing ``-Dkafka.version=<version>`` to Maven. The default
and the supported versions are written down once, in :mod:`course_lib.clusters.releases`
(re-exported here), which every cluster - the simulated one included - asks.

- :func:`kafka_classpath` - the classpath for ``kafka.Kafka``, ``kafka.tools.StorageTool`` and
  ``org.apache.kafka.tools.ProducerPerformance`` (broker, tools, an SLF4J backend);
- :func:`spark_connector_jars` - ``spark-sql-kafka-0-10`` for the installed pyspark, minus the
  jars pyspark already ships (two copies of scala-library on one classpath break in odd ways).

From a shell: ``python -m course_lib.real fetch`` (add ``--spark`` for the connector).

Taught in notebooks/09_real_kafka_lab (and used by notebooks/10_pyspark_exactly_once_lab).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from importlib.resources import files
from pathlib import Path

from course_lib import cache

# re-exported ("X as X"): the labs and the tests import the releases from here
from course_lib.clusters.releases import KAFKA_VERSION as KAFKA_VERSION
from course_lib.clusters.releases import KAFKA_VERSION_ENV as KAFKA_VERSION_ENV
from course_lib.clusters.releases import SUPPORTED_KAFKA_VERSIONS as SUPPORTED_KAFKA_VERSIONS
from course_lib.clusters.releases import check_kafka_version, kafka_version

MIN_JAVA = 17

#: shipped as package data next to this module, so a non-editable install can fetch the jars too
POM = Path(str(files("course_lib.real").joinpath("pom.xml")))

INSTALL_HINT = (
    "Install Java 17+ and Maven, for example on Debian/Ubuntu:\n"
    "    sudo apt-get install openjdk-17-jdk-headless maven\n"
    "or use the course's conda environment, which brings both:\n"
    "    conda env create -f environment.yml && conda activate kafka-delivery-course"
)


class JvmToolMissing(RuntimeError):
    """Java 17+ or Maven is not available: the real-Kafka and Spark labs cannot run."""


class FetchFailed(RuntimeError):
    """Maven could not resolve the jars (offline, a version missing on Maven Central, ...)."""


def cache_dir() -> Path:
    """Where jars, broker data and logs live: ``$COURSE_CACHE_DIR`` or ~/.cache/kafka-delivery-course."""
    return cache.cache_dir()


def java_executable() -> str:
    """Path of a ``java`` that is version 17 or newer, or :class:`JvmToolMissing`."""
    java_home = os.environ.get("JAVA_HOME")
    candidate = (Path(java_home) / "bin" / "java") if java_home else None
    java = str(candidate) if candidate and candidate.exists() else shutil.which("java")
    if not java:
        raise JvmToolMissing(f"No 'java' found on PATH (Java {MIN_JAVA}+ is needed).\n{INSTALL_HINT}")
    major = java_major_version(java)
    if major < MIN_JAVA:
        raise JvmToolMissing(f"{java} is Java {major}; Kafka 4 and Spark 4 need Java {MIN_JAVA}+.\n{INSTALL_HINT}")
    return java


def java_major_version(java: str) -> int:
    # `java -version` prints to stderr: 'openjdk version "17.0.15" ...' or '"1.8.0_392"'.
    out = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=60)
    m = re.search(r'version "(\d+)(?:\.(\d+))?', out.stderr + out.stdout)
    if not m:
        raise JvmToolMissing(f"Could not tell the version of {java}:\n{out.stderr}\n{INSTALL_HINT}")
    major, minor = int(m.group(1)), int(m.group(2) or 0)
    return minor if major == 1 else major


def maven_executable() -> str:
    mvn = shutil.which("mvn")
    if not mvn:
        raise JvmToolMissing(f"No 'mvn' (Maven) found on PATH; it downloads the Kafka jars.\n{INSTALL_HINT}")
    return mvn


def check_jvm_tools() -> None:
    """Raise :class:`JvmToolMissing` with install advice unless Java 17+ and Maven are present."""
    java_executable()
    maven_executable()


# ---- Kafka ------------------------------------------------------------------------------
def _kafka_entry(version: str) -> str:
    return f"jars/kafka-{version}"


def kafka_jar_dir(version: str | None = None) -> Path:
    """The cache entry of ``version``'s jars (default: :func:`kafka_version`)."""
    return cache_dir() / _kafka_entry(version or kafka_version())


def kafka_classpath(fetch: bool = True, progress: bool = True, version: str | None = None) -> str:
    """The classpath (``os.pathsep``-joined) of the Kafka broker and tools, fetched if missing.

    ``version``: one of :data:`SUPPORTED_KAFKA_VERSIONS` (default: :func:`kafka_version`).

    >>> cp = kafka_classpath()                       # doctest: +SKIP
    >>> f"kafka_2.13-{kafka_version()}.jar" in cp    # doctest: +SKIP
    True
    """
    version = check_kafka_version(version) if version else kafka_version()
    target = kafka_jar_dir(version)
    if not fetch and not cache.is_complete(target):
        raise FetchFailed(f"Kafka {version} jars are not in {target}. Run: python -m course_lib.real fetch")
    what = f"Kafka {version} jars"
    target = cache.prepared(
        _kafka_entry(version),
        lambda folder: _maven_copy("kafka", folder, {"kafka.version": version}, progress, what),
        what=what,
    )
    return os.pathsep.join(str(p) for p in sorted(target.glob("*.jar")))


# ---- Spark ------------------------------------------------------------------------------
def installed_pyspark_version() -> str | None:
    try:
        from importlib.metadata import PackageNotFoundError, version

        return version("pyspark")
    except PackageNotFoundError:
        return None


def spark_connector_jars(spark_version: str | None = None) -> list[Path]:
    """Jars of Spark's official Kafka connector for ``spark.jars``, fetched if missing.

    ``spark_version`` defaults to ``$COURSE_SPARK_CONNECTOR_VERSION`` if set, else the installed
    pyspark's version (the connector must match Spark exactly). Jars that pyspark already ships
    (scala-library, hadoop-client, slf4j, ...) are left out so the classpath holds one copy.
    """
    version = spark_version or os.environ.get("COURSE_SPARK_CONNECTOR_VERSION") or installed_pyspark_version()
    if not version:
        raise FetchFailed(
            "pyspark is not installed, so the connector version is unknown. "
            "Install it with: pip install -e '.[spark]' "
            "(or pass spark_version='4.0.0')."
        )
    what = f"spark-sql-kafka-0-10_2.13:{version} jars"
    try:
        target = cache.prepared(
            f"jars/spark-{version}",
            lambda folder: _maven_copy("spark", folder, {"spark.version": version}, True, what),
            what=what,
        )
    except FetchFailed as e:
        raise FetchFailed(
            f"{e}\nThe connector must match pyspark ({version}). If Maven Central has no "
            f"connector for it yet, install a pyspark whose connector exists (e.g. "
            f"pip install 'pyspark==4.0.0'), or set COURSE_SPARK_CONNECTOR_VERSION."
        ) from None
    jars = sorted(target.glob("*.jar"))
    shipped = _pyspark_shipped_artifacts()
    return [j for j in jars if _artifact_name(j.name) not in shipped]


def _pyspark_shipped_artifacts() -> set[str]:
    try:
        import pyspark
    except ImportError:
        return set()
    jar_dir = Path(pyspark.__file__).parent / "jars"
    return {_artifact_name(p.name) for p in jar_dir.glob("*.jar")}


def _artifact_name(jar_name: str) -> str:
    """'scala-library-2.13.18.jar' -> 'scala-library' (artifact id without version)."""
    m = re.match(r"^(.*?)-(\d+\.\d+[\w.\-]*)\.jar$", jar_name)
    return m.group(1) if m else jar_name.removesuffix(".jar")


# ---- Maven ------------------------------------------------------------------------------
def _maven_copy(profile: str, target: Path, props: dict[str, str], progress: bool, what: str) -> None:
    """Maven's copy-dependencies of the pom's ``profile`` into ``target`` (an empty folder of
    :func:`course_lib.cache.prepared`). ``$COURSE_MAVEN_REPO``: Maven's local repository instead
    of ~/.m2/repository (``.ci/run --fresh`` points it at an empty folder)."""
    check_jvm_tools()
    if not POM.exists():
        raise FetchFailed(f"{POM} is missing: reinstall the course package (pom.xml ships with course_lib.real).")
    repo = os.environ.get("COURSE_MAVEN_REPO")
    cmd = [
        maven_executable(),
        "-B",
        "-f",
        str(POM),
        f"-P{profile}",
        "dependency:copy-dependencies",
        f"-Dcourse.output.dir={target}",
        *([f"-Dmaven.repo.local={repo}"] if repo else []),
        *[f"-D{k}={v}" for k, v in props.items()],
    ]
    from tqdm.auto import tqdm

    log_lines: list[str] = []
    bar = tqdm(desc=f"Fetching {what}", unit=" files", disable=not progress)
    try:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=str(POM.parent))
        assert proc.stdout is not None
        for line in proc.stdout:  # Maven's transfer log: one "Downloaded from" per file
            log_lines.append(line.rstrip())
            if "Downloaded from" in line or "Copying" in line:
                bar.update(1)
        rc = proc.wait()
    finally:
        bar.close()
    if rc != 0:
        errors = [l for l in log_lines if "ERROR" in l][:6] or log_lines[-15:]
        raise FetchFailed(
            f"Maven could not fetch {what} (exit code {rc}). Is Maven Central reachable, and does "
            f"that version exist there?\n" + "\n".join(errors)
        )


def main_fetch(spark: bool = False, spark_version: str | None = None, version: str | None = None) -> int:
    """Entry point of ``python -m course_lib.real fetch [--kafka-version V] [--spark]``."""
    try:
        version = check_kafka_version(version) if version else kafka_version()
        cp = kafka_classpath(version=version)
        print(f"Kafka {version}: {len(cp.split(os.pathsep))} jars in {kafka_jar_dir(version)}")
        if spark:
            jars = spark_connector_jars(spark_version)
            print(f"Spark Kafka connector: {len(jars)} jars in {jars[0].parent if jars else '-'}")
    except (JvmToolMissing, FetchFailed) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    return 0


def jvm_missing() -> str | None:
    """Why a JVM cannot run here, for the real lab or the Java client (the first line of what is
    missing), or None."""
    try:
        check_jvm_tools()
    except JvmToolMissing as e:
        return str(e).splitlines()[0].rstrip(".")
    return None
