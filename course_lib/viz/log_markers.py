"""A partition's log as transactions leave it: records, COMMIT/ABORT markers (which take offsets),
the high watermark (HW) and the last stable offset (LSO) - the two limits of what consumers read.

>>> from course_lib.broker import Cluster
>>> from course_lib.clients import KafkaProducer
>>> c = Cluster(seed=1); c.create_topic("t", min_insync_replicas=2)
>>> p = KafkaProducer(bootstrap_servers=c, transactional_id="tx"); p.init_transactions()
>>> p.begin_transaction(); _ = p.send("t", b"a"); p.commit_transaction()
>>> p.begin_transaction(); _ = p.send("t", b"b"); p.flush()
>>> view = log_view(c, "t")
>>> [(e["offset"], e["text"], e["state"]) for e in view["entries"]], view["hw"], view["lso"]
([(0, 'a', 'committed'), (1, 'COMMIT', 'marker'), (2, 'b', 'open')], 3, 2)

Taught in notebooks/06_transactions.
"""

from __future__ import annotations

from ..history import as_text

_COLOURS = {"committed": "#2e7d32", "aborted": "#9e9e9e", "open": "#f9a825", "plain": "#1565c0", "marker": "#424242"}
_LABELS = {
    "committed": "committed transaction",
    "aborted": "aborted transaction",
    "open": "open transaction",
    "plain": "not transactional",
    "marker": "COMMIT / ABORT marker",
}


def log_view(cluster, topic: str, partition: int = 0) -> dict:
    """The leader's log of ``topic``-``partition``: one entry per offset with its text and state
    (``committed``/``aborted``/``open`` transaction, ``plain`` record or ``marker``), plus the
    log end offset, HW and LSO."""
    batches = cluster.leader_log(topic, partition)
    entries = []
    for i, batch in enumerate(batches):
        if batch.control is not None:
            entries.append({"offset": batch.base_offset, "text": batch.control.upper(), "state": "marker"})
            continue
        state = "plain"
        if batch.is_transactional:  # decided by this producer's next marker, if any
            marker = next(
                (b.control for b in batches[i + 1 :] if b.producer_id == batch.producer_id and b.control is not None),
                None,
            )
            state = {"commit": "committed", "abort": "aborted", None: "open"}[marker]
        for k, value in enumerate(batch.values):
            entries.append({"offset": batch.base_offset + k, "text": str(as_text(value)), "state": state})
    view = cluster.inspect(topic, partition)
    return {
        "topic": topic,
        "partition": partition,
        "entries": entries,
        "leo": view.replica(view.leader).leo,
        "hw": view.hw,
        "lso": view.lso,
    }


def log_figure(cluster, topic: str, partition: int = 0, ax=None):
    """Draw :func:`log_view`: boxes per offset, coloured by state, with the HW and LSO marked and
    what each isolation level can read. Returns the Axes."""
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch, Rectangle

    view = log_view(cluster, topic, partition)
    n = max(view["leo"], 1)
    if ax is None:
        _, ax = plt.subplots(figsize=(max(6.0, 0.62 * n + 1.5), 2.9))
    for e in view["entries"]:
        colour = _COLOURS[e["state"]]
        ax.add_patch(
            Rectangle(
                (e["offset"], 0),
                0.94,
                1,
                facecolor=colour,
                alpha=0.85,
                edgecolor="white",
                hatch="//" if e["state"] == "aborted" else None,
            )
        )
        aborted = e["state"] == "aborted"  # white on grey hatching is unreadable: dark text on a white patch
        ax.text(
            e["offset"] + 0.47,
            0.5,
            e["text"],
            ha="center",
            va="center",
            fontsize=8 if aborted else 7,
            color="#212121" if aborted else "white",
            fontweight="bold" if aborted else "normal",
            rotation=90 if len(e["text"]) > 3 else 0,
            bbox=dict(facecolor="white", edgecolor="none", pad=1.5) if aborted else None,
        )
        ax.text(e["offset"] + 0.47, -0.15, str(e["offset"]), ha="center", va="top", fontsize=7, color="#616161")
    for key, text, colour, y in (("lso", "LSO", "#6a1b9a", 1.55), ("hw", "HW", "#c62828", 1.95)):
        x = view[key] - 0.03
        ax.plot([x, x], [-0.1, y], color=colour, lw=2.5)
        ax.text(x, y, f" {text} = {view[key]}", color=colour, fontsize=9, va="center")
    ax.annotate("", xy=(view["lso"], 1.3), xytext=(0, 1.3), arrowprops=dict(arrowstyle="<->", color="#6a1b9a"))
    ax.text(
        view["lso"] / 2, 1.32, "read_committed (skips aborted)", ha="center", va="bottom", fontsize=8, color="#6a1b9a"
    )
    ax.annotate("", xy=(view["hw"], 1.75), xytext=(0, 1.75), arrowprops=dict(arrowstyle="<->", color="#c62828"))
    ax.text(view["hw"] / 2, 1.77, "read_uncommitted reads here", ha="center", va="bottom", fontsize=8, color="#c62828")
    present = [s for s in _COLOURS if any(e["state"] == s for e in view["entries"])]
    ax.legend(
        handles=[Patch(color=_COLOURS[s], alpha=0.85, label=_LABELS[s]) for s in present],
        loc="upper center",
        bbox_to_anchor=(0.5, -0.02),
        ncol=len(present),
        fontsize=8,
        frameon=False,
    )
    ax.set_xlim(-0.3, n + 2.5)
    ax.set_ylim(-0.6, 2.3)
    ax.axis("off")
    ax.set_title(f"{topic}-{partition} on its leader: log end offset {view['leo']}", fontsize=10)
    return ax


