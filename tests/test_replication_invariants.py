"""Kafka's replication invariants checked after every event of >= 1,000 seeded fault schedules,
each with an ISR shrink followed by the leader's death (bench.replication_trials). A broken
invariant fails with the seed that broke it; ``checked_trial(seed)`` replays it.

The mutation tests prove each invariant can fail: they break the simulator the way a wrong
model of Kafka would and expect the checker to notice."""

from dataclasses import replace

import pytest

from course_lib.broker import Cluster
from course_lib.broker import log as log_module
from course_lib.broker.controller import Controller
from course_lib.broker.invariants import InvariantViolation, ReplicationInvariants
from course_lib.broker.partition import Partition
from bench.replication_trials import checked_trial
from tests import invariant_support

SEEDS = 1000

pytestmark = pytest.mark.filterwarnings("ignore")  # the trials' clients warn by design


def first_violation() -> str | None:
    return invariant_support.first_violation(checked_trial, range(100))


def test_invariants_hold_at_every_step_of_1000_seeded_schedules():
    totals = {"events": 0, "clean": 0, "unclean": 0}
    for trial in invariant_support.checked_trials(checked_trial, range(SEEDS)):
        totals["events"] += trial.events
        totals["clean"] += trial.clean_elections
        totals["unclean"] += trial.unclean_elections
    # the schedules do exercise both kinds of election (otherwise committed_kept checks nothing)
    assert totals["clean"] > SEEDS // 10 and totals["unclean"] > SEEDS // 10, totals


def test_a_hw_that_ignores_min_isr_is_caught(monkeypatch):
    monkeypatch.setattr(Partition, "under_min_isr", property(lambda self: False))
    assert "hw_frozen_under_min_isr" in (first_violation() or "")


def test_a_hw_that_ignores_the_followers_is_caught(monkeypatch):
    def advance_to_own_leo(self):
        if self.is_leader and not self.under_min_isr:
            self.log.hw = max(self.log.hw, self.log.leo)

    monkeypatch.setattr(Partition, "maybe_advance_hw", advance_to_own_leo)
    assert "hw_within_isr" in (first_violation() or "")


def test_a_leader_that_never_reports_divergence_is_caught(monkeypatch):
    monkeypatch.setattr(log_module.PartitionLog, "end_offset_for_epoch", lambda self, epoch: (epoch, 1 << 40))
    assert "follower_matches_leader" in (first_violation() or "")


def test_an_election_of_an_out_of_sync_replica_passed_off_as_clean_is_caught(monkeypatch):
    change = Controller._change

    def elect_anyone(self, tp, state, target_isr, unacceptable=None, unclean_shutdown=None, reason=""):
        new = change(self, tp, state, target_isr, unacceptable, unclean_shutdown, reason)
        live = [r for r in state.replicas if r not in self.fenced and r != unacceptable]
        if new.leader is None and live:
            new = replace(new, leader=live[0], isr=(live[0],), elr=(), leader_epoch=state.leader_epoch + 1)
        return new

    monkeypatch.setattr(Controller, "_change", elect_anyone)
    assert "committed_kept" in (first_violation() or "")


def test_an_elr_kept_at_min_isr_is_caught():
    cluster = Cluster(3, seed=1)
    ReplicationInvariants.attach(cluster)
    cluster.create_topic("t", replication_factor=3, min_insync_replicas=2)
    tp = ("t", 0)
    cluster.controller.partitions[tp] = replace(cluster.controller.partitions[tp], elr=(3,), isr=(1, 2))
    with pytest.raises(InvariantViolation, match="leader_in_isr.*seed=1"):
        cluster.run_for(1)
