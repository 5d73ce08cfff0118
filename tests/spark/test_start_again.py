"""A run whose start failed because Spark's Python worker connected back late (a loaded machine)
is started again; any other failed start is raised at once. Without Spark: the run is scripted."""

from __future__ import annotations

import pytest

from course_lib.spark import harness


class Notes:
    def __init__(self):
        self.said: list = []

    def note(self, what: str, **detail) -> None:
        self.said.append((what, detail))


def _script(monkeypatch, failures: list[type[Exception]]) -> list:
    calls: list = []

    def run_once(ctx, kill):
        calls.append(kill)
        if failures:
            raise failures.pop(0)("run 0: the job did not start its queries")
        return {"run": 0, "exit": 0}

    monkeypatch.setattr(harness, "_run_once", run_once)
    return calls


def test_a_late_worker_starts_the_run_again(monkeypatch):
    calls = _script(monkeypatch, [harness.WorkerLate, harness.WorkerLate])
    ctx = Notes()
    assert harness._one_run(ctx, "the kill") == {"run": 0, "exit": 0}
    assert calls == ["the kill"] * 3
    assert [what for what, _ in ctx.said] == ["start failed, starting again"] * 2


def test_a_late_worker_every_time_is_raised_after_the_attempts(monkeypatch):
    calls = _script(monkeypatch, [harness.WorkerLate] * harness.START_ATTEMPTS)
    with pytest.raises(harness.WorkerLate):
        harness._one_run(Notes(), None)
    assert len(calls) == harness.START_ATTEMPTS


def test_any_other_failed_start_is_raised_at_once(monkeypatch):
    calls = _script(monkeypatch, [RuntimeError])
    with pytest.raises(RuntimeError):
        harness._one_run(Notes(), None)
    assert len(calls) == 1


def test_the_log_tells_a_late_worker_from_other_failures(tmp_path):
    log = tmp_path / "run-0.log"
    assert harness._start_error(log) is RuntimeError  # no log at all
    log.write_text("pyspark.errors.exceptions.connect.SparkException: Python worker failed to connect back.\n")
    assert harness._start_error(log) is harness.WorkerLate
    log.write_text("py4j.protocol.Py4JJavaError: An error occurred while calling o42.start.\n")
    assert harness._start_error(log) is RuntimeError
