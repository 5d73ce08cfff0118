"""The cluster at a glance: brokers up/down/paused, and for each partition its leader, leader
epoch, ISR and every replica's log end offset (LEO) and high watermark (HW).

>>> from course_lib.broker import Cluster
>>> cluster = Cluster(brokers=3, seed=1)
>>> cluster.create_topic("events", replication_factor=3, min_insync_replicas=2)
>>> print(cluster_text(cluster))
t=... ms  brokers: 1 up, 2 up, 3 up
events-0  leader 1  epoch 0  ISR [1, 2, 3]
  broker 1 (leader): LEO 0  HW 0
  broker 2 (follower): LEO 0  HW 0
  broker 3 (follower): LEO 0  HW 0

Taught in notebooks/01_replicated_log.
"""

from __future__ import annotations

import html

import ipywidgets as widgets

_COLOURS = {"up": "#2e7d32", "paused": "#f9a825", "down": "#c62828"}


def _broker_status(b: dict) -> str:
    if not b["up"]:
        return "down"
    return "paused" if b["paused"] else "up"


def cluster_text(cluster) -> str:
    """A plain-text picture of ``cluster.state()`` (for doctests and logs)."""
    state = cluster.state()
    lines = [
        f"t={state['time_ms']:g} ms  brokers: "
        + ", ".join(f"{b} {_broker_status(s)}" for b, s in state["brokers"].items())
    ]
    for p in state["partitions"]:
        lines.append(f"{p['topic']}-{p['partition']}  leader {p['leader']}  epoch {p['leader_epoch']}  ISR {p['isr']}")
        for r, rep in p["replicas"].items():
            status = "" if rep["up"] and not rep["paused"] else f", {'down' if not rep['up'] else 'paused'}"
            lines.append(f"  broker {r} ({rep['role']}{status}): LEO {rep['leo']}  HW {rep['hw']}")
    return "\n".join(lines)


def cluster_html(state: dict) -> str:
    """HTML for a ``cluster.state()`` snapshot: one row per broker, one table per partition.

    A replica's bar shows its log: filled up to the HW (committed, readable), lighter up to the
    LEO (written here, not yet committed)."""
    brokers = "".join(
        f"<span class='cv-broker' data-broker='{b}' data-status='{_broker_status(s)}' "
        f"style='display:inline-block;margin:2px 6px 2px 0;padding:2px 8px;border-radius:4px;color:white;"
        f"background:{_COLOURS[_broker_status(s)]}'>broker {b}: {_broker_status(s)}</span>"
        for b, s in state["brokers"].items()
    )
    parts = [f"<div class='cv-time'>simulated time: {state['time_ms']:.1f} ms</div><div>{brokers}</div>"]
    for p in state["partitions"]:
        top = max([r["leo"] for r in p["replicas"].values()] + [1])
        rows = []
        for r, rep in p["replicas"].items():
            in_isr = r in p["isr"]
            role = "leader" if r == p["leader"] else "follower"
            hw_pct, leo_pct = 100 * rep["hw"] / top, 100 * rep["leo"] / top
            bar = (
                f"<div style='position:relative;width:160px;height:12px;background:#eee;border:1px solid #bbb'>"
                f"<div style='position:absolute;left:0;top:0;height:12px;width:{leo_pct:.0f}%;background:#90caf9'></div>"
                f"<div style='position:absolute;left:0;top:0;height:12px;width:{hw_pct:.0f}%;background:#1565c0'></div></div>"
            )
            status = "up" if rep["up"] and not rep["paused"] else ("paused" if rep["up"] else "down")
            rows.append(
                f"<tr data-replica='{r}'><td>broker {r}</td><td>{role}</td>"
                f"<td style='color:{_COLOURS[status]}'>{status}</td><td>{'yes' if in_isr else 'no'}</td>"
                f"<td class='cv-leo'>{rep['leo']}</td><td class='cv-hw'>{rep['hw']}</td><td>{bar}</td></tr>"
            )
        leader = p["leader"] if p["leader"] is not None else "none (offline)"
        lead_hw = p["replicas"][p["leader"]]["hw"] if p["leader"] in p["replicas"] else None
        trailing = lead_hw is not None and any(
            rep["hw"] < lead_hw for r, rep in p["replicas"].items() if r != p["leader"]
        )
        # Followers learn the HW from the leader's next fetch response: a lower follower HW is a
        # delay, not data at risk (the leader's HW is what is committed).
        note = (
            (
                "<div class='cv-hw-note' style='font-size:90%;color:#555'>Followers learn the high watermark "
                "one fetch later, so their HW and dark bar trail the leader's: what counts as committed "
                "is the leader's HW.</div>"
            )
            if trailing
            else ""
        )
        parts.append(
            f"<div class='cv-partition' style='margin-top:6px'><b>{html.escape(p['topic'])}-{p['partition']}</b>: "
            f"leader <span class='cv-leader'>{leader}</span>, leader epoch "
            f"<span class='cv-epoch'>{p['leader_epoch']}</span>, ISR <span class='cv-isr'>{p['isr']}</span>"
            f"<table style='border-collapse:collapse'><tr><th>replica</th><th>role</th><th>status</th>"
            f"<th>in ISR</th><th>LEO</th><th>HW</th><th>log (dark: committed)</th></tr>{''.join(rows)}</table>{note}</div>"
        )
    return "<div class='cluster-view'>" + "".join(parts) + "</div>"


class ClusterView:
    """A widget showing a cluster; call :meth:`refresh` after the simulation advances.

    >>> from course_lib.broker import Cluster
    >>> c = Cluster(seed=1); c.create_topic("events")
    >>> view = ClusterView(c)
    >>> "leader <span class='cv-leader'>1</span>" in view.widget.value
    True
    >>> c.crash(1); view.refresh()
    >>> "data-status='down'" in view.widget.value
    True
    """

    def __init__(self, cluster):
        self.cluster = cluster
        self.widget = widgets.HTML()
        self.refresh()

    def refresh(self) -> None:
        self.widget.value = cluster_html(self.cluster.state())

    def _ipython_display_(self):  # pragma: no cover - notebook display
        from IPython.display import display

        display(self.widget)
