"""The course's JupyterHub settings, shared by every hub the kit describes.

A ``jupyterhub_config.d`` file: The Littlest JupyterHub loads it from
``/opt/tljh/config/jupyterhub_config.d/``, Zero to JupyterHub from
``/usr/local/etc/jupyterhub/jupyterhub_config.d/`` (``hub.extraFiles`` in values.yaml), and
``workshop/jupyterhub_config.py`` (the local hub) imports it. It runs in the *hub's* Python, which
does not have the course installed: standard library only.

What it does:

- **connection injection**: before a learner's server starts, the settings of their connection
  file (``<name>.env``, written by ``python -m course_lib.workshop``) become environment variables
  of the server (``KAFKA_BOOTSTRAP_SERVERS``, ``KAFKA_SASL_USERNAME``, ... - what ``connect()``
  reads). With a named login (shared-password accounts) the file is the one of that name; with
  no-login accounts (tmpauthenticator's random names) each new user gets the next unused file of
  the folder, remembered in ``assignments.json`` so a returning browser keeps its learner.
- **landing page**: with ``COURSE_HUB_REPO`` set, a server starts on an nbgitpuller link that
  clones (or updates) the course into the learner's home and opens the preflight notebook.

Settings (environment of the hub process):

``COURSE_HUB_CONNECTIONS``  folder of ``<name>.env`` files (default ``/srv/workshop-connections``)
``COURSE_HUB_ASSIGN``       ``name`` (file named like the user, the default) or ``pool``
``COURSE_HUB_REPO``         git URL of the course for nbgitpuller (unset: no nbgitpuller)
``COURSE_HUB_BRANCH``       its branch (default ``main``)

``python course_hub.py link HUB_URL REPO_URL [--path ...]`` prints an nbgitpuller link to hand out.
"""

from __future__ import annotations

import json
import logging
import os
import re
import sys
from pathlib import Path
from urllib.parse import urlencode

log = logging.getLogger("course_hub")
DEFAULT_CONNECTIONS = "/srv/workshop-connections"
# the folder nbgitpuller clones into is the repository's name; the lesson paths inside it
LANDING_NOTEBOOK = "workshop/preflight.ipynb"
FIRST_LESSON = "notebooks/00_start_here.ipynb"
# what a connection file may hold (course_lib.real.connect.SETTINGS): nothing else is injected
SETTINGS = (
    "KAFKA_BOOTSTRAP_SERVERS",
    "KAFKA_SASL_MECHANISM",
    "KAFKA_SASL_USERNAME",
    "KAFKA_SASL_PASSWORD",
    "COURSE_LEARNER_PREFIX",
    "KAFKA_SECURITY_PROTOCOL",
    "SPARK_REMOTE",
)
_SAFE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.@-]{0,127}$")


class HubConfigError(RuntimeError):
    """A connection folder or file the instructor must fix; the learner's spawn fails with it."""


