"""Where a consumer resumes after a crash: one partition's offsets, what the crashed instance had
*consumed* (its position), what was *committed* (in Kafka, or in the sink next to the output),
and how often each record was processed in the end.

>>> from course_lib.experiments.scenarios import run_scenario
>>> r = run_scenario("consumer_crash", seed=1, semantics="at-least-once", crash_point="after_process")
>>> at = crash_offsets(r)
>>> at["partition"], at["committed"], at["position"], at["processed"][:6]
(0, 0, 5, [2, 2, 2, 2, 2, 1])

Taught in notebooks/05_consumer_delivery_semantics and notebooks/07_exactly_once_external.
"""

from __future__ import annotations

from ..history import OK, Nemesis, OpName

_COUNT_COLOURS = {0: "#c62828", 1: "#2e7d32", 2: "#ef6c00"}  # never / once / twice or more
_MARKERS = (
    ("committed", "committed offset (Kafka)", "#1565c0", -0.5),
    ("stored", "offset stored in the sink", "#6a1b9a", -0.5),
    ("position", "consumed position at the crash", "#c62828", 1.5),
)


def crash_offsets(result, partition: int | None = None) -> dict:
    """From a pipeline run with one crash (``run_scenario("consumer_crash", ...)`` or
    ``"external_store_exactly_once"``): for ``partition`` (default: the one where the crash left
    work unfinished) the crashed instance's committed offset and consumed position when it died,
    the offset the sink stored with its output (exactly-once-external), and how many times each
    offset was processed over the whole run."""
    history = result.history
    crash = next((op for op in history if op.f == Nemesis.CRASH_CLIENT), None)
    if crash is None:
        raise ValueError("this run has no consumer crash (use a pipeline scenario with a crash_point)")
    victim, t = crash.value["client"], crash.time_ms
    before = [op for op in history if op.process == victim and op.time_ms <= t]
    position: dict = {}
    for op in before:
        if op.f == OpName.POLL and op.type == OK:
            for p, offset, _ in op.value:
                position[p] = max(position.get(p, 0), offset + 1)
    committed: dict = {}
    for op in before:
        if op.f == OpName.COMMIT and op.type == OK:
            for _, p, offset in op.value:
                committed[p] = offset
    stored: dict = {}  # write_with_offset commits output and next offset together, per record
    if result.semantics == "exactly-once-external":
        for op in before:
            if op.f == OpName.PROCESS:
                stored[op.partition] = max(stored.get(op.partition, 0), op.offset + 1)
    processed: dict = {}
    for op in history:
        if op.f == OpName.PROCESS and op.type == OK:
            processed[(op.partition, op.offset)] = processed.get((op.partition, op.offset), 0) + 1
    final = next(op for op in history if op.f == OpName.FINAL_READ)
    ends: dict = {}
    for p, offset, _ in final.value:
        ends[p] = max(ends.get(p, 0), offset + 1)
    if partition is None:
        unfinished = [p for p in sorted(position) if position[p] != stored.get(p, committed.get(p, 0))]
        partition = unfinished[0] if unfinished else min(position, default=0)
    if partition not in ends:
        raise ValueError(f"partition {partition} has no records; partitions: {sorted(ends)}")
    out = {
        "semantics": result.semantics,
        "crash_point": result.crash_point,
        "partition": partition,
        "position": position.get(partition, 0),
        "committed": committed.get(partition, 0),
        "processed": [processed.get((partition, o), 0) for o in range(ends[partition])],
    }
    if result.semantics == "exactly-once-external":
        del out["committed"]  # no group, no Kafka commit: the sink's offset is the resume point
        out["stored"] = stored.get(partition, 0)
    return out


