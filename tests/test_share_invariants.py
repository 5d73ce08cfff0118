"""The share-group invariants (course_lib/broker/share_invariants.py) checked after every event
of 1,000 seeded fault schedules (bench/share_trials.py): leader and share-coordinator crashes,
paused leaders, lost ShareFetch/ShareAcknowledge answers, crashed and frozen workers, handlers
slower than the lock, RELEASE and REJECT. A broken invariant fails with its seed;
``checked_share_trial(seed)`` replays it.

The mutation tests prove each invariant can fail: they break the share-partition the way a wrong
model of KIP-932 would and expect the checker to notice."""

from __future__ import annotations

import pytest

from bench.share_trials import checked_share_trial
from course_lib.broker.share_partition import ACQUIRED, AVAILABLE, SharePartition
from tests import invariant_support

SEEDS = 1000

pytestmark = pytest.mark.filterwarnings("ignore")  # the trials' clients warn by design


def first_violation() -> str | None:
    return invariant_support.first_violation(checked_share_trial, range(60))


def violations():
    """The message of each trial of the first 60 that breaks an invariant."""
    for seed in range(60):
        message = invariant_support.first_violation(checked_share_trial, [seed])
        if message is not None:
            yield message


def test_share_invariants_hold_at_every_step_of_1000_seeded_schedules():
    totals = {"events": 0, "failovers": 0, "redelivered": 0, "deliveries": 0}
    for trial in invariant_support.checked_trials(checked_share_trial, range(SEEDS)):
        for name in totals:
            totals[name] += getattr(trial, name)
    # the schedules exercise what the invariants are about: leader changes and redeliveries
    assert totals["failovers"] > SEEDS // 5 and totals["redelivered"] > SEEDS, totals


def test_a_leader_that_hands_out_locked_records_is_caught(monkeypatch):
    acquire = SharePartition.acquire

    def acquire_held_too(self, member, max_records, *mode):
        for r in self.records.values():
            if r.state == ACQUIRED and r.member != member:
                r.state = AVAILABLE  # forgets the other member's lock
        return acquire(self, member, max_records, *mode)

    monkeypatch.setattr(SharePartition, "acquire", acquire_held_too)
    assert "single_holder" in (first_violation() or "")


def test_a_lock_that_never_expires_is_caught(monkeypatch):
    monkeypatch.setattr(SharePartition, "_lock_expired", lambda self, lock: None)
    assert "lock_honoured" in (first_violation() or "")


def test_a_new_leader_that_ignores_the_persisted_state_is_caught(monkeypatch):
    def forgetful_start(self):
        self.start, self.ready = 0, True  # as if nothing had ever been acknowledged

    monkeypatch.setattr(SharePartition, "_initialize", forgetful_start)
    # it also restarts delivery counts, which a trial may notice first: some trial must notice this
    assert any("acknowledged_final" in v for v in violations()), list(violations())


def test_a_delivery_count_that_restarts_is_caught(monkeypatch):
    acquire = SharePartition.acquire

    def recount(self, member, max_records, *mode):
        got = acquire(self, member, max_records, *mode)
        for offset, _, _ in got:
            if self.records[offset].count > 2:
                self.records[offset].count = 1
        return got

    monkeypatch.setattr(SharePartition, "acquire", recount)
    assert "delivery_count_monotonic" in (first_violation() or "")
