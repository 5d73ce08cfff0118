"""A JupyterHub on this machine: rehearse the workshop (and tests/workshop/test_hub.py runs it).

    pip install -e '.[hub]'                     # jupyterhub (the proxy comes from npm, below)
    npm install -g configurable-http-proxy      # or: COURSE_HUB_PROXY=/path/to/configurable-http-proxy
    COURSE_HUB_CONNECTIONS=workshop-connections jupyterhub -f workshop/jupyterhub_config.py

Then open http://127.0.0.1:8000 and log in with any roster name and the shared password.

- Accounts: JupyterHub's DummyAuthenticator - any name, one shared password
  (``COURSE_HUB_PASSWORD``, default ``workshop``). Fine on 127.0.0.1 and for a one-day
  workshop behind HTTPS; never for a hub that outlives the day.
- Servers: SimpleLocalProcessSpawner - every learner's server is a process of the hub's own user,
  home ``$COURSE_HUB_HOMES/<name>`` (default ``/tmp/course-hub-homes``), into which the lessons,
  exercises, data sets and the preflight notebook are copied on the first start. The kernels
  import this checkout's ``course_lib`` (``PYTHONPATH``). On a shared machine use TLJH instead
  (``workshop/tljh``): it gives every learner a Unix user and memory limits.
- Ports: ``COURSE_HUB_PORT`` (public, default 8000), ``COURSE_HUB_API_PORT`` (hub API, 8081),
  ``COURSE_HUB_PROXY_API_PORT`` (the proxy's API, 8001), all on 127.0.0.1.
- State (database, cookie secret): ``COURSE_HUB_STATE`` (default ``.hub-state`` here).
- Idle servers are stopped after an hour by jupyterhub-idle-culler when it is installed.
- The course's own settings (each learner's Kafka connection, landing page) come from
  ``workshop/hub/course_hub.py``, the file TLJH and Zero to JupyterHub load too.
"""

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE / "hub"))
import course_hub  # noqa: E402  (the shared jupyterhub_config.d file)

c = get_config()  # type: ignore[name-defined]  # noqa: F821
env = os.environ
STATE = Path(env.get("COURSE_HUB_STATE", ROOT / ".hub-state")).resolve()
HOMES = Path(env.get("COURSE_HUB_HOMES", "/tmp/course-hub-homes")).resolve()
STATE.mkdir(parents=True, exist_ok=True)
# what a learner's home holds: the course as a learner sees it (no tests, no library source)
# (datasets: the data sets and their cards, where lesson 10 says they are; the library reads its
# own copy, shipped in the installed package)
COURSE_FILES = ("notebooks", "exercises", "datasets", "workshop/preflight.ipynb")


def find_proxy() -> str:
    """configurable-http-proxy: $COURSE_HUB_PROXY, the PATH, or the course's npm cache (installed
    there from npm on first use)."""
    found = env.get("COURSE_HUB_PROXY") or shutil.which("configurable-http-proxy")
    if found:
        return found
    from course_lib.workshop.hub_proxy import proxy_executable

    try:
        return str(proxy_executable())
    except (RuntimeError, subprocess.CalledProcessError) as e:
        sys.exit(
            f"configurable-http-proxy not found ({e}): `npm install -g configurable-http-proxy`, or set "
            "COURSE_HUB_PROXY to its path"
        )


def copy_course(home: Path) -> None:
    """The lessons into a new learner's home (an existing copy is the learner's work: kept)."""
    for name in COURSE_FILES:
        src, dst = ROOT / name, home / name
        if dst.exists():
            continue
        dst.parent.mkdir(parents=True, exist_ok=True)
        if src.is_dir():
            shutil.copytree(src, dst, ignore=shutil.ignore_patterns("__pycache__", "conftest.py", ".ipynb_checkpoints"))
        else:
            shutil.copy2(src, dst)


def prepare_learner(spawner) -> None:
    home = HOMES / spawner.user.name
    copy_course(home)
    course_hub.inject_connection(spawner)
    spawner.environment["PYTHONPATH"] = str(ROOT)  # this checkout's course_lib


# ---- hub, proxy, ports -------------------------------------------------------------------------
c.JupyterHub.bind_url = f"http://127.0.0.1:{env.get('COURSE_HUB_PORT', '8000')}"
c.JupyterHub.hub_bind_url = f"http://127.0.0.1:{env.get('COURSE_HUB_API_PORT', '8081')}"
c.ConfigurableHTTPProxy.api_url = f"http://127.0.0.1:{env.get('COURSE_HUB_PROXY_API_PORT', '8001')}"
c.ConfigurableHTTPProxy.command = [find_proxy()]
c.ConfigurableHTTPProxy.pid_file = str(STATE / "proxy.pid")
c.JupyterHub.db_url = f"sqlite:///{STATE / 'jupyterhub.sqlite'}"
c.JupyterHub.cookie_secret_file = str(STATE / "jupyterhub_cookie_secret")

# ---- accounts ----------------------------------------------------------------------------------
c.JupyterHub.authenticator_class = "dummy"
c.DummyAuthenticator.password = env.get("COURSE_HUB_PASSWORD", "workshop")
c.Authenticator.allow_all = True  # everyone with the shared password (a one-day workshop)
c.Authenticator.admin_users = {env.get("COURSE_HUB_ADMIN", "instructor")}

# ---- learners' servers -------------------------------------------------------------------------
course_hub.configure(c)
c.JupyterHub.spawner_class = "simple"  # jupyterhub.spawner.SimpleLocalProcessSpawner
c.SimpleLocalProcessSpawner.home_dir_template = str(HOMES / "{username}")
c.Spawner.pre_spawn_hook = prepare_learner
c.Spawner.cmd = [str(Path(sys.executable).parent / "jupyterhub-singleuser")]
if os.getuid() == 0:  # containers and CI: Jupyter refuses root unless told
    c.Spawner.args = ["--allow-root"]
if not env.get("COURSE_HUB_REPO"):  # the copied course, not nbgitpuller: land on the preflight
    c.Spawner.default_url = "/lab/tree/workshop/preflight.ipynb"

# ---- idle culling ------------------------------------------------------------------------------
if importlib.util.find_spec("jupyterhub_idle_culler"):
    c.JupyterHub.services = [
        {
            "name": "idle-culler",
            "command": [sys.executable, "-m", "jupyterhub_idle_culler", "--timeout=3600", "--cull-every=300"],
        }
    ]
    c.JupyterHub.load_roles = [
        {
            "name": "idle-culler",
            "scopes": ["list:users", "read:users:activity", "read:servers", "delete:servers"],
            "services": ["idle-culler"],
        }
    ]
