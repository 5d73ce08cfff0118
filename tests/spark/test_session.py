"""The SparkSession helper's errors say what is wrong and what to do (no JVM started)."""

from pathlib import Path

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


def test_a_killed_session_s_scratch_is_removed_and_a_live_one_kept(tmp_path, monkeypatch):
    """The folder of a process SIGKILLed with its session (as nbval ends a kernel) is abandoned;
    the next session removes it, never the folder of a process still running."""
    import subprocess
    import sys

    from course_lib.spark import scratch

    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr("tempfile.tempdir", None)  # re-read TMPDIR, here and in the children
    code = "from course_lib.spark import scratch\nprint(scratch.make_owned(), flush=True)\n"
    killed = subprocess.run(
        [sys.executable, "-c", code + "import os, signal; os.kill(os.getpid(), signal.SIGKILL)"],
        capture_output=True,
        text=True,
    )
    assert killed.returncode == -9, killed.stderr
    dead = Path(killed.stdout.strip())
    live = subprocess.Popen(
        [sys.executable, "-c", code + "import sys; sys.stdin.read()"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        alive = Path(live.stdout.readline().strip())
        assert dead.parent == alive.parent == tmp_path and dead.is_dir() and alive.is_dir()
        assert scratch.remove_abandoned() == [dead]
        assert not dead.exists() and alive.is_dir()
    finally:
        live.communicate("")
    assert live.returncode == 0 and not alive.exists(), "an owner that exits removes its own folder"