def log_html(cluster, topic: str, partition: int = 0) -> str:
    """:func:`log_figure` as HTML (the demos draw it without matplotlib): one box per offset,
    coloured by state, markers included, and the LSO and HW as the ends of what each isolation
    level reads.

    >>> from course_lib.broker import Cluster
    >>> from course_lib.clients import KafkaProducer
    >>> c = Cluster(seed=1); c.create_topic("t", min_insync_replicas=2)
    >>> p = KafkaProducer(bootstrap_servers=c, transactional_id="tx"); p.init_transactions()
    >>> p.begin_transaction(); _ = p.send("t", b"a"); p.commit_transaction()
    >>> c.run_for(100); page = log_html(c, "t")  # the followers fetch the marker: HW and LSO reach 2
    >>> page.count("class='lm-box'"), "LSO = 2" in page, "HW = 2" in page
    (2, True, True)
    """
    import html

    view = log_view(cluster, topic, partition)
    cells = []
    for e in view["entries"]:
        hatch = "repeating-linear-gradient(45deg,#9e9e9e,#9e9e9e 4px,#bdbdbd 4px,#bdbdbd 8px)"
        background = hatch if e["state"] == "aborted" else _COLOURS[e["state"]]
        text = "color:#212121;font-weight:bold;text-shadow:0 0 3px white" if e["state"] == "aborted" else "color:white"
        cells.append(
            "<div style='display:inline-block;vertical-align:top;margin-right:2px;text-align:center'>"
            f"<div class='lm-box' data-state='{e['state']}' title='offset {e['offset']}: {_LABELS[e['state']]}' "
            f"style='background:{background};{text};min-width:34px;padding:0 3px;height:26px;"
            f"line-height:26px;font-size:11px;border-radius:2px'>{html.escape(e['text'])}</div>"
            f"<div style='font-size:10px;color:#616161'>{e['offset']}</div></div>"
        )
    limits = " &nbsp; ".join(
        f"<span class='lm-{key}' style='color:{colour}'><b>{text} = {view[key]}</b> ({what})</span>"
        for key, text, colour, what in (
            ("lso", "LSO", "#6a1b9a", "read_committed reads offsets below it, skipping aborted records"),
            ("hw", "HW", "#c62828", "read_uncommitted reads up to here"),
        )
    )
    present = [s for s in _COLOURS if any(e["state"] == s for e in view["entries"])]
    legend = " ".join(f"<span style='color:{_COLOURS[s]}'>&#9632;</span> {_LABELS[s]}" for s in present)
    return (
        f"<div class='lm-figure'><b>{html.escape(topic)}-{partition} on its leader: log end offset "
        f"{view['leo']}</b><div style='margin:6px 0;white-space:nowrap;overflow-x:auto'>"
        f"{''.join(cells) or '(empty)'}</div><div style='font-size:12px'>{limits}</div>"
        f"<div style='font-size:11px'>{legend}</div></div>"
    )
