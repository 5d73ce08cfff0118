"""The instructor's autograder: a folder of submitted notebooks -> scores.csv + one feedback file
per learner.

Every piece of learner code runs in the OS sandbox of :mod:`.sandbox` (bubblewrap): the notebook
(:mod:`.submission`) and, for each "implement" exercise, the learner's functions with the check
that calls them (:mod:`.evaluate`), each in a sandbox of its own with CPU, memory, process and
output limits and a wall-clock timeout after which the whole sandbox is killed. The grader gives
those processes files, not pipes, and waits with a deadline, so nothing they do (detached
children, fork bombs, endless output) can make it wait longer than the timeouts.

What comes back is data: the notebook's answers as JSON, checked here with the hidden seeds
(derived from the instructor's secret, which never enters a sandbox); an evaluation's report,
validated and capped. An "implement" exercise's functions run in the same sandboxed process as
its check, so hostile code there can change its own report: that costs nobody else anything.
Without bubblewrap the grader refuses to run unless told ``--no-sandbox``; then learner code runs
as the instructor's user and every feedback file says so.
"""

from __future__ import annotations

import ast
import csv
import json
import re
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from . import sandbox
from .answers import decode, definitions, syntax_error
from .registry import EXERCISES, MISSING, evaluate
from .hidden import seeds_for
from .report import ERROR, Report

NO_SANDBOX_WARNING = (
    "WARNING: graded without the sandbox (--no-sandbox): this notebook's code ran with the "
    "instructor's files, network and processes within reach."
)


@dataclass
class Limits:
    submission_s: float = 300.0  # the whole notebook
    cell_s: float = 60.0  # one cell
    implementation_s: float = 120.0  # one "implement" exercise's hidden check
    memory_mb: int = 2048  # per process
    processes: int = 64  # per sandbox
    output_mb: int = 16  # largest file a sandbox writes (its output included)

    def confinement(self, seconds: float) -> sandbox.Confinement:
        return sandbox.Confinement(
            cpu_s=int(seconds) + 5, memory_mb=self.memory_mb, processes=self.processes, output_mb=self.output_mb
        )


@dataclass
class Grader:
    """How a run grades: the limits, whether learner code is sandboxed, the secret for the seeds."""

    limits: Limits = field(default_factory=Limits)
    sandboxed: bool = True
    secret: str | None = None  # None: $COURSE_GRADING_SECRET or the documented default


@dataclass
class Graded:
    learner: str
    reports: list[Report]
    notes: list[str] = field(default_factory=list)
    sandboxed: bool = True

    @property
    def total(self) -> float:
        return sum(r.points for r in self.reports)


def _last_line(text: str) -> str:
    return (text.strip().splitlines() or ["no output"])[-1][:300]


def _evaluate_implementation(ex, source: str, grader: Grader) -> Report:
    limits = grader.limits
    request = json.dumps({"exercise": ex.id, "source": source, "seeds": list(seeds_for(ex, grader.secret))})
    outcome = sandbox.run(
        [sys.executable, "-m", "course_lib.grading.evaluate"],
        sandboxed=grader.sandboxed,
        timeout_s=limits.implementation_s,
        confinement=limits.confinement(limits.implementation_s),
        stdin=request.encode(),
    )
    if outcome.timed_out:
        return Report(
            ex.id,
            ERROR,
            0,
            ex.points,
            f"your code did not finish within {limits.implementation_s:g} s (an infinite loop?) and was stopped",
            ex.hint,
        )
    try:
        return Report.from_dict(json.loads(outcome.channel), ex.points)
    except (ValueError, KeyError, TypeError, AttributeError, RecursionError):
        why = "it wrote more output than allowed" if outcome.output_exceeded else _last_line(outcome.stderr)
        return Report(ex.id, ERROR, 0, ex.points, f"the evaluation of your code stopped: {why}", ex.hint)


def _read_state(channel: bytes, stderr: str) -> dict:
    """The last complete snapshot the notebook's process wrote (one JSON line per snapshot),
    read as untrusted data."""
    for line in reversed(channel.splitlines()):
        try:
            state = json.loads(line)
            errors, answers = state.get("errors", []), state.get("answers", {})
            cells = state.get("cells", [])
            if not (isinstance(errors, list) and isinstance(answers, dict) and isinstance(cells, list)):
                raise ValueError("malformed answers")
            return {
                "errors": [str(e)[:500] for e in errors[:50]],
                "answers": answers,
                "cells": [str(c)[:10] for c in cells[:10_000]],
            }
        except (ValueError, AttributeError, RecursionError):
            continue
    return {"errors": [f"the notebook could not be run: {_last_line(stderr)}"], "answers": {}, "cells": []}


