"""The share-group scenarios (course_lib/experiments/share_scenarios.py) and the share checker: each scenario
shows the anomaly classes it is about and nothing its configuration forbids, with the numbers the
mechanism fixes; the checker fails both ways (mutations of a history are caught)."""

from __future__ import annotations

import warnings

import pytest

from course_lib.broker.kafka_releases import ADDED_CONFIGS
from course_lib.broker.share_config import DELIVERY_COUNT_LIMIT, RECORD_LOCK_DURATION_MS
from course_lib.judge.checker import check_share
from course_lib.history import History, Op, OpName
from course_lib.experiments.share_scenarios import SHARE_SCENARIOS, run_share_scenario

SEEDS = (0, 1, 2)


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


#: the first release with dead-letter queues for share groups (KIP-1191): the DLQ tests model it
#: whatever release the lab runs (COURSE_KAFKA_VERSION=4.3.1 has none: test_kafka_4_3_refuses...)
DLQ_RELEASE = next(
    v for v, added in ADDED_CONFIGS.items() if "errors.deadletterqueue.group.enable" in added.get("topic", {})
)


def judged(name, seed, **settings):
    result = run_share_scenario(name, seed=seed, **settings)
    where = f"{name} seed={seed} {settings}: {result.numbers}"
    assert result.expected <= result.anomalies, where
    assert result.check.valid, f"{where}: {[a.explanation for a in result.check.unexpected]}"
    assert not result.check.by_kind("never_delivered") and not result.check.by_kind("redelivered_after_ack"), where
    summary = result.check.summary()
    assert ("allowed by this configuration" in summary) == bool(result.anomalies), summary
    return result, where


@pytest.mark.parametrize("name", sorted(SHARE_SCENARIOS))
def test_every_scenario_is_seeded(name):
    a = run_share_scenario(name, seed=3).history.to_jsonl()
    b = run_share_scenario(name, seed=3).history.to_jsonl()
    assert a == b, name


@pytest.mark.parametrize("seed", SEEDS)
def test_more_workers_than_partitions_leaves_none_idle(seed):
    r, where = judged("more_workers_than_partitions", seed, workers=4, partitions=2)
    assert r.numbers["idle_workers"] == 0 and r.numbers["redelivered"] == 0, where
    assert max(r.numbers["workers_per_partition"].values()) >= 2, where
    assert sum(r.numbers["per_worker"].values()) == r.numbers["records"], where


@pytest.mark.parametrize("seed", SEEDS)
def test_a_killed_worker_s_records_come_back_at_once(seed):
    """Its process dies, its connections close: the broker releases what it held (Kafka 4.3.1:
    within a second of a SIGKILL), each delivery counted."""
    r, where = judged("worker_crash", seed, processed_before_crash=3, max_poll_records=5)
    assert r.numbers["held_at_crash"] == 5 and r.numbers["redelivered"] == 5, where
    assert r.numbers["processed_twice"] == 3, where
    assert r.numbers["redelivery_after_crash_ms"] < 1_000, where
    causes = [a.explanation for a in r.check.by_kind("redelivered")]
    assert all("connection closed while it held it" in c for c in causes), causes


@pytest.mark.parametrize("seed", SEEDS)
def test_a_lost_machine_s_records_come_back_after_the_lock(seed):
    r, where = judged("worker_crash", seed, processed_before_crash=3, max_poll_records=5, host_lost=True)
    assert r.numbers["held_at_crash"] == 5 and r.numbers["redelivered"] == 5, where
    assert r.numbers["processed_twice"] == 3, where
    # the lock started at the poll, ~3.5 handler runs before the crash
    assert RECORD_LOCK_DURATION_MS - 1_000 <= r.numbers["redelivery_after_crash_ms"] <= RECORD_LOCK_DURATION_MS, where
    causes = [a.explanation for a in r.check.by_kind("redelivered")]
    assert all("lock on it expired" in c for c in causes), causes


@pytest.mark.parametrize("seed", SEEDS)
def test_a_handler_slower_than_the_lock_processes_each_record_up_to_the_limit(seed):
    r, where = judged("slow_handler", seed, records=2)
    assert set(r.numbers["times_processed"].values()) == {DELIVERY_COUNT_LIMIT}, where
    assert r.numbers["archived"] == 2, where
    assert all("lock expired" in a.explanation for a in r.check.by_kind("archived")), where


