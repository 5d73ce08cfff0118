"""The course cache (course_lib/cache.py): every entry made once, atomically, by one process at a
time; what a killed process left is redone; a frozen cache names what is missing."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from course_lib import cache

ROOT = Path(__file__).resolve().parents[1]

# A stand-in download, run in a process of its own: it logs that it started, then fills the entry
# only once the test says "go" (a file), so the test decides when it finishes - no sleeps.
FETCHER = textwrap.dedent(
    """
    import os, sys, time
    from pathlib import Path
    from course_lib import cache

    work = Path(sys.argv[1])

    def download(folder):
        with open(work / "downloads.log", "a") as log:
            log.write(f"{os.getpid()}\\n")
        (folder / "part-1.jar").write_text("first half")
        (work / f"started-{os.getpid()}").touch()
        deadline = time.monotonic() + 120
        while not (work / "go").exists():
            if time.monotonic() > deadline:
                raise SystemExit("the test never said go")
            time.sleep(0.02)
        (folder / "part-2.jar").write_text("second half")

    (work / f"asking-{os.getpid()}").touch()
    entry = cache.prepared("jars/stand-in-1.0", download, root=work / "cache")
    print(sorted(p.name for p in entry.iterdir()))
    """
)


def _fetch(work: Path) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-c", FETCHER, str(work)], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def _wait_for(path: Path, proc: subprocess.Popen, timeout_s: float = 60) -> None:
    deadline = time.monotonic() + timeout_s
    while not path.exists():
        if proc.poll() is not None:
            pytest.fail(f"the fetcher exited ({proc.returncode}) before {path.name}: {proc.stderr.read()}")
        assert time.monotonic() < deadline, f"{path.name} never appeared"
        time.sleep(0.02)


def test_two_processes_fetching_into_an_empty_cache_download_once_and_both_get_it_whole(tmp_path):
    first = _fetch(tmp_path)
    _wait_for(tmp_path / f"started-{first.pid}", first)  # the first holds the lock, half-way
    second = _fetch(tmp_path)
    _wait_for(tmp_path / f"asking-{second.pid}", second)
    # half-way, nobody sees the entry: it is filled in a temporary folder beside it
    assert not (tmp_path / "cache" / "jars" / "stand-in-1.0").exists()
    (tmp_path / "go").touch()
    outputs = [p.communicate(timeout=120) for p in (first, second)]
    assert [p.returncode for p in (first, second)] == [0, 0], outputs
    whole = "['.complete', 'part-1.jar', 'part-2.jar']"
    assert [out.strip() for out, _ in outputs] == [whole, whole]
    assert (tmp_path / "downloads.log").read_text().split() == [str(first.pid)]  # one download
    assert [p.name for p in (tmp_path / "cache" / "jars").iterdir() if "partial" in p.name] == []


def test_a_fetch_killed_half_way_is_redone_by_the_next_call(tmp_path):
    doomed = _fetch(tmp_path)
    _wait_for(tmp_path / f"started-{doomed.pid}", doomed)
    doomed.send_signal(signal.SIGKILL)
    doomed.communicate(timeout=30)
    jars = tmp_path / "cache" / "jars"
    assert [p.name for p in jars.iterdir() if "partial" in p.name], "the killed fetch left its half-made folder"

    def download(folder: Path) -> None:
        (folder / "whole.jar").write_text("all of it")

    entry = cache.prepared("jars/stand-in-1.0", download, root=tmp_path / "cache")  # the dead one's lock is free
    assert sorted(p.name for p in entry.iterdir()) == [".complete", "whole.jar"]  # nothing of the half
    assert [p.name for p in jars.iterdir() if "partial" in p.name] == []


def test_a_folder_without_its_stamp_is_not_trusted(tmp_path):
    half = tmp_path / "npm-reveal"  # as an earlier course version, or an interrupted copy, left it
    (half / "node_modules" / "requirejs").mkdir(parents=True)
    made = cache.prepared("npm-reveal", lambda f: (f / "node_modules" / "reveal.js").mkdir(parents=True), root=tmp_path)
    assert sorted(p.name for p in (made / "node_modules").iterdir()) == ["reveal.js"]


def test_a_failed_download_leaves_the_cache_as_it_was_and_is_tried_again(tmp_path):
    def fails(folder: Path) -> None:
        (folder / "partial.jar").write_text("x")
        raise ConnectionError("Maven Central unreachable")

    with pytest.raises(ConnectionError):
        cache.prepared("jars/x", fails, root=tmp_path)
    assert [p.name for p in (tmp_path / "jars").iterdir()] == [".x.lock"]
    entry = cache.prepared("jars/x", lambda f: (f / "x.jar").write_text("ok"), root=tmp_path)
    assert (entry / "x.jar").read_text() == "ok"


def test_a_frozen_cache_names_what_is_missing_instead_of_downloading(tmp_path, monkeypatch):
    monkeypatch.setenv("COURSE_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("COURSE_CACHE_FROZEN", "1")
    called = []
    with pytest.raises(
        cache.CacheMissing, match=r"Kafka 9\.9 jars is not in the course cache.*python -m tools\.prepare"
    ):
        cache.prepared("jars/kafka-9.9", called.append, what="Kafka 9.9 jars")
    assert called == []
    # what is built from local inputs only is made all the same
    assert cache.prepared("bytecode-x", lambda f: None, frozen_ok=True) == tmp_path / "bytecode-x"


def test_npm_packages_are_installed_by_one_npm_install(tmp_path, monkeypatch):
    """npm prunes what an earlier install into the same prefix put there: every package of an
    entry must come from one call."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    calls = tmp_path / "npm-calls"
    fake = bin_dir / "npm"
    fake.write_text(
        f'#!/bin/sh\necho "$@" >> {calls}\nwhile [ "$1" != "--prefix" ]; do shift; done; mkdir -p "$2/node_modules"\n'
    )
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    modules = cache.npm_packages("npm-two", "reveal.js@4.6.0", "requirejs@2.3.8", root=tmp_path / "cache")
    assert modules == tmp_path / "cache" / "npm-two" / "node_modules"
    (call,) = calls.read_text().splitlines()
    assert call.endswith("reveal.js@4.6.0 requirejs@2.3.8")


def test_every_npm_download_is_an_entry_that_tools_prepare_makes():
    """CI freezes the cache after ``python -m tools.prepare``: a module that installs npm packages
    and is not among its entries fails there (the demo pages' widget manager once did)."""
    prepare = (ROOT / "tools" / "prepare.py").read_text()
    users = [
        path.relative_to(ROOT).with_suffix("").as_posix().replace("/", ".")
        for path in [*ROOT.glob("course_lib/**/*.py"), *ROOT.glob("tools/*.py")]
        if "npm_packages(" in path.read_text() and path.name != "cache.py"
    ]
    assert "tools.demo_page" in users
    assert [u for u in users if f"from {u} import" not in prepare] == []
