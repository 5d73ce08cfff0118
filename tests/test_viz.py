"""Widgets, driven headless: set values, click buttons, assert what they show."""

import matplotlib

matplotlib.use("Agg")

import pytest  # noqa: E402

from course_lib.broker import Cluster  # noqa: E402
from course_lib.clients import KafkaProducer  # noqa: E402
from course_lib.experiments.scenarios import run_scenario  # noqa: E402
from course_lib.viz import (
    ClusterView,
    DeliverySimulator,
    cluster_text,
    duplicates_vs_idempotence,  # noqa: E402
    latency_by_semantics,
    loss_vs_acks,
    messages,
    outcome_html,
    outcome_text,
    plot_rates,
    space_time,
)


def run(app, *buttons):
    for b in buttons:
        getattr(app, b).click()
    return app.result


def test_cluster_view_follows_the_simulation():
    c = Cluster(seed=1)
    c.create_topic("events", replication_factor=3, min_insync_replicas=2)
    view = ClusterView(c)
    assert view.widget.value.count("data-status='up'") == 3
    p = KafkaProducer(bootstrap_servers=c)
    p.send("events", b"a")
    p.flush()
    view.refresh()
    assert "<td class='cv-leo'>1</td><td class='cv-hw'>1</td>" in view.widget.value
    c.crash(1)
    c.run_for(15_000)
    view.refresh()
    assert "data-broker='1' data-status='down'" in view.widget.value
    assert "leader <span class='cv-leader'>2</span>" in view.widget.value
    assert "epoch <span class='cv-epoch'>1</span>" in view.widget.value
    assert "events-0  leader 2  epoch 1  ISR [2, 3]" in cluster_text(c)


def test_paused_broker_shows_as_paused():
    c = Cluster(seed=1)
    c.create_topic("events")
    c.pause(3)
    assert "data-broker='3' data-status='paused'" in ClusterView(c).widget.value


def test_acks_1_crash_of_lagging_leader_loses_acknowledged_writes():
    app = DeliverySimulator(seed=1)
    app.acks.value = "1"
    app.idempotence.value = False
    app.lagging_followers.value = True
    result = run(app, "send_button", "crash_button", "check_button")
    assert result.outcome_table()["lost (acknowledged)"] == 5
    assert "lost after being acknowledged" in app.outcome_view.value
    assert "leader <span class='cv-leader'>2</span>" in app.cluster_view.value


def test_acks_all_survives_the_same_crash():
    app = DeliverySimulator(seed=1)
    app.lagging_followers.value = True
    result = run(app, "send_button", "crash_button", "check_button")
    assert result.found == set() and result.outcome_table()["delivered once"] == 5
    assert "No anomalies" in app.outcome_view.value


@pytest.mark.parametrize("idempotent, duplicated", [(False, 5), (True, 0)])
def test_lost_ack_duplicates_only_without_idempotence(idempotent, duplicated):
    app = DeliverySimulator(seed=1)
    app.idempotence.value = idempotent
    result = run(app, "lose_ack_button", "send_button", "check_button")
    assert result.outcome_table()["duplicated"] == duplicated
    assert result.valid


def test_incompatible_settings_are_explained_and_disable_the_buttons():
    app = DeliverySimulator(seed=1)
    app.acks.value = "1"  # idempotence still on
    assert app.producer is None and app.send_button.disabled
    assert "do not go together" in app.log_view.value and "acks" in app.log_view.value
    app.idempotence.value = False
    assert app.producer is not None and not app.send_button.disabled


def test_changing_a_setting_starts_a_new_run_and_check_twice_starts_over():
    app = DeliverySimulator(seed=1)
    app.send_button.click()
    assert app.messages_sent == 5
    app.in_flight.value = 1
    assert app.messages_sent == 0 and app.producer.config["max_in_flight_requests_per_connection"] == 1
    run(app, "send_button", "check_button")
    first = app.result
    app.check_button.click()  # checking again changes nothing
    assert app.result is first
    app.send_button.click()  # a new run with the same settings
    assert app.result is None and app.messages_sent == 5


def test_step_run_and_restart_buttons():
    app = DeliverySimulator(seed=1)
    t = app.cluster.now
    app.step_button.click()
    assert app.cluster.now == pytest.approx(t + app.step_ms)
    app.run_button.click()
    assert app.cluster.now == pytest.approx(t + app.step_ms + app.run_ms)
    app.crash_button.click()
    assert "data-status='down'" in app.cluster_view.value
    app.restart_button.click()
    assert "data-status='down'" not in app.cluster_view.value
    app.restart_button.click()
    assert "Every broker is up" in app.log_view.value


def test_outcome_views_quote_the_checker():
    r = run_scenario("lost_ack_retry", seed=1, idempotent=False)
    html = outcome_html(r.result)
    assert r.result.summary().split(" - ")[0] in html
    assert "<td class='oc-count' style='text-align:right;padding-left:12px'>" in html
    text = outcome_text(r.result)
    assert text.splitlines()[0].split() == ["sent", "7"]
    assert text.endswith(r.result.summary())


