"""A SparkSession that can read and write Kafka, sized for a laptop (or pointed at a cluster).

The pyspark wheel does not contain Spark's Kafka connector (``spark-sql-kafka-0-10``). We load
it, in order of preference, from:

1. the jars the Maven step cached (:func:`course_lib.clusters.jars.spark_connector_jars`, resolved
   at the installed pyspark's version) - passed as ``spark.jars``;
2. ``spark.jars.packages`` (Spark resolves the connector itself with Ivy) - only when there is
   no cache; offline, that fails and we raise one message saying what to do.

``spark.jars`` is a *static* configuration: it only takes effect in the first builder of the
process. A second ``get_spark()`` with other jars gets the existing session back, silently
without the connector - so we check for the connector and say so instead.

Taught in notebooks/10_pyspark_exactly_once_lab.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from pathlib import Path

from course_lib.spark.prerequisites import (  # re-exported: the lab and tests import them from here
    KAFKA_PROVIDER_CLASS,
    SparkUnavailable,
    check_connect_client,
    check_java,
    check_pyspark,
)
from course_lib.spark.remote import connect_session, learner_name, resolve_remote

SCALA_BINARY = "2.13"


@dataclass(frozen=True)
class SparkOptions:
    """Everything that shapes the session; the defaults suit a 2-core, few-GiB machine.

    ``master`` is ``local[*]`` by default; pass ``spark://host:7077`` (or ``yarn``, ``k8s://...``)
    to run the same lab on a cluster. ``driver_memory`` only applies when this process starts the
    JVM (it is another static setting).

    ``remote`` is a Spark Connect URL (``sc://host:15002``): the session is then a thin client of
    that server (no JVM here; ``master``, ``jars`` and ``driver_memory`` are the server's
    business). ``None`` reads ``$SPARK_REMOTE``; ``""`` forces a local session.
    ``session_id`` (a UUID) names the server-side session (Spark Connect only).
    """

    master: str = "local[*]"
    app_name: str = "kafka-delivery-course"
    driver_memory: str = "1g"
    shuffle_partitions: int = 2  # fixed per checkpoint once the query first runs
    ui: bool = False
    jars: tuple[str, ...] | None = None  # None = find them (Maven cache, then Ivy)
    extra_conf: dict[str, str] = field(default_factory=dict)
    remote: str | None = None
    session_id: str | None = None


def connector_coordinates(spark_version: str | None = None) -> str:
    """Maven coordinates of the connector matching the installed pyspark.

    >>> connector_coordinates("4.3.0")
    'org.apache.spark:spark-sql-kafka-0-10_2.13:4.3.0'
    """
    if spark_version is None:
        import pyspark

        spark_version = pyspark.__version__
    return f"org.apache.spark:spark-sql-kafka-0-10_{SCALA_BINARY}:{spark_version}"


def connector_versions(spark_version: str) -> list[str]:
    """Connector versions to try for a pyspark version: exact first, then the minor's ``.0``.

    Patch releases of one Spark minor line keep the data source API, and Maven Central sometimes
    lags PyPI by weeks, so ``x.y.0`` is a reasonable second choice; nothing further is guessed.

    >>> connector_versions("4.0.3")
    ['4.0.3', '4.0.0']
    >>> connector_versions("4.0.0")
    ['4.0.0']
    """
    parts = spark_version.split(".")
    fallback = ".".join(parts[:2] + ["0"]) if len(parts) >= 3 else spark_version
    return [spark_version] if fallback == spark_version else [spark_version, fallback]


def cached_connector_jars() -> list[str] | None:
    """Jars from the Maven step (``course_lib.clusters.jars``), or None when that step is missing.

    Any failure of the Maven step is kept in ``cached_connector_jars.last_error`` and explained
    in the one message raised if the Ivy fallback fails too - not two stack traces.
    """
    try:
        from course_lib.clusters.jars import spark_connector_jars  # built by the real-Kafka lab
    except ImportError:
        cached_connector_jars.last_error = "course_lib.clusters.jars is not available"
        return None
    explicit = os.environ.get("COURSE_SPARK_CONNECTOR_VERSION")
    versions = [explicit] if explicit else connector_versions(check_pyspark())
    errors = []
    for version in versions:
        try:
            jars = [str(p) for p in spark_connector_jars(spark_version=version)]
        except Exception as exc:  # Maven absent, offline, version not on Maven Central, ...
            errors.append(f"{version}: {type(exc).__name__}: {str(exc).splitlines()[0]}")
            continue
        if jars:
            return jars
    cached_connector_jars.last_error = "; ".join(errors) or "no jars"
    return None


cached_connector_jars.last_error = None


def _environment() -> None:
    # Bind everything to loopback and run Python workers with *this* interpreter (a notebook's
    # venv), otherwise executors may start a different python without pyspark.
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable


def has_kafka_connector(spark) -> bool:
    """True if the running session can load the Kafka data source."""
    try:
        loader = spark.sparkContext._jvm.org.apache.spark.util.Utils.getContextOrSparkClassLoader()
        spark.sparkContext._jvm.java.lang.Class.forName(KAFKA_PROVIDER_CLASS, False, loader)
        return True
    except Exception:
        return False


#: the driver JVM's JIT and GC: the lab's micro-batches are small, so C1 alone and one GC thread
#: cost a 2-core machine less CPU starting and idling than the JVM's defaults (bench/jvm_cpu.py)
DRIVER_JVM_OPTIONS = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"


def jvm_scratch_conf(path: Path) -> dict[str, str]:
    """The settings that keep a Spark driver JVM's temporary files (``spark-<uuid>``,
    ``blockmgr-<uuid>``, ``liblz4-java-*``) in ``path``: a JVM's own temporary folder is /tmp,
    whatever ``TMPDIR`` says, and a killed JVM leaves them there for good. (The driver's
    ``extraJavaOptions`` carry :data:`DRIVER_JVM_OPTIONS` too: it is one setting.)"""
    return {
        "spark.local.dir": str(path),
        "spark.driver.extraJavaOptions": f"{DRIVER_JVM_OPTIONS} -Djava.io.tmpdir={path}",
    }


def _session_scratch() -> dict[str, str]:
    """:func:`jvm_scratch_conf` of a new folder owned by this process (removed when it exits),
    after removing those of sessions whose process was killed (:mod:`course_lib.spark.scratch`)."""
    from course_lib.spark import scratch

    scratch.remove_abandoned()
    return jvm_scratch_conf(scratch.make_owned())


def get_spark(options: SparkOptions | None = None, **overrides):
    """Create (or return) the process's SparkSession with the Kafka connector loaded.

    ``overrides`` are :class:`SparkOptions` fields, e.g. ``get_spark(master="spark://h:7077")``, or
    ``get_spark(remote="sc://h:15002")`` for a Spark Connect session (also with ``$SPARK_REMOTE``).
    Raises :class:`SparkUnavailable` with one clear message when Java, pyspark or the connector
    cannot be had.
    """
    opts = options or SparkOptions()
    if overrides:
        opts = SparkOptions(**{**opts.__dict__, **overrides})
    url = resolve_remote(opts.remote)
    if url:
        return _remote_session(url, opts)
    # pyspark itself turns any builder into a Connect client while SPARK_REMOTE is set, and while
    # SPARK_CONNECT_MODE_ENABLED is: it sets that for a Connect session and unsets it only when the
    # session is stopped, so a process (or a job or kernel started from it) that once made one and
    # lost it would fail here with CONNECT_URL_NOT_SET.
    os.environ.pop("SPARK_REMOTE", None)
    os.environ.pop("SPARK_CONNECT_MODE_ENABLED", None)
    check_java()
    version = check_pyspark()
    _environment()
    from pyspark.sql import SparkSession

    if opts.jars is not None:
        missing = [j for j in opts.jars if not Path(j).exists()]
        if missing:
            raise SparkUnavailable(
                f"Connector jars are missing on disk: {missing[:3]}. Re-run the "
                "Maven step (course_lib.clusters.jars.spark_connector_jars())."
            )
    active = SparkSession.getActiveSession()
    if active is not None:
        if not has_kafka_connector(active):
            raise SparkUnavailable(
                "A SparkSession already runs in this process without the Kafka connector, and "
                "`spark.jars` only applies to the first session of a process. Restart the "
                "kernel, then call get_spark() before anything else creates a session."
            )
        return active

    builder = (
        SparkSession.builder.master(opts.master)
        .appName(opts.app_name)
        .config("spark.ui.enabled", str(opts.ui).lower())
        .config("spark.driver.memory", opts.driver_memory)
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.sql.shuffle.partitions", str(opts.shuffle_partitions))
        .config("spark.sql.session.timeZone", "UTC")
        # Laptop-sized: fewer default partitions, quiet progress bars in notebooks.
        .config("spark.default.parallelism", "2")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.streaming.stopGracefullyOnShutdown", "false")
    )
    scratch = {} if "spark.local.dir" in opts.extra_conf else _session_scratch()
    for key, value in {**scratch, **opts.extra_conf}.items():
        builder = builder.config(key, value)

    jars = list(opts.jars) if opts.jars is not None else cached_connector_jars()
    how = ""
    if jars:
        missing = [j for j in jars if not Path(j).exists()]
        if missing:
            raise SparkUnavailable(
                f"Connector jars are missing on disk: {missing[:3]}. Re-run the "
                "Maven step (course_lib.clusters.jars.spark_connector_jars())."
            )
        builder = builder.config("spark.jars", ",".join(jars))
        how = "spark.jars (Maven cache)"
    else:
        # No cache: let Spark resolve the connector itself (Ivy, Maven Central). Offline, this
        # fails fast with "unresolved dependency", which we turn into one message below.
        builder = builder.config("spark.jars.packages", connector_coordinates(version))
        how = "spark.jars.packages (Ivy)"
    try:
        spark = builder.getOrCreate()
    except Exception as exc:
        if how.startswith("spark.jars.packages"):
            why = cached_connector_jars.last_error or "course_lib.clusters.jars is not available"
            raise SparkUnavailable(
                "Spark's Kafka connector could not be found: there are no cached jars from the "
                f"Maven step ({why}) and Spark could not download "
                f"{connector_coordinates(version)} ({type(exc).__name__}). Run the Maven step "
                "once while online (course_lib.clusters.jars.spark_connector_jars()), or pass "
                "jars=[...] with the connector and its dependencies; then restart the "
                "kernel."
            ) from exc
        raise SparkUnavailable(
            f"Spark did not start (connector via {how}): {type(exc).__name__}: "
            f"{str(exc).strip().splitlines()[0] if str(exc).strip() else ''}. Check that Java 17+ "
            "runs (`java -version`) and that the connector matches pyspark "
            f"{version}; then restart the kernel."
        ) from exc
    spark.sparkContext.setLogLevel("ERROR")
    if not has_kafka_connector(spark):
        raise SparkUnavailable(
            f"Spark started but cannot load {KAFKA_PROVIDER_CLASS} (connector via {how}). "
            "Restart the kernel so the first session of the process gets the jars."
        )
    spark.conf.set("course.connector.source", how)  # shown in the notebook
    return spark


def _remote_session(url: str, opts: SparkOptions):
    check_pyspark()
    spark = connect_session(
        url,
        session_id=opts.session_id,
        user_id=learner_name(),
        # SQL confs are per session on a shared server: set ours in ours.
        session_conf={
            "spark.sql.shuffle.partitions": str(opts.shuffle_partitions),
            "spark.sql.session.timeZone": "UTC",
            **{k: v for k, v in opts.extra_conf.items() if k.startswith("spark.sql.")},
        },
    )
    spark.conf.set("course.connector.source", f"the Spark Connect server at {url}")
    return spark


def spark_unavailable_reason(remote: str | None = "") -> str | None:
    """Why the Spark lab cannot run here, or None if it may (without starting Spark).

    Cheap checks only (Java, pyspark; with a Spark Connect ``remote``: pyspark's client instead
    of Java); a missing connector is found when the session starts and raised as
    :class:`SparkUnavailable`, which tests turn into a skip with that reason.
    """
    try:
        check_pyspark()
        if remote:
            check_connect_client()
        else:
            check_java()
    except SparkUnavailable as exc:
        return str(exc)
    return None


def spark_lab_unavailable_reason(local_kafka: bool, remote: str | None = "") -> str | None:
    """Why notebooks/10 cannot run here, or None: Spark's checks plus, when the lab must start its
    own Kafka cluster, the Java and Maven the broker jars need (a learner pointing the lab at an
    existing cluster and a Spark Connect server needs neither).

    ``remote``: a Spark Connect URL, ``""`` for local Spark, None for ``$SPARK_REMOTE``; a
    malformed URL is the reason returned."""
    try:
        url = resolve_remote(remote)
    except SparkUnavailable as exc:
        return str(exc)
    problem = spark_unavailable_reason(url or "")
    if problem is None and local_kafka:
        from course_lib.clusters import jars

        try:
            jars.check_jvm_tools()
        except jars.JvmToolMissing as exc:
            problem = str(exc).splitlines()[0]
    return problem
