"""Starting and stopping leaves nothing behind; bad starts fail with a message that says why."""

import os
import shutil
import signal
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from course_lib.real.cluster import LocalCluster, PortInUse, StaleDataDir

pytestmark = pytest.mark.real_kafka


def _ours(tag: str) -> list[str]:
    out = subprocess.run(["pgrep", "-f", tag], capture_output=True, text=True).stdout
    return out.split()


def _wait_gone(tag: str, timeout_s: float = 30) -> list[str]:
    deadline = time.monotonic() + timeout_s
    while (left := _ours(tag)) and time.monotonic() < deadline:
        time.sleep(0.2)
    return left


def test_stop_after_exception_leaves_no_jvm_and_no_proxy(tmp_path):
    c = LocalCluster(brokers=1, progress=False)
    with pytest.raises(RuntimeError, match="boom"):
        with c:
            assert _ours(c.tag), "the broker JVM should be running inside the with-block"
            proxy_port = c.nodes[1].proxy_port
            raise RuntimeError("boom")
    assert _wait_gone(c.tag) == []
    with pytest.raises(ConnectionRefusedError):  # nobody listens on the proxy's port any more
        socket.create_connection(("127.0.0.1", proxy_port), timeout=5).close()


def test_jvms_die_when_the_python_parent_is_killed(tmp_path):
    # What a Jupyter kernel restart does: the Python process vanishes without running atexit.
    script = textwrap.dedent("""
        import os, sys
        from course_lib.real.cluster import LocalCluster
        c = LocalCluster(brokers=1, progress=False).start()
        print(c.tag, flush=True)
        os.kill(os.getpid(), 9)
    """)
    env = {**os.environ, "PYTHONPATH": os.getcwd()}
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=180, env=env)
    assert proc.returncode == -signal.SIGKILL, proc.stderr[-2000:]
    tag = proc.stdout.strip().splitlines()[-1]
    assert tag.startswith("course-kafka-")
    assert _wait_gone(tag) == [], "a broker JVM outlived its killed Python parent"


def test_stale_data_dir_is_refused_with_advice(tmp_path):
    leftover = tmp_path / "data" / "broker-1"
    leftover.mkdir(parents=True)
    (leftover / "meta.properties").write_text("cluster.id=someone-else\n")
    c = LocalCluster(brokers=1, data_dir=tmp_path, progress=False)
    with pytest.raises(StaleDataDir, match="wipe=True"):
        c.start()
    assert not _ours(c.tag)
    assert (leftover / "meta.properties").exists(), "nothing may be deleted without wipe=True"


def test_port_in_use_is_refused_with_advice():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        busy = s.getsockname()[1]
        c = LocalCluster(brokers=1, base_port=busy, progress=False)
        with pytest.raises(PortInUse, match=str(busy)):
            c.start()
        assert not _ours(c.tag)


def test_a_free_port_taken_before_the_broker_binds_it_is_replaced(monkeypatch):
    """The race a busy suite hit: a port chosen free, then taken by someone else before the broker
    bound it. The cluster starts again on new ports instead of failing the caller."""
    from course_lib.real import processes

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))  # bound, not listening: as an outgoing connection holds its port
        taken = s.getsockname()[1]
        handed_out = iter([taken])
        real = processes.free_port
        monkeypatch.setattr(processes, "free_port", lambda: next(handed_out, None) or real())
        with LocalCluster(brokers=1, proxies=False, progress=False) as c:
            assert c.nodes[1].client_port != taken
            assert taken not in (c.nodes[1].replication_port, c.nodes[1].controller_port)
        assert next(handed_out, None) is None, "the taken port was never handed to the cluster"
    assert _wait_gone(c.tag) == []


def test_free_ports_are_not_the_ones_outgoing_connections_get():
    from course_lib.real.processes import _ephemeral_range, free_port

    low, _ = _ephemeral_range()
    assert all(free_port() < low for _ in range(50))


def test_ctrl_c_during_start_leaves_no_jvm(monkeypatch):
    # Ctrl-C (KeyboardInterrupt) while waiting for the brokers: start() must clean up itself.
    c = LocalCluster(brokers=1, progress=False)

    def interrupted(timeout_s):
        assert _ours(c.tag), "the broker JVM should have been launched"
        raise KeyboardInterrupt

    monkeypatch.setattr(c, "_wait_ready", interrupted)
    with pytest.raises(KeyboardInterrupt):
        c.start()
    assert _wait_gone(c.tag) == []
    assert not c.started


def test_a_cluster_leaves_its_classes_to_the_next_one(tmp_path, monkeypatch):
    # bench/jvm_cpu.py measures what it saves; here: the archive is written, then mapped
    from course_lib.clusters import class_sharing

    if shutil.which("jcmd") is None:
        pytest.skip("no jcmd (a JRE, not a JDK): the lab records no class archive then")
    monkeypatch.setattr(class_sharing, "archive_folder", lambda: tmp_path / "archives")
    first = LocalCluster(brokers=1, proxies=False, progress=False).start()
    try:
        command = Path(f"/proc/{first.nodes[1].pid}/cmdline").read_bytes().split(b"\0")
        assert b"-XX:+RecordDynamicDumpInfo" in command
    finally:
        first.stop()
    archives = sorted((tmp_path / "archives").glob("*.jsa"))
    assert len(archives) == 1, f"the first cluster left no class archive: {sorted((tmp_path / 'archives').iterdir())}"
    with LocalCluster(brokers=1, proxies=False, progress=False) as second:
        mapped = Path(f"/proc/{second.nodes[1].pid}/maps").read_text()
        assert str(archives[0]) in mapped, "the next broker did not map the archive"
