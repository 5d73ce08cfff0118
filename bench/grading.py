"""Grading cost: CPU seconds of each exercise's hidden check on its solution (what the
instructor's grader spends per learner and exercise, beyond starting the processes).

Rates use ``time.process_time`` (best of 3), so other work on the machine does not skew them.

Run: ``python -m bench grading``.
"""
from __future__ import annotations

import time
import warnings
from pathlib import Path

import nbformat

from course_lib.grading.exercises import EXERCISES, evaluate
from course_lib.grading.hidden import seeds_for

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


def main() -> None:
    namespace = solution_answers()
    print(f"{'exercise':10} {'kind':10} {'hidden seeds':>12} {'CPU s':>8}  status")
    total = 0.0
    for ex in EXERCISES.values():
        answer = tuple(namespace[f] for f in ex.functions) if ex.is_implementation else namespace[ex.id]
        best = float("inf")
        for _ in range(3):
            start = time.process_time()
            report = evaluate(ex.id, answer, seeds=seeds_for(ex))
            best = min(best, time.process_time() - start)
        total += best
        print(f"{ex.id:10} {ex.kind:10} {len(seeds_for(ex)):>12} {best:>8.3f}  {report.status}")
    print(f"{'all':10} {'':10} {'':>12} {total:>8.3f}")


if __name__ == "__main__":
    main()
