"""Runs one submitted notebook in its own process (started by the grader) and writes the
learner's answers, as data, to a JSON file after every cell - so a cell that never finishes costs
only the answers after it.

    python -m course_lib.grading.submission NOTEBOOK ANSWERS_JSON [--cell-timeout SECONDS]

Cells run in order in one namespace, as "Run all" would, but an exception (or a cell over its
time limit) does not stop the cells after it. ``check()`` calls do nothing here; the grader
evaluates the answers itself. The hidden checks cannot be imported from this process.
"""
from __future__ import annotations

import argparse
import importlib.abc
import json
import os
import signal
import sys
import traceback


class _CellTimeout(BaseException):
    pass


class _BlockHidden(importlib.abc.MetaPathFinder):
    """Refuse to import the grader's hidden checks from a submission."""

    def find_spec(self, fullname, path, target=None):
        if fullname == "course_lib.grading.hidden" or fullname.startswith("solutions"):
            raise ImportError(f"{fullname} is not available to submissions")
        return None


def _to_python(source: str) -> str:
    try:
        from IPython.core.inputtransformer2 import TransformerManager
        return TransformerManager().transform_cell(source)
    except ImportError:
        return source


def main(argv=None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("notebook")
    parser.add_argument("answers")
    parser.add_argument("--cell-timeout", type=float, default=60)
    args = parser.parse_args(argv)
    sys.meta_path.insert(0, _BlockHidden())
    os.environ["COURSE_GRADING_SUBMISSION"] = "1"
    from .answers import encode
    from .exercises import EXERCISES, MISSING

    state = {"cells": [], "errors": [], "answers": {}, "finished": False}

    def snapshot(namespace):
        state["answers"] = {i: encode(namespace.get(i, MISSING)) for i, ex in EXERCISES.items()
                            if not ex.is_implementation}
        tmp = args.answers + ".tmp"
        with open(tmp, "w") as f:
            json.dump(state, f)
        os.replace(tmp, args.answers)

    namespace = {"__name__": "__main__"}
    try:  # plain JSON: nbformat's validator costs seconds to import and is not needed to run cells
        with open(args.notebook, encoding="utf-8") as f:
            nb = json.load(f)
        cells = [c["source"] if isinstance(c["source"], str) else "".join(c["source"])
                 for c in nb["cells"] if c.get("cell_type") == "code"]
    except Exception as exc:
        state["errors"].append(f"the notebook could not be read: {type(exc).__name__}: {exc}")
        snapshot(namespace)
        return 1
    state["cells"] = [_to_python(c) for c in cells]
    snapshot(namespace)

    def on_alarm(signum, frame):
        raise _CellTimeout()

    signal.signal(signal.SIGALRM, on_alarm)
    for number, source in enumerate(state["cells"], 1):
        signal.setitimer(signal.ITIMER_REAL, args.cell_timeout)
        try:
            exec(compile(source, f"<cell {number}>", "exec"), namespace)
        except _CellTimeout:
            state["errors"].append(f"cell {number} did not finish within {args.cell_timeout:g} s and was stopped")
        except BaseException as exc:  # SystemExit too: one cell's failure is not the notebook's
            tb = traceback.format_exception_only(type(exc), exc)[-1].strip()
            state["errors"].append(f"cell {number} raised {tb}")
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
        snapshot(namespace)
    state["finished"] = True
    snapshot(namespace)
    return 0


if __name__ == "__main__":
    sys.exit(main())
