"""Fixtures of the Spark lab tests: skip (with the reason) when Java, pyspark, the connector jars
or the Kafka jars are missing; one Kafka cluster and one kill/restart experiment per session,
shared by the tests that check its outcome (a Spark job start costs 6-12 s on 2 cores)."""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

import shutil

import pytest


def _spark_skip_reason() -> str | None:
    from course_lib.spark.session import cached_connector_jars, spark_unavailable_reason

    reason = spark_unavailable_reason()
    if reason:
        return reason
    if cached_connector_jars() is None:
        return f"Spark's Kafka connector jars are not available from the Maven step: {cached_connector_jars.last_error}"
    return None


@pytest.fixture(scope="session")
def spark_ready():
    reason = _spark_skip_reason()
    if reason:
        pytest.skip(f"Spark lab unavailable: {reason}")
    return True


@pytest.fixture(scope="session")
def spark(spark_ready):
    from course_lib.spark.session import SparkUnavailable, get_spark

    try:
        session = get_spark(master="local[2]")
    except SparkUnavailable as exc:
        pytest.skip(f"Spark lab unavailable: {exc}")
    scratch = session.conf.get("spark.local.dir")
    yield session
    # Stopped here, not at the worker's exit: an xdist worker may end without running atexit
    # hooks, which left the session's folder (course-spark-session-*) in /tmp after a passing run.
    session.stop()
    shutil.rmtree(scratch, ignore_errors=True)


@pytest.fixture(scope="session")
def kafka_cluster(spark_ready):
    try:
        from course_lib.real.cluster import LocalCluster
        from course_lib.clusters.jars import FetchFailed, JvmToolMissing
    except ImportError as exc:
        pytest.skip(f"no local Kafka cluster support (course_lib.real): {exc}")
    cluster = LocalCluster(proxies=False, progress=False)
    try:
        cluster.start()
    except (JvmToolMissing, FetchFailed) as exc:
        pytest.skip(f"cannot start a local Kafka cluster: {exc}")
    yield cluster
    cluster.stop()


#: the names a Spark driver JVM gives its temporary files (Utils.createTempDir, DiskBlockManager,
#: lz4-java's native library): not a folder of ours that only starts with "spark-"
SPARK_TEMP_NAME = re.compile(r"(spark|blockmgr)-[0-9a-f]{8}(-[0-9a-f]{4}){3}-[0-9a-f]{12}|liblz4-java-\d+\.so(\.lck)?")


def jvm_temp_files() -> set[str]:
    """What a Spark driver JVM leaves in the system temporary directory when it is SIGKILLed."""
    return {p.name for p in Path(tempfile.gettempdir()).iterdir() if SPARK_TEMP_NAME.fullmatch(p.name)}


@pytest.fixture(scope="session")
def experiment_and_leftovers(kafka_cluster, tmp_path_factory):
    """Three window kills (one per sink), one seeded random kill with a broker SIGKILLed in the
    same run, then the final run; and what the run left in the system temporary directory."""
    from course_lib.experiments.shared_results import once_per_test_run
    from course_lib.spark.harness import ExperimentOptions, run_experiment, shared_key

    # notebook 10's defaults (N_ORDERS, KILLS, SEED, KILL_A_BROKER): nbval runs the notebook later
    # in the same test run, and it reads this experiment back instead of running it again
    opts = ExperimentOptions(n_orders=600, kills=4, seed=7, broker_kill_run=3, remote="")
    before = jvm_temp_files()
    result = once_per_test_run(
        shared_key(opts),
        lambda: run_experiment(
            kafka_cluster.bootstrap_servers,
            tmp_path_factory.mktemp("spark-lab"),
            opts,
            cluster=kafka_cluster,
            progress=False,
        ),
    )
    left = sorted(jvm_temp_files() - before)
    print(f"\nexperiment seed={opts.seed}:")
    result.print_table()
    for e in result.timeline:
        print("  ", e)
    return result, left


@pytest.fixture(scope="session")
def experiment(experiment_and_leftovers):
    """The experiment every outcome test reads (:func:`experiment_and_leftovers`)."""
    return experiment_and_leftovers[0]


@pytest.fixture(scope="session")
def jvm_files_left(experiment_and_leftovers):
    """The ``spark-*``, ``blockmgr-*`` and ``liblz4-java-*`` entries the experiment's killed jobs
    left in the system temporary directory."""
    return experiment_and_leftovers[1]
