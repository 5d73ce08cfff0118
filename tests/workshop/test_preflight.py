"""The learners' preflight (course_lib/workshop/preflight.py, workshop/preflight.ipynb).

Unit tests need nothing; the notebook tests run it against an authenticated LocalCluster with
learners provisioned by the instructor's command: all green with the learner's connection file,
the login line red (and the notebook still finished) with a wrong password.
"""

from __future__ import annotations

import socket
from pathlib import Path

import nbformat
import pytest

from course_lib.workshop import preflight as pf

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK = ROOT / "workshop" / "preflight.ipynb"
KAFKA_VARS = ("KAFKA_BOOTSTRAP_SERVERS", "COURSE_CONNECTION_FILE", "KAFKA_SASL_USERNAME", "KAFKA_SASL_PASSWORD")


@pytest.fixture
def no_workshop_env(monkeypatch):
    for var in (*KAFKA_VARS, "SPARK_REMOTE", "COURSE_LEARNER_PREFIX"):
        monkeypatch.delenv(var, raising=False)


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # nothing listens once the socket is closed


# ---- unit ---------------------------------------------------------------------------------------
def test_a_line_says_status_name_detail_and_fix():
    line = pf.CheckResult("cluster login", pf.FAIL, "refused", "check your password").line()
    assert line == "FAIL cluster login: refused -> check your password"
    with pytest.raises(ValueError, match="ok/fail/skip"):
        pf.CheckResult("x", "green", "")


def test_report_is_green_unless_a_line_fails():
    report = pf.Report([pf.CheckResult("a", pf.OK, "fine"), pf.CheckResult("b", pf.SKIP, "not here")])
    assert report.all_green and "All set" in report.summary()
    report.results.append(pf.CheckResult("c", pf.FAIL, "broken", "do this"))
    assert not report.all_green
    assert "1 line(s) red: c" in str(report)
    html = report._repr_html_()
    assert "#cf222e" in html and "What to do:</b> do this" in html
    with pytest.raises(KeyError, match="no check named 'd'"):
        report.by_name("d")


def test_without_a_cluster_the_kafka_lines_are_skipped_and_the_rest_runs(no_workshop_env):
    seen = []
    report = pf.run_checks(on_result=lambda r: seen.append(len(r.results)))
    assert [r.name for r in report.results] == [
        "widgets",
        "simulator",
        "cluster login",
        "your prefix",
        "another's prefix",
        "transactions",
        "Spark Connect",
    ]
    assert seen == list(range(1, 8))  # the notebook redraws after every line
    assert report.by_name("simulator").status == pf.OK
    assert report.by_name("cluster login").status == pf.SKIP
    assert "tell your instructor" in report.by_name("cluster login").fix
    assert report.by_name("Spark Connect").detail == "skipped: no Spark Connect configured (SPARK_REMOTE is not set)"
    assert report.all_green


def test_a_broken_connection_file_is_a_red_login_line(no_workshop_env, tmp_path):
    bad = tmp_path / "ann.env"
    bad.write_text("KAFKA_BOOTSTRAP_SERVERS 127.0.0.1:9092\n")  # no '='
    report = pf.run_checks(env_file=str(bad))
    login = report.by_name("cluster login")
    assert login.status == pf.FAIL and "expected KEY=value" in login.fix
    assert {report.by_name(n).status for n in ("your prefix", "another's prefix", "transactions")} == {pf.SKIP}


def test_a_cluster_nobody_answers_at_is_red_with_the_address(no_workshop_env, monkeypatch):
    where = f"127.0.0.1:{_closed_port()}"
    monkeypatch.setenv("KAFKA_BOOTSTRAP_SERVERS", where)
    monkeypatch.setattr(pf, "CLIENT_TIMEOUT_MS", 3000)
    login = pf.run_checks().by_name("cluster login")
    assert login.status == pf.FAIL
    assert f"no broker answered at {where}" in login.fix


def test_kafka_errors_are_explained_in_the_learners_words():
    from kafka import errors as kerr

    wrapped = ConnectionError("login failed")
    wrapped.__cause__ = kerr.SaslAuthenticationFailedError("bad")
    assert "user name or password is wrong" in pf.explain_kafka_error(wrapped, "h:1", "ann")
    assert "ACLs are missing" in pf.explain_kafka_error(kerr.TopicAuthorizationFailedError("ann.x"), "h:1", "ann")
    nobody = f"127.0.0.1:{_closed_port()}"
    assert f"no broker answered at {nobody}" in pf.explain_kafka_error(kerr.KafkaTimeoutError(), nobody, "ann")
    with socket.socket() as listening:  # something answers: then it is the login that failed
        listening.bind(("127.0.0.1", 0))
        listening.listen()
        where = "127.0.0.1:%d" % listening.getsockname()[1]
        assert "did not accept the login of 'ann'" in pf.explain_kafka_error(kerr.KafkaTimeoutError(), where, "ann")
    assert pf.explain_kafka_error(RuntimeError("odd"), "h:1", "ann").startswith("RuntimeError: odd.")


def test_isolation_cannot_be_checked_without_a_login():
    class NoLogin:
        def client_config(self):
            return {"bootstrap_servers": "h:9092", "security_protocol": "PLAINTEXT"}

    result = pf.check_foreign_prefix(NoLogin())
    assert result.status == pf.SKIP and "nothing keeps learners apart" in result.detail


