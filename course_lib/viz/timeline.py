"""Space-time (Lamport) diagrams of one run, drawn from the network trace.

Make the cluster with ``trace=True``; every message on the wire becomes an arrow from its
sender's line to its receiver's line, time flowing downwards. Lost messages end in a red cross
halfway. Replication and heartbeat chatter is hidden unless you ask for it.

>>> from course_lib.broker import Cluster
>>> from course_lib.clients import KafkaProducer
>>> c = Cluster(seed=1, trace=True); c.create_topic("t")
>>> p = KafkaProducer(bootstrap_servers=c); _ = p.send("t", b"x"); p.flush()
>>> [(e.src, e.dst, e.label) for e in messages(c.network.trace, kinds=("produce_request", "produce_response"))]
[('producer-1', 'broker-1', 'produce p0:x [pid 1000 seq 0]'), ('broker-1', 'producer-1', 'ack p0@0')]

Taught in notebooks/01_replicated_log, 03_retries_ordering_duplicates and 04_idempotent_producer
(where ``[pid P seq S]``, the producer id and sequence number, shows why a retry is not appended twice).
"""

from __future__ import annotations

PRODUCE = ("produce_request", "produce_response")
REPLICATION = ("fetch_request", "fetch_response")
#: up to this many replication arrows in a diagram, each is labelled
MAX_LABELLED_FETCHES = 24
_COLOURS = {
    "produce_request": "#1565c0",
    "produce_response": "#2e7d32",
    "fetch_request": "#9e9e9e",
    "fetch_response": "#616161",
}


def messages(trace, kinds=PRODUCE, start_ms: float = 0, end_ms: float = float("inf")) -> list:
    """The trace entries of the given kinds sent in ``[start_ms, end_ms)``."""
    if trace is None:
        raise ValueError("this cluster keeps no trace: create it with Cluster(..., trace=True)")
    return [e for e in trace if (kinds is None or e.kind in kinds) and start_ms <= e.sent_ms < end_ms]


def space_time(
    trace,
    kinds=PRODUCE + REPLICATION,
    start_ms: float = 0,
    end_ms: float = float("inf"),
    events=(),
    ax=None,
    label: bool = True,
    max_messages: int = 200,
    time_axis: str = "events",
    gap_ms: float = 20.0,
):
    """Draw the space-time diagram; returns the matplotlib Axes.

    ``events`` is a list of ``(time_ms, node, text)`` drawn as markers (crashes, for example).

    ``time_axis="events"`` (the default) gives every distinct moment its own row, evenly spaced,
    and labels the rows with their real times: a 1 ms request and a 500 ms timeout after it are
    both readable, and a gap longer than ``gap_ms`` is marked with how long nothing happened.
    ``time_axis="linear"`` draws real time to scale (idle gaps and all)."""
    import matplotlib.pyplot as plt

    if time_axis not in ("events", "linear"):
        raise ValueError(f"time_axis must be 'events' or 'linear', got {time_axis!r}")
    chosen = messages(trace, kinds, start_ms, end_ms)[:max_messages]
    nodes = sorted(
        {e.src for e in chosen} | {e.dst for e in chosen} | {n for _, n, _ in events},
        key=lambda n: (not n.startswith("producer"), n),
    )
    times = sorted(
        {e.sent_ms for e in chosen}
        | {e.delivered_ms for e in chosen if e.delivered_ms is not None}
        | {t for t, _, _ in events}
    )
    rows = _rows(times, gap_ms)
    y = _row_of(times, rows) if time_axis == "events" else (lambda t: t)
    lost_drop = 0.4 if time_axis == "events" else 0.5  # a lost message stops part of a row (0.5 ms) down
    two_line = label and any("[" in e.label for e in chosen if e.kind in PRODUCE)
    if ax is None:
        row_in = 0.46 if two_line else 0.32  # a two-line label (producer id and sequence) needs the room
        height = max(4.0, row_in * (rows[-1] + 1 if rows else 0) + 1.5) if time_axis == "events" else 5
        _, ax = plt.subplots(figsize=(1.8 * max(len(nodes), 2) + 3, min(height, 16)))
    x = {n: i for i, n in enumerate(nodes)}
    for i in x.values():
        ax.axvline(i, color="#bbbbbb", lw=1, zorder=0)
    # replication's arrows carry their labels too while they are few enough to read (a follower's
    # fetch offset, the leader's records and high watermark: how a follower learns the HW)
    label_fetches = label and sum(e.kind in REPLICATION for e in chosen) <= MAX_LABELLED_FETCHES
    for e in chosen:
        colour = _COLOURS.get(e.kind, "#6a1b9a")
        y0 = y(e.sent_ms)
        if e.delivered_ms is None:  # lost on the way: stop halfway with a cross
            mid_x = (x[e.src] + x[e.dst]) / 2
            ax.annotate(
                "",
                xy=(mid_x, y0 + lost_drop),
                xytext=(x[e.src], y0),
                arrowprops=dict(arrowstyle="-", color="#c62828", lw=2),
            )
            ax.plot([mid_x], [y0 + lost_drop], marker="x", color="#c62828", ms=12, mew=2.5)
            if label:  # on the side away from the sender: the text never crosses its own arrow
                leftwards = x[e.src] > mid_x
                ax.text(
                    mid_x,
                    y0 + lost_drop,
                    f"  {_shown(e.label)} ({e.fate})  ",
                    color="#c62828",
                    fontsize=9,
                    ha="right" if leftwards else "left",
                    va="center",
                    fontweight="bold",
                )
            continue
        y1 = y(e.delivered_ms)
        ax.annotate(
            "",
            xy=(x[e.dst], y1),
            xytext=(x[e.src], y0),
            arrowprops=dict(arrowstyle="->", color=colour, lw=1.6 if e.kind in PRODUCE else 0.7),
        )
        if label and e.kind in PRODUCE:
            ax.text(
                (x[e.src] + x[e.dst]) / 2,
                (y0 + y1) / 2,
                _shown(e.label),
                fontsize=9,
                color=colour,
                ha="center",
                va="bottom",
                bbox=dict(facecolor="white", edgecolor="none", alpha=0.8, pad=1),
            )
        elif label_fetches and e.kind in REPLICATION:
            ax.text(
                x[e.src] + (x[e.dst] - x[e.src]) * 0.3,
                y0 + (y1 - y0) * 0.3,
                e.label,
                fontsize=7,
                color=colour,
                ha="center",
                va="center",
                bbox=dict(facecolor="white", edgecolor="none", alpha=0.8, pad=0.5),
            )
    for t, n, text in events:
        ax.plot([x[n]], [y(t)], marker="*", color="#c62828", ms=14)
        ax.text(x[n], y(t), f"  {text}", color="#c62828", fontsize=9, va="center")
    if time_axis == "events":
        _label_rows(ax, times, rows, gap_ms, len(nodes))
    elif times:  # annotations do not take part in autoscaling: set the range from the messages
        lo, hi = min(times), max(times) + lost_drop
        pad = max((hi - lo) * 0.04, 0.5)
        ax.set_ylim(hi + pad, lo - pad)  # time flows downwards
        ax.set_ylabel("simulated time (ms)")
    if not times:
        ax.invert_yaxis()
    ax.set_xticks(range(len(nodes)), nodes)
    ax.xaxis.tick_top()
    ax.set_xlim(-0.5, len(nodes) - 0.5)
    if label:
        _legend(ax, chosen)
    return ax


