"""course_lib.application.consumer_groups: concurrent application instances of one group on the simulator -
the experiments of notebooks/05b_consumer_groups, each with its counter-experiment."""

import doctest

import pytest

import course_lib.application.consumer_groups as groups
from course_lib.application.consumer_groups import GroupRun
from course_lib.application.supervisor import Countdown


def test_docstring_examples():
    result = doctest.testmod(groups, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0


@pytest.mark.parametrize("on_revoke,duplicates", [(False, 10), (True, 0)])
def test_a_rebalance_replays_what_was_not_committed_unless_the_listener_commits(on_revoke, duplicates):
    run = GroupRun(seed=1, messages=40)
    run.start("a", handler_ms=100, commit_every=4, commit_on_revoke=on_revoke)
    run.start("b", at_ms=5000, handler_ms=100, commit_every=4, commit_on_revoke=on_revoke)
    run.run(30_000)
    assert run.duplicates() == duplicates and not run.never_processed()
    assert run.assignment() == {"a": [0], "b": [1]}


@pytest.mark.parametrize("max_poll_records,duplicates,failed", [(10, 10, 2), (4, 0, 0)])
def test_a_slow_handler_is_thrown_out_and_its_batch_is_processed_again(max_poll_records, duplicates, failed):
    run = GroupRun(seed=1, messages=40)
    for name, handler_ms in (("fast", 20), ("slow", 800)):
        run.start(name, handler_ms=handler_ms, max_poll_records=max_poll_records, max_poll_interval_ms=5000)
    run.run(60_000)
    assert (run.duplicates(), len(run.failed_commits)) == (duplicates, failed)
    assert all("CommitFailedError" in what for _, _, what in run.failed_commits)
    assert ("left the group: no poll()" in run.timeline()) == bool(failed)


@pytest.mark.parametrize("static,rebalances", [(False, 2), (True, 0)])
def test_a_static_member_restarts_without_a_rebalance(static, rebalances):
    run = GroupRun(seed=1, messages=40)
    for name in ("a", "b"):
        run.start(name, handler_ms=500, **({"group_instance_id": name} if static else {}))
    run.restart("a", at_ms=6000, down_ms=3000)
    run.run(30_000)
    assert run.rebalances(after_ms=5000) == rebalances
    assert run.assignment() == {"a": [0], "b": [1]} and not run.never_processed()


def test_latest_offset_reset_never_processes_what_was_there_before():
    run = GroupRun(seed=1, messages=40)
    run.start("a", auto_offset_reset="latest")
    run.produce(10, at_ms=8000)
    run.run(20_000)
    assert run.never_processed() == [f"msg-{i}" for i in range(40)]


@pytest.mark.parametrize("reset,lost,duplicates", [("latest", 10, 0), ("earliest", 0, 40)])
def test_expired_committed_offsets_lose_or_replay(reset, lost, duplicates):
    run = GroupRun(seed=1, messages=40, offsets_retention_minutes=1)
    run.start("a")
    run.stop("a", at_ms=10_000)
    run.produce(10, at_ms=30_000)
    run.start("a2", at_ms=90_000, auto_offset_reset=reset)
    run.run(110_000)
    assert (len(run.never_processed()), run.duplicates()) == (lost, duplicates)
    assert "committed offsets expired" in run.timeline()


@pytest.mark.parametrize("down_ms,members_after", [(None, {"b": [0, 1]}), (2000, {"a": [0], "b": [1]})])
def test_a_crashed_member_loses_its_uncommitted_work_to_its_partitions_next_owner(down_ms, members_after):
    # no LeaveGroup: the group waits session_timeout_ms (10 s) before it moves the partition
    run = GroupRun(seed=1, messages=40)
    run.start("a", handler_ms=100, commit_every=3).start("b", handler_ms=100, commit_every=3)
    run.crash("a", at_ms=4200, down_ms=down_ms).run(40_000)
    assert (run.duplicates(), run.never_processed()) == (10, [])
    assert run.assignment() == members_after
    assert "4.20 s  a        crashed" in run.timeline() and "removed a: no heartbeat for 10000 ms" in run.timeline()
    assert ("a#2" in run.timeline()) == (down_ms is not None)


@pytest.mark.parametrize("point,duplicates", [("process", 5), ("commit", 0)])
def test_a_crash_point_between_processing_and_commit_replays_the_batch(point, duplicates):
    # the supervisor's crash plans: a dies right after its 2nd batch is processed / committed
    run = GroupRun(seed=1, messages=40)
    run.start("a", handler_ms=100, crash=Countdown(point, 2), restart_after_ms=2000).start("b", handler_ms=100)
    run.run(40_000)
    assert (run.duplicates(), run.never_processed()) == (duplicates, [])
    assert f"a        crashed after call of {point}()" in run.timeline()
    assert "generation 2: a#2=[0], b=[1]" in run.timeline()  # restarted once, and not crashed again


def test_bad_plans_are_refused():
    run = GroupRun(seed=1, messages=1)
    run.start("a")
    with pytest.raises(ValueError, match="already planned"):
        run.start("a")
    with pytest.raises(ValueError, match="commit_every"):
        run.start("b", commit_every=0)
    with pytest.raises(ValueError, match="no running instance"):
        run.stop("zzz", at_ms=10).run(100)
    with pytest.raises(ValueError, match="no running instance named 'zzz' to crash"):
        run.crash("zzz", at_ms=200).run(300)
