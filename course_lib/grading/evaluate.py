"""Evaluation process for "implement" exercises: reads {"exercise", "source", "seeds"} as JSON on
stdin, defines the learner's functions from the source, runs the check, prints the report as JSON.

It runs learner code, so the grader starts it as a separate process with a time limit; it gets
only the definitions (imports, functions, classes, literal constants) of the notebook, never the
notebook's other statements.
"""
from __future__ import annotations

import json
import sys
import warnings


def main() -> int:
    request = json.load(sys.stdin)
    from .exercises import EXERCISES, MISSING, evaluate
    from .report import ERROR, Report
    ex = EXERCISES[request["exercise"]]
    namespace = {"__name__": "__submission__"}
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            exec(compile(request["source"], "<submission>", "exec"), namespace)
        answer = tuple(namespace.get(name, MISSING) for name in ex.functions)
        report = evaluate(ex.id, answer, seeds=request["seeds"])
    except BaseException as exc:
        report = Report(ex.id, ERROR, 0, ex.points, f"your definitions could not run: {type(exc).__name__}: {exc}")
    sys.stdout.write("\n@@REPORT@@" + json.dumps(report.to_dict()) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
