"""A shared-class archive counts only whole and checked; recording it can fail and lose nothing.

The JVM side (a real cluster leaving its classes to the next one) is in tests/real/test_lifecycle.py.
"""

import os
import stat
from pathlib import Path

import pytest

from course_lib.clusters.class_sharing import ClassSharing


def _tool(folder: Path, name: str, body: str) -> str:
    path = folder / name
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


@pytest.fixture
def jdk(tmp_path, monkeypatch):
    """A fake JDK: ``jcmd`` writes the file it is asked to dump into, and ``java`` starts from
    any archive (each can be made to fail)."""
    bin_dir = tmp_path / "jdk" / "bin"
    bin_dir.mkdir(parents=True)
    # jcmd PID VM.cds dynamic_dump FILE (each PID asked is written to jcmd-calls)
    _tool(
        bin_dir,
        "jcmd",
        'echo "$1" >> "$(dirname "$0")/jcmd-calls"; test -e "$(dirname "$0")/jcmd-fails" && exit 1; '
        'printf "classes" > "$4"',
    )
    java = _tool(bin_dir, "java", 'test -e "$(dirname "$0")/java-refuses" && exit 1; exit 0')
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    return java


def test_a_recorded_archive_is_shared_by_the_next_jvms(jdk, tmp_path):
    sharing = ClassSharing(jdk, "a.jar:b.jar", folder=tmp_path / "archives")
    assert sharing.options() == ["-XX:+RecordDynamicDumpInfo"]
    assert sharing.record(pid=1)
    again = ClassSharing(jdk, "a.jar:b.jar", folder=tmp_path / "archives")
    assert not again.recording
    assert again.options() == [f"-XX:SharedArchiveFile={again.archive}", "-Xshare:auto"]
    assert sorted(p.name for p in again.folder.iterdir()) == sorted([again.archive.name, again.size_file.name])


def test_another_classpath_or_java_has_an_archive_of_its_own(jdk, tmp_path):
    folder = tmp_path / "archives"
    assert ClassSharing(jdk, "a.jar", folder=folder).record(pid=1)
    assert ClassSharing(jdk, "a.jar:c.jar", folder=folder).recording
    other_java = _tool(tmp_path, "java", "exit 0")
    assert ClassSharing(other_java, "a.jar", folder=folder).recording


def test_an_archive_cut_short_is_recorded_again_not_mapped(jdk, tmp_path):
    # a JVM that maps a truncated archive dies of SIGBUS: it must never be handed one
    sharing = ClassSharing(jdk, "a.jar", folder=tmp_path / "archives")
    assert sharing.record(pid=1)
    sharing.archive.chmod(0o644)
    sharing.archive.write_bytes(sharing.archive.read_bytes()[:3])
    assert sharing.recording
    assert sharing.options() == ["-XX:+RecordDynamicDumpInfo"]


@pytest.mark.parametrize("failing", ["jcmd-fails", "java-refuses"])
def test_a_dump_that_fails_or_that_no_jvm_starts_from_leaves_nothing(jdk, tmp_path, failing):
    (Path(jdk).parent / failing).touch()
    sharing = ClassSharing(jdk, "a.jar", folder=tmp_path / "archives")
    assert not sharing.record(pid=1)
    assert sharing.recording
    assert list(sharing.folder.iterdir()) == []  # not even a partial file


def test_a_failed_recording_is_not_tried_again_by_the_same_process(jdk, tmp_path):
    (Path(jdk).parent / "jcmd-fails").touch()
    folder = tmp_path / "archives"
    assert not ClassSharing(jdk, "a.jar", folder=folder).record(pid=1)
    assert not ClassSharing(jdk, "a.jar", folder=folder).record(pid=2)  # the next cluster's stop
    assert (Path(jdk).parent / "jcmd-calls").read_text().split() == ["1"]
    (Path(jdk).parent / "jcmd-fails").unlink()
    assert ClassSharing(jdk, "b.jar", folder=folder).record(pid=3)  # another archive still records


def test_without_jcmd_nothing_is_recorded(tmp_path, monkeypatch):
    java = _tool(tmp_path, "java", "exit 0")
    monkeypatch.setenv("PATH", str(tmp_path / "nothing-here"))
    sharing = ClassSharing(java, "a.jar", folder=tmp_path / "archives")
    assert not sharing.record(pid=1)
    assert sharing.recording


def test_a_changed_jar_names_another_archive(jdk, tmp_path):
    jar = tmp_path / "a.jar"
    jar.write_bytes(b"classes")
    folder = tmp_path / "archives"
    assert ClassSharing(jdk, str(jar), folder=folder).record(pid=1)
    assert not ClassSharing(jdk, str(jar), folder=folder).recording
    jar.write_bytes(b"other classes")
    assert ClassSharing(jdk, str(jar), folder=folder).recording
