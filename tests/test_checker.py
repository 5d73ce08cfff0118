"""The checker on small hand-written histories: each anomaly, and which configuration allows it."""

import pytest

from course_lib.judge.checker import allowed_anomalies, check
from course_lib.history import History


def history(sends, final, topic="t"):
    """sends: (message, outcome, acked offset); final: messages in log order."""
    h = History()
    for value, outcome, offset in sends:
        op = h.invoke("p1", "send", value, topic=topic, partition=0)
        if outcome:
            h.complete(op, outcome, offset=offset)
    h.record("final-reader", "ok", "final_read", [[0, i, v] for i, v in enumerate(final)], topic=topic)
    return h


SAFE = {}  # kafka-python 3 defaults: acks=all, idempotent
ACKS1 = {"acks": 1, "enable_idempotence": False}


def test_a_clean_history_is_valid_under_any_configuration():
    h = history([("a", "ok", 0), ("b", "ok", 1)], ["a", "b"])
    for config in (SAFE, ACKS1):
        r = check(h, config)
        assert r.valid and r.found == set()
        assert r.counts["delivered"] == 2
        assert "No anomalies" in r.summary()


def test_lost_write_violates_acks_all_but_is_allowed_with_acks_1():
    h = history([("a", "ok", 0), ("b", "ok", 1)], ["a"])
    safe, unsafe = check(h, SAFE), check(h, ACKS1)
    assert safe.found == unsafe.found == {"lost"}
    assert not safe.valid and "GUARANTEE VIOLATED" in safe.summary()
    assert unsafe.valid and "acks=1" in unsafe.summary()
    assert "b was acknowledged at offset 1" in safe.explain("b")


def test_duplicate_and_its_allowance():
    h = history([("a", "ok", 0), ("b", "ok", 1)], ["a", "b", "b"])
    assert check(h, SAFE).found == {"duplicate"} and not check(h, SAFE).valid
    assert check(h, {"enable_idempotence": False}).valid
    assert check(h, {"enable_idempotence": False, "retries": 0}).valid is False


def test_application_resends_are_duplicates_idempotence_does_not_prevent():
    h = History()
    for _ in range(2):
        h.complete(h.invoke("p1", "send", "a", topic="t", partition=0), "info")
    h.record("final-reader", "ok", "final_read", [[0, 0, "a"], [0, 1, "a"]], topic="t")
    r = check(h, SAFE)
    assert r.found == {"duplicate"} and r.valid
    assert "application" in r.by_kind("duplicate")[0].reason_allowed


def test_reorder_names_the_late_message():
    h = history([("a", "ok", 1), ("b", "ok", 0), ("c", "ok", 2)], ["b", "a", "c"])
    r = check(h, {"enable_idempotence": False})
    assert r.found == {"reordered"} and r.valid
    assert [a.message for a in r.by_kind("reordered")] == ["a"]
    assert not check(h, {"enable_idempotence": False, "max_in_flight_requests_per_connection": 1}).valid


def test_unknown_outcomes_may_go_either_way_but_failures_must_be_absent():
    h = history([("a", "info", None), ("b", "info", None), ("c", "fail", None)], ["a"])
    r = check(h, SAFE)
    assert r.valid and r.counts["unacknowledged but present"] == 1 and r.counts["undelivered"] == 2
    phantom = history([("c", "fail", None)], ["c"])
    assert check(phantom, ACKS1).found == {"phantom"} and not check(phantom, ACKS1).valid


def test_without_a_final_read_nothing_is_judged_lost():
    h = History()
    h.complete(h.invoke("p1", "send", "a", topic="t", partition=0), "ok", offset=0)
    r = check(h, SAFE)
    assert not r.final_read and r.found == set() and "final_read" in r.summary()


@pytest.mark.parametrize(
    "producer,topic,expected",
    [
        ({}, {}, set()),
        ({"acks": 1}, {}, {"lost", "duplicate", "reordered"}),  # idempotence silently off, as kafka-python
        ({"acks": 0}, {}, {"lost"}),
        ({"enable_idempotence": False, "max_in_flight_requests_per_connection": 1}, {}, {"duplicate"}),
        ({}, {"unclean_leader_election_enable": True}, {"lost"}),
        ({"acks": 1, "enable_idempotence": False, "retries": 0}, {}, {"lost"}),
    ],
)
def test_allowed_anomalies_follow_the_configuration(producer, topic, expected):
    assert set(allowed_anomalies(producer, topic)) == expected


def test_history_round_trips_through_jsonl():
    h = history([("a", "ok", 0)], ["a"])
    again = History.from_jsonl(h.to_jsonl())
    assert again.to_jsonl() == h.to_jsonl()
    assert check(again, SAFE).valid
