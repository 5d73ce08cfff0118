"""The SparkSession helper's errors say what is wrong and what to do (no JVM started)."""

import pytest

from course_lib.spark import session


def test_missing_jars_are_reported_before_spark_starts():
    pytest.importorskip("pyspark")
    if session.spark_unavailable_reason():
        pytest.skip(session.spark_unavailable_reason())
    with pytest.raises(session.SparkUnavailable, match="missing on disk"):
        session.get_spark(jars=("/nonexistent/spark-sql-kafka.jar",))


def test_no_java_gives_install_advice(monkeypatch, tmp_path):
    monkeypatch.setenv("JAVA_HOME", str(tmp_path))
    with pytest.raises(session.SparkUnavailable, match="Java 17"):
        session.check_java()


def test_connector_versions_fall_back_to_the_minor_line():
    assert session.connector_versions("4.0.3") == ["4.0.3", "4.0.0"]
    assert session.connector_coordinates("4.0.0").endswith("spark-sql-kafka-0-10_2.13:4.0.0")


def test_a_local_session_keeps_its_jvm_files_out_of_the_system_temporary_folder(spark):
    """Its spark-*/blockmgr-* folders go to a course folder removed at exit: a killed kernel
    leaves nothing in /tmp under Spark's names, and a concurrent lab run can count its own."""
    from pathlib import Path

    scratch = Path(spark.conf.get("spark.local.dir"))
    assert scratch.name.startswith("course-spark-session-"), scratch
    assert any(p.name.startswith("blockmgr-") for p in scratch.iterdir())