def _code_cells(path: Path) -> list[str]:
    """The submitted notebook's code cells as Python (IPython magics turned into calls)."""
    try:
        nb = json.loads(path.read_text(encoding="utf-8"))
        sources = [
            c["source"] if isinstance(c["source"], str) else "".join(c["source"])
            for c in nb["cells"]
            if c.get("cell_type") == "code"
        ]
    except Exception:
        return []
    try:
        from IPython.core.inputtransformer2 import TransformerManager

        return [TransformerManager().transform_cell(s) for s in sources]
    except ImportError:
        return sources


def _lesson(ex) -> str:
    """The lesson number of an exercise's notebook: "05" for 05_consumer..., "05b" for 05b_consumer_groups."""
    return ex.notebook.split("_", 1)[0]


def exercise_sets(notebooks: list[Path]) -> list[str]:
    """The exercise sets ("05", ...) the submissions answer: every set whose ids (``ex05_q1``) appear
    in any of them. Found over the whole folder, so a broken notebook is graded out of the same
    maximum as its neighbours."""
    found = set()
    for nb in notebooks:
        try:
            found |= set(re.findall(r"ex(\d\d[a-z]?)_q\d+", nb.read_text(errors="replace")))
        except OSError:
            pass
    known = {_lesson(ex) for ex in EXERCISES.values()}
    return sorted(found & known)


def _assigning_cells(cells: list[str], exercise_id: str) -> list[int]:
    """The (1-based) code cells that assign ``exercise_id`` at top level."""
    found = []
    for number, source in enumerate(cells, 1):
        try:
            tree = ast.parse(source)
        except SyntaxError:
            continue
        targets = [
            t
            for node in tree.body
            if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign))
            for t in (node.targets if isinstance(node, ast.Assign) else [node.target])
        ]
        if any(isinstance(t, ast.Name) and t.id == exercise_id for t in targets):
            found.append(number)
    return found


def _unfinished(ex, state: dict, cells: list[str], limits: Limits, notebook_stopped: bool) -> Report | None:
    """Why an answer is missing when the cell that sets it did not finish (or never ran because the
    notebook was stopped): "did not finish", not "not attempted"."""
    ran = state["cells"]
    for number in reversed(_assigning_cells(cells, ex.id)):
        status = ran[number - 1] if number <= len(ran) else None
        if status == "timeout":
            why = f"cell In [{number}], which sets {ex.id}, did not finish within {limits.cell_s:g} s and was stopped"
        elif status is None and notebook_stopped:
            why = (
                f"the notebook was stopped after {limits.submission_s:g} s, before cell In [{number}], "
                f"which sets {ex.id}, finished"
            )
        elif status == "raised":
            why = f"cell In [{number}], which sets {ex.id}, raised an exception (see the notes above)"
        else:
            continue
        return Report(ex.id, ERROR, 0, ex.points, why, ex.hint)
    return None


def _grade_exercise(ex, state: dict, cells: list[str], grader: Grader, notebook_stopped: bool) -> Report:
    broken = syntax_error(cells, ex.functions or (ex.id,))  # the answer cell never ran: say why
    if ex.is_implementation:
        source = definitions(cells, ex.functions)
        if source is None:
            if broken:
                return Report(ex.id, ERROR, 0, ex.points, broken, ex.hint)
            return evaluate(ex.id, tuple(MISSING for _ in ex.functions))
        return _evaluate_implementation(ex, source, grader)
    try:
        answer = decode(state["answers"].get(ex.id, {"missing": True}))
    except Exception:  # malformed: as if nothing was answered
        answer = MISSING
    if answer is MISSING:
        unfinished = _unfinished(ex, state, cells, grader.limits, notebook_stopped)
        if unfinished:
            return unfinished
        if broken:
            return Report(ex.id, ERROR, 0, ex.points, broken, ex.hint)
    return evaluate(ex.id, answer, seeds=seeds_for(ex, grader.secret))


