"""Runs one submitted notebook in its own process (started by the grader, in the sandbox) and
reports the learner's answers, as data, after every cell - so a cell that never finishes costs
only the answers after it.

    python -m course_lib.grading.submission [NOTEBOOK] [--answers FILE] [--cell-timeout SECONDS]

Without arguments (how the grader starts it) the notebook is ``$COURSE_GRADING_NOTEBOOK`` and
each snapshot is one JSON line on the file descriptor ``$COURSE_GRADING_CHANNEL_FD``. Cells run
in order in one namespace, as "Run all" would, but an exception (or a cell over its time limit)
does not stop the cells after it. Each snapshot says how every cell ended ("ok", "raised",
"timeout"; cells not listed never ran), numbered 1, 2, ... like the code cells' In [n] after
"Run all". ``check()`` calls do nothing here; the grader evaluates the answers itself.
"""

from __future__ import annotations

import argparse
import importlib.abc
import json
import os
import signal
import sys
import traceback

from .sandbox import confine


class _CellTimeout(BaseException):
    pass


class _BlockHidden(importlib.abc.MetaPathFinder):
    """Refuse to import the grader's seed derivation and the solutions from a submission (the
    secret is not in the sandbox anyway; this keeps the message clear)."""

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
    confine()
    parser = argparse.ArgumentParser()
    parser.add_argument("notebook", nargs="?", default=os.environ.get("COURSE_GRADING_NOTEBOOK"))
    parser.add_argument("--answers", help="append the snapshots to this file (default: the grader's descriptor)")
    parser.add_argument("--cell-timeout", type=float, default=60)
    args = parser.parse_args(argv)
    if not args.notebook:
        parser.error("no notebook: pass its path")
    out = open(args.answers, "ab") if args.answers else os.fdopen(int(os.environ["COURSE_GRADING_CHANNEL_FD"]), "ab")
    sys.meta_path.insert(0, _BlockHidden())
    os.environ["COURSE_GRADING_SUBMISSION"] = "1"
    from .answers import encode
    from .registry import EXERCISES, MISSING

    state = {"cells": [], "errors": [], "answers": {}, "finished": False}
    last = [b""]

    def snapshot(namespace):
        state["answers"] = {
            i: encode(namespace.get(i, MISSING)) for i, ex in EXERCISES.items() if not ex.is_implementation
        }
        line = json.dumps(state).encode() + b"\n"
        if line != last[0]:  # one line per change: the file stays small
            out.write(line)
            out.flush()
            last[0] = line

    namespace = {"__name__": "__main__"}
    try:  # plain JSON: nbformat's validator costs seconds to import and is not needed to run cells
        with open(args.notebook, encoding="utf-8") as f:
            nb = json.load(f)
        cells = [
            c["source"] if isinstance(c["source"], str) else "".join(c["source"])
            for c in nb["cells"]
            if c.get("cell_type") == "code"
        ]
    except Exception as exc:
        state["errors"].append(f"the notebook could not be read: {type(exc).__name__}: {exc}")
        snapshot(namespace)
        return 1
    sources = [_to_python(c) for c in cells]
    snapshot(namespace)

    def on_alarm(signum, frame):
        raise _CellTimeout()

    signal.signal(signal.SIGALRM, on_alarm)
    for number, source in enumerate(sources, 1):
        signal.setitimer(signal.ITIMER_REAL, args.cell_timeout)
        try:
            exec(compile(source, f"<cell In [{number}]>", "exec"), namespace)
            state["cells"].append("ok")
        except _CellTimeout:
            state["cells"].append("timeout")
            state["errors"].append(f"cell In [{number}] did not finish within {args.cell_timeout:g} s and was stopped")
        except BaseException as exc:  # SystemExit too: one cell's failure is not the notebook's
            tb = traceback.format_exception_only(type(exc), exc)[-1].strip()
            state["cells"].append("raised")
            state["errors"].append(f"cell In [{number}] raised {tb}")
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
        try:
            snapshot(namespace)
        except OSError:  # the output limit: the last snapshot that fitted stands
            pass
    state["finished"] = True
    snapshot(namespace)
    return 0


if __name__ == "__main__":
    sys.exit(main())