def offsets_figure(rows: dict, ax=None):
    """One strip per run: ``rows`` maps a title to :func:`crash_offsets`. Boxes are offsets,
    coloured by how often they were processed (green once, orange more, red never); the lines
    mark the committed offset, the offset stored in the sink, and the consumed position at the
    crash. Whatever lies between the resume point and the position is processed again (or never,
    if the commit ran ahead). Returns the Axes."""
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch, Rectangle

    if not rows:
        raise ValueError("offsets_figure needs at least one run")
    width = max(len(r["processed"]) for r in rows.values())
    if ax is None:
        _, ax = plt.subplots(figsize=(max(6.0, 0.55 * width + 3), 1.35 * len(rows) + 1.2))
    for i, (title, r) in enumerate(rows.items()):
        y = -2.2 * i
        for offset, count in enumerate(r["processed"]):
            ax.add_patch(
                Rectangle((offset, y), 0.92, 0.9, facecolor=_COUNT_COLOURS[min(count, 2)], alpha=0.8, edgecolor="white")
            )
            ax.text(offset + 0.46, y + 0.45, str(offset), ha="center", va="center", fontsize=8, color="white")
        for key, text, colour, dy in _MARKERS:
            if key not in r:
                continue
            x = r[key] - 0.04
            ax.plot([x, x], [y - 0.25, y + 1.15], color=colour, lw=2.5)
            ax.text(
                x,
                y + (1.2 if dy > 0 else -0.3),
                f"{text} = {r[key]}",
                color=colour,
                fontsize=8,
                ha="left" if key != "position" else "right",
                va="bottom" if dy > 0 else "top",
            )
        ax.text(-0.3, y + 0.45, title, ha="right", va="center", fontsize=9)
    ax.set_xlim(-0.5, width + 0.5)
    ax.set_ylim(-2.2 * (len(rows) - 1) - 0.9, 1.9)
    ax.axis("off")
    ax.legend(
        handles=[
            Patch(color=_COUNT_COLOURS[0], label="never processed"),
            Patch(color=_COUNT_COLOURS[1], label="processed once"),
            Patch(color=_COUNT_COLOURS[2], label="processed twice or more"),
        ],
        loc="upper center",
        bbox_to_anchor=(0.5, 0.0),
        ncol=3,
        fontsize=8,
        frameon=False,
    )
    ax.set_title(f"partition {next(iter(rows.values()))['partition']}: where the next instance resumes", fontsize=10)
    return ax


def offsets_html(r: dict) -> str:
    """:func:`offsets_figure` of one run as HTML (the demos draw it without matplotlib, which the
    browser copy of the course does not load for them): one box per offset, coloured by how often
    it was processed, and the resume point and consumed position marked under the boxes.

    >>> html = offsets_html({"partition": 0, "position": 2, "committed": 0, "processed": [2, 2, 1]})
    >>> html.count("class='of-box'"), "committed offset (Kafka) = 0" in html, "consumed position at the crash = 2" in html
    (3, True, True)
    """
    import html as _html

    step = 28  # px per offset: a 26 px box and its gap
    boxes = "".join(
        f"<div class='of-box' data-count='{count}' title='offset {offset}: processed {count}x' "
        f"style='display:inline-block;width:26px;margin-right:2px;background:{_COUNT_COLOURS[min(count, 2)]};"
        f"color:white;text-align:center;height:24px;line-height:24px;font-size:11px;border-radius:2px'>{offset}</div>"
        for offset, count in enumerate(r["processed"])
    )
    # one line per marker, its left edge at the offset it names (a resume point sits before
    # that offset's box): labels never overlap, however close the offsets are
    marks = "".join(
        f"<div class='of-mark' style='margin-left:{r[key] * step}px;color:{colour};border-left:3px solid {colour};"
        f"padding-left:4px;white-space:nowrap;font-size:11px;line-height:16px'>{_html.escape(text)} = {r[key]}</div>"
        for key, text, colour, _ in _MARKERS
        if key in r
    )
    legend = " ".join(
        f"<span style='color:{_COUNT_COLOURS[k]}'>&#9632;</span> {label}"
        for k, label in ((0, "never processed"), (1, "processed once"), (2, "processed twice or more"))
    )
    return (
        f"<div class='of-figure'><b>partition {r['partition']}: where the next instance resumes</b>"
        f"<div style='margin:6px 0 10px 0;white-space:nowrap'>{boxes}{marks}</div>"
        f"<div style='font-size:11px'>{legend}</div></div>"
    )
