"""Predictions cannot be passed by copying a printed number, and the learner-facing messages say
what happened (a function that never returns, a cell that timed out, no hidden seed named).

Table-driven over every "predict" exercise: a new one without an anti-copy rule
(``Exercise.copied``) fails here."""

from __future__ import annotations

import json
import re
import warnings
from pathlib import Path

import nbformat
import pytest

from course_lib.grading import EXERCISES, check
from course_lib.grading.exercises import evaluate
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
    assert {"01", "02", "03", "04", "05", "05b", "06", "07", "08", "09", "10", "11"} <= lessons


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
    assert "reproduce with seed=123456789" in report.text()  # the learner's own check() keeps its seeds


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