def test_space_time_diagram_draws_lost_messages():
    c = Cluster(seed=1, trace=True)
    c.create_topic("t", min_insync_replicas=2)
    p = KafkaProducer(bootstrap_servers=c, acks="all", enable_idempotence=False, request_timeout_ms=500)
    c.lose_next_ack(p.node_id)
    p.send("t", b"x")
    p.flush()
    produce = messages(c.network.trace)
    assert [e.fate for e in produce if e.kind == "produce_response"] == ["dropped", "delivered"]
    ax = space_time(c.network.trace, events=[(10.0, "broker-1", "note")])
    assert [t.get_text() for t in ax.get_xticklabels()][0] == "producer-1"
    assert ax.yaxis_inverted()


def test_space_time_needs_a_trace():
    c = Cluster(seed=1)
    with pytest.raises(ValueError, match="trace=True"):
        space_time(c.network.trace)


def test_tradeoff_tables_have_the_expected_shape():
    loss = loss_vs_acks(range(3), messages=10)
    assert list(loss) == ["acks=0", "acks=1", "acks=all"]
    assert loss["acks=all"]["lost"] == 0 and loss["acks=all"]["violations"] == 0
    dup = duplicates_vs_idempotence(range(3), messages=10)
    assert dup["idempotence on"]["duplicated"] == 0 and dup["idempotence off"]["duplicated"] > 0
    lat = latency_by_semantics(records=50)
    assert lat["acks=0"]["mean ack latency ms"] == 0
    assert lat["acks=1"]["mean ack latency ms"] < lat["acks=all"]["mean ack latency ms"]
    ax = plot_rates(loss, "lost", per="sent")
    assert len(ax.patches) == 3


# ---- consumer side ---------------------------------------------------------------------------
from course_lib.viz import ConsumerCrashDemo, TransactionsDemo, matrix_text, semantics_matrix  # noqa: E402


@pytest.mark.parametrize(
    "semantics, point, never, twice",
    [
        ("at-most-once", "after_commit", 5, 0),
        ("at-least-once", "after_process", 0, 5),
        ("exactly-once-external", "after_process", 0, 0),
        ("exactly-once-kafka", "mid_batch", 0, 0),
    ],
)
def test_consumer_crash_demo_counts(semantics, point, never, twice):
    app = ConsumerCrashDemo(seed=1)
    app.semantics.value, app.crash_point.value = semantics, point
    app.crash_button.click()
    assert (app.counts["never processed"], app.counts["processed twice or more"]) == (never, twice)
    assert f"<td class='cc-count' style='text-align:right;padding-left:12px'>{never}</td>" in app.view.value


def test_consumer_crash_demo_without_sqlite_says_which_consumer_cannot_run_and_where_it_can(monkeypatch):
    """The offline site's Python has no sqlite3: the external store's consumer says so on a click,
    instead of nothing happening (the click's error went to the browser's console)."""
    import sys

    monkeypatch.setitem(sys.modules, "sqlite3", None)  # import sqlite3 -> ModuleNotFoundError
    app = ConsumerCrashDemo(seed=1)
    app.semantics.value = "exactly-once-external"
    app.crash_button.click()
    assert "has no SQLite" in app.view.value and "make lab" in app.view.value
    app.semantics.value = "at-least-once"  # the others still run
    app.crash_button.click()
    assert app.counts["input messages"] == 20


def test_consumer_demo_without_a_crash_processes_everything_once():
    app = ConsumerCrashDemo(seed=1)
    app.semantics.value = "auto-commit"
    app.run_button.click()
    assert app.counts["processed once"] == app.counts["input messages"] == 20
    assert "no crash" in app.view.value


def test_semantics_matrix_text():
    table = semantics_matrix(1, semantics=("at-most-once",), crash_points=("after_commit",))
    assert table == {"at-most-once": {"after_commit": (5, 0)}}
    assert "(5, 0)" in matrix_text(table)


def test_transactions_demo_hides_aborted_and_open_transactions_from_read_committed():
    app = TransactionsDemo(seed=1)
    for b in ("commit_button", "abort_button", "open_button"):
        getattr(app, b).click()
    assert app.seen["read_committed"] == ["t1-0", "t1-1", "t1-2"]
    assert len(app.seen["read_uncommitted"]) == 9
    app.commit_button.click()  # refused while one is open
    assert "still open" in app.view.value
    app.timeout_button.click()
    assert "ProducerFencedError" in app.view.value and app.commit_button.disabled
    assert app.seen["read_committed"] == ["t1-0", "t1-1", "t1-2"]
    app.reset_button.click()
    assert not app.commit_button.disabled and app.seen["read_uncommitted"] == []


