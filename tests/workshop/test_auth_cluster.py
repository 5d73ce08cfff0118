"""A cluster that authenticates but does not authorize: the workshop command refuses to
provision it (ACLs would be ignored), saying what to configure."""

import pytest

from course_lib.real.security import ClusterAuth

pytestmark = pytest.mark.real_kafka


def test_a_cluster_without_authorizer_is_refused_with_what_to_configure(tmp_path, monkeypatch, capsys):
    from course_lib.real.cluster import LocalCluster
    from course_lib.workshop.__main__ import main

    (tmp_path / "roster.txt").write_text("ann\n")
    no_authorizer = {"authorizer.class.name": "", "super.users": ""}
    with LocalCluster(
        brokers=1, progress=False, proxies=False, auth=ClusterAuth(admin_password="pw"), broker_config=no_authorizer
    ) as c:
        monkeypatch.setenv("KAFKA_INSTRUCTOR_PASSWORD", "pw")
        args = [str(tmp_path / "roster.txt"), "--bootstrap", c.bootstrap_servers, "--out", str(tmp_path / "env")]
        assert main(args) == 1
    err = capsys.readouterr().err
    assert "no authorizer" in err and "StandardAuthorizer" in err
    assert not (tmp_path / "env").exists()  # nothing written for a cluster that cannot isolate


def test_the_cluster_command_runs_until_sigterm_and_answers_broker_requests(tmp_path, capsys, cluster_command):
    """`python -m course_lib.workshop cluster` in its own process, as the instructor runs it."""
    import subprocess

    from course_lib.workshop.__main__ import main

    with cluster_command() as bootstrap:
        assert bootstrap.startswith("127.0.0.1:"), bootstrap
        assert (tmp_path / "cluster.json").exists()
        assert main(["broker", "status", "--cluster-dir", str(tmp_path)]) == 0
        assert "broker 1: running" in capsys.readouterr().out
    left = subprocess.run(["pgrep", "-f", str(tmp_path)], capture_output=True, text=True).stdout
    assert not left.strip(), f"broker JVMs survived the cluster command: {left}"
    assert main(["broker", "status", "--cluster-dir", str(tmp_path)]) == 2
