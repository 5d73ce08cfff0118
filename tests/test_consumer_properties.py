"""Property tests for consuming applications over seeded schedules of application crashes,
broker crashes and lost responses: exactly-once configurations never lose or duplicate; each
weaker one shows its anomaly for some seed. Failures print the seed."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from course_lib.application.processing import random_processing


@settings(max_examples=40, deadline=None, derandomize=True)
@given(
    seed=st.integers(min_value=0, max_value=2**31 - 1),
    semantics=st.sampled_from(["exactly-once-external", "exactly-once-kafka"]),
)
def test_exactly_once_applications_never_lose_or_duplicate(seed, semantics):
    r = random_processing(seed, semantics)
    assert r.result.final_read, f"seed={seed}"
    assert r.anomalies == set(), f"seed={seed} {semantics}: {r.result.summary()} crashes={r.crashes}"


@pytest.mark.parametrize(
    "semantics,anomaly",
    [
        ("at-most-once", "lost_in_processing"),
        ("at-least-once", "duplicate_processing"),
        ("auto-commit", "duplicate_processing"),
    ],
)
def test_weaker_semantics_show_their_anomaly_for_some_seed(semantics, anomaly):
    for seed in range(40):
        r = random_processing(seed, semantics)
        assert r.result.valid, f"seed={seed}: {r.result.summary()}"
        if anomaly in r.anomalies:
            return
    pytest.fail(f"no seed in 0..39 showed {anomaly} for {semantics}")
