"""Jar resolution: versions in sync with pom.xml, clear errors when Java or Maven is missing."""

import xml.etree.ElementTree as ET

import pytest

from course_lib.clusters import jars


def test_kafka_version_matches_pom():
    ns = {"m": "http://maven.apache.org/POM/4.0.0"}
    root = ET.parse(jars.POM).getroot()
    assert root.find("m:properties/m:kafka.version", ns).text == jars.KAFKA_VERSION


def test_missing_maven_says_what_to_install(monkeypatch):
    monkeypatch.setattr(jars.shutil, "which", lambda name: None)
    with pytest.raises(jars.JvmToolMissing, match="apt-get install openjdk-17-jdk-headless maven"):
        jars.maven_executable()


def test_old_java_is_refused(monkeypatch):
    monkeypatch.setattr(jars, "java_major_version", lambda java: 11)
    monkeypatch.setattr(jars.shutil, "which", lambda name: "/usr/bin/java")
    monkeypatch.delenv("JAVA_HOME", raising=False)
    with pytest.raises(jars.JvmToolMissing, match="Java 11.*17"):
        jars.java_executable()


def test_cache_dir_is_overridable(monkeypatch, tmp_path):
    monkeypatch.setenv("COURSE_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv(jars.KAFKA_VERSION_ENV, raising=False)
    assert jars.kafka_jar_dir() == tmp_path / "jars" / f"kafka-{jars.KAFKA_VERSION}"


def test_default_version_is_a_supported_one():
    assert jars.KAFKA_VERSION in jars.SUPPORTED_KAFKA_VERSIONS


@pytest.mark.parametrize("version", jars.SUPPORTED_KAFKA_VERSIONS)
def test_one_setting_picks_the_version_and_its_own_cache_entry(monkeypatch, tmp_path, version):
    """COURSE_KAFKA_VERSION moves the jars (so the cluster, the driver's build key, prepare) to
    that version's entry; Maven is asked for that version by a command-line property."""
    monkeypatch.setenv("COURSE_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv(jars.KAFKA_VERSION_ENV, version)
    monkeypatch.delenv("COURSE_CACHE_FROZEN", raising=False)  # a private cache, nothing downloaded
    asked = []
    monkeypatch.setattr(jars, "_maven_copy", lambda profile, folder, props, progress, what: asked.append(props))
    assert jars.kafka_version() == version
    assert jars.kafka_jar_dir() == tmp_path / "jars" / f"kafka-{version}"
    jars.kafka_classpath(progress=False)
    assert asked == [{"kafka.version": version}]
    assert (tmp_path / "jars" / f"kafka-{version}" / ".complete").is_file()


def test_an_unmeasured_version_is_refused_with_the_choices(monkeypatch):
    monkeypatch.setenv(jars.KAFKA_VERSION_ENV, "3.9.0")
    with pytest.raises(ValueError, match="4.3.1, 4.4.0"):
        jars.kafka_version()
    with pytest.raises(ValueError, match="not a Kafka version"):
        jars.kafka_classpath(version="5.0.0")


@pytest.mark.parametrize(
    "name,artifact",
    [
        ("scala-library-2.13.18.jar", "scala-library"),
        ("spark-sql-kafka-0-10_2.13-4.0.0.jar", "spark-sql-kafka-0-10_2.13"),
        ("kafka-clients-3.9.0.jar", "kafka-clients"),
        ("jsr305-3.0.0.jar", "jsr305"),
    ],
)
def test_artifact_name_strips_the_version(name, artifact):
    assert jars._artifact_name(name) == artifact


def test_spark_connector_jars_is_the_public_name():
    import inspect

    sig = inspect.signature(jars.spark_connector_jars)
    assert list(sig.parameters) == ["spark_version"]
