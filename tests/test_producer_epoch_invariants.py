"""Producer epochs only grow (course_lib/broker/producer_epoch_invariants.py), checked after every
event of 1,000 seeded transactional schedules with broker crashes (bench.transaction_trials; even
seeds run transactions v2, odd seeds v1), with the replication invariants checked alongside. A
broken invariant fails with the seed that broke it; ``checked_transaction_trial(seed)`` replays
it. The mutation tests break the simulator the way a wrong model would and expect the checker to
notice.

(The member-epoch and partition-ownership invariants of the consumer group protocol come with
KIP-848's groups, which this branch does not have yet.)"""

import dataclasses
import os

import pytest

from bench.transaction_trials import checked_transaction_trial
from course_lib.broker import producer_state as producer_state_module
from course_lib.broker import txn_coordinator as txn_coordinator_module
from tests import invariant_support

SEEDS = int(os.environ.get("TXN_INVARIANT_SEEDS", "1000"))

pytestmark = pytest.mark.filterwarnings("ignore")  # the trials' clients warn by design


def first_violation() -> str | None:
    return invariant_support.first_violation(checked_transaction_trial, range(40))


def test_epochs_only_grow_at_every_step_of_1000_seeded_transactional_schedules():
    bumped = 0
    for trial in invariant_support.checked_trials(checked_transaction_trial, range(SEEDS)):
        bumped += trial.transaction_version == 2 and trial.final_epoch > 0
    # the v2 schedules do bump epochs (otherwise the invariants check little)
    assert bumped > SEEDS // 4, bumped


def test_a_coordinator_that_forgets_the_bump_is_caught(monkeypatch):
    def replace(obj, **changes):
        if str(changes.get("state", "")).startswith("Complete"):
            changes["producer_epoch"] = obj.producer_epoch - 1  # the finished transaction's epoch again
        return dataclasses.replace(obj, **changes)

    monkeypatch.setattr(txn_coordinator_module, "replace", replace)
    assert "coordinator_epoch_grows" in (first_violation() or "")


def test_a_partition_that_lowers_a_producers_epoch_is_caught(monkeypatch):
    update = producer_state_module.ProducerStateTable.update

    def lowering(self, stored):
        update(self, stored)
        entry = self.entries.get(stored.batch.producer_id)
        if stored.batch.control is not None and entry is not None:
            entry.epoch -= 2  # below the epoch the marker fenced

    monkeypatch.setattr(producer_state_module.ProducerStateTable, "update", lowering)
    assert "partition_epoch_grows" in (first_violation() or "")
