"""Predictions cannot be passed by copying a printed number, and the learner-facing messages say
what happened (a function that never returns, a cell that timed out, no hidden seed named).

Table-driven over every "predict" exercise: a new one without an anti-copy rule
(``Exercise.copied``) fails here."""

from __future__ import annotations

import contextlib
import io
import json
import re
import warnings
from pathlib import Path

import nbformat
import pytest

from course_lib.grading import EXERCISES, check
from course_lib.grading.registry import evaluate
from course_lib.grading.hidden import seeds_for
from course_lib.grading.report import FAILED, Part, Report

ROOT = Path(__file__).resolve().parents[1]
PREDICT = sorted(i for i, ex in EXERCISES.items() if ex.kind == "predict")


def _solution_answer(exercise_id: str):
    """The answer the solution notebook assigns (``exNN_qK = value``), evaluated."""
    ex = EXERCISES[exercise_id]
    nb = nbformat.read(ROOT / "solutions" / f"{ex.notebook}.ipynb", as_version=4)
    for c in nb.cells:
        if c.cell_type == "code" and re.match(rf"{exercise_id}\s*=", c.source):
            namespace: dict = {}
            exec(c.source, namespace)
            return namespace[exercise_id]
    raise AssertionError(f"no solution cell assigns {exercise_id}")


def test_there_are_predict_questions_and_35_questions_in_all():
    assert len(EXERCISES) >= 35 and len(PREDICT) >= 10
    lessons = {ex.notebook.split("_", 1)[0] for ex in EXERCISES.values()}
    assert {"01", "02", "03", "04", "05", "05b", "05c", "06", "07", "08", "09", "10", "11"} <= lessons


