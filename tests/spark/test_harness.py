"""The kill/restart experiment: exactly-once sinks stay exact, the Kafka sink duplicates."""

from pathlib import Path

import pytest

pytestmark = [pytest.mark.spark, pytest.mark.timeout(900)]


def test_the_job_was_killed_at_least_three_times_in_the_planned_ways(experiment):
    crashes = [
        op.value for op in experiment.history if op.process == "nemesis" and op.f == "crash" and "run" in op.value
    ]
    assert len(crashes) >= 3, experiment.timeline
    windows = {c["sink"] for c in crashes if c["moment"] == "window"}
    assert windows == {"kafka", "store", "files"}, experiment.timeline
    assert any(c["moment"].startswith("random") for c in crashes)
    assert any("broker" in op.value for op in experiment.history if op.process == "nemesis" and op.f == "crash"), (
        "the broker kill did not happen"
    )
    assert [r["exit"] for r in experiment.runs][-1] == 0


def test_every_window_kill_left_a_planned_but_uncommitted_batch(experiment):
    for op in experiment.history:
        if op.process == "nemesis" and op.f == "crash" and op.value.get("moment") == "window":
            state = op.value["state"][op.value["sink"]]
            assert state["planned"] == op.value["batch"]
            assert state["committed"] is None or state["committed"] < op.value["batch"]


def test_foreachbatch_store_is_exactly_once(experiment):
    o = experiment.outcomes["store"]
    assert o["lost"] == [] and o["duplicated"] == {} and o["unexpected"] == []
    assert o["balances_ok"], "running balances differ from the input's"
    # The window kill made Spark hand the store a batch id it had committed: it was skipped.
    trapped = [
        op.value["batch"]
        for op in experiment.history
        if op.f == "crash" and op.value.get("moment") == "window" and op.value.get("sink") == "store"
    ]
    assert set(trapped) <= set(o["replays_skipped"])


def test_file_sink_is_exactly_once_through_its_metadata_log(experiment):
    o = experiment.outcomes["files"]
    assert o["lost"] == [] and o["duplicated"] == {} and o["unexpected"] == []
    # A batch killed mid-write leaves files on disk that the log does not list: a naive
    # `cat *.json` counts them, Spark's readers do not. Whether a kill caught the file sink
    # mid-write is timing (the kills aim at other sinks' windows; seen both ways under load),
    # so only this holds always: every listed file is on disk.
    assert o["naive_listing"]["observed"] >= o["observed"]


def test_kafka_sink_duplicates_the_batch_killed_in_the_window(experiment):
    o = experiment.outcomes["kafka"]
    assert o["lost"] == [] and o["unexpected"] == []
    assert o["duplicated"], "the window kill should have made the Kafka sink write a batch twice"
    trapped = {
        op.value["batch"]
        for op in experiment.history
        if op.f == "crash" and op.value.get("moment") == "window" and op.value.get("sink") == "kafka"
    }
    batches = {e["batch"] for e in experiment.evidence["kafka"]}
    assert trapped <= batches, (trapped, batches)
    for e in experiment.evidence["kafka"]:
        assert len(e["copies_at"]) == o["duplicated"][e["order_id"]]


def test_malformed_records_land_in_the_dead_letter_output(experiment):
    dead = experiment.dead_letters
    assert dead["match"], dead
    assert dead["stored"] == dead["expected"] > 0


def test_the_course_checker_agrees(experiment):
    results = experiment.check()
    for sink in ("store", "files"):
        assert results[sink].valid, results[sink].summary()
        assert not results[sink].by_kind("lost") and not results[sink].by_kind("duplicate")
    kafka = results["kafka"]
    assert kafka.valid and kafka.by_kind("duplicate") and not kafka.by_kind("lost")


def test_history_round_trips_as_jsonl(experiment):
    from course_lib.history import History

    text = experiment.history.to_jsonl()
    assert History.from_jsonl(text).to_jsonl() == text


def test_history_has_an_acknowledged_send_for_every_line(experiment):
    sends = {op.value for op in experiment.history if op.f == "send" and op.type == "ok"}
    assert len(sends) == experiment.options.n_orders


def test_killed_jobs_leave_no_temporary_files_behind(experiment, jvm_files_left):
    """A SIGKILLed JVM cannot delete its temporary files: the job keeps them in the experiment's
    jvm-tmp/ (spark.local.dir, java.io.tmpdir), which the harness removes after each run."""
    assert jvm_files_left == []
    assert not (Path(experiment.workdir) / "jvm-tmp").exists()