def _shown(text: str) -> str:
    """A label as drawn: an idempotent batch's ``[pid P seq S]`` on a line of its own."""
    return text.replace(" [", "\n[")


def _legend(ax, chosen) -> None:
    """Say what the labels' shorthand means, for the notations this diagram shows (below it)."""
    labels = [e.label for e in chosen if e.kind in PRODUCE]
    lines = []
    if any(lbl.startswith("produce") for lbl in labels):
        lines.append("produce p0:m-1 - a produce request: partition 0, message m-1 (m-0..m-2: a batch of three)")
    if any("[pid" in lbl for lbl in labels):
        lines.append(
            "[pid 1000 seq 3] - the producer id and the batch's sequence number: the leader appends a batch "
            "once per (pid, seq)"
        )
    if any(lbl.startswith("ack") and "@" in lbl for lbl in labels):
        lines.append("ack p0@5 - the leader's acknowledgement: written to partition 0, its first record at offset 5")
    if any(e.delivered_ms is None for e in chosen):
        lines.append("x (dropped) - a message lost on the way: it never arrives")
    if any(e.kind in REPLICATION for e in chosen):
        lines.append(
            "grey arrows - replication: fetch p0 from 3 - a follower asks the leader for partition 0 from offset 3 "
            "(its LEO);\n    3 records, hw 2 - the leader's answer: the records, and its high watermark"
        )
    if lines:
        ax.text(0, -0.02, "\n".join(lines), transform=ax.transAxes, fontsize=8, color="#424242", va="top", ha="left")


def _rows(times: list, gap_ms: float) -> list:
    """The row of each distinct time: one after the other, plus one empty row where more than
    ``gap_ms`` passed (room for the gap's label)."""
    rows, row = [], 0
    for i, t in enumerate(times):
        if i:
            row += 2 if t - times[i - 1] > gap_ms else 1
        rows.append(row)
    return rows


def _row_of(times: list, rows: list):
    """Map a time to its row (times in between interpolate)."""
    import numpy as np

    if not times:
        return lambda t: 0.0
    return lambda t: float(np.interp(t, times, rows))


def _label_rows(ax, times: list, rows: list, gap_ms: float, width: int) -> None:
    """Row labels are the real times; a jump longer than ``gap_ms`` gets a dashed line saying
    how long nothing (shown) happened - the timeout a lost ACK costs, for example."""
    if not times:
        return
    step = max(1, len(times) // 40)  # at most ~40 labels
    shown = list(range(0, len(times), step))
    ax.set_yticks([rows[i] for i in shown], _time_labels([times[i] for i in shown]), fontsize=8)
    for i in range(1, len(times)):
        gap = times[i] - times[i - 1]
        if gap > gap_ms:
            mid = rows[i] - 1
            ax.axhline(mid, color="#9e9e9e", lw=0.8, ls=(0, (4, 3)), zorder=0)
            ax.text(
                (width - 1) / 2,
                mid,
                f"{gap:.0f} ms later",
                fontsize=8,
                color="#616161",
                ha="center",
                va="center",
                bbox=dict(facecolor="white", edgecolor="none", pad=1),
            )
    ax.set_ylim(rows[-1] + 0.6, -0.6)  # time flows downwards
    ax.set_ylabel("simulated time (one row per moment; not to scale)")


def _time_labels(times: list) -> list:
    """Row labels in ms: whole ms from 10 ms on, tenths below, and as many more decimals as it
    takes for two rows never to read the same time (two rows of "1.2 ms" look like a mistake).

    >>> _time_labels([1.21, 1.24, 10.0, 10.4, 625.0])
    ['1.21 ms', '1.24 ms', '10.0 ms', '10.4 ms', '625.0 ms']
    >>> _time_labels([1.2, 2.3, 12.0])
    ['1.2 ms', '2.3 ms', '12 ms']
    """
    for extra in range(4):
        labels = [f"{t:.{(0 if t >= 10 else 1) + extra}f} ms" for t in times]
        if len(set(labels)) == len(labels):
            return labels
    return labels
