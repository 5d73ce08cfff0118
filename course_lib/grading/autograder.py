"""The instructor's autograder: a folder of submitted notebooks -> scores.csv + one feedback file
per learner.

Isolation: each submission runs in its own process (:mod:`.submission`) in a fresh temporary
directory holding only a copy of the notebook, with a minimal environment, its own process group
and a time limit (the whole group is killed when it runs over). That process hands back the
answers as JSON data; value answers are checked here, in the grader's process, with the hidden
seeds. Functions travel as source text and are checked in another time-limited process
(:mod:`.evaluate`). So an infinite loop, an exception or a broken notebook costs that learner
the affected points and nothing else, and the submission's process cannot import the hidden checks.
"""
from __future__ import annotations

import csv
import re
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from .answers import decode, definitions
from .exercises import EXERCISES, MISSING, evaluate
from .hidden import seeds_for
from .report import ERROR, Report


@dataclass
class Limits:
    submission_s: float = 300.0  # the whole notebook
    cell_s: float = 60.0         # one cell
    implementation_s: float = 120.0  # one "implement" exercise's hidden check
    memory_mb: int = 2048


@dataclass
class Graded:
    learner: str
    reports: list[Report]
    notes: list[str] = field(default_factory=list)

    @property
    def total(self) -> float:
        return sum(r.points for r in self.reports)


def _limit_memory(mb: int):
    def preexec():
        import resource
        resource.setrlimit(resource.RLIMIT_AS, (mb * 2**20, mb * 2**20))
    return preexec


def _run_isolated(cmd: list[str], cwd: str, timeout_s: float, limits: Limits, stdin: str | None = None):
    """Run ``cmd`` in its own session; on timeout kill the whole process group."""
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": cwd, "LANG": "C.UTF-8",
           "MPLBACKEND": "Agg", "PYTHONNOUSERSITE": "1", "PYTHONDONTWRITEBYTECODE": "1"}
    for keep in ("COURSE_KAFKA_BOOTSTRAP", "COURSE_GRADE_SPARK", "JAVA_HOME", "SPARK_LOCAL_IP", "PYSPARK_PYTHON"):
        if keep in os.environ:
            env[keep] = os.environ[keep]
    proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True,
                            preexec_fn=_limit_memory(limits.memory_mb))
    try:
        out, err = proc.communicate(stdin, timeout=timeout_s)
        return proc.returncode, out, err, False
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        return proc.returncode, out, err, True


def _evaluate_implementation(ex, source: str, workdir: str, limits: Limits) -> Report:
    request = json.dumps({"exercise": ex.id, "source": source, "seeds": list(seeds_for(ex))})
    code, out, err, timed_out = _run_isolated([sys.executable, "-m", "course_lib.grading.evaluate"], workdir,
                                              limits.implementation_s, limits, request)
    if timed_out:
        return Report(ex.id, ERROR, 0, ex.points, f"your code did not finish within {limits.implementation_s:g} s "
                                                  f"(an infinite loop?)", ex.hint)
    marker = out.rfind("@@REPORT@@")
    if marker < 0:
        last = (err.strip().splitlines() or ["no output"])[-1]
        return Report(ex.id, ERROR, 0, ex.points, f"the evaluation of your code stopped: {last}", ex.hint)
    data = json.loads(out[marker + len("@@REPORT@@"):])
    report = Report(ex.id, data["status"], data["points"], data["max_points"])
    report.text = lambda text=data["feedback"]: text  # keep the evaluation process's wording
    return report


def _read_state(answers_file: Path, stderr: str) -> dict:
    try:
        state = json.loads(answers_file.read_text())
        errors, answers = state.get("errors", []), state.get("answers", {})
        if not (isinstance(errors, list) and isinstance(answers, dict)):
            raise ValueError("malformed answers file")
        return {"errors": [str(e)[:500] for e in errors[:50]], "answers": answers}
    except (OSError, ValueError, AttributeError, RecursionError):
        last = (stderr.strip().splitlines() or ["no output"])[-1]
        return {"errors": [f"the notebook could not be run: {last}"], "answers": {}}


def _code_cells(path: Path) -> list[str]:
    """The submitted notebook's code cells as Python (IPython magics turned into calls)."""
    try:
        nb = json.loads(path.read_text(encoding="utf-8"))
        sources = [c["source"] if isinstance(c["source"], str) else "".join(c["source"])
                   for c in nb["cells"] if c.get("cell_type") == "code"]
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


