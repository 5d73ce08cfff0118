"""Figures of lessons 03-07: readable space-time diagrams (one row per moment, labelled gaps),
where a consumer resumes after a crash (viz.offsets), and a log with markers, HW and LSO
(viz.log_markers) - the data behind each picture, and the picture's marks."""

import doctest

import matplotlib
import pytest

matplotlib.use("Agg")

from course_lib.broker import Cluster
from course_lib.clients import KafkaProducer
from course_lib.experiments.scenarios import run_scenario
from course_lib.viz import log_markers, offsets, space_time


@pytest.mark.parametrize("module", [offsets, log_markers])
def test_docstring_examples(module):
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0


def lost_ack_trace():
    c = Cluster(seed=1, trace=True)
    c.create_topic("t", min_insync_replicas=2)
    p = KafkaProducer(bootstrap_servers=c, acks="all", enable_idempotence=False, request_timeout_ms=500)
    c.lose_next_ack(p.node_id)
    p.send("t", b"x")
    p.flush()
    return c.network.trace


def test_the_lost_ack_and_its_retry_get_rows_and_the_timeout_is_a_labelled_gap():
    ax = space_time(lost_ack_trace(), kinds=("produce_request", "produce_response"))
    labels = [t.get_text() for t in ax.get_yticklabels()]
    # request sent, arrived; lost ACK sent; retry sent, arrived; ACK sent, arrived: one row each
    assert len(labels) == 7
    texts = [t.get_text() for t in ax.texts]
    gap = [t for t in texts if t.endswith("ms later")]
    assert len(gap) == 1 and 400 < int(gap[0].split()[0]) < 700  # the request timeout + backoff
    assert any("(dropped)" in t for t in texts)
    bottom, top = ax.get_ylim()
    assert bottom - top < 12  # rows, not 600 ms to scale


def test_linear_time_axis_is_still_available_and_bad_axes_are_refused():
    ax = space_time(lost_ack_trace(), kinds=("produce_request", "produce_response"), time_axis="linear")
    bottom, top = ax.get_ylim()
    assert bottom - top > 500
    with pytest.raises(ValueError, match="time_axis"):
        space_time(lost_ack_trace(), time_axis="log")


def test_crash_offsets_show_why_each_semantics_repeats_or_skips():
    least = offsets.crash_offsets(
        run_scenario("consumer_crash", seed=1, semantics="at-least-once", crash_point="after_process")
    )
    most = offsets.crash_offsets(
        run_scenario("consumer_crash", seed=1, semantics="at-most-once", crash_point="after_commit")
    )
    external = offsets.crash_offsets(
        run_scenario("consumer_crash", seed=1, semantics="exactly-once-external", crash_point="mid_batch")
    )
    assert (least["committed"], least["position"]) == (0, 5) and least["processed"][:5] == [2] * 5
    assert (most["committed"], most["position"]) == (5, 5) and most["processed"][:5] == [0] * 5
    assert "committed" not in external and external["stored"] == 2 and set(external["processed"]) == {1}
    ax = offsets.offsets_figure({"a": least, "b": most, "c": external})
    texts = [t.get_text() for t in ax.texts]
    assert "committed offset (Kafka) = 0" in texts and "offset stored in the sink = 2" in texts
    assert sum(t.startswith("consumed position") for t in texts) == 3


def test_crash_offsets_need_a_crash():
    r = run_scenario("lost_ack_retry", seed=1, idempotent=True)
    with pytest.raises((ValueError, AttributeError)):
        offsets.crash_offsets(r)
    with pytest.raises(ValueError, match="at least one"):
        offsets.offsets_figure({})


def test_log_view_marks_markers_open_transactions_hw_and_lso():
    c = Cluster(seed=1)
    c.create_topic("t", min_insync_replicas=2)
    tx = KafkaProducer(bootstrap_servers=c, transactional_id="tx")
    tx.init_transactions()
    tx.begin_transaction()
    tx.send("t", b"b-0")
    tx.flush()  # written, then aborted (an abort drops what was never sent)
    tx.abort_transaction()
    tx.begin_transaction()
    tx.send("t", b"c-0")
    tx.flush()
    plain = KafkaProducer(bootstrap_servers=c)
    plain.send("t", b"x-0")
    plain.flush()
    view = log_markers.log_view(c, "t")
    assert [(e["text"], e["state"]) for e in view["entries"]] == [
        ("b-0", "aborted"),
        ("ABORT", "marker"),
        ("c-0", "open"),
        ("x-0", "plain"),
    ]
    assert (view["hw"], view["lso"], view["leo"]) == (4, 2, 4)
    ax = log_markers.log_figure(c, "t")
    texts = [t.get_text() for t in ax.texts]
    assert " HW = 4" in texts and " LSO = 2" in texts


# ---- the space-time diagrams of lessons 01 and 04: legible, and saying what the shorthand means ----
def lesson01_trace():
    """Lesson 01's first diagram: three records, acks=all, three replicas."""
    c = Cluster(brokers=3, seed=1, trace=True)
    c.create_topic("events", replication_factor=3, min_insync_replicas=2)
    p = KafkaProducer(bootstrap_servers=c, acks="all")
    for i in range(3):
        p.send("events", f"m-{i}".encode())
    p.flush()
    return c.network.trace, c.now


