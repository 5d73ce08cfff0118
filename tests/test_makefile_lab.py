"""`make lab` / `make demo` as a first-time learner runs them (dry run: nothing installed or started)."""

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from course_lib.real.processes import free_port

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")


def _dry_run(target: str, tmp_path) -> str:
    venv = tmp_path / "venv"  # an empty venv path: make prints the whole first-run recipe
    out = subprocess.run(
        ["make", "-n", target, f"VENV={venv}"], cwd=ROOT, capture_output=True, text=True, timeout=60, check=True
    )
    return out.stdout


def test_make_lab_installs_only_the_lab_extra_and_serves_the_repository_root(tmp_path):
    text = _dry_run("lab", tmp_path)
    assert "-e '.[lab]'" in text and ".[all]" not in text
    assert f'--ServerApp.root_dir="{ROOT}"' in text  # lessons' ../exercises/ links resolve
    for clutter in ("conftest.py", "STYLE.md", "artifacts", "__pycache__"):
        assert f"--ContentsManager.hide_globs={clutter}" in text
    assert ("--allow-root" in text) == (os.getuid() == 0)


def test_make_site_installs_only_the_site_extra(tmp_path):
    """After `make lab`, `make site` installed every extra (75 s, a 1.7 GB venv) for a build that
    needs JupyterLite only: the site's packages are the [site] extra (the course's own are its
    base dependencies)."""
    for target in ("site", "site-offline"):
        text = _dry_run(target, tmp_path)
        assert "-e '.[site]'" in text and ".[all]" not in text, text


def test_make_test_still_installs_every_extra(tmp_path):
    assert "-e '.[all]'" in _dry_run("test", tmp_path)


def test_make_demo_uses_the_offline_template(tmp_path):
    text = _dry_run("demo", tmp_path)
    assert "--template=course" in text and "share/jupyter" in text and "index.ipynb" in text
    assert (ROOT / "share/jupyter/voila/templates/course/index.html.j2").exists()


def test_make_lab_installs_the_course_settings_and_the_notebook_git_filter(tmp_path):
    text = _dry_run("lab", tmp_path)
    assert "overrides.d/kafka-delivery-course.json" in text
    assert "filter.course-notebook.clean" in text
    assert text.index("filter.course-notebook") < text.index("jupyter lab")  # installed before the server starts


def test_jupyterlab_reads_the_shipped_settings_and_asks_for_no_news(tmp_path):
    """The first open showed a toast asking to fetch Jupyter news: the settings make lab-settings
    installs answer it (Never), as JupyterLab's own settings code resolves them."""
    import jupyterlab
    from jupyterlab_server.settings_utils import get_settings

    venv = tmp_path / "venv"
    subprocess.run(["make", "-s", "lab-settings", f"VENV={venv}"], cwd=ROOT, check=True, timeout=60)
    app_settings = venv / "share" / "jupyter" / "lab" / "settings"
    assert (app_settings / "overrides.d" / "kafka-delivery-course.json").exists()
    schemas = Path(jupyterlab.__file__).parents[3] / "share" / "jupyter" / "lab" / "schemas"
    if not schemas.is_dir():  # an install that keeps the schemas under sys.prefix
        import sys

        schemas = Path(sys.prefix) / "share" / "jupyter" / "lab" / "schemas"
    name = "@jupyterlab/apputils-extension:notification"
    for shipped, expected in ((True, ("false", False)), (False, ("none", True))):  # and the default, for contrast
        settings, warnings = get_settings(
            str(app_settings if shipped else tmp_path / "nothing"),
            str(schemas),
            str(tmp_path / "user-settings"),
            schema_name=name,
        )
        # JupyterLab applies overrides as the schema's defaults; the learner's own settings still win
        defaults = {k: settings["schema"]["properties"][k]["default"] for k in ("fetchNews", "checkForUpdates")}
        assert (defaults["fetchNews"], defaults["checkForUpdates"]) == expected, (shipped, defaults, warnings)


def test_jupyterlab_serves_the_course_css_so_outputs_wrap_at_spaces(tmp_path):
    """JupyterLab's output <pre> has word-break: break-all (text cut mid-word). The config file
    make lab installs ($(VENV)/etc/jupyter/jupyter_lab_config.json) turns LabApp.custom_css on, and the page then loads the course's custom.css.
    Run against the installed JupyterLab with temporary config folders (the venv is left alone)."""
    import sys
    import time
    import urllib.request

    config_path = tmp_path / "etc"  # as $(VENV)/etc/jupyter: a config path JupyterLab reads
    config_path.mkdir()
    shutil.copy(ROOT / "share/jupyter/jupyter_lab_config.json", config_path)
    config_dir = tmp_path / "config"  # one of the folders the /custom/ handler serves from
    (config_dir / "custom").mkdir(parents=True)
    shutil.copy(ROOT / "share/jupyter/lab/custom/custom.css", config_dir / "custom")
    port = free_port()
    env = {**os.environ, "JUPYTER_CONFIG_PATH": str(config_path), "JUPYTER_CONFIG_DIR": str(config_dir)}
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "jupyterlab",
            "--no-browser",
            f"--port={port}",
            "--ServerApp.port_retries=0",
            "--IdentityProvider.token=",
            f"--ServerApp.root_dir={tmp_path}",
            "--ip=127.0.0.1",
            *(["--allow-root"] if os.getuid() == 0 else []),
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline, page = time.monotonic() + 90, None
        while page is None and time.monotonic() < deadline and server.poll() is None:
            try:
                page = urllib.request.urlopen(f"http://127.0.0.1:{port}/lab", timeout=5).read().decode()
            except OSError:
                time.sleep(0.2)  # polling the condition "the server answers", bounded by the deadline
        assert page is not None, f"JupyterLab did not answer within 90 s: {server.stderr and server.poll()}"
        assert "custom/custom.css" in page
        css = urllib.request.urlopen(f"http://127.0.0.1:{port}/custom/custom.css", timeout=10).read().decode()
        assert "body .jp-OutputArea .jp-OutputArea-output pre" in css and "word-break: normal" in css
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        server.stderr.close()
