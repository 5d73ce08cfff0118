"""The driver is compiled once per source and classpath, into the cache, safely under a race;
without Java the Java client's tests skip and say what to install."""

import threading

import pytest

from course_lib.java_client import build
from course_lib.clusters import jars
from tests.conftest import missing_part
from tests.java_client import support


@pytest.fixture(scope="module")
def jdk():
    try:
        build.javac_executable()
        jars.check_jvm_tools()
    except jars.JvmToolMissing as exc:
        pytest.skip(f"needs Java: {str(exc).splitlines()[0]}")


def test_a_second_start_does_not_compile(jdk, driver):
    again = build.driver_build()  # the module's driver built (or found) it already
    assert not again.built_now
    assert (again.classes / "Driver.class").exists()
    assert driver.info["kafka_clients"] == jars.kafka_version()


def test_an_edited_source_is_compiled_anew_and_racing_builds_agree(jdk, tmp_path):
    edited = build.SOURCE.read_text() + "\n// edited\n"
    results: list = []
    racers = [
        threading.Thread(target=lambda: results.append(build.driver_build(root=tmp_path, source=edited)))
        for _ in range(2)
    ]
    for t in racers:
        t.start()
    for t in racers:
        t.join(timeout=300)
    assert len(results) == 2
    first, second = results
    assert first.classes == second.classes and first.key != build.driver_build().key
    assert [first.built_now, second.built_now].count(True) == 1  # the other waited for that build
    # only the finished directory (and its lock file) is left: the build's temporary folder is gone
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([first.key, f".{first.key}.lock"])
    assert not build.driver_build(root=tmp_path, source=edited).built_now


def test_without_java_the_tests_skip_and_say_what_to_install(tmp_path, monkeypatch):
    """A PATH with neither java nor mvn: starting a driver is a skip that says what to install
    (under CI=true, tests/conftest.py turns a skip naming Java into a failure)."""
    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(pytest.skip.Exception) as skipped:
        support.start_driver()
    reason = str(skipped.value)
    assert "needs Java: No 'java' found on PATH" in reason
    assert "openjdk-17-jdk-headless maven" in reason
    assert missing_part(reason) == "Java 17+ and Maven"
