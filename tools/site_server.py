"""Serve a built site on 127.0.0.1 (a free port) with a local Pyodide, and open it in Chromium.

Used by tests/test_site.py and ``python -m bench site``. The site is built with
``pyodide_url=LOCAL_PYODIDE_URL``; this server maps that path to the folder from
:func:`tools.pyodide_local.local_distribution`, so the browser needs no other server. Chromium is
Debian's (``/usr/bin/chromium``) with the flags of COURSE_DESIGN.md §5, and resolves no host name
but 127.0.0.1: a request that tries to leave the machine fails, and :class:`RequestLog` lists it.
"""

from __future__ import annotations

import contextlib
import functools
import sys
import threading
from dataclasses import dataclass
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote, urlsplit

LOCAL_PYODIDE_URL = "/pyodide/pyodide.js"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]
# the site's pages must work offline: nothing but this machine, any other host name fails to resolve
OFFLINE_ARGS = [*CHROMIUM_ARGS, "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1"]


class _Handler(SimpleHTTPRequestHandler):
    pyodide_dir: Path
    paths: list[str]  # every path asked for, in order (shared by the server's threads)

    def translate_path(self, path: str) -> str:
        route = unquote(urlsplit(path).path)
        self.paths.append(route)
        prefix = LOCAL_PYODIDE_URL.rsplit("/", 1)[0] + "/"
        if route.startswith(prefix):
            return str(self.pyodide_dir / route[len(prefix) :])
        return super().translate_path(path)

    def log_message(self, format, *args):  # quiet: the tests report what matters
        pass


class _Server(ThreadingHTTPServer):
    def handle_error(self, request, client_address):
        # a browser closed while a file was still on its way (a page's files fetched after its
        # app is up, and the test or benchmark done by then): nothing went wrong
        if not isinstance(sys.exc_info()[1], (ConnectionResetError, BrokenPipeError)):
            super().handle_error(request, client_address)


@dataclass
class Served:
    base_url: str
    paths: list[str]  # what the server was asked for


@contextlib.contextmanager
def serve(site: Path, pyodide_dir: Path):
    """``with serve(site, dist) as served:`` an HTTP server in a thread, stopped on exit."""
    paths: list[str] = []
    handler = type("SiteHandler", (_Handler,), {"pyodide_dir": pyodide_dir, "paths": paths})
    server = _Server(("127.0.0.1", 0), functools.partial(handler, directory=str(site)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield Served(f"http://127.0.0.1:{server.server_port}", paths)
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


class RequestLog:
    """Every request the browser context makes (pages, workers), to assert none left the machine."""

    def __init__(self, context, base_url: str):
        self.base_url = base_url
        self.urls: list[str] = []
        context.on("request", lambda request: self.urls.append(request.url))

    def outside(self) -> list[str]:
        return [u for u in self.urls if not (u.startswith(self.base_url + "/") or u.startswith(("data:", "blob:")))]