def _grade_exercise(ex, state: dict, cells: list[str], workdir: str, limits: Limits) -> Report:
    if ex.is_implementation:
        source = definitions(cells, ex.functions)
        if source is None:
            return evaluate(ex.id, tuple(MISSING for _ in ex.functions))
        return _evaluate_implementation(ex, source, workdir, limits)
    try:
        answer = decode(state["answers"].get(ex.id, {"missing": True}))
    except Exception:  # malformed: as if nothing was answered
        answer = MISSING
    return evaluate(ex.id, answer, seeds=seeds_for(ex))


def grade_notebook(path: Path, limits: Limits = Limits(), sets: list[str] | None = None) -> Graded:
    learner = path.stem
    notes: list[str] = []
    with tempfile.TemporaryDirectory(prefix="grading-") as workdir:
        shutil.copy(path, Path(workdir) / "submission.ipynb")
        answers_file = Path(workdir) / "answers.json"
        _, _, err, timed_out = _run_isolated(
            [sys.executable, "-m", "course_lib.grading.submission", "submission.ipynb", str(answers_file),
             "--cell-timeout", str(limits.cell_s)], workdir, limits.submission_s, limits)
        # The answers file was written by the submission's process: treat it as untrusted data.
        state = _read_state(answers_file, err)
        notes += state["errors"]
        cells = _code_cells(path)  # definitions come from the submitted file, not from the child
        if timed_out:
            notes.append(f"the notebook did not finish within {limits.submission_s:g} s and was stopped; "
                         f"answers set before that point were graded")
        reports = []
        for ex in EXERCISES.values():
            if sets is not None and _lesson(ex) not in sets:
                continue
            try:
                reports.append(_grade_exercise(ex, state, cells, workdir, limits))
            except Exception as exc:  # a grader bug must cost one exercise, not the whole folder
                reports.append(Report(ex.id, ERROR, 0, ex.points, f"the grader could not evaluate this answer "
                                                                  f"({type(exc).__name__}: {exc}); tell the instructor"))
    return Graded(learner, reports, notes)


def feedback_text(graded: Graded) -> str:
    max_total = sum(r.max_points for r in graded.reports)
    lines = [f"Feedback for {graded.learner}: {graded.total:g} / {max_total:g} points", ""]
    if graded.notes:
        lines += ["Notes on running your notebook:"] + [f"  - {n}" for n in graded.notes] + [""]
    lines += [r.text() for r in graded.reports]
    return "\n".join(lines) + "\n"


def grade_folder(submissions: Path, out_csv: Path, feedback_dir: Path | None = None,
                 limits: Limits = Limits(), sets: list[str] | None = None, jobs: int = 2,
                 progress=print) -> list[Graded]:
    """Grade every ``*.ipynb`` in ``submissions`` (``jobs`` at a time: the work is in child
    processes). ``sets``: the exercise sets to grade, e.g. ["05"]; by default the ones the
    submissions mention."""
    submissions, out_csv = Path(submissions), Path(out_csv)
    notebooks = sorted(submissions.glob("*.ipynb"))
    if not notebooks:
        raise SystemExit(f"no .ipynb files in {submissions}: pass the folder that holds the submitted notebooks")
    feedback_dir = Path(feedback_dir) if feedback_dir else out_csv.with_name(out_csv.stem + "_feedback")
    feedback_dir.mkdir(parents=True, exist_ok=True)
    sets = sets or exercise_sets(notebooks)
    if not sets:
        raise SystemExit(f"the notebooks in {submissions} answer none of the exercises (ex01_q1 ...): "
                         f"pass --sets, e.g. --sets 05")
    known = sorted({_lesson(ex) for ex in EXERCISES.values()})
    unknown = [x for x in sets if x not in known]
    if unknown:
        raise SystemExit(f"no exercise set {', '.join(unknown)}; the sets are {', '.join(known)}")
    chosen = [ex for ex in EXERCISES.values() if _lesson(ex) in sets]
    max_total = sum(ex.points for ex in chosen)
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        results = list(pool.map(lambda nb: grade_notebook(nb, limits, sets), notebooks))
    with open(out_csv, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["learner", "total", "max"] + [ex.id for ex in chosen])
        for graded in results:
            by_id = {r.exercise: r.points for r in graded.reports}
            writer.writerow([graded.learner, f"{graded.total:g}", f"{max_total:g}"]
                            + [f"{by_id.get(ex.id, 0):g}" for ex in chosen])
            (feedback_dir / f"{graded.learner}.txt").write_text(feedback_text(graded))
            progress(f"{graded.learner}: {graded.total:g} / {max_total:g} points")
    return results