def lesson04_trace():
    """Lesson 04's diagram: an idempotent producer whose fourth ACK is lost, then retried."""
    c = Cluster(brokers=3, seed=1, trace=True)
    c.create_topic("events", min_insync_replicas=2)
    p = KafkaProducer(bootstrap_servers=c, acks="all", enable_idempotence=True, request_timeout_ms=500)
    for i in range(3):
        p.send("events", f"m-{i}".encode())
        p.flush()
    c.lose_next_ack(p.node_id)
    p.send("events", b"m-3")
    p.flush()
    return c.network.trace


def _overlaps(ax) -> list:
    """Pairs of drawn texts (labels, gap notes, legend, tick labels) whose boxes overlap."""
    fig = ax.figure
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    texts = [t for t in ax.texts + ax.get_yticklabels() + ax.get_xticklabels() if t.get_text().strip()]
    boxes = [(t.get_text(), t.get_window_extent(renderer).shrunk(0.98, 0.9)) for t in texts]
    return [(a, b) for i, (a, ba) in enumerate(boxes) for b, bb in boxes[i + 1 :] if ba.overlaps(bb)]


def _figures():
    trace, now = lesson01_trace()
    return {
        "01": space_time(trace, end_ms=now),
        "04": space_time(lesson04_trace(), kinds=("produce_request", "produce_response"), start_ms=10),
        "lost ack": space_time(lost_ack_trace(), kinds=("produce_request", "produce_response")),
    }


def test_no_two_labels_of_the_lesson_diagrams_overlap():
    import matplotlib.pyplot as plt

    try:
        for name, ax in _figures().items():
            assert _overlaps(ax) == [], name
            ticks = [t.get_text() for t in ax.get_yticklabels()]
            assert len(set(ticks)) == len(ticks), f"{name}: two rows read the same time: {ticks}"
    finally:
        plt.close("all")


def test_lesson04_shows_the_producer_id_and_sequence_numbers_and_the_legend_explains_them():
    import matplotlib.pyplot as plt

    ax = space_time(lesson04_trace(), kinds=("produce_request", "produce_response"), start_ms=10)
    texts = [t.get_text() for t in ax.texts]
    produce = [t for t in texts[:-1] if t.startswith("produce")]
    # the retry of m-3 carries the same pid and sequence as the first try: why the leader drops it
    seqs = [t.split("\n")[1] for t in produce]
    assert seqs == ["[pid 1000 seq 1]", "[pid 1000 seq 2]", "[pid 1000 seq 3]", "[pid 1000 seq 3]"]
    legend = texts[-1]
    assert "producer id" in legend and "sequence number" in legend and "offset" in legend and "dropped" in legend
    plt.close("all")


def test_a_non_idempotent_producer_has_no_pid_and_its_legend_does_not_mention_one():
    import matplotlib.pyplot as plt

    ax = space_time(lost_ack_trace(), kinds=("produce_request", "produce_response"))
    texts = [t.get_text() for t in ax.texts]
    assert not any("pid" in t for t in texts[:-1]) and "producer id" not in texts[-1]
    assert "ack p0@5" in texts[-1]  # p0@N: the notation every diagram's acks use, explained
    plt.close("all")


def test_plot_rates_colours_the_worst_bar_red_wherever_it_stands():
    import matplotlib.pyplot as plt
    from matplotlib.colors import to_hex

    from course_lib.viz.tradeoffs import GOOD, WORST, plot_rates

    table = {"acks=0": {"duplicated": 0, "sent": 10}, "acks=1": {"duplicated": 0, "sent": 10}}
    table["acks=all"] = {"duplicated": 4, "sent": 10}  # lesson 02: only acks=all retries, so only it duplicates
    ax = plot_rates(table, "duplicated", per="sent")
    assert [to_hex(b.get_facecolor()) for b in ax.patches] == [GOOD, GOOD, WORST]
    ax = plot_rates({"a": {"r": 900}, "b": {"r": 1200}}, "r", better="higher")
    assert [to_hex(b.get_facecolor()) for b in ax.patches] == [WORST, GOOD]
    with pytest.raises(ValueError, match="better"):
        plot_rates(table, "duplicated", better="less")
    plt.close("all")


def test_aborted_records_are_labelled_dark_on_white_in_the_figure_and_the_html():
    import matplotlib.pyplot as plt
    from matplotlib.colors import to_hex

    c = Cluster(seed=1)
    c.create_topic("t", min_insync_replicas=2)
    tx = KafkaProducer(bootstrap_servers=c, transactional_id="tx")
    tx.init_transactions()
    tx.begin_transaction()
    tx.send("t", b"b-0")
    tx.flush()  # written, then aborted (an abort drops what was never sent)
    tx.abort_transaction()
    ax = log_markers.log_figure(c, "t")
    label = next(t for t in ax.texts if t.get_text() == "b-0")
    assert to_hex(label.get_color()) == "#212121" and label.get_bbox_patch() is not None
    assert "color:#212121" in log_markers.log_html(c, "t")
    plt.close("all")
