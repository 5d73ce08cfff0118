"""Every named scenario shows exactly the anomalies its configuration is known for."""

import pytest

from course_lib.experiments.scenarios import SCENARIOS, run_scenario

CASES = [
    ("leader_crash_after_ack", {"acks": 1}, {"lost"}),
    ("leader_crash_after_ack", {"acks": "all"}, set()),
    ("not_enough_replicas", {}, set()),
    ("lost_ack_retry", {"idempotent": False}, {"duplicate"}),
    ("lost_ack_retry", {"idempotent": False, "close_connection": True}, {"duplicate"}),
    ("lost_ack_retry", {"idempotent": True}, set()),
    ("retries_reorder", {"idempotent": False}, {"reordered"}),
    ("retries_reorder", {"idempotent": True}, set()),
    ("retries_reorder", {"idempotent": False, "max_in_flight": 1}, set()),
    ("unclean_election", {"unclean": True}, {"lost"}),
    ("unclean_election", {"unclean": False}, set()),
    ("fire_and_forget_crash", {}, {"lost"}),
    ("producer_restart_gap", {}, {"duplicate"}),
]


@pytest.mark.parametrize("name,kwargs,expected", CASES)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_scenario_outcome(name, kwargs, expected, seed):
    r = run_scenario(name, seed=seed, **kwargs)
    assert r.result.final_read, f"seed={seed}: no final read"
    assert r.anomalies == expected == r.expected, f"seed={seed}: {r.result.summary()}"
    assert r.result.valid, f"seed={seed}: {r.result.summary()}"


CONSUMER_SIDE = {
    "consumer_crash",
    "consume_transform_produce",
    "external_store_exactly_once",
    "aborted_transaction",
    "zombie_fencing",
    "transaction_timeout",
}  # tests/test_processing.py


def test_every_scenario_is_covered():
    assert {name for name, _, _ in CASES} | {"random_faults"} | CONSUMER_SIDE == set(SCENARIOS)


def test_not_enough_replicas_tells_the_producer():
    r = run_scenario("not_enough_replicas", seed=0)
    assert r.notes["failed"] == 5 and r.result.counts["undelivered"] == 5
    assert "NotEnoughReplicasError" in r.history.to_jsonl() or r.notes["errors"] == ["KafkaTimeoutError"]
    accepted = run_scenario("not_enough_replicas", seed=0, acks=1)
    assert accepted.notes["failed"] == 0 and accepted.result.counts["delivered"] == 5


def test_unclean_election_leaves_the_partition_offline_when_disabled():
    assert run_scenario("unclean_election", unclean=False).notes["leader_while_old_down"] is None
    assert run_scenario("unclean_election", unclean=True).notes["leader_while_old_down"] is not None


def test_lost_write_explanations_quote_offsets_and_epochs():
    r = run_scenario("leader_crash_after_ack", acks=1)
    text = r.result.by_kind("lost")[0].explanation
    assert "acknowledged at offset" in text and "leader epoch 0" in text and "crashed" in text


def test_unknown_scenario_lists_the_names():
    with pytest.raises(ValueError, match="lost_ack_retry"):
        run_scenario("nope")


def test_every_run_that_lost_its_premise_is_healed_before_the_next(monkeypatch):
    """The scenario raised with its followers paused: the cluster under a composed backend (a
    LocalCluster in the fidelity table) is revived before each next run and after the last."""
    from course_lib.experiments.scenario_framework import PREMISE_ATTEMPTS, PremiseLost

    revived = []

    class Cluster:
        def revive(self):
            revived.append(len(runs))
            return []

    class Composed:
        cluster = Cluster()

    runs: list[int] = []

    def premise_lost(seed, backend):
        runs.append(seed)
        raise PremiseLost("no follower in the ISR")

    from course_lib.experiments.registry import EXPERIMENTS, Experiment

    key = ("scenario", "premise_lost")
    monkeypatch.setitem(EXPERIMENTS, key, Experiment(*key, "producer", premise_lost))
    with pytest.raises(PremiseLost):
        run_scenario("premise_lost", backend=Composed())
    assert revived == list(range(1, PREMISE_ATTEMPTS + 1))