def grade_notebook(path: Path, grader: Grader | None = None, sets: list[str] | None = None) -> Graded:
    grader = grader or Grader()
    limits = grader.limits
    notes: list[str] = []
    outcome = sandbox.run(
        [sys.executable, "-m", "course_lib.grading.submission", "--cell-timeout", str(limits.cell_s)],
        sandboxed=grader.sandboxed,
        timeout_s=limits.submission_s,
        confinement=limits.confinement(limits.submission_s),
        notebook=path,
    )
    # The snapshots were written by the submission's process: untrusted data.
    state = _read_state(outcome.channel, outcome.stderr)
    notes += state["errors"]
    cells = _code_cells(path)  # definitions come from the submitted file, not from the child
    if outcome.timed_out:
        notes.append(
            f"the notebook did not finish within {limits.submission_s:g} s and was stopped; "
            f"answers set before that point were graded"
        )
    if outcome.output_exceeded:
        notes.append(f"the notebook wrote more than {limits.output_mb} MB of output; writes past that failed")
    reports = []
    for ex in EXERCISES.values():
        if sets is not None and _lesson(ex) not in sets:
            continue
        try:
            reports.append(_grade_exercise(ex, state, cells, grader, outcome.timed_out))
        except Exception as exc:  # a grader bug must cost one exercise, not the whole folder
            reports.append(
                Report(
                    ex.id,
                    ERROR,
                    0,
                    ex.points,
                    f"the grader could not evaluate this answer ({type(exc).__name__}: {exc}); tell the instructor",
                )
            )
    return Graded(path.stem, reports, notes, grader.sandboxed)


def feedback_text(graded: Graded) -> str:
    max_total = sum(r.max_points for r in graded.reports)
    lines = [f"Feedback for {graded.learner}: {graded.total:g} / {max_total:g} points", ""]
    if not graded.sandboxed:
        lines += [NO_SANDBOX_WARNING, ""]
    if graded.notes:
        lines += ["Notes on running your notebook:"] + [f"  - {n}" for n in graded.notes] + [""]
    lines += ["The grader runs other seeds than check() in your notebook, so a failure here may not show there.", ""]
    lines += [r.text(show_seeds=False) for r in graded.reports]
    return "\n".join(lines) + "\n"


def grade_folder(
    submissions: Path,
    out_csv: Path,
    feedback_dir: Path | None = None,
    grader: Grader | None = None,
    sets: list[str] | None = None,
    jobs: int = 2,
    progress=print,
) -> list[Graded]:
    """Grade every ``*.ipynb`` in ``submissions`` (``jobs`` at a time: the work is in child
    processes). ``sets``: the exercise sets to grade, e.g. ["05"]; by default the ones the
    submissions mention. Raises :class:`sandbox.SandboxUnavailable` when the grader is sandboxed
    and the sandbox does not work here."""
    grader = grader or Grader()
    submissions, out_csv = Path(submissions), Path(out_csv)
    notebooks = sorted(submissions.glob("*.ipynb"))
    if not notebooks:
        raise SystemExit(f"no .ipynb files in {submissions}: pass the folder that holds the submitted notebooks")
    feedback_dir = Path(feedback_dir) if feedback_dir else out_csv.with_name(out_csv.stem + "_feedback")
    sets = sets or exercise_sets(notebooks)
    if not sets:
        raise SystemExit(
            f"the notebooks in {submissions} answer none of the exercises (ex01_q1 ...): pass --sets, e.g. --sets 05"
        )
    known = sorted({_lesson(ex) for ex in EXERCISES.values()})
    unknown = [x for x in sets if x not in known]
    if unknown:
        raise SystemExit(f"no exercise set {', '.join(unknown)}; the sets are {', '.join(known)}")
    chosen = [ex for ex in EXERCISES.values() if _lesson(ex) in sets]
    # only now, after the checks of what was passed: a wrong folder is named as such on any machine
    if grader.sandboxed:
        problem = sandbox.probe()
        if problem:
            raise sandbox.SandboxUnavailable(problem)
    feedback_dir.mkdir(parents=True, exist_ok=True)
    max_total = sum(ex.points for ex in chosen)
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        results = list(pool.map(lambda nb: grade_notebook(nb, grader, sets), notebooks))
    with open(out_csv, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["learner", "total", "max"] + [ex.id for ex in chosen])
        for graded in results:
            by_id = {r.exercise: r.points for r in graded.reports}
            writer.writerow(
                [graded.learner, f"{graded.total:g}", f"{max_total:g}"] + [f"{by_id.get(ex.id, 0):g}" for ex in chosen]
            )
            (feedback_dir / f"{graded.learner}.txt").write_text(feedback_text(graded))
            progress(f"{graded.learner}: {graded.total:g} / {max_total:g} points")
    return results
