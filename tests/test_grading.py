"""Graded exercises: generated notebooks up to date, every solution passes, untouched exercises
say "not attempted", wrong types get a clear message, and the instructor's grader scores the
sample submissions as expected while keeping each submission in its own process."""

import csv
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import warnings
from pathlib import Path

import nbformat
import pytest

from course_lib.grading import EXERCISES, check, check_all, sandbox
from course_lib.grading.answers import decode, definitions, encode
from course_lib.grading.registry import MISSING, evaluate
from course_lib.grading.hidden import seeds_for
from course_lib.grading.generate import MarkerError, generate, render
from course_lib.grading.report import NOT_ATTEMPTED, PASSED, WRONG_TYPE
from tests.grading_support import correct_submission

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "tests" / "grading_samples"
SETS = sorted({ex.notebook for ex in EXERCISES.values()})


def run_cells(path: Path) -> dict:
    """Run a notebook's code cells in one namespace, as "Run all" does."""
    namespace = {"__name__": "__main__"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for cell in nbformat.read(path, as_version=4).cells:
            if cell.cell_type == "code":
                exec(compile(cell.source, str(path), "exec"), namespace)
    return namespace


# ---- generated folders ---------------------------------------------------------------------------
def test_one_exercise_set_per_notebook_01_to_10():
    assert {f"{i:02d}" for i in range(1, 11)} <= {ex.notebook.split("_", 1)[0] for ex in EXERCISES.values()}
    kinds = {ex.kind for ex in EXERCISES.values()}
    assert {"predict", "choose", "implement"} <= kinds


def test_each_lesson_names_as_many_questions_as_its_exercise_set_has():
    """A lesson's link to its exercises says "- N questions": N is the set's count (05c said 4
    when ex05c_q5 was the fifth)."""
    import re

    for notebook in SETS:
        lesson = ROOT / "notebooks" / f"{notebook}.ipynb"
        if not lesson.exists():
            continue
        stated = re.findall(r"\u2014 (\d+) questions?;", lesson.read_text(encoding="utf-8"))
        have = sum(1 for ex in EXERCISES.values() if ex.notebook == notebook)
        assert stated in ([], [str(have)]), f"{lesson.name} says {stated} questions; its set has {have}"


def test_generated_exercises_and_solutions_are_up_to_date(tmp_path):
    generate(ROOT / "exercises_src", tmp_path / "exercises", tmp_path / "solutions")
    for folder in ("exercises", "solutions"):
        fresh = {p.name: p.read_text() for p in (tmp_path / folder).glob("*.ipynb")}
        committed = {p.name: p.read_text() for p in (ROOT / folder).glob("*.ipynb")}
        assert fresh == committed, f"{folder}/ is out of date: run `make exercises` and commit the result"


def test_learner_versions_hold_no_solution_and_no_output():
    for path in (ROOT / "exercises").glob("*.ipynb"):
        nb = nbformat.read(path, as_version=4)
        src = nbformat.read(ROOT / "exercises_src" / path.name, as_version=4)
        solution_lines = {
            line.split("#")[0].strip() for c in src.cells for line in c.source.split("\n") if "# SOLUTION" in line
        }
        text = "\n".join(c.source for c in nb.cells)
        assert "SOLUTION" not in text, path.name
        for line in solution_lines:
            assert line not in text, f"{path.name} leaks {line!r}"
        assert all(not c.get("outputs") for c in nb.cells if c.cell_type == "code")


def test_markers():
    nb = nbformat.v4.new_notebook(
        cells=[
            nbformat.v4.new_code_cell("x = 42  # SOLUTION\nd = {\n    'a': 1,  # SOLUTION\n}"),
            nbformat.v4.new_code_cell("def f():\n    # BEGIN SOLUTION\n    return 1\n    # END SOLUTION"),
            nbformat.v4.new_markdown_cell("Q\n<!-- BEGIN SOLUTION -->\nA\n<!-- END SOLUTION -->"),
        ]
    )
    learner, instructor = render(nb, True), render(nb, False)
    assert learner.cells[0].source == "x = ...  # YOUR ANSWER HERE\nd = {\n    'a': ...,  # YOUR ANSWER HERE\n}"
    assert learner.cells[1].source == "def f():\n    ...  # YOUR CODE HERE"
    assert learner.cells[2].source.strip() == "Q"
    assert instructor.cells[0].source == "x = 42\nd = {\n    'a': 1,\n}"
    assert instructor.cells[1].source == "def f():\n    return 1"
    assert instructor.cells[2].source == "Q\nA"
    broken = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("# BEGIN SOLUTION\nx = 1")])
    with pytest.raises(MarkerError, match="without # END SOLUTION"):
        render(broken, True)


