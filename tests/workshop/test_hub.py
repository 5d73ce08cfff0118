"""The hub kit (workshop/): its configuration files, and a real JupyterHub with two learners in Chromium.

The kit tests parse and load every configuration file and exercise the shared hub settings
(workshop/hub/course_hub.py). The browser test starts the kit's local hub (DummyAuthenticator with the shared password, SimpleLocalProcessSpawner)
on free 127.0.0.1 ports with two learners' connection files, logs ann and bob in from two browser
contexts (two people), opens lesson 00 for each and checks that each server got its own learner's
Kafka settings. Everything started is stopped afterwards. Skipped, with the reason, when
jupyterhub (``pip install -e '.[hub]'``), configurable-http-proxy (npm), chromium or playwright is
missing.
"""

from __future__ import annotations

import ast
import doctest
import importlib.util
import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from tests.browser_support import CHROMIUM, CHROMIUM_ARGS, free_port
from tests.process_support import processes_with, stop

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "artifacts"
BIN = Path(sys.executable).parent
PASSWORD = "workshop-day"
LEARNERS = ("ann", "bob")
TIMEOUT_MS = 120_000


KIT = ROOT / "workshop"


def _course_hub():
    spec = importlib.util.spec_from_file_location("course_hub", KIT / "hub" / "course_hub.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# ---- the kit's files ----------------------------------------------------------------------------
def test_every_yaml_and_python_file_of_the_kit_parses():
    yaml = pytest.importorskip("yaml")
    files = sorted(KIT.rglob("*.yaml")) + sorted(KIT.rglob("*.py"))
    assert {f.name for f in files} >= {"values.yaml", "config.yaml", "jupyterhub_config.py", "course_hub.py"}
    for f in files:
        if f.suffix == ".yaml":
            assert isinstance(yaml.safe_load(f.read_text()), dict), f
        else:
            ast.parse(f.read_text(), str(f))
    subprocess.run(["bash", "-n", str(KIT / "tljh" / "install.sh")], check=True)


def test_zero_to_jupyterhub_values():
    yaml = pytest.importorskip("yaml")
    values = yaml.safe_load((KIT / "z2jh" / "values.yaml").read_text())
    single = values["singleuser"]
    assert single["memory"] == {"guarantee": "1G", "limit": "2G"}  # ~1 GB per learner
    assert single["cpu"]["guarantee"] <= single["cpu"]["limit"]
    assert values["cull"]["enabled"] is True and values["cull"]["timeout"] == 3600
    hub = values["hub"]
    assert hub["config"]["JupyterHub"]["authenticator_class"] in ("dummy", "tmp")
    # the shared settings file is loaded by the chart's hub from jupyterhub_config.d
    assert hub["extraFiles"]["course-hub"]["mountPath"].endswith("/jupyterhub_config.d/course_hub.py")
    mounted = {m["mountPath"] for m in hub["extraVolumeMounts"]}
    assert hub["extraEnv"]["COURSE_HUB_CONNECTIONS"] in mounted


def test_tljh_install_script_sets_what_config_yaml_says():
    yaml = pytest.importorskip("yaml")
    config = yaml.safe_load((KIT / "tljh" / "config.yaml").read_text())
    script = (KIT / "tljh" / "install.sh").read_text()
    settings = dict(re.findall(r"^tljh-config set (\S+) (\S+)$", script, re.M))
    assert settings, "install.sh sets nothing"
    for key, value in settings.items():
        node = config
        for part in key.split("."):
            node = node[part]
        if not value.startswith('"$'):  # the password comes from the environment
            assert str(node).lower() == value.lower(), key


def test_local_hub_configuration_loads(tmp_path, monkeypatch):
    from traitlets.config.loader import PyFileConfigLoader

    monkeypatch.setenv("COURSE_HUB_STATE", str(tmp_path / "state"))
    monkeypatch.setenv("COURSE_HUB_PROXY", "/bin/true")
    monkeypatch.setenv("COURSE_HUB_PORT", "18000")
    monkeypatch.delenv("COURSE_HUB_REPO", raising=False)
    c = PyFileConfigLoader("jupyterhub_config.py", str(KIT)).load_config()
    assert c.JupyterHub.authenticator_class == "dummy"
    assert c.JupyterHub.spawner_class == "simple"
    assert c.JupyterHub.bind_url == "http://127.0.0.1:18000"
    assert c.Spawner.pre_spawn_hook.__name__ == "prepare_learner"
    assert c.Spawner.default_url == "/lab/tree/workshop/preflight.ipynb"
    assert (tmp_path / "state").is_dir()


def test_course_hub_doctests():
    assert doctest.testmod(_course_hub()).failed == 0


def test_connection_file_by_name_and_bad_files(tmp_path):
    hub = _course_hub()
    (tmp_path / "ann.env").write_text("KAFKA_SASL_USERNAME=ann\nexport KAFKA_SASL_PASSWORD='pw'\n# note\n")
    env = hub.learner_environment("ann", {"COURSE_HUB_CONNECTIONS": str(tmp_path)})
    assert env == {"KAFKA_SASL_USERNAME": "ann", "KAFKA_SASL_PASSWORD": "pw"}
    with pytest.raises(hub.HubConfigError, match="no connection file .*bob.env.*roster"):
        hub.learner_environment("bob", {"COURSE_HUB_CONNECTIONS": str(tmp_path)})
    with pytest.raises(hub.HubConfigError, match="cannot name a connection file"):
        hub.learner_environment("../ann", {"COURSE_HUB_CONNECTIONS": str(tmp_path)})
    (tmp_path / "ann.env").write_text("HOME=/root\n")  # only the connection settings are injected
    with pytest.raises(hub.HubConfigError, match="ann.env:1: expected one of KAFKA_BOOTSTRAP_SERVERS"):
        hub.learner_environment("ann", {"COURSE_HUB_CONNECTIONS": str(tmp_path)})
    with pytest.raises(hub.HubConfigError, match="does not exist"):
        hub.learner_environment("ann", {"COURSE_HUB_CONNECTIONS": str(tmp_path / "missing")})
    assert hub.learner_environment("ann", {}) == {} or Path(hub.DEFAULT_CONNECTIONS).is_dir()


def test_no_login_accounts_take_the_next_free_connection_file(tmp_path):
    hub = _course_hub()
    for name in ("ann", "bob"):
        (tmp_path / f"{name}.env").write_text(f"KAFKA_SASL_USERNAME={name}\n")
    settings = {"COURSE_HUB_CONNECTIONS": str(tmp_path), "COURSE_HUB_ASSIGN": "pool"}
    first = hub.learner_environment("c0ffee", settings)["KAFKA_SASL_USERNAME"]
    second = hub.learner_environment("beef42", settings)["KAFKA_SASL_USERNAME"]
    assert {first, second} == {"ann", "bob"}
    assert hub.learner_environment("c0ffee", settings)["KAFKA_SASL_USERNAME"] == first  # a returning browser
    assert json.loads((tmp_path / "assignments.json").read_text()) == {
        "c0ffee": f"{first}.env",
        "beef42": f"{second}.env",
    }
    with pytest.raises(hub.HubConfigError, match="all 2 connection files .* are assigned"):
        hub.learner_environment("third", settings)
    with pytest.raises(hub.HubConfigError, match="'name' or 'pool'"):
        hub.learner_environment("x", {**settings, "COURSE_HUB_ASSIGN": "random"})


def test_nbgitpuller_landing_page(monkeypatch):
    from traitlets.config import Config

    hub = _course_hub()
    c = Config()
    hub.configure(c, {"COURSE_HUB_REPO": "https://github.com/org/kafka-course", "COURSE_HUB_BRANCH": "w1"})
    assert c.Spawner.default_url.startswith("/git-pull?repo=https%3A%2F%2Fgithub.com%2Forg%2Fkafka-course&branch=w1")
    assert c.Spawner.default_url.endswith("urlpath=lab%2Ftree%2Fkafka-course%2Fworkshop%2Fpreflight.ipynb")
    assert c.Spawner.pre_spawn_hook is hub.inject_connection


# ---- a real hub -----------------------------------------------------------------------------------
def _proxy() -> str | None:
    """configurable-http-proxy from the course's npm cache (.ci/run prepares it)."""
    from course_lib.workshop.hub_proxy import proxy_executable

    try:
        return str(proxy_executable())
    except (RuntimeError, subprocess.CalledProcessError):
        return None


def _skip_reason() -> str | None:
    if not (BIN / "jupyterhub").is_file() or not (BIN / "jupyterhub-singleuser").is_file():
        return "jupyterhub is not installed in this environment (pip install -e '.[hub]')"
    if not Path(CHROMIUM).exists():
        return f"{CHROMIUM} not found (apt-get install -y chromium)"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "the playwright package is not installed (pip install -e '.[browser]')"
    if _proxy() is None:
        return "configurable-http-proxy could not be installed from npm into the course cache"
    return None


def _hub_processes(api_port: int) -> list[int]:
    """PIDs of the single-user servers this hub started (their environment names its API port)."""
    return processes_with(f"JUPYTERHUB_API_URL=http://127.0.0.1:{api_port}/", prefix=True)


def _environ(pid: int) -> dict[str, str]:
    raw = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    return dict(item.decode().split("=", 1) for item in raw if b"=" in item)


@pytest.fixture(scope="module")
def hub(tmp_path_factory):
    reason = _skip_reason()
    if reason:
        print(f"skipping hub test: {reason}")
        pytest.skip(reason)
    work = tmp_path_factory.mktemp("hub")
    connections = work / "connections"
    connections.mkdir()
    for name in LEARNERS:  # as `python -m course_lib.workshop` writes them (values never used here)
        (connections / f"{name}.env").write_text(
            f"KAFKA_BOOTSTRAP_SERVERS=127.0.0.1:9\nKAFKA_SASL_MECHANISM=SCRAM-SHA-512\n"
            f"KAFKA_SASL_USERNAME={name}\nKAFKA_SASL_PASSWORD={name}-secret\nCOURSE_LEARNER_PREFIX={name}\n"
        )
    port, api_port, proxy_api_port = free_port(), free_port(), free_port()
    env = {
        **os.environ,
        "COURSE_HUB_PORT": str(port),
        "COURSE_HUB_API_PORT": str(api_port),
        "COURSE_HUB_PROXY_API_PORT": str(proxy_api_port),
        "COURSE_HUB_STATE": str(work / "state"),
        "COURSE_HUB_HOMES": str(work / "homes"),
        "COURSE_HUB_CONNECTIONS": str(connections),
        "COURSE_HUB_PASSWORD": PASSWORD,
        "COURSE_HUB_PROXY": _proxy(),
        "CONFIGPROXY_AUTH_TOKEN": "test-token",
        "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}",
    }
    ARTIFACTS.mkdir(exist_ok=True)
    log = open(ARTIFACTS / "jupyterhub.log", "w")
    proc = subprocess.Popen(
        [str(BIN / "jupyterhub"), "-f", str(ROOT / "workshop" / "jupyterhub_config.py")],
        cwd=work,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(120):  # up to ~60 s for the hub and its proxy
            if proc.poll() is not None:
                pytest.fail(f"jupyterhub exited with {proc.returncode}; see artifacts/jupyterhub.log")
            try:
                urllib.request.urlopen(f"{base}/hub/login", timeout=2).close()
                break
            except OSError:
                time.sleep(0.5)
        else:
            pytest.fail("the hub did not answer within 60 s; see artifacts/jupyterhub.log")
        yield base, api_port, work
    finally:
        servers = _hub_processes(api_port)
        os.killpg(proc.pid, signal.SIGTERM)  # the hub stops the learners' servers and its proxy
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)
        for pid in servers:  # a server the hub failed to stop (it runs in its own session)
            try:
                os.killpg(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        # the proxy runs in a session of its own too, and outlives a hub that did not stop it: it
        # inherited the hub's environment, which names this hub's port
        stop(processes_with(f"COURSE_HUB_API_PORT={api_port}"))
        log.close()


def _run_preflight_in_the_browser(page) -> None:
    """Run the landing notebook as a learner does: the widget line renders green, and the login line
    is red with the address (this test's connection files point at a port where nothing listens)."""
    panel = page.locator(".jp-NotebookPanel", has=page.locator("h1", has_text="Preflight"))
    panel.locator(".jp-Notebook-ExecutionIndicator[data-status='idle']").wait_for()
    panel.locator(".jp-Cell").first.click()
    for _ in range(3):  # the intro, the widget probe, the checks
        page.keyboard.press("Shift+Enter")
    panel.get_by_text("widgets render in your browser").wait_for()
    panel.locator("td", has_text="no broker answered at 127.0.0.1:9").wait_for()
    assert panel.get_by_text("FAIL widgets render").count() == 0  # the fallback text is not shown
    page.screenshot(path=str(ARTIFACTS / "hub_ann_preflight.png"), full_page=True)


@pytest.mark.browser
def test_two_learners_log_in_and_open_lesson_00(hub):
    from playwright.sync_api import sync_playwright

    base, api_port, work = hub
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            pages = {}
            for name in LEARNERS:
                context = browser.new_context(viewport={"width": 1300, "height": 900})  # own cookies: two people
                page = context.new_page()
                page.set_default_timeout(TIMEOUT_MS)
                page.goto(f"{base}/hub/login")
                page.fill("#username_input", name)
                page.fill("#password_input", PASSWORD)
                page.click("#login_submit")
                # the kit lands a learner on the preflight notebook of their own copy of the course
                page.wait_for_url(f"**/user/{name}/lab/tree/workshop/preflight.ipynb*")
                pages[name] = page
            _run_preflight_in_the_browser(pages["ann"])
            for name, page in pages.items():
                page.goto(f"{base}/user/{name}/lab/tree/notebooks/00_start_here.ipynb")
                lesson = page.locator(".jp-NotebookPanel", has=page.locator("h1", has_text="00 · Start here"))
                lesson.wait_for()
                # the lesson's kernel started and is ready (the preflight's tab has its own indicator)
                lesson.locator(".jp-Notebook-ExecutionIndicator[data-status='idle']").wait_for()
                page.screenshot(path=str(ARTIFACTS / f"hub_{name}_lesson_00.png"))
        finally:
            browser.close()
    for name in LEARNERS:
        assert (work / "homes" / name / "notebooks" / "00_start_here.ipynb").is_file()
    servers = {}
    for pid in _hub_processes(api_port):
        env = _environ(pid)
        if "jupyterhub-singleuser" in Path(f"/proc/{pid}/cmdline").read_text():
            servers[env["JUPYTERHUB_USER"]] = env
    assert sorted(servers) == sorted(LEARNERS)
    for pid in _hub_processes(api_port):  # sizing data for the instructor guide (pytest -s shows it)
        rss = next(line for line in Path(f"/proc/{pid}/status").read_text().splitlines() if line.startswith("VmRSS"))
        print(f"hub test: pid {pid} {Path(f'/proc/{pid}/cmdline').read_text().split(chr(0))[1:3]} {rss}")
    for name, env in servers.items():  # each server has its own learner's cluster login
        assert env["KAFKA_SASL_USERNAME"] == name and env["KAFKA_SASL_PASSWORD"] == f"{name}-secret"
        assert env["COURSE_LEARNER_PREFIX"] == name
