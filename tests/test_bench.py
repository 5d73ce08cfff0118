"""Every ``python -m bench`` part runs in its ``--quick`` form: a smoke run that must finish and
print its table (no timing is asserted), so that no benchmark rots unseen - ``python -m bench
grading`` once stopped at a hand-kept sample that predated a new question, and nothing noticed.
"""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# part -> (a line its table prints, the wall-clock bound of its quick run on a busy 2-core machine)
PARTS = {
    "sim": ("records read per CPU-second", 120),
    "widgets": ("transactions demo: abort", 120),
    "grading": ("answers of solutions/05 (derived)", 180),  # its row in the sandbox comparison
    "invariants": ("CPU ms per schedule", 120),
    "site": ("Pyodide / CPython =", 300),
    "real": ("One write at a time", 300),
    "wire": ("start: simulated is", 300),  # its LocalCluster row needs Java: a real_kafka test
    "versions": ("From Kafka 4.3.1 to 4.4.0", 300),  # the simulator's side of both releases
}


def _missing(part: str) -> str | None:
    if part == "site":
        from tools.pyodide_local import missing_tools

        return missing_tools()
    if part == "grading":
        from course_lib.grading import sandbox

        problem = sandbox.probe()
        return f"no grading sandbox: {problem}" if problem else None
    return None  # real: a real_kafka test, skipped without Java or Maven by tests/conftest.py


@pytest.mark.parametrize(
    "part",
    [
        pytest.param(
            p, marks=[pytest.mark.real_kafka] if p in ("real", "wire") else [pytest.mark.site] if p == "site" else []
        )
        for p in PARTS
    ],
)
def test_quick_benchmark_runs_and_prints_its_table(part):
    reason = _missing(part)
    if reason:
        pytest.skip(reason)
    line, bound_s = PARTS[part]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    run = subprocess.run(
        [sys.executable, "-m", "bench", part, "--quick"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=bound_s,
    )
    assert run.returncode == 0, f"python -m bench {part} --quick failed:\n{run.stdout[-3000:]}\n{run.stderr[-3000:]}"
    assert line in run.stdout, run.stdout[-3000:]
    print(run.stdout)  # the table, shown with -s or on failure