# ---- learner-facing check() ----------------------------------------------------------------------
@pytest.mark.parametrize("notebook", SETS)
def test_every_solution_passes(notebook):
    namespace = run_cells(ROOT / "solutions" / f"{notebook}.ipynb")
    reports = check_all(notebook.split("_", 1)[0] + "_", namespace)
    assert reports and all(r.status == PASSED for r in reports), "\n".join(map(str, reports))
    for ex in (e for e in EXERCISES.values() if e.notebook == notebook):  # and with the grader's seeds
        answer = tuple(namespace[f] for f in ex.functions) if ex.is_implementation else namespace[ex.id]
        report = evaluate(ex.id, answer, seeds=seeds_for(ex))
        assert report.status == PASSED, report.text()


@pytest.mark.parametrize("notebook", SETS)
def test_untouched_exercises_report_not_attempted(notebook):
    namespace = run_cells(ROOT / "exercises" / f"{notebook}.ipynb")  # their check() cells run too
    for report in check_all(notebook.split("_", 1)[0] + "_", namespace):
        assert report.status == NOT_ATTEMPTED, report
        assert "not attempted yet" in report.text() and "Traceback" not in report.text()


@pytest.mark.parametrize(
    "exercise, answer, says",
    [
        ("ex02_q1", "10", "expects a whole number (int)"),
        ("ex02_q1", 10.0, "you gave a float"),
        ("ex05_q1", "mid_batch", "expects a set of strings"),
        ("ex05_q1", {"crash"}, "not among the allowed values"),
        ("ex02_q2", {"producer": {"acks": "all"}}, "missing the key(s) 'topic'"),
        ("ex06_q2", "committed", "expects one of"),
        ("ex05_q2", (42,), "expects a function"),
    ],
)
def test_wrong_type_says_what_is_expected(exercise, answer, says):
    report = evaluate(exercise, answer)
    assert report.status == WRONG_TYPE and says in report.text(), report.text()


def test_check_reads_the_notebook_variable_and_gives_hint_and_seed_on_failure():
    ex02_q2 = {"producer": {"acks": 1, "enable_idempotence": False}, "topic": {"min_insync_replicas": 1}}  # noqa: F841
    report = check("ex02_q2")
    assert report.status == "failed"
    # the failing run itself, configuration and seed included (not the check again)
    assert (
        'reproduce: from course_lib.experiments.scenarios import run_scenario; print(run_scenario("random_faults", seed='
        in (report.text())
        and "Hint:" in report.text()
    )
    assert "acks='all'" not in report.text() and '"all"' not in report.text()  # no solution in the feedback


def test_guessing_a_configuration_fails_somewhere():
    # acks=1 may survive a few schedules, never all of them
    assert (
        evaluate(
            "ex02_q2", {"producer": {"acks": 1, "enable_idempotence": False}, "topic": {"min_insync_replicas": 2}}
        ).status
        == "failed"
    )
    assert evaluate("ex03_q2", {"enable_idempotence": False, "acks": "all"}).status == "failed"
    # 05c's slow handler: more deliveries allowed only means more duplicates; the lock must outlast
    # the handler (or be renewed), and a lock just over the default is still too short for 40 s
    for settings in ({"delivery_count_limit": 10}, {"lock_ms": 35_000}):
        assert evaluate("ex05c_q4", settings).status == "failed", settings
    assert evaluate("ex05c_q4", {"lock_ms": 45_000}).status == "passed"


def test_broken_implementations_fail_with_their_seed():
    def store(db, record):  # output and offset in two transactions: a crash between them duplicates
        db.execute("INSERT INTO output VALUES (?)", (record.value.decode(),))
        db.execute(
            "INSERT OR REPLACE INTO offsets VALUES (?, ?, ?)", (record.topic, record.partition, record.offset + 1)
        )

    def resume_positions(db):
        return {(t, p): o for t, p, o in db.execute("SELECT topic, partition, next_offset FROM offsets")}

    report = evaluate("ex07_q1", (store, resume_positions))
    assert report.status == "failed" and "processed twice" in report.text() and "reproduce: check(" in report.text()

    def process_batch(consumer, producer, records):  # offsets committed after, not inside, the transaction
        producer.begin_transaction()
        for record in records:
            producer.send("output", record.value, key=record.key)
        producer.commit_transaction()
        consumer.commit()

    assert evaluate("ex06_q3", (process_batch,)).status == "failed"

    def write_batch(batch_df, batch_id, db):  # not idempotent: a replayed batch is written twice
        for row in batch_df.collect():
            db.execute("INSERT INTO orders VALUES (?, ?)", (row["key"], row["value"]))

    assert evaluate("ex10_q1", (write_batch,)).status == "failed"


