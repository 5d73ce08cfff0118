"""Grading cost: CPU seconds of each exercise's hidden check on its solution (what the
instructor's grader spends per learner and exercise, beyond starting the processes), then the
wall-clock time to grade each correct submission (the sample and every set's solution notebook)
with the bubblewrap sandbox and without it, side by side.

CPU rates use ``time.process_time`` (best of 3), so other work on the machine does not skew them.
The sandbox comparison is wall-clock (the work is in child processes); both modes run
alternately, best of 2 each, so load on the machine hits both alike.

Run: ``python -m bench grading`` (``--quick``: a smoke run of seconds, two hidden seeds per
exercise once, and only set 05's derived sample through the sandbox comparison).

The sample submission is derived from solutions/05 (tests/grading_support.py), not kept by hand:
a hand-kept one fell behind when set 05 got its third question.
"""

from __future__ import annotations

import sys
import tempfile
import time
import warnings
from pathlib import Path

import nbformat

from course_lib.grading import sandbox
from course_lib.grading.autograder import Grader, grade_notebook
from course_lib.grading.registry import EXERCISES, evaluate
from course_lib.grading.hidden import seeds_for
from tests.grading_support import correct_submission

ROOT = Path(__file__).resolve().parents[1]


def solution_answers() -> dict:
    namespace: dict = {"__name__": "__main__"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for path in sorted((ROOT / "solutions").glob("*.ipynb")):
            for cell in nbformat.read(path, as_version=4).cells:
                if cell.cell_type == "code" and "check(" not in cell.source:
                    exec(compile(cell.source, str(path), "exec"), namespace)
    return namespace


def main(quick: bool = False) -> None:
    namespace = solution_answers()
    print(f"{'exercise':10} {'kind':10} {'hidden seeds':>12} {'CPU s':>8}  status")
    total = 0.0
    for ex in EXERCISES.values():
        answer = tuple(namespace[f] for f in ex.functions) if ex.is_implementation else namespace[ex.id]
        seeds = seeds_for(ex)[:2] if quick else seeds_for(ex)
        best = float("inf")
        for _ in range(1 if quick else 3):
            start = time.process_time()
            report = evaluate(ex.id, answer, seeds=seeds)
            best = min(best, time.process_time() - start)
        total += best
        print(f"{ex.id:10} {ex.kind:10} {len(seeds):>12} {best:>8.3f}  {report.status}")
    print(f"{'all':10} {'':10} {'':>12} {total:>8.3f}")
    print()
    sandbox_cost(repeats=1 if quick else 2, solutions=not quick)


def sandbox_cost(repeats: int = 2, solutions: bool = True) -> None:
    problem = sandbox.probe()
    if problem:
        print(f"sandbox comparison skipped: {problem}")
        return
    start_cost = {}
    for sandboxed in (True, False):  # one process that only starts Python and applies the limits
        runs = []
        for _ in range(5):
            start = time.perf_counter()
            sandbox.run(
                [sys.executable, "-c", "from course_lib.grading.sandbox import confine; confine()"],
                sandboxed=sandboxed,
                timeout_s=60,
            )
            runs.append(time.perf_counter() - start)
        start_cost[sandboxed] = min(runs)
    print(f"one process: {start_cost[True] * 1000:.0f} ms in the sandbox, {start_cost[False] * 1000:.0f} ms without")
    scratch = tempfile.TemporaryDirectory(prefix="bench-grading-")
    sample = correct_submission("05", Path(scratch.name) / "correct_05.ipynb")
    submissions = [sample] + (sorted((ROOT / "solutions").glob("*.ipynb")) if solutions else [])
    print(f"{'submission':48} {'points':>9} {'sandbox s':>10} {'no sandbox s':>13} {'cost s':>7}")
    costs = []
    for path in submissions:
        sets = [path.name.split("_")[0]] if path.parent.name == "solutions" else ["05"]
        best = {True: float("inf"), False: float("inf")}
        for _ in range(repeats):
            for sandboxed in (True, False):
                start = time.perf_counter()
                graded = grade_notebook(path, Grader(sandboxed=sandboxed), sets)
                best[sandboxed] = min(best[sandboxed], time.perf_counter() - start)
                max_points = sum(r.max_points for r in graded.reports)
                if graded.total != max_points:
                    raise SystemExit(
                        f"{path.name} scored {graded.total:g}/{max_points:g} "
                        f"({'with' if sandboxed else 'without'} the sandbox): not a correct submission"
                    )
        costs.append(best[True] - best[False])
        name = f"{path.parent.name}/{path.name}" if path != sample else "answers of solutions/05 (derived)"
        print(
            f"{name:48} {graded.total:>4g}/{max_points:<4g} {best[True]:>10.2f} {best[False]:>13.2f} {costs[-1]:>+7.2f}"
        )
    print(f"sandbox cost per submission: median {sorted(costs)[len(costs) // 2]:+.2f} s, max {max(costs):+.2f} s")
    scratch.cleanup()


if __name__ == "__main__":
    main()
