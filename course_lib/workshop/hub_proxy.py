"""JupyterHub's proxy, configurable-http-proxy: an npm package, kept in the course cache.

The local hub (``workshop/jupyterhub_config.py``) and its test find it here; ``.ci/run`` prepares
it with everything else (``python -m tools.prepare``)."""

from __future__ import annotations

from pathlib import Path

from course_lib.cache import npm_packages

VERSION = "5.3.0"
ENTRY = f"npm-configurable-http-proxy-{VERSION}"


def proxy_executable() -> Path:
    """The proxy's command, installed from npm into the course cache on first use."""
    return npm_packages(ENTRY, f"configurable-http-proxy@{VERSION}") / ".bin" / "configurable-http-proxy"