@pytest.mark.parametrize("seed", SEEDS)
def test_renew_keeps_a_slow_handler_at_once_per_record(seed):
    r, where = judged("slow_handler", seed, records=2, renew=True)
    assert set(r.numbers["times_processed"].values()) == {1}, where
    assert r.numbers["redelivered"] == 0 and r.numbers["archived"] == 0, where


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("limit", [DELIVERY_COUNT_LIMIT, 3])
def test_a_poison_message_is_delivered_limit_times_then_archived(seed, limit):
    r, where = judged("poison_message", seed, delivery_count_limit=limit)
    assert r.numbers["poison_delivery_counts"] == list(range(1, limit + 1)), where
    assert r.numbers["archived_why"] == ["released at the delivery count limit"], where
    assert r.numbers["processed_twice"] == 0, where


@pytest.mark.parametrize("seed", SEEDS)
def test_order_holds_for_one_worker_only(seed):
    one, where = judged("ordering_across_workers", seed, workers=1)
    assert one.numbers["reordered"] == 0, where
    many, where = judged("ordering_across_workers", seed, workers=3)
    assert many.numbers["reordered"] > 0, where


@pytest.mark.parametrize("seed", SEEDS)
def test_a_leader_failover_keeps_what_was_accepted(seed):
    r, where = judged("leader_failover", seed)
    assert r.numbers["accepted_before"] > 0, where
    assert r.numbers["redelivered"] == r.numbers["held_at_failover"], where
    assert all("leader changed" in a.explanation for a in r.check.by_kind("redelivered")), where


# ---- the checker fails both ways ---------------------------------------------------------------------
def _history(ops) -> History:
    return History(
        ops=[Op(i, t, p, ty, f, v, topic, None, None, None, None) for i, (t, p, ty, f, v, topic) in enumerate(ops)]
    )


POLL, ACK = OpName.SHARE_POLL, OpName.SHARE_ACK


def test_a_redelivery_after_an_acknowledged_accept_violates_the_guarantee():
    h = _history(
        [
            (1, "w1", "ok", POLL, [[0, 0, "job-0", 1]], "jobs"),
            (2, "w1", "invoke", ACK, [[0, 0, "accept"]], "jobs"),
            (3, "w1", "ok", ACK, [[0, 0, "accept"]], "jobs"),
            (9, "w2", "ok", POLL, [[0, 0, "job-0", 2]], "jobs"),
        ]
    )
    result = check_share(h, "jobs", "explicit")
    (a,) = result.by_kind("redelivered_after_ack")
    assert not a.allowed and not result.valid


def test_an_unexplained_redelivery_is_not_allowed_and_an_expired_lock_is():
    polls = [
        (1, "w1", "ok", POLL, [[0, 0, "job-0", 1]], "jobs"),
        (40_000, "w2", "ok", POLL, [[0, 0, "job-0", 2]], "jobs"),
    ]
    unexplained = check_share(_history(polls), "jobs", "explicit")
    assert not unexplained.valid and unexplained.by_kind("redelivered")[0].reason_allowed is None
    expiry = (
        30_001,
        "share-1",
        "info",
        "share_lock_expired",
        {"topic": "jobs", "partition": 0, "offsets": [0], "archived": []},
        None,
    )
    explained = check_share(_history([polls[0], expiry, polls[1]]), "jobs", "explicit")
    assert explained.valid and "lock on it expired after 30000 ms" in explained.by_kind("redelivered")[0].explanation


def test_a_record_never_delivered_above_the_start_offset_is_reported():
    h = _history(
        [
            (0, "share-1", "info", "share_start", {"topic": "jobs", "partition": 0, "start_offset": 1}, None),
            (1, "w1", "ok", POLL, [[0, 1, "job-1", 1]], "jobs"),
            (5, "final-reader", "ok", OpName.FINAL_READ, [[0, 0, "job-0"], [0, 1, "job-1"], [0, 2, "job-2"]], "jobs"),
        ]
    )
    result = check_share(h, "jobs", "implicit")
    assert [a.message for a in result.by_kind("never_delivered")] == ["job-2"]  # job-0: below the start (latest)
    assert not result.valid


@pytest.mark.parametrize("seed", SEEDS)
def test_more_workers_than_partitions_is_faster_as_a_share_group(seed):
    r, where = judged("share_group_vs_consumer_group", seed, workers=4, partitions=2)
    n = r.numbers
    assert sorted(n["consumer_group_per_worker"].values()) == [0, 0, 20, 20], where  # two idle
    assert 0 not in n["share_group_per_worker"].values(), where
    assert n["share_group_ms"] < n["consumer_group_ms"], where
    assert n["share_state_writes"] > 0, where