def test_spark_connect_line(monkeypatch):
    assert pf.check_spark({}).status == pf.SKIP
    url = f"sc://127.0.0.1:{_closed_port()}"
    result = pf.check_spark({"SPARK_REMOTE": url})
    assert result.status == pf.FAIL and url in result.detail and result.fix


@pytest.mark.spark
def test_spark_connect_line_is_green_against_a_server(tmp_path):
    """Against a Spark Connect server started from the installed pyspark (course_lib.spark)."""
    server_module = pytest.importorskip("course_lib.spark.connect_server", reason="no Spark Connect server helper")
    server = server_module.SparkConnectServer(log_path=tmp_path / "server.log")
    server.start()
    try:
        result = pf.check_spark({"SPARK_REMOTE": server.url})
    finally:
        server.stop()
    assert result.status == pf.OK, result.line()
    assert "Kafka connector present" in result.detail


def test_widget_probe_falls_back_to_the_red_line():
    bundle = pf.widget_probe()._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle
    assert bundle["text/plain"].startswith("FAIL widgets render")


def test_command_line_exit_status(no_workshop_env, capsys):
    assert pf.main([]) == 0
    out = capsys.readouterr().out
    assert "OK   simulator" in out
    # a terminal has no widget line "above this table": its text names the notebook to open instead
    assert "above this table" not in out and "workshop/preflight.ipynb" in out, out
    assert (ROOT / "workshop" / "preflight.ipynb").exists()


def test_the_notebook_s_widget_line_is_where_the_notebook_run_says_it_is(no_workshop_env):
    detail = pf.run_checks().by_name("widgets").detail
    assert "'widgets render' line above this table" in detail
    nb = nbformat.read(NOTEBOOK, as_version=4)
    cells = [c.source for c in nb.cells if c.cell_type == "code"]
    probe = next(i for i, c in enumerate(cells) if "widget_probe()" in c)
    table = next(i for i, c in enumerate(cells) if "report = preflight(" in c)
    assert probe < table  # the probe's line is drawn above the table


# ---- the notebook against an authenticated cluster ------------------------------------------------
def _run_notebook(env_file: Path, monkeypatch) -> tuple[nbformat.NotebookNode, list[str]]:
    """Execute the preflight notebook as a learner whose kernel has ``env_file``; its text lines."""
    from tools.notebook_client import NotebookClient  # no stall on a lost ZMQ wake-up

    for var in (*KAFKA_VARS, "SPARK_REMOTE", "COURSE_LEARNER_PREFIX"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("COURSE_CONNECTION_FILE", str(env_file))  # as the hub injects it
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    nb = nbformat.read(NOTEBOOK, as_version=4)
    NotebookClient(
        nb, timeout=180, kernel_name="python3", resources={"metadata": {"path": str(NOTEBOOK.parent)}}
    ).execute()
    texts = [
        out.get("data", {}).get("text/plain", "")
        for cell in nb.cells
        if cell.cell_type == "code"
        for out in cell.outputs
    ]
    return nb, "\n".join(texts).splitlines()


@pytest.fixture(scope="module")
def workshop(tmp_path_factory):
    """An authenticated 1-broker cluster, learners ann and bob provisioned by the instructor's command."""
    from tests.real.helpers import provisioned_cluster

    with provisioned_cluster(tmp_path_factory.mktemp("connections"), ["ann", "bob"]) as out:
        yield out


@pytest.mark.real_kafka
def test_preflight_notebook_is_all_green_for_a_provisioned_learner(workshop, monkeypatch):
    _, lines = _run_notebook(workshop / "ann.env", monkeypatch)
    status = {line.split(":")[0][5:]: line[:4] for line in lines if line[:4] in ("OK  ", "FAIL", "SKIP")}
    assert status == {
        "widgets render": "FAIL",  # the widget's text fallback: a browser shows the widget instead
        "widgets": "OK  ",
        "simulator": "OK  ",
        "cluster login": "OK  ",
        "your prefix": "OK  ",
        "another's prefix": "OK  ",
        "transactions": "OK  ",
        "Spark Connect": "SKIP",
    }, "\n".join(lines)
    assert any("as 'ann'" in line for line in lines)
    assert "All set: nothing is red. You can start lesson 00." in lines


@pytest.mark.real_kafka
def test_preflight_notebook_with_a_wrong_password_says_what_to_do_and_finishes(workshop, tmp_path, monkeypatch):
    wrong = tmp_path / "ann.env"
    wrong.write_text(
        "".join(
            "KAFKA_SASL_PASSWORD=not-the-password\n" if line.startswith("KAFKA_SASL_PASSWORD=") else line + "\n"
            for line in (workshop / "ann.env").read_text().splitlines()
        )
    )
    nb, lines = _run_notebook(wrong, monkeypatch)
    login = next(line for line in lines if line.startswith("FAIL cluster login"))
    assert "did not accept the login of 'ann'" in login and "password" in login and "connection file" in login, login
    assert all(
        any(line.startswith(f"SKIP {name}: skipped: the cluster login line") for line in lines)
        for name in ("your prefix", "another's prefix", "transactions")
    ), "\n".join(lines)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert all(c.execution_count for c in code), "every cell ran"
    assert not [o for c in code for o in c.outputs if o.output_type == "error"]
