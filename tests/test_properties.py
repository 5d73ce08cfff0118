"""Property tests over seeded random fault schedules (crashes, pauses, isolation, lost ACKs and
requests, slow links). A safe configuration must never lose or duplicate an acknowledged
record; each unsafe one must show its anomaly for some seed. Failures print the seed."""

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from course_lib.experiments.scenarios import random_faults

SAFE_PRODUCER = {"acks": "all", "enable_idempotence": True}
SAFE_TOPIC = {"replication_factor": 3, "min_insync_replicas": 2, "unclean_leader_election_enable": False}
ELECTION_FAULTS = dict(faults=6, kinds=("crash", "crash_leader", "pause"))


def describe(r):
    return f"seed={r.seed}: {r.result.summary()}\nschedule: " + "; ".join(map(str, r.notes["schedule"]))


@settings(max_examples=400, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(min_value=0, max_value=2**31 - 1))
def test_safe_configuration_never_loses_duplicates_or_reorders(seed):
    r = random_faults(seed=seed, producer_config=SAFE_PRODUCER, topic_config=SAFE_TOPIC)
    assert r.result.final_read, describe(r)
    assert r.result.found == set(), describe(r)
    assert all(m.outcome is not None for m in r.result.messages.values()), describe(r)


@settings(max_examples=150, deadline=None, derandomize=True)
@given(seed=st.integers(min_value=0, max_value=2**31 - 1))
def test_clean_election_never_loses_even_with_min_insync_1(seed):
    r = random_faults(
        seed=seed, producer_config=SAFE_PRODUCER, topic_config={"min_insync_replicas": 1}, **ELECTION_FAULTS
    )
    assert "lost" not in r.result.found, describe(r)


def first_seed_showing(anomaly, seeds=range(300), **kwargs):
    for seed in seeds:
        r = random_faults(seed=seed, **kwargs)
        assert r.result.valid, describe(r)  # unsafe, but never beyond what it allows
        if anomaly in r.result.found:
            return r
    return None


@pytest.mark.parametrize(
    "anomaly,producer,topic,extra",
    [
        ("lost", {"acks": 1, "enable_idempotence": False}, {"min_insync_replicas": 1}, {}),
        ("lost", {"acks": 0, "enable_idempotence": False}, {}, {}),
        ("duplicate", {"enable_idempotence": False}, {}, {}),
        ("reordered", {"enable_idempotence": False, "max_in_flight_requests_per_connection": 5}, {}, {}),
        ("lost", SAFE_PRODUCER, {"min_insync_replicas": 1, "unclean_leader_election_enable": True}, ELECTION_FAULTS),
    ],
)
def test_each_unsafe_configuration_shows_its_anomaly_for_some_seed(anomaly, producer, topic, extra):
    r = first_seed_showing(anomaly, producer_config=producer, topic_config=topic, **extra)
    assert r is not None, f"no seed in 0..299 showed {anomaly!r} for {producer} {topic}"
    assert r.result.by_kind(anomaly)[0].allowed
