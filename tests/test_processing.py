"""Consumer delivery semantics, crash point by crash point: what the application's output shows."""

import pytest

from course_lib.application.processing import CRASH_POINTS, SEMANTICS, SQLiteSink, run_pipeline
from course_lib.experiments.scenarios import CONSUMER_EXPECTED, run_scenario


@pytest.mark.parametrize("semantics", [s for s in SEMANTICS])
@pytest.mark.parametrize("crash_point", CRASH_POINTS)
def test_each_semantics_at_each_crash_point(semantics, crash_point):
    for seed in (0, 1):
        r = run_scenario("consumer_crash", seed=seed, semantics=semantics, crash_point=crash_point)
        assert r.crashes, f"seed={seed}: the application never reached its crash point"
        assert r.anomalies == r.expected, f"seed={seed}: {r.result.summary()}"
        assert r.result.valid, f"seed={seed}: {r.result.summary()}"


def test_the_expectation_table_is_complete():
    assert {s for s, _ in CONSUMER_EXPECTED} == {"at-most-once", "at-least-once", "auto-commit"}
    assert {p for _, p in CONSUMER_EXPECTED} == set(CRASH_POINTS)


def test_auto_commit_loses_messages_when_processing_lags_behind_polling():
    r = run_scenario("consumer_crash", semantics="auto-commit", crash_point="after_poll", buffered=True)
    assert r.anomalies == {"lost_in_processing"} and r.result.valid
    explanation = r.result.by_kind("lost_in_processing")[0].explanation
    assert "polled by processor-1" in explanation and "crashed" in explanation


def test_at_most_once_explanation_names_the_commit_that_came_first():
    r = run_scenario("consumer_crash", semantics="at-most-once", crash_point="after_commit")
    text = r.result.by_kind("lost_in_processing")[0].explanation
    assert "committed offset" in text and "never processed" in text


def test_exactly_once_holds_with_several_crashes():
    for semantics in ("exactly-once-external", "exactly-once-kafka"):
        r = run_pipeline(semantics, "mid_batch", crashes=3, seed=4)
        assert len(r.crashes) == 3
        assert r.anomalies == set(), r.result.summary()
        assert sorted(r.sink) == sorted(f"msg-{i}" for i in range(20))


def test_sqlite_sink_rolls_back_a_half_done_transaction():
    sink = SQLiteSink()
    sink.write_with_offset("a", "input", 0, 1)
    sink.db.execute("BEGIN")
    sink.db.execute("INSERT INTO output VALUES ('half')")
    sink.rollback_open_transaction()
    assert sink.contents() == ["a"] and sink.stored_offsets() == {("input", 0): 1}


def test_bad_arguments():
    with pytest.raises(ValueError, match="semantics must be one of"):
        run_pipeline("exactly-twice")
    with pytest.raises(ValueError, match="crash_point must be one of"):
        run_pipeline("at-least-once", "sometime")