def test_consumer_counts_ignore_the_transactional_outputs():
    app = ConsumerCrashDemo(seed=1)
    app.semantics.value = "exactly-once-kafka"
    app.crash_button.click()
    assert app.counts["input messages"] == app.counts["processed once"] == 20


def test_simulator_shows_the_lost_ack_on_the_wire():
    app = DeliverySimulator(seed=1)
    app.idempotence.value = False
    run(app, "lose_ack_button", "send_button")
    assert "data-fate='dropped'" in app.wire_view.value and "ack p0@0" in app.wire_view.value
    app.check_button.click()  # the retry goes out and is acknowledged
    assert app.wire_view.value.count("produce p0:m-0..m-4") == 2


@pytest.mark.parametrize("idempotent, duplicated", [(False, 5), (True, 0)])
def test_armed_lost_ack_fires_when_the_ack_comes_late(idempotent, duplicated):
    # The demo's "Try" text followed literally after experiment 1: lagging followers still ticked,
    # so the acks=all ACK is not sent before "heal and check". The armed fault must still fire.
    app = DeliverySimulator(seed=1)
    app.lagging_followers.value = True
    app.idempotence.value = idempotent
    app.lose_ack_button.click()
    app.send_button.click()
    assert app.cluster.network.armed_drops("produce_response") == 1  # not fired yet: no ACK so far
    app.check_button.click()
    assert app.cluster.network.armed_drops("produce_response") == 0
    assert app.result.outcome_table()["duplicated"] == duplicated
    assert any("it was lost, as armed" in line for line in app.log)
    assert any(e.kind == "produce_response" and e.fate == "dropped" for e in app.cluster.network.trace)


def test_an_armed_lost_ack_that_cannot_fire_is_reported_not_silently_cleared():
    app = DeliverySimulator(seed=1)
    app.lose_ack_button.click()
    app.check_button.click()  # nothing sent: no ACK will ever come
    assert any("never fired" in line for line in app.log)
    assert app.result.outcome_table()["sent"] == 0


def test_verdict_is_above_the_diagrams_and_follower_hw_is_explained():
    app = DeliverySimulator(seed=1)
    app.send_button.click()
    app.check_button.click()
    children = list(app.widget.children)
    assert children.index(app.outcome_view) < next(
        i for i, c in enumerate(children) if app.cluster_view in getattr(c, "children", ())
    )
    assert "one fetch later" in app.cluster_view.value  # followers' HW 0 after a perfect run


def test_consumer_demo_offers_only_the_crash_moments_of_the_chosen_consumer():
    app = ConsumerCrashDemo(seed=1)
    app.semantics.value = "exactly-once-external"  # commits with every row: no separate commit moment
    assert "after_commit" not in [v for _, v in app.crash_point.options]
    app.semantics.value = "at-most-once"
    labels = dict((v, k) for k, v in app.crash_point.options)
    assert labels["after_commit"] == "after committing, before processing"
    assert "before committing" not in labels["after_process"]  # at-most-once committed already


def test_consumer_demo_lists_duplicates_in_numeric_order_and_leads_with_the_consumer():
    app = ConsumerCrashDemo(seed=1)
    app.semantics.value = "at-least-once"
    app.crash_point.value = "after_process"
    app.crash_button.click()
    twice = app.view.value.split("in the output twice: ")[1].split("</p>")[0].split(", ")
    assert twice == sorted(twice, key=lambda m: int(m.split("-")[1])) and "msg-10" in twice
    assert "2 partitions" in app.view.value
    app.semantics.value = "exactly-once-kafka"
    app.crash_button.click()
    assert app.view.value.index("processed exactly once") < app.view.value.index("partitions")
    assert "acknowledged message" not in app.view.value  # no producer sentence first


def test_processing_counts_print_as_a_sentence_and_stay_a_dict():
    """Lessons 05-08 print them: a sentence, not a raw {'input messages': ...} dict."""
    from course_lib.experiments.scenarios import run_scenario
    from course_lib.viz import processing_counts

    counts = processing_counts(
        run_scenario("consumer_crash", seed=1, semantics="at-least-once", crash_point="after_process")
    )
    assert (
        str(counts)
        == repr(counts)
        == ("20 input messages: 15 processed once, 0 never processed, 5 processed twice or more")
    )
    assert counts == {"input messages": 20, "processed once": 15, "never processed": 0, "processed twice or more": 5}
    assert "{" not in counts._repr_html_()


def test_html_reports_wrap_at_spaces_not_mid_word():
    """JupyterLab's output <pre> has word-break: break-all; the course's own <pre> outputs undo it."""
    from course_lib.grading.report import FAILED, Report

    page = Report("ex02_q1", FAILED, 0, 1, "a message long enough to wrap in a narrow notebook " * 4)._repr_html_()
    assert "word-break:normal" in page
