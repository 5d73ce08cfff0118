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