def test_answers_travel_as_data():
    for value in (3, "x", {"a": {"b": [1, 2]}}, {"after_poll"}, None, Ellipsis, MISSING):
        assert decode(json.loads(json.dumps(encode(value)))) == value or value is MISSING
    opaque = decode(encode(object()))
    assert evaluate("ex02_q1", opaque).status == WRONG_TYPE


def test_definitions_take_imports_functions_and_constants_only():
    cells = ["import os\nN = 3\nprint('side effect')", "def f():\n    return N\n\nf()\nwhile True: pass"]
    source = definitions(cells, ("f",))
    assert "import os" in source and "N = 3" in source and "def f" in source
    assert "print" not in source and "while True" not in source
    assert definitions(cells, ("g",)) is None


# ---- the instructor's grader ---------------------------------------------------------------------
def test_submission_process_cannot_import_hidden_checks(tmp_path):
    nb = nbformat.v4.new_notebook(
        cells=[
            nbformat.v4.new_code_cell(
                "try:\n    import course_lib.grading.hidden\n    ex02_q1 = 'leaked'\nexcept ImportError:\n    ex02_q1 = 7"
            )
        ]
    )
    path = tmp_path / "nb.ipynb"
    nbformat.write(nb, path)
    subprocess.run(
        [sys.executable, "-m", "course_lib.grading.submission", str(path), "--answers", str(tmp_path / "a.json")],
        check=True,
        cwd=tmp_path,
    )
    answers = json.loads((tmp_path / "a.json").read_text().splitlines()[-1])["answers"]
    assert decode(answers["ex02_q1"]) == 7


EXPECTED = {  # learner -> (total, ex05_q1, ex05_q2)
    "correct": (5, 1, 2),  # derived from solutions/05 (tests/grading_support.py): every question of the set
    "partial": (1, 1, 0),  # commits before writing: loses messages under crashes
    "wrong_type": (2, 0, 2),  # a string instead of a set for ex05_q1
    "raising": (1, 1, 0),  # a cell raises; the function raises
    "infinite_loop": (1, 1, 0),  # a cell loops (stopped by the cell limit); the function loops (evaluation limit)
    "hangs": (1, 1, 0),  # defeats the cell limit: the whole process group is killed; earlier answers count
    "broken": (0, 0, 0),  # not a notebook
    "untouched": (0, 0, 0),  # the learner version as generated
}


def test_instructor_command_scores_the_sample_submissions(tmp_path):
    out = tmp_path / "scores.csv"
    submissions = tmp_path / "submissions"
    shutil.copytree(SAMPLES, submissions)
    correct_submission("05", submissions / "correct.ipynb")
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "course_lib.grading",
            "grade",
            str(submissions),
            "--out",
            str(out),
            "--timeout",
            "30",
            "--cell-timeout",
            "3",
            "--implementation-timeout",
            "20",
        ]
        # the scoring is what this test checks; tests/test_grading_sandbox.py checks the sandbox (or says why not)
        + (["--no-sandbox"] if sandbox.probe() else []),
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    rows = {r["learner"]: r for r in csv.DictReader(out.open())}
    assert set(rows) == set(EXPECTED)
    for learner, (total, q1, q2) in EXPECTED.items():
        got = (float(rows[learner]["total"]), float(rows[learner]["ex05_q1"]), float(rows[learner]["ex05_q2"]))
        assert got == (total, q1, q2), (learner, got, (tmp_path / "scores_feedback" / f"{learner}.txt").read_text())
        assert rows[learner]["max"] == "5"  # ex05_q1, ex05_q2 and ex05_q3 (answered only by the correct one)
    assert float(rows["correct"]["ex05_q3"]) == 2
    feedback = tmp_path / "scores_feedback"
    assert "not attempted yet" in (feedback / "untouched.txt").read_text()
    assert "expects a set of strings" in (feedback / "wrong_type.txt").read_text()
    assert "did not finish" in (feedback / "infinite_loop.txt").read_text()
    assert "was stopped" in (feedback / "hangs.txt").read_text()
    assert "could not be read" in (feedback / "broken.txt").read_text()
    partial = (feedback / "partial.txt").read_text()
    assert "never processed" in partial
    assert "seed" not in partial.replace("other seeds than check()", "")  # hidden seeds are no use to a learner
    assert not any(str(seed) in partial for seed in seeds_for(EXERCISES["ex05_q2"]))


