"""The check that ends every test run: no process the tests started outlives them
(tests/process_support.py), tried on runs of a test that leaves one behind and one that does not."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.process_support import WIND_DOWN

ROOT = Path(__file__).resolve().parents[1]

TEST = """
import subprocess, sys

def test_starts_a_process():
    # its own session, as a hub starts its proxy: it survives the test's process group
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"], start_new_session=True)
    with open({pid_file!r}, "w") as f:
        f.write(str(child.pid))
    {ending}
"""


def _checked_run(folder: Path) -> subprocess.CompletedProcess:
    """A pytest run of ``folder``'s tests with the check as its plugin (no xdist worker to wait
    for: the check's wait for processes ending on their own is short)."""
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "tests.process_support", "-p", "no:cacheprovider", "-q", str(folder)],
        cwd=ROOT,
        env={**os.environ, WIND_DOWN: "1"},
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.mark.parametrize("stops_it", [False, True], ids=["left-behind", "stopped"])
def test_a_process_left_behind_fails_the_run_and_is_stopped(tmp_path, stops_it):
    pid_file = tmp_path / "child.pid"
    ending = "child.kill(); child.wait()" if stops_it else "pass"
    (tmp_path / "test_leaves.py").write_text(TEST.format(pid_file=str(pid_file), ending=ending))
    run = _checked_run(tmp_path)
    child = int(pid_file.read_text())
    assert not Path(f"/proc/{child}/cmdline").exists() or Path(f"/proc/{child}/stat").read_text().split()[2] == "Z"
    if stops_it:
        assert run.returncode == 0, run.stdout + run.stderr
        assert "outlived" not in run.stdout
    else:
        assert run.returncode == 1, run.stdout + run.stderr
        assert "1 passed" in run.stdout  # the test passed; the run did not
        assert "1 processes started by the tests outlived them (now stopped)" in run.stdout
        assert f"{child}: {sys.executable} -c import time; time.sleep(600)" in run.stdout


def test_the_java_driver_a_test_shared_is_stopped_before_the_check(tmp_path):
    """The Java client's driver lives as long as the process that started it; in a run without
    xdist that is the one that checks, so the check stops it first instead of failing the run."""
    pytest.importorskip("course_lib.client_adapters.for_java")
    from course_lib.clusters import jars

    try:
        jars.check_jvm_tools()
    except jars.JvmToolMissing as exc:
        pytest.skip(f"needs Java: {exc}")
    (tmp_path / "test_java.py").write_text(
        "from course_lib.client_adapters.for_java import driver\n\n"
        "def test_starts_the_shared_driver():\n    assert driver().alive()\n"
    )
    run = _checked_run(tmp_path)
    assert run.returncode == 0 and "1 passed" in run.stdout, run.stdout + run.stderr
    assert "outlived" not in run.stdout
