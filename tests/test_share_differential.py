"""The share-group differential without a Kafka: the simulator's ShareConsumer on its brokers,
sequence by sequence, against what Kafka showed for the same sequences
(tests/share_differential_support.py); and six share partitions broken on purpose, each found
within the default number of sequences."""

from __future__ import annotations

import pytest

from course_lib.broker.protocol import (
    ReadShareGroupStateRequest,
    ShareFetchRequest,
    ShareGroupStateResponse,
    WriteShareGroupStateRequest,
)
from course_lib.broker.share_coordinator import ShareCoordinator
from course_lib.broker.share_partition import AVAILABLE, RELEASE, SharePartition, SharePartitionManager
from course_lib.experiments.share_differential import HOLD_ENDS, SEQUENCES, ShareDifferential, SimulatedShare
from tests.share_differential_support import kafka_observations, report, seen_twice, unexplained


def test_the_simulator_sees_what_kafka_showed():
    side = SimulatedShare()
    found = unexplained(side)
    assert not found, report(side.name, found)


def test_a_wall_clock_difference_fails_when_a_second_run_shows_one_too():
    runs: list[int] = []

    def differs(outcomes):
        def run(seed):
            runs.append(seed)
            return outcomes[len(runs) - 1]

        return run

    assert seen_twice(differs([[]]), 3) == [] and runs == [3]
    runs.clear()
    with pytest.warns(UserWarning, match=r"seen once, not on a second run: \['seed 3: first'\]"):
        assert seen_twice(differs([["seed 3: first"], []]), 3) == []
    runs.clear()
    assert seen_twice(differs([["seed 3: first"], ["seed 3: again"]]), 3) == ["seed 3: again"]
    assert runs == [3, 3]


def test_the_recording_covers_the_default_sequences_and_every_step():
    assert sorted(map(int, kafka_observations("confluent-kafka"))) == list(range(SEQUENCES))
    drawn = {step for seed in range(SEQUENCES) for step in ShareDifferential.steps(seed)}
    ends = {step.rsplit(":", 1)[1] for step in drawn if step.startswith("hold:")}
    assert {"drain:a", "drain:b"} <= drawn, f"a drain by each member: {sorted(drawn)}"
    assert "crash" in drawn, f"no leader crash in {SEQUENCES} seeds"
    assert set(HOLD_ENDS) <= ends, f"hold ends never drawn in {SEQUENCES} seeds: {sorted(set(HOLD_ENDS) - ends)}"


def _release_without_counting(monkeypatch):
    """A released record comes back with the delivery count it had: it never reaches the limit."""
    acknowledge = SharePartition.acknowledge

    def broken(self, member, acks, done):
        acknowledge(self, member, acks, done)
        for offset, kind in acks:
            r = self.records.get(offset)
            if kind == RELEASE and r is not None and r.member is None and r.count > 0:
                r.count -= 1

    monkeypatch.setattr(SharePartition, "acknowledge", broken)


def _keep_a_closed_members_records(monkeypatch):
    """A member that closes (or crashes) keeps its records until their locks run out."""
    monkeypatch.setattr(SharePartition, "release_member", lambda self, member, why="released_on_close": None)


def _keep_a_crashed_members_records(monkeypatch):
    """A member that dies (its connections close, no leave) keeps its records until their locks
    run out: a closed connection ends no share session."""
    original = SharePartitionManager.disconnected

    def broken(self, src):
        self.sessions.pop(src, None)
        original(self, src)

    monkeypatch.setattr(SharePartitionManager, "disconnected", broken)


def _forget_the_state_on_failover(monkeypatch):
    """A share partition's new leader reads no state from the share coordinator (as if the share
    group were new on it): it starts again at share.auto.offset.reset, delivering what was
    acknowledged."""

    def broken(coordinator, src, req):
        coordinator.broker.send(src, ShareGroupStateResponse(req.corr))

    monkeypatch.setitem(ShareCoordinator.HANDLERS, ReadShareGroupStateRequest, broken)


def _write_each_acquisition(monkeypatch):
    """A share partition writes each acquisition to the share coordinator (as available, its
    delivery counted): a record held when the leader crashed comes back from the new leader with
    that delivery counted - Kafka writes no acquisition, and gives it back as first delivered."""
    acquire = SharePartition.acquire

    def broken(self, member, *args, **kwargs):
        taken = acquire(self, member, *args, **kwargs)
        if taken:
            updates = tuple((offset, AVAILABLE, self.records[offset].count) for offset, _, _ in taken)
            request = WriteShareGroupStateRequest(0, self.group, self.tp, self.leader_epoch, self.start, updates)
            self.manager.ask_share_coordinator(request, lambda resp: None)
        return taken

    monkeypatch.setattr(SharePartition, "acquire", broken)


def _fetch_past_an_acknowledgement(monkeypatch):
    """A broker handles a connection's ShareFetch while the ShareAcknowledge sent before it on
    that connection is still being written, and answers it first: a record released by
    ``commit_async`` is polled again before the commit callback ran - Kafka reads a connection's
    next request only once the one before is answered."""

    def unmuted(self, src, req):
        if isinstance(req, ShareFetchRequest):
            self.share_fetch(src, req)
        else:
            self.share_acknowledge(src, req)

    monkeypatch.setattr(SharePartitionManager, "dispatch", unmuted)


@pytest.mark.parametrize(
    "breaks",
    [
        _release_without_counting,
        _keep_a_closed_members_records,
        _keep_a_crashed_members_records,
        _forget_the_state_on_failover,
        _write_each_acquisition,
        _fetch_past_an_acknowledgement,
    ],
)
def test_a_broken_share_partition_is_found(monkeypatch, breaks):
    breaks(monkeypatch)
    found = unexplained(SimulatedShare())
    assert found, f"{breaks.__doc__} - and no sequence of {SEQUENCES} showed it"