def test_grade_without_notebooks_says_what_to_pass(tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "course_lib.grading", "grade", str(tmp_path)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert result.returncode != 0 and "no .ipynb files" in result.stderr


def test_a_bwrap_that_fails_is_reported_with_its_own_error(tmp_path):
    """A bubblewrap that is installed but cannot set up the sandbox (here a stand-in that fails as
    bwrap does without user namespaces): the grader quotes bwrap's error, not an install hint."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    fake = bindir / "bwrap"
    fake.write_text("#!/bin/sh\necho 'bwrap: setting up uid map: Permission denied' >&2\nexit 1\n")
    fake.chmod(0o755)
    submissions = tmp_path / "submissions"
    submissions.mkdir()
    correct_submission("05", submissions / "correct.ipynb")
    result = subprocess.run(
        [sys.executable, "-m", "course_lib.grading", "grade", str(submissions), "--out", str(tmp_path / "s.csv")],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**os.environ, "PATH": f"{bindir}:/usr/bin:/bin"},
    )
    assert result.returncode == 2 and not (tmp_path / "s.csv").exists(), result.stderr
    assert "bwrap: setting up uid map: Permission denied" in result.stderr
    assert "user namespaces" in result.stderr and "apt-get install" not in result.stderr


def test_a_sandbox_that_cannot_start_is_explained_by_its_real_cause():
    execvp = sandbox.diagnose(
        "bwrap: execvp /tmp/c/.venv/bin/python: No such file or directory\n", "/tmp/c/.venv/bin/python"
    )
    assert "could not execute /tmp/c/.venv/bin/python" in execvp and "user namespaces" not in execvp
    userns = sandbox.diagnose("bwrap: setting up uid map: Permission denied\n", "python")
    assert "setting up uid map: Permission denied" in userns and "user namespaces" in userns
    python = sandbox.diagnose("Traceback ...\nModuleNotFoundError: No module named 'nbformat'\n", "python")
    assert "No module named 'nbformat'" in python and "bubblewrap" not in python


def test_docstring_examples():
    import doctest

    import course_lib.grading as grading

    assert doctest.testmod(grading, optionflags=doctest.ELLIPSIS).failed == 0


def test_a_forged_answers_file_is_read_as_untrusted_data(tmp_path):
    from course_lib.grading.autograder import _read_state
    from course_lib.grading.report import Report

    for text in (
        '{"errors": "x", "answers": []}',
        "[" * 100_000,
        "not json",
        '{"answers": {"ex02_q1": 5}}',
        '{"cells": 3}',
    ):
        state = _read_state(text.encode(), "")
        assert isinstance(state["errors"], list) and isinstance(state["answers"], dict)
        assert isinstance(state["cells"], list)
    good = '{"errors": [], "answers": {}, "cells": ["ok"]}'
    assert _read_state(f"{good}\n{{torn".encode(), "")["cells"] == ["ok"]  # the last complete snapshot
    forged = Report.from_dict({"exercise": "ex05_q2", "status": "passed", "points": 1e9, "parts": []}, 2)
    assert forged.points == 2  # never more than the exercise is worth


def test_hidden_seeds_come_from_the_secret_for_every_exercise():
    from course_lib.grading.hidden import HIDDEN_SEED_COUNTS

    assert all(isinstance(n, int) and n > 0 for n in HIDDEN_SEED_COUNTS.values())
    for ex in EXERCISES.values():
        a, b = seeds_for(ex, "one secret"), seeds_for(ex, "another secret")
        assert len(a) == HIDDEN_SEED_COUNTS.get(ex.id, len(ex.public_seeds)) == len(set(a))
        assert a == seeds_for(ex, "one secret") and a != b
        assert not set(a) & set(ex.public_seeds)
    hidden_source = (ROOT / "course_lib" / "grading" / "hidden.py").read_text()
    assert "range(" not in hidden_source  # no seed values ship with the course


def test_check_stops_an_infinite_loop_and_says_so():
    def write_batch(batch_df, batch_id, db):
        while True:
            pass

    report = check("ex10_q1", time_limit_s=0.5)
    assert report.status == "error" and "did not finish" in report.text()


def test_without_the_sandbox_a_detached_child_holding_the_output_does_not_block_the_grader(tmp_path):
    """The grader reads files, not pipes: a child in its own session that keeps the notebook's
    stdout open cannot make it wait (without the sandbox that child survives; we end it here)."""
    from course_lib.grading.autograder import Grader, Limits, grade_notebook

    marker = "100023"
    nb = nbformat.v4.new_notebook(
        cells=[
            nbformat.v4.new_code_cell(c)
            for c in [
                "import subprocess, sys\nsubprocess.Popen(['sleep', '"
                + marker
                + "'], start_new_session=True, stdout=sys.stdout)",
                "ex05_q1 = {'after_poll', 'mid_batch'}",
            ]
        ]
    )
    path = tmp_path / "detached.ipynb"
    nbformat.write(nb, path)
    start = time.monotonic()
    try:
        graded = grade_notebook(path, Grader(Limits(submission_s=20, cell_s=5), sandboxed=False), ["05"])
    finally:
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                if Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[:2] == [b"sleep", marker.encode()]:
                    os.kill(int(pid), signal.SIGKILL)
            except OSError:
                pass
    assert time.monotonic() - start < 15
    assert graded.total == 1 and not graded.sandboxed