@pytest.mark.parametrize("exercise_id", PREDICT)
def test_copying_the_printed_number_fails(exercise_id):
    """The copier runs the printed (neighbouring) configuration and submits its number: rejected,
    with the public seeds and with the grader's. The question's own configuration is not printed."""
    ex = EXERCISES[exercise_id]
    assert ex.copied is not None and ex.copied_from, (
        f"{exercise_id} is a prediction without an anti-copy rule: ask about a configuration no notebook "
        f"prints and set copied=/copied_from= to the printed neighbour"
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        copied = ex.copied()
    solution = _solution_answer(exercise_id)
    assert copied != solution, f"{exercise_id}: the printed {ex.copied_from} gives the answer itself"
    assert evaluate(exercise_id, copied).status == FAILED
    assert evaluate(exercise_id, copied, seeds=seeds_for(ex)).status == FAILED
    # the question is about a configuration the exercise notebook does not run and print
    learner = nbformat.read(ROOT / "exercises" / f"{ex.notebook}.ipynb", as_version=4)
    printed = [c.source for c in learner.cells if c.cell_type == "code" and "print(" in c.source]
    assert not any(repr(solution) in source for source in printed)


# ---- learner messages ----------------------------------------------------------------------------
def test_a_consumer_looping_while_true_is_told_it_never_returned():
    def consume_at_least_once(consumer, sink):  # the usual production loop: never returns
        while True:
            records = [r for rs in consumer.poll(timeout_ms=500).values() for r in rs]
            for record in records:
                sink.write(record)
            consumer.commit()

    text = check("ex05_q2").text()
    assert "your function never returned (it ran past 60 s" in text, text
    assert "CommitFailedError" not in text and "RebalanceInProgress" not in text and "on its own" not in text

    def consume_at_most_once(consumer, sink):  # `for record in consumer` never ends either
        for record in consumer:
            consumer.commit()
            sink.write(record)

    assert "never returned" in check("ex05_q3").text()


def test_grader_feedback_names_no_hidden_seed_and_counts_hidden_scenarios():
    seeds = (123456789, 987654321, 555)
    parts = [
        Part("crash run, seed 123456789", False, "2 lost; the run (seed 123456789) dropped msg-3", 123456789),
        Part("crash run, seed 987654321", True, "", 987654321),
        Part("crash run, seed 555", False, "1 lost", 555),
    ]
    report = Report("ex05_q2", FAILED, 0, 2, "", "a hint", parts)
    hidden = report.text(show_seeds=False)
    assert not any(str(s) in hidden for s in seeds), hidden
    assert "seed" not in hidden
    assert "failed on 2 of 3 hidden scenarios" in hidden
    assert "2 lost" in hidden  # the explanation of a failure stays
    assert (
        'reproduce: check("ex05_q2", seeds=[123456789])' in report.text()
    )  # the learner's own check() keeps its seeds


def test_a_timed_out_answer_cell_is_reported_as_timed_out_and_cells_count_from_1(tmp_path):
    from course_lib.grading.autograder import Grader, Limits, feedback_text, grade_notebook

    nb = nbformat.v4.new_notebook(
        cells=[
            nbformat.v4.new_markdown_cell("a markdown cell is not counted"),
            nbformat.v4.new_code_cell("ex02_q3 = 0"),
            nbformat.v4.new_code_cell("import time\ntime.sleep(60)\nex02_q1 = 8"),
        ]
    )
    path = tmp_path / "slow.ipynb"
    path.write_text(json.dumps(nb))
    graded = grade_notebook(path, Grader(Limits(submission_s=30, cell_s=1), sandboxed=False), ["02"])
    by_id = {r.exercise: r for r in graded.reports}
    text = feedback_text(graded)
    assert by_id["ex02_q1"].status == "error" and "not attempted" not in by_id["ex02_q1"].text()
    assert "cell In [2], which sets ex02_q1, did not finish within 1 s" in text, text
    assert by_id["ex02_q3"].status == "passed"
    assert "In [0]" not in text


@pytest.mark.parametrize(
    "notebook",
    [*sorted((ROOT / "exercises").glob("*.ipynb")), ROOT / "notebooks" / "09_real_kafka_lab.ipynb"],
    ids=lambda p: p.name,
)
def test_setup_cells_keep_the_course_warnings_visible(notebook):
    """A blanket warnings.simplefilter("ignore") would hide IdempotenceDisabledWarning, the pitfall
    lesson 04 teaches: the setup cell may silence kafka-python's DeprecationWarning only."""
    from course_lib.broker import Cluster
    from course_lib.clients import KafkaProducer
    from course_lib.clients.config import IdempotenceDisabledWarning

    nb = nbformat.read(notebook, as_version=4)
    setup = next(c.source for c in nb.cells if c.cell_type == "code" and "import warnings" in c.source)
    assert "simplefilter" not in setup
    filters = "\n".join(line for line in setup.splitlines() if line.startswith(("import warnings", "warnings.")))
    with warnings.catch_warnings(record=True) as caught:
        warnings.resetwarnings()
        exec(filters, {})
        KafkaProducer(bootstrap_servers=Cluster(3, seed=1), acks=1)  # acks=1 turns idempotence off
    assert any(issubclass(w.category, IdempotenceDisabledWarning) for w in caught)


# ---- what a failing check says (issue 22) ---------------------------------------------------------
@pytest.mark.parametrize("exercise_id", PREDICT)
def test_a_wrong_prediction_says_neither_too_high_nor_too_low(exercise_id):
    """A direction would let a learner binary-search the number the question asks them to work
    out: a prediction one below and one above the answer get the same words."""
    solution = _solution_answer(exercise_id)
    if not isinstance(solution, int) or isinstance(solution, bool):
        pytest.skip(f"{exercise_id} is not a number")
    below, above = (evaluate(exercise_id, solution + d).text() for d in (-1, 1))
    for text in (below, above):
        assert not re.search(r"\btoo (high|low)\b|\b(higher|lower|more|less) than\b", text), text

    def unnumbered(text, n):  # the learner's number in the failure lines, as N
        number = re.compile(rf"(?<![\w.=\[-])(?<!seed ){n}(?![\w.\]])")
        seeds = re.compile(r"seeds? \d+(, \d+)*:")  # the runs it failed on ("seeds 1, 2:"), not the learner's
        return "\n".join(
            number.sub("N", seeds.sub("seeds:", line)) if line.startswith("   ✗") else line
            for line in text.splitlines()
        )

    assert unnumbered(below, solution - 1) == unnumbered(above, solution + 1)


def run_printed(code: str, namespace: dict):
    """Run a "reproduce" line as a learner pastes it into a cell: its statements, then the value
    of its last expression."""
    *statements, last = code.split("; ")
    for statement in statements:
        exec(statement, namespace)
    return eval(last, namespace)


def _reproduce_lines(text: str) -> list[str]:
    return re.findall(r"reproduce: (.*)", text)


def test_a_failing_check_prints_the_call_that_reproduces_it():
    ex02_q2 = {"producer": {"acks": 1, "enable_idempotence": False}, "topic": {"min_insync_replicas": 1}}
    report = check("ex02_q2")
    calls = _reproduce_lines(report.text())
    # a configuration question reproduces with the failing run itself, and prints what it found
    assert calls and calls[0].startswith("from course_lib.experiments.scenarios import run_scenario"), report.text()
    assert repr(ex02_q2["producer"]) in calls[0] and repr(ex02_q2["topic"]) in calls[0]
    seed = int(re.search(r"seed=(\d+)", calls[0]).group(1))
    first = next(p for p in report.parts if p.seed == seed and not p.passed)
    shown = io.StringIO()
    with warnings.catch_warnings(), contextlib.redirect_stdout(shown):
        warnings.simplefilter("ignore")
        run_printed(calls[0], {})  # the printed call, run as printed
    lost = int(first.detail.split()[0])
    assert f"{lost} messages lost after being acknowledged" in shown.getvalue() or (
        lost == 1 and "1 message lost" in shown.getvalue()
    ), shown.getvalue()
    again = check("ex02_q2", seeds=[seed])  # the check on that seed alone still says the same
    assert [(p.seed, p.passed, p.detail) for p in again.parts if p.seed is not None] == [(seed, False, first.detail)]
    with pytest.raises(ValueError, match="seeds must be a non-empty list"):
        check("ex02_q1", seeds=3)


@pytest.mark.parametrize("exercise_id", PREDICT)
def test_a_wrong_prediction_prints_the_experiment_and_running_it_measures_the_answer(exercise_id):
    """Not "rerun the check": the experiment itself, on the seed that failed, with its import.
    Pasted into a fresh namespace, it gives what the run measured (the solution's number)."""
    solution = _solution_answer(exercise_id)
    if isinstance(solution, (set, frozenset)):
        wrong = set() if solution else {"after_poll"}
    elif isinstance(solution, int) and not isinstance(solution, bool):
        wrong = solution + 1
    else:
        pytest.fail(f"{exercise_id}: no wrong answer made for a {type(solution).__name__}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        report = evaluate(exercise_id, wrong)
        calls = _reproduce_lines(report.text())
        assert calls and not any(c.startswith("check(") for c in calls), report.text()
        for call in calls:
            assert call.startswith("from course_lib."), call
            shown = io.StringIO()
            with contextlib.redirect_stdout(shown):
                value = run_printed(call, {})
            if "; print(" in call:  # the number printed first, then the run's evidence
                value = int(shown.getvalue().splitlines()[0])
                assert len(shown.getvalue().splitlines()) > 1 or value is not None, call
            assert value == solution, call
    for part in report.parts:
        if not part.passed:
            assert f"seed={part.seed}" in part.rerun or f"({part.seed}," in part.rerun, part.rerun


def test_a_wrong_capstone_shows_both_sides_and_each_failing_run_with_its_configuration():
    answer = {"producer": {"acks": 1}, "topic": {}, "consumer": {"semantics": "at-least-once"}}
    report = evaluate("ex11_q1", answer)
    text = report.text()
    assert re.search(r"producer: \d+ of \d+ checks failed", text) and re.search(
        r"consumer: \d+ of \d+ checks failed", text
    )
    failing = [p for p in report.parts if not p.passed and p.rerun]
    assert {p.side for p in failing} == {"producer", "consumer"}
    for part in failing:
        assert f"reproduce: {part.rerun}" in text or part.name not in text
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            run = run_printed(part.rerun, {})  # the printed configuration, run as printed, imports and all
        assert sorted(run.result.found) and str(sorted(run.result.found)) in part.detail
    assert "{'acks': 1}" in text  # the failing run's configuration is shown


def test_a_wrong_audit_prints_the_history_it_failed_on():
    """ex11_q2: the reproduce line rebuilds the very history the learner's audit() got wrong, and
    calls their audit() on it."""
    from course_lib.grading.lessons.ex11_capstone import audit_truth, lossy_history

    seen = []

    def audit(history):  # forgets duplicates
        seen.append(history)
        acked = {op.value for op in history if op.f == "send" and op.type == "ok"}
        final = [row[2] for op in history if op.f == "final_read" for row in op.value]
        return {"lost": acked - set(final), "duplicated": set()}

    report = evaluate("ex11_q2", (audit,))
    failing = [p for p in report.parts if not p.passed]
    assert failing and report.status == FAILED, report.text()
    for part in failing:
        assert f"reproduce: {part.rerun}" in report.text() or part.name not in report.text()
        seen.clear()
        got = run_printed(part.rerun, {"audit": audit})
        assert seen[0] == lossy_history(part.seed).history  # the same history, op for op
        truth = audit_truth(seen[0])
        assert got["duplicated"] != truth["duplicated"] and str(sorted(truth["duplicated"])) in part.detail


def test_a_setting_the_experiment_fixes_is_refused_with_a_reason():
    report = evaluate("ex05b_q2", {"handler_ms": 100})
    assert report.status == FAILED and "multiple values" not in report.text()
    assert "handler_ms is part of the experiment" in report.text(), report.text()
    report = evaluate("ex05c_q4", {"renew": True, "handler_ms": 1})
    assert report.status == FAILED and "'handler_ms': not among the settings to choose" in report.text()


def test_an_answer_cell_with_a_syntax_error_says_so_with_its_line(tmp_path):
    broken = 'ex05_q1 = {\n    "semantics": "at-least-once"}\n      extra = 1'
    namespace = {"In": ["", "from course_lib.grading import check", broken], "ex05_q1": ...}
    report = check("ex05_q1", namespace)
    assert report.status == "error" and "not attempted" not in report.text()
    assert "IndentationError: unexpected indent (line 3: extra = 1)" in report.text(), report.text()

    from course_lib.grading.autograder import Grader, Limits, grade_notebook

    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(broken.replace("ex05_q1", "ex02_q1"))])
    path = tmp_path / "broken.ipynb"
    path.write_text(json.dumps(nb))
    graded = grade_notebook(path, Grader(Limits(submission_s=30, cell_s=5), sandboxed=False), ["02"])
    by_id = {r.exercise: r for r in graded.reports}
    assert "syntax error" in by_id["ex02_q1"].text() and "not attempted" not in by_id["ex02_q1"].text()
    assert by_id["ex02_q3"].status == "not attempted"  # no cell sets it: that is not attempted
