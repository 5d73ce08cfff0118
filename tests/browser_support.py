"""What the browser tests share: Debian's chromium under Playwright, free ports on 127.0.0.1,
starting/stopping a Jupyter server (Voila or JupyterLab) with everything it started, and what a
lesson's predictions must not show before lock-in (read in JupyterLab by tests/test_browser_lab.py,
in the static site by tests/test_browser_predictions.py)."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

# one Chromium command line for every browser test (the site adds an offline host rule to it)
from course_lib.real.processes import free_port  # noqa: F401 (the tests' one chooser of ports)
from tools.site_server import CHROMIUM, CHROMIUM_ARGS

ROOT = Path(__file__).resolve().parents[1]
ARTIFACTS = ROOT / "artifacts"  # screenshots and server logs (git-ignored)
TIMEOUT_MS = 90_000


def skip_reason(tool: str) -> str | None:
    """Why the browser tests cannot run here (None: they can); ``tool`` is the server's script."""
    if not Path(CHROMIUM).exists():
        return f"{CHROMIUM} not found (apt-get install -y chromium)"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "the playwright package is not installed (pip install -e '.[browser]')"
    if shutil.which(tool, path=str(Path(sys.executable).parent)) is None:
        return f"{tool} is not installed in this environment (pip install -e '.[lab]')"
    return None


class Server:
    """A server process in its own session (so stopping it also stops its kernels), logging to
    ``artifacts/<name>.log``; ``url`` answers once :meth:`wait` returns."""

    def __init__(self, name: str, argv: list[str], url: str, env: dict | None = None):
        ARTIFACTS.mkdir(exist_ok=True)
        self.name, self.url = name, url
        self.log = open(ARTIFACTS / f"{name}.log", "w")
        self.proc = subprocess.Popen(
            argv,
            cwd=ROOT,
            stdout=self.log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            env={**os.environ, **(env or {})},
        )

    def wait(self, seconds: float = 60) -> None:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                pytest.fail(f"{self.name} exited with {self.proc.returncode}; see artifacts/{self.name}.log")
            try:
                urllib.request.urlopen(self.url, timeout=2).close()
                return
            except OSError:
                time.sleep(0.5)
        pytest.fail(f"{self.name} did not answer within {seconds:g} s; see artifacts/{self.name}.log")

    def stop(self) -> None:
        try:
            os.killpg(self.proc.pid, signal.SIGTERM)  # the server and the kernels it started
        except ProcessLookupError:
            pass
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=10)
        self.log.close()


def launch_chromium(playwright):
    return playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)


# --- predict, then measure: what each reveal prints is what ``tools/notebook_outputs.py --execute``
# recorded (the values the source check, tests/test_prediction_sources.py, looks for); the browser
# tests look for it in the rendered page, hidden outputs left out (``innerText``).


class Expected:
    """One lesson's predictions, in notebook order: where each is made and revealed, and what its
    reveal prints (the values a learner must not read above its lock-in)."""

    def __init__(self, lesson: Path):
        import nbformat
        from tools.notebook_outputs import load_expectations, load_reveals

        from tests import spoilers

        nb = nbformat.read(lesson, as_version=4)
        stored = {e["cell"]: spoilers.output_text(e["outputs"]) for e in load_expectations(lesson)}
        reveals = {r["name"]: r for r in load_reveals(lesson) or []}
        self.predictions = []
        self.choices: dict[str, list[str] | None] = {}
        for name, made, reveal in spoilers.predictions(nb):
            assert name in reveals, (
                f"{lesson.name}: no reveal recorded for {name} (tools/notebook_outputs.py --execute)"
            )
            r = reveals[name]
            explanation = r["explanation"] or ""
            givens = spoilers.premise_numbers(nb, made, stored) | set(r["choices"] or [])
            # "notebook 02" names a lesson, it measures nothing: not a value to hide
            measured = re.sub(r"\b(?:notebook|lesson)s? \d+[a-z]?\b", " ", explanation)
            numbers = set(re.findall(spoilers.NUMBER, joined(measured)))
            secret = numbers - givens
            if r["kind"] != "choice" and r["actual"] not in givens:
                secret.add(r["actual"])
            phrases = spoilers.phrases(explanation)
            self.predictions.append((name, made, reveal, sorted(secret), phrases, numbers))
            self.choices[name] = r["choices"]


def joined(text: str) -> str:
    """Numbers as the explanations print them, thousands not split ("10 000" -> "10000")."""
    return re.sub(r"(?<=\d) (?=\d{3}\b)", "", text)


def _normal(text: str) -> str:
    return " ".join(re.sub(r"[*_`]", "", text).lower().split())


def readable(text: str) -> str:
    """Rendered text without the cells' execution counts ("[12]:", not a measured 12)."""
    return re.sub(r"\[\s*\d*\s*\]:", " ", text)


def leaks(text: str, expected: Expected, name: str, secret, phrases) -> list[str]:
    """What of prediction ``name``'s reveal (its secret values, its explanation's phrases) ``text``
    shows, its own choices left out."""
    from tests import spoilers

    text = spoilers.without_choices(text, expected.choices[name])
    return [v for v in secret if spoilers.shows(joined(text), v)] + [p for p in phrases if p in _normal(text)]


def missing_numbers(shown: str, numbers) -> list[str]:
    """The numbers of an explanation that ``shown`` (its rendered reveal) does not show."""
    from tests import spoilers

    return sorted(n for n in numbers if not spoilers.shows(joined(shown), n))