def read_env_file(path: Path) -> dict[str, str]:
    """``KEY=value`` lines of a connection file (the format ``connect(env_file=...)`` reads)."""
    out = {}
    for lineno, raw in enumerate(path.read_text().splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        key, sep, value = line.removeprefix("export ").partition("=")
        key, value = key.strip(), value.strip().strip("'\"")
        if not sep or key not in SETTINGS:
            raise HubConfigError(f"{path}:{lineno}: expected one of {', '.join(SETTINGS)} as KEY=value, got {raw!r}")
        out[key] = value
    return out


def connection_file_for(user: str, folder: Path, assign: str = "name") -> Path:
    """The connection file of hub user ``user`` (see the module docstring for ``assign``)."""
    if not _SAFE_NAME.match(user):
        raise HubConfigError(f"hub user name {user!r} cannot name a connection file")
    if not folder.is_dir():
        raise HubConfigError(f"connection folder {folder} does not exist: set COURSE_HUB_CONNECTIONS")
    if assign == "name":
        path = folder / f"{user}.env"
        if not path.is_file():
            raise HubConfigError(
                f"no connection file {path} for hub user {user!r}: log in with your name from the "
                f"roster, or ask the instructor to add you (python -m course_lib.workshop)"
            )
        return path
    if assign != "pool":
        raise HubConfigError(f"COURSE_HUB_ASSIGN must be 'name' or 'pool', not {assign!r}")
    book = folder / "assignments.json"
    assigned: dict[str, str] = json.loads(book.read_text()) if book.is_file() else {}
    if user not in assigned:
        taken = set(assigned.values())
        free = sorted(p.name for p in folder.glob("*.env") if p.name not in taken)
        if not free:
            raise HubConfigError(
                f"all {len(taken)} connection files in {folder} are assigned: provision more learners "
                f"(add names to the roster, run python -m course_lib.workshop again)"
            )
        assigned[user] = free[0]
        book.write_text(json.dumps(assigned, indent=1, sort_keys=True))  # the hub is one process: no race
    return folder / assigned[user]


def learner_environment(user: str, environ=None) -> dict[str, str]:
    """The environment variables to give ``user``'s server (empty without a connection folder)."""
    environ = os.environ if environ is None else environ
    folder = Path(environ.get("COURSE_HUB_CONNECTIONS", DEFAULT_CONNECTIONS))
    if "COURSE_HUB_CONNECTIONS" not in environ and not folder.is_dir():
        return {}  # no workshop cluster: learners use the simulator (and their own LocalCluster)
    return read_env_file(connection_file_for(user, folder, environ.get("COURSE_HUB_ASSIGN", "name")))


def inject_connection(spawner) -> None:
    """``Spawner.pre_spawn_hook``: the learner's Kafka/Spark settings into their server's environment."""
    env = learner_environment(spawner.user.name)
    spawner.environment.update(env)
    if env:
        spawner.log.info("course_hub: %s gets the cluster login %s", spawner.user.name, env.get("KAFKA_SASL_USERNAME"))


def nbgitpuller_path(repo: str, branch: str = "main", path: str = LANDING_NOTEBOOK, app: str = "lab") -> str:
    """The server-relative ``git-pull?...`` URL that clones ``repo`` and opens ``path`` in it.

    >>> nbgitpuller_path("https://github.com/org/kafka-course.git")
    'git-pull?repo=https%3A%2F%2Fgithub.com%2Forg%2Fkafka-course.git&branch=main&urlpath=lab%2Ftree%2Fkafka-course%2Fworkshop%2Fpreflight.ipynb'
    """
    folder = repo.rstrip("/").rsplit("/", 1)[-1].removesuffix(".git")
    return "git-pull?" + urlencode({"repo": repo, "branch": branch, "urlpath": f"{app}/tree/{folder}/{path}"})


def nbgitpuller_link(hub_url: str, repo: str, branch: str = "main", path: str = LANDING_NOTEBOOK) -> str:
    """The link to hand out: log in, clone the course, open ``path``.

    >>> nbgitpuller_link("https://hub.example.org", "https://github.com/org/c", path="notebooks/00_start_here.ipynb")
    'https://hub.example.org/hub/user-redirect/git-pull?repo=https%3A%2F%2Fgithub.com%2Forg%2Fc&branch=main&urlpath=lab%2Ftree%2Fc%2Fnotebooks%2F00_start_here.ipynb'
    """
    return f"{hub_url.rstrip('/')}/hub/user-redirect/{nbgitpuller_path(repo, branch, path)}"


def configure(c, environ=None) -> None:
    """Apply the course's settings to a JupyterHub config object ``c``."""
    environ = os.environ if environ is None else environ
    c.Spawner.pre_spawn_hook = inject_connection
    c.Spawner.default_url = "/lab"
    repo = environ.get("COURSE_HUB_REPO")
    if repo:
        c.Spawner.default_url = "/" + nbgitpuller_path(repo, environ.get("COURSE_HUB_BRANCH", "main"))
    # A stuck kernel of the simulator may take a while to start under load (200 learners at 9:00).
    c.Spawner.start_timeout = 120
    c.Spawner.http_timeout = 90


if "get_config" in globals():  # loaded as a jupyterhub_config.d file, not imported
    configure(get_config())  # type: ignore[name-defined]  # noqa: F821


def main(argv: list[str] | None = None) -> int:
    import argparse

    ap = argparse.ArgumentParser(prog="course_hub.py", description="print an nbgitpuller link for learners")
    sub = ap.add_subparsers(dest="command", required=True)
    link = sub.add_parser("link")
    link.add_argument("hub_url")
    link.add_argument("repo")
    link.add_argument("--branch", default="main")
    link.add_argument("--path", default=LANDING_NOTEBOOK, help=f"file to open (default {LANDING_NOTEBOOK})")
    args = ap.parse_args(argv)
    print(nbgitpuller_link(args.hub_url, args.repo, args.branch, args.path))
    return 0


if __name__ == "__main__":
    sys.exit(main())
