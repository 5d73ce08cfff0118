"""Space-time (Lamport) diagrams of one run, drawn from the network trace.

Make the cluster with ``trace=True``; every message on the wire becomes an arrow from its
sender's line to its receiver's line, time flowing downwards. Lost messages end in a red cross
halfway. Replication and heartbeat chatter is hidden unless you ask for it.

>>> from course_lib.broker import Cluster
>>> from course_lib.clients import KafkaProducer
>>> c = Cluster(seed=1, trace=True); c.create_topic("t")
>>> p = KafkaProducer(bootstrap_servers=c); _ = p.send("t", b"x"); p.flush()
>>> [(e.src, e.dst, e.label) for e in messages(c.network.trace, kinds=("produce_request", "produce_response"))]
[('producer-1', 'broker-1', 'produce p0:x'), ('broker-1', 'producer-1', 'ack p0@0')]

Taught in notebooks/03_retries_ordering_duplicates.
"""
from __future__ import annotations

PRODUCE = ("produce_request", "produce_response")
REPLICATION = ("fetch_request", "fetch_response")
_COLOURS = {"produce_request": "#1565c0", "produce_response": "#2e7d32", "fetch_request": "#9e9e9e",
            "fetch_response": "#616161"}


def messages(trace, kinds=PRODUCE, start_ms: float = 0, end_ms: float = float("inf")) -> list:
    """The trace entries of the given kinds sent in ``[start_ms, end_ms)``."""
    if trace is None:
        raise ValueError("this cluster keeps no trace: create it with Cluster(..., trace=True)")
    return [e for e in trace if (kinds is None or e.kind in kinds) and start_ms <= e.sent_ms < end_ms]


def space_time(trace, kinds=PRODUCE + REPLICATION, start_ms: float = 0, end_ms: float = float("inf"),
               events=(), ax=None, label: bool = True, max_messages: int = 200):
    """Draw the space-time diagram; returns the matplotlib Axes.

    ``events`` is a list of ``(time_ms, node, text)`` drawn as markers (crashes, for example)."""
    import matplotlib.pyplot as plt

    chosen = messages(trace, kinds, start_ms, end_ms)[:max_messages]
    nodes = sorted({e.src for e in chosen} | {e.dst for e in chosen} | {n for _, n, _ in events},
                   key=lambda n: (not n.startswith("producer"), n))
    if ax is None:
        _, ax = plt.subplots(figsize=(1.8 * max(len(nodes), 2) + 2, 5))
    x = {n: i for i, n in enumerate(nodes)}
    for i in x.values():
        ax.axvline(i, color="#bbbbbb", lw=1, zorder=0)
    for e in chosen:
        colour = _COLOURS.get(e.kind, "#6a1b9a")
        if e.delivered_ms is None:  # lost on the way: stop halfway with a cross
            mid_x = (x[e.src] + x[e.dst]) / 2
            ax.annotate("", xy=(mid_x, e.sent_ms + 0.5), xytext=(x[e.src], e.sent_ms),
                        arrowprops=dict(arrowstyle="-", color="#c62828", lw=1.5))
            ax.plot([mid_x], [e.sent_ms + 0.5], marker="x", color="#c62828", ms=10, mew=2)
            if label:
                ax.text(mid_x, e.sent_ms + 0.5, f" {e.label} ({e.fate})", color="#c62828", fontsize=7, va="center")
            continue
        ax.annotate("", xy=(x[e.dst], e.delivered_ms), xytext=(x[e.src], e.sent_ms),
                    arrowprops=dict(arrowstyle="->", color=colour, lw=1.2 if e.kind in PRODUCE else 0.7))
        if label and e.kind in PRODUCE:
            ax.text((x[e.src] + x[e.dst]) / 2, (e.sent_ms + e.delivered_ms) / 2, e.label, fontsize=7,
                    color=colour, ha="center", va="bottom")
    for t, n, text in events:
        ax.plot([x[n]], [t], marker="*", color="#c62828", ms=14)
        ax.text(x[n], t, f"  {text}", color="#c62828", fontsize=8, va="center")
    # annotations do not take part in autoscaling: set the time range from the messages themselves
    times = [e.sent_ms for e in chosen] + [e.delivered_ms if e.delivered_ms is not None else e.sent_ms + 0.5
                                           for e in chosen] + [t for t, _, _ in events]
    if times:
        lo, hi = min(times), max(times)
        pad = max((hi - lo) * 0.04, 0.5)
        ax.set_ylim(hi + pad, lo - pad)  # time flows downwards
    else:
        ax.invert_yaxis()
    ax.set_xticks(range(len(nodes)), nodes)
    ax.xaxis.tick_top()
    ax.set_ylabel("simulated time (ms)")
    ax.set_xlim(-0.5, len(nodes) - 0.5)
    return ax
