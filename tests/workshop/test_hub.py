"""The hub kit for real: JupyterHub from workshop/jupyterhub_config.py, two learners in Chromium.

Starts the kit's local hub (DummyAuthenticator with the shared password, SimpleLocalProcessSpawner)
on free 127.0.0.1 ports with two learners' connection files, logs ann and bob in from two browser
contexts (two people), opens lesson 00 for each and checks that each server got its own learner's
Kafka settings. Everything started is stopped afterwards. Skipped, with the reason, when
jupyterhub (``pip install -e '.[hub]'``), configurable-http-proxy (npm), chromium or playwright is
missing.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from tests.test_browser import CHROMIUM, CHROMIUM_ARGS

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "artifacts"
BIN = Path(sys.executable).parent
PROXY_VERSION = "5.3.0"
PROXY_CACHE = Path.home() / ".cache" / "kafka-delivery-course" / f"npm-configurable-http-proxy-{PROXY_VERSION}"
PASSWORD = "workshop-day"
LEARNERS = ("ann", "bob")
TIMEOUT_MS = 120_000


def _free_port() -> int:
    from tests.test_browser import _free_port as free

    return free()


def _proxy() -> str | None:
    """configurable-http-proxy from the course's npm cache (installed there once if npm exists)."""
    found = PROXY_CACHE / "node_modules" / ".bin" / "configurable-http-proxy"
    if not found.is_file() and shutil.which("npm"):
        from tools.pyodide_local import npm_install

        try:
            npm_install(PROXY_CACHE, f"configurable-http-proxy@{PROXY_VERSION}")
        except subprocess.CalledProcessError:
            return None
    return str(found) if found.is_file() else None


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
        return f"configurable-http-proxy could not be installed from npm into {PROXY_CACHE}"
    return None


def _hub_processes(api_port: int) -> list[int]:
    """PIDs of the single-user servers this hub started (their environment names its API port)."""
    pids = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            environ = (proc / "environ").read_bytes()
        except OSError:
            continue
        if f"JUPYTERHUB_API_URL=http://127.0.0.1:{api_port}/".encode() in environ:
            pids.append(int(proc.name))
    return pids


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
    port, api_port, proxy_api_port = _free_port(), _free_port(), _free_port()
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
        log.close()


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
            for name, page in pages.items():
                page.goto(f"{base}/user/{name}/lab/tree/notebooks/00_start_here.ipynb")
                page.locator(".jp-Notebook h1", has_text="00 · Start here").wait_for()
                # the lesson's kernel started and is ready
                page.locator(".jp-Notebook-ExecutionIndicator[data-status='idle']").wait_for()
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
    for name, env in servers.items():  # each server has its own learner's cluster login
        assert env["KAFKA_SASL_USERNAME"] == name and env["KAFKA_SASL_PASSWORD"] == f"{name}-secret"
        assert env["COURSE_LEARNER_PREFIX"] == name