@pytest.mark.parametrize("seed", SEEDS)
def test_a_worker_paused_past_its_locks_is_a_zombie_whose_late_acks_pass_unnoticed(seed):
    """Its records were processed again and settled meanwhile: Kafka skips its late ACCEPTs
    without an error (below the start offset), so nothing tells the zombie."""
    r, where = judged("paused_worker", seed, pause_ms=40_000)
    held = r.numbers["held_when_paused"]
    assert held and r.numbers["refused_acks"] == 0 and r.numbers["processed_twice"] == held, where
    short, where = judged("paused_worker", seed, pause_ms=10_000)  # shorter than the lock: harmless
    assert short.numbers["refused_acks"] == 0 and short.numbers["processed_twice"] == 0, where


@pytest.mark.parametrize("seed", SEEDS)
def test_job_queue_implicit_acknowledgement_costs_a_crash_its_batch_and_accepts_failures(seed):
    """The app's scenario: explicit ACCEPTs each job as it ends (a crash brings back only the one
    in progress); implicit accepts a batch at the next poll (a crash brings back the whole batch,
    its finished jobs processed twice) and accepts a failed job (never processed, not archived)."""
    explicit, _ = judged("job_queue", seed, records=12, crash=True)
    implicit, where = judged("job_queue", seed, records=12, crash=True, acknowledgement="implicit")
    assert (explicit.numbers["redelivered"], explicit.numbers["processed_twice"]) == (1, 0), where
    held = implicit.numbers["held_at_crash"]
    assert (implicit.numbers["redelivered"], implicit.numbers["processed_twice"]) == (held, held - 1), where
    poisoned, where = judged("job_queue", seed, records=12, poison_rate=0.25, acknowledgement="implicit")
    assert poisoned.numbers["never_processed"] == poisoned.numbers["poison"] and len(poisoned.numbers["poison"]) == 3
    assert poisoned.numbers["archived"] == 0 and poisoned.numbers["redelivered"] == 0, where
    with pytest.raises(ValueError, match="RENEW needs share.acknowledgement.mode=explicit"):
        run_share_scenario("job_queue", seed=seed, renew=True, acknowledgement="implicit")


@pytest.mark.parametrize("seed", SEEDS)
def test_a_dead_letter_topic_gets_one_letter_per_archived_record(seed):
    """KIP-1191 (Kafka 4.4): the poison record (over the limit) and the rejected one are archived
    *and* written to the group's dead-letter topic, headers only unless copy.record.enable."""
    for copy_record in (False, True):
        r, where = judged(
            "dead_letter_topic", seed, poison=3, reject=7, copy_record=copy_record, kafka_version=DLQ_RELEASE
        )
        letters = r.numbers["dead_letters"]
        assert r.numbers["archived"] == r.numbers["archived_to_dlq"] == len(letters) == 2, where
        assert {(d["source"], d["why"], d["delivery_count"]) for d in letters} == {
            ("job-7", "Offset rejected by client.", 1),
            ("job-3", "Offset delivery count exceeded the threshold.", DELIVERY_COUNT_LIMIT),
        }, where
        assert [d["value"] for d in letters] == (
            [d["source"].encode() for d in letters] if copy_record else [None, None]
        )
        notes = [a.explanation for a in r.check.by_kind("archived")]
        assert len(notes) == 2 and all("archived to the dead-letter topic (dlq.jobs" in n for n in notes), notes


def test_a_delivery_limit_below_a_transient_failure_dead_letters_every_record():
    """Every record fails its first two deliveries: at limit 2 all of them are dead letters, at
    limit 3 only the poison and the rejected record."""
    low, where = judged("dead_letter_topic", 1, transient_failures=2, delivery_count_limit=2, kafka_version=DLQ_RELEASE)
    assert sorted(d["source"] for d in low.numbers["dead_letters"]) == sorted(f"job-{i}" for i in range(10)), where
    high, where = judged(
        "dead_letter_topic", 1, transient_failures=2, delivery_count_limit=3, kafka_version=DLQ_RELEASE
    )
    assert sorted(d["source"] for d in high.numbers["dead_letters"]) == ["job-3", "job-7"], where


def test_kafka_4_3_refuses_a_dead_letter_topic():
    r = run_share_scenario("dead_letter_topic", seed=1, kafka_version="4.3.1")
    assert r.numbers["refused"] == "Unknown topic config name: errors.deadletterqueue.group.enable"
    assert r.numbers["dead_letters"] == [] and r.settings["kafka_version"] == "4.3.1"
