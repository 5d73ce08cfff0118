"""Evaluation process for "implement" exercises (started by the grader, in the sandbox): reads
{"exercise", "source", "seeds"} as JSON on stdin, defines the learner's functions from the source,
runs the check, and writes the report as JSON to the file descriptor ``$COURSE_GRADING_CHANNEL_FD``.

It runs learner code, so it gets only the definitions (imports, functions, classes, literal
constants) of the notebook, never the notebook's other statements. The learner's functions run
in this process, next to the check: they could read the seeds of this one exercise or write a
report of their own. The sandbox keeps that from reaching anything but this learner's own score.
"""

from __future__ import annotations

import json
import os
import sys
import warnings

from .sandbox import confine


def main() -> int:
    confine()
    request = json.load(sys.stdin)
    channel = os.fdopen(int(os.environ.get("COURSE_GRADING_CHANNEL_FD", "1")), "w")
    from .registry import EXERCISES, MISSING, evaluate
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
    channel.write(json.dumps(report.to_dict()))
    channel.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
