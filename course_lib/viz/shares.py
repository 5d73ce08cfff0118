"""The share-group app: a queue of 12 jobs on one partition and 3 workers of one share group;
crash a worker, set the handler's time against the acquisition lock, RENEW, poison some jobs,
choose explicit or implicit acknowledgement, press **run the workers**, and read what was
processed twice, delivered again, archived, never processed and processed out of order - one
row per job (lesson 05c's experiments, with the knobs in hand).

>>> app = ShareDemo(seed=1, preset="queue")
>>> app.crash.value = True
>>> app.acknowledgement.value = "implicit"
>>> app.run_button.click()
>>> app.result.numbers["processed_twice"], app.result.numbers["redelivered"]
(2, 3)

A lesson starts it with a preset (``ShareDemo(preset="queue")``; the names are in
``SHARE_PRESETS``): its starting settings and the steps to try, shown above it.

Taught in notebooks/05c_share_groups (and the share_groups demo).
"""

from __future__ import annotations

import html
import warnings

import ipywidgets as widgets

from ..experiments.share_scenarios import run_share_scenario
from ..judge.result import Result
from .presets import Preset, PresetApp, Step, lookup

JOBS, WORKERS = 12, 3

# control name -> (description, [(label, value), ...]); "crash" and "renew" are the checkboxes
SHARE_CHOICES = {
    "handler_ms": ("handler", [("100 ms per job", 100), ("20 s per job", 20_000), ("40 s per job", 40_000)]),
    "lock_ms": (
        "lock duration",
        [("15 s", 15_000), ("30 s (the default)", 30_000), ("60 s", 60_000)],
    ),
    "max_poll_records": ("max.poll.records", [("1", 1), ("3", 3)]),
    "poison_rate": ("poison jobs", [("none", 0.0), ("1 in 10", 0.1), ("3 in 10", 0.3)]),
    "acknowledgement": (
        "acknowledgement",
        [
            ("explicit: ACCEPT or RELEASE each job as it ends", "explicit"),
            ("implicit: the next poll accepts the batch", "implicit"),
        ],
    ),
}
SHARE_CHECKBOXES = {
    "crash": "crash worker 1 in the middle of the last job of its first poll",
    "renew": "RENEW the locks every half lock (Java client)",
}
SHARE_CONTROLS = (*SHARE_CHOICES, *SHARE_CHECKBOXES)
SHARE_BUTTONS = ("run",)
START = {
    "handler_ms": 100,
    "lock_ms": 30_000,
    "max_poll_records": 3,
    "poison_rate": 0.0,
    "acknowledgement": "explicit",
    "crash": False,
    "renew": False,
}

# One per lesson; every step's `expect` is asserted by tests/test_viz_presets.py.
SHARE_PRESETS = {
    "queue": Preset(
        "crashes, slow handlers, poison jobs (lesson 05c)",
        START,
        (
            Step(
                ("run",),
                "Worker 1 crashes in the middle of its 3rd job (3 per poll): how many jobs are processed twice?",
                ("processed twice: 0", "delivered again: 1"),
                {"crash": True},
            ),
            Step(
                ("run",),
                "The same crash when the next poll acknowledges the batch: processed twice now?",
                ("processed twice: 2", "delivered again: 3"),
                {"acknowledgement": "implicit"},
            ),
            Step(
                ("run",),
                "A handler slower than the lock: how many jobs are archived?",
                ("archived: 12", "processed twice: 12"),
                {"crash": False, "acknowledgement": "explicit", "handler_ms": 40_000},
            ),
            Step(
                ("run",),
                "RENEW while the handler works: anything twice?",
                ("processed twice: 0", "archived: 0"),
                {"renew": True},
            ),
            Step(
                ("run",),
                "A fast handler again, 3 poison jobs in 10: how often is each poison job delivered?",
                ("archived: 4", "never processed: 4", "delivered 5 times"),
                {"renew": False, "handler_ms": 100, "poison_rate": 0.3},
            ),
            Step(
                ("run",),
                "And with implicit acknowledgement?",
                ("archived: 0", "never processed: 4", "delivered again: 0"),
                {"acknowledgement": "implicit"},
            ),
        ),
    ),
}

_COLOURS = {"once": "#2e7d32", "twice": "#ef6c00", "archived": "#6a1b9a", "never": "#c62828"}


def _dropdown(name: str) -> widgets.Dropdown:
    description, options = SHARE_CHOICES[name]
    return widgets.Dropdown(
        options=options,
        description=description,
        style={"description_width": "130px"},
        layout=widgets.Layout(width="460px" if name == "acknowledgement" else "300px"),
    )


def job_rows(result: Result) -> list[dict]:
    """One row per job of a ``job_queue`` run: its deliveries (worker number, delivery count),
    how many times it was processed, whether it was archived, poisoned, processed out of order,
    and its outcome: ``once``, ``twice`` (or more), ``archived`` or ``never`` (processed).

    >>> r = run_share_scenario("job_queue", seed=1, records=4, poison_rate=0.25)
    >>> [(row["job"], row["outcome"], len(row["deliveries"])) for row in job_rows(r)]
    [('job-0', 'once', 1), ('job-1', 'archived', 5), ('job-2', 'once', 1), ('job-3', 'once', 1)]
    """
    obs = result.observed
    workers = {name: i for i, name in enumerate(result.numbers["per_worker"], 1)}
    late = {a.message for a in result.check.by_kind("reordered_across_workers")}
    poison = set(result.numbers["poison"])
    rows = []
    for key, ds in sorted(obs.deliveries.items()):
        job = ds[0].message
        processed = len(obs.processed.get(job, []))
        archived = key in obs.archived
        outcome = "twice" if processed > 1 else "once" if processed == 1 else "archived" if archived else "never"
        rows.append(
            {
                "job": job,
                "deliveries": [(workers.get(d.worker, 0), d.delivery_count) for d in ds],
                "processed": processed,
                "archived": archived,
                "poison": job in poison,
                "out_of_order": job in late,
                "outcome": outcome,
            }
        )
    return rows


def summary(result: Result) -> str:
    """The run in one line of counts, the words the "try it" steps look for."""
    n = result.numbers
    poison = [row for row in job_rows(result) if row["poison"]]
    times = sorted({len(row["deliveries"]) for row in poison})
    told = ""
    if times:
        told = f"; each poison job delivered {' or '.join(map(str, times))} time{'s' if times != [1] else ''}"
    return (
        f"processed twice: {n['processed_twice']}; delivered again: {n['redelivered']}; archived: {n['archived']}; "
        f"never processed: {len(n['never_processed'])}; out of order: {n['reordered']} (of {n['records']} jobs, "
        f"{n['deliveries']} deliveries){told}"
    )


def jobs_html(result: Result) -> str:
    """The figure: one row per job, a box per delivery (which worker, which delivery), coloured
    by how the job ended."""
    out = []
    for row in job_rows(result):
        colour = _COLOURS[row["outcome"]]
        boxes = "".join(
            f"<span class='sg-box' style='display:inline-block;min-width:44px;margin:1px 2px;padding:0 4px;"
            f"border:1px solid {colour};border-radius:3px;font-size:12px'>w{w} #{count}</span>"
            for w, count in row["deliveries"]
        )
        notes = []
        if row["processed"] > 1:
            notes.append(f"processed {row['processed']} times")
        if row["archived"]:
            notes.append(f"archived after {len(row['deliveries'])} deliveries")
        if not row["processed"]:
            notes.append("never processed" + (" (accepted, though it failed)" if not row["archived"] else ""))
        if row["out_of_order"]:
            notes.append("out of order")
        poison = " &#9760;" if row["poison"] else ""
        out.append(
            f"<tr class='sg-job' data-outcome='{row['outcome']}'><td style='color:{colour};padding-right:8px'>"
            f"<b>{html.escape(row['job'])}</b>{poison}</td><td>{boxes}</td>"
            f"<td style='color:{colour};padding-left:8px'>{html.escape(', '.join(notes))}</td></tr>"
        )
    legend = ", ".join(
        f"<span style='color:{c}'>{w}</span>"
        for w, c in (
            ("processed once", _COLOURS["once"]),
            ("processed twice or more", _COLOURS["twice"]),
            ("archived", _COLOURS["archived"]),
            ("never processed", _COLOURS["never"]),
        )
    )
    return (
        f"<div class='sg-figure'><p style='margin:4px 0'>Each job's deliveries: <b>w2 #3</b> = to worker 2, its "
        f"3rd delivery; &#9760; = a poison job. {legend}.</p><table style='border-collapse:collapse'>"
        f"{''.join(out)}</table></div>"
    )


class ShareDemo(PresetApp):
    """3 workers of share group ``workers`` on topic ``jobs`` (12 jobs, one partition), run until
    every job is accepted or archived, with the chosen settings."""

    CONTROLS, BUTTONS = SHARE_CONTROLS, SHARE_BUTTONS

    def __init__(self, seed: int = 1, preset: str | None = None):
        """``preset``: a name from ``SHARE_PRESETS`` (the steps a lesson asks to try, shown above)."""
        self.preset = lookup(SHARE_PRESETS, preset, "ShareDemo")
        self.seed = seed
        for name in SHARE_CHOICES:
            setattr(self, name, _dropdown(name))
        for name, description in SHARE_CHECKBOXES.items():
            setattr(self, name, widgets.Checkbox(description=description, indent=False, layout={"width": "auto"}))
        for name, value in {**START, **(self.preset.settings if self.preset else {})}.items():
            self.control(name).value = value
        self.acknowledgement.observe(lambda _: self._renew_only_when_explicit(), "value")
        self._renew_only_when_explicit()
        self.run_button = widgets.Button(description="run the workers", icon="play", button_style="primary")
        self.run_button.layout.width = "auto"
        self.run_button.on_click(lambda _: self.run_workers())
        self.view = widgets.HTML("<p class='sg-summary'>Choose the settings, then press <b>run the workers</b>.</p>")
        self.result: Result | None = None
        descriptions = {n: self.control(n).description for n in SHARE_CONTROLS}
        labels = {n: self.button(n).description for n in SHARE_BUTTONS}
        self.try_view = widgets.HTML(self.preset.html(descriptions, labels, self._shown) if self.preset else "")
        self.widget = widgets.VBox(
            [
                self.try_view,
                widgets.HBox([self.handler_ms, self.lock_ms]),
                widgets.HBox([self.max_poll_records, self.poison_rate]),
                self.acknowledgement,
                widgets.HBox([self.crash, self.renew]),
                widgets.HBox([self.run_button]),  # as wide as its label, not the whole row
                self.view,
            ]
        )

    # the widgets, by control name (set in __init__)
    handler_ms: widgets.Dropdown
    lock_ms: widgets.Dropdown
    max_poll_records: widgets.Dropdown
    poison_rate: widgets.Dropdown
    acknowledgement: widgets.Dropdown
    crash: widgets.Checkbox
    renew: widgets.Checkbox

    def _renew_only_when_explicit(self) -> None:
        """RENEW is an acknowledgement a worker sends: implicit mode has none (greyed, unticked)."""
        implicit = self.acknowledgement.value == "implicit"
        if implicit:
            self.renew.value = False
        self.renew.disabled = implicit

    @staticmethod
    def _shown(name: str, value, state: dict) -> str:
        """A choice as its dropdown shows it."""
        return dict((v, label) for label, v in SHARE_CHOICES[name][1])[value]

    def settings(self) -> dict:
        """The ``job_queue`` scenario's settings the controls choose."""
        return {name: self.control(name).value for name in SHARE_CONTROLS}

    def run_workers(self) -> Result:
        """A fresh run with the current settings (each press starts from the same 12 jobs)."""
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)  # kafka-python's importlib use, nothing else
            result = run_share_scenario("job_queue", seed=self.seed, workers=WORKERS, records=JOBS, **self.settings())
        self.result = result
        n = result.numbers
        bad = n["processed_twice"] or n["archived"] or n["never_processed"]
        colour = "#c62828" if bad else "#2e7d32"
        per_worker = ", ".join(f"worker {i}: {c}" for i, c in enumerate(n["per_worker"].values(), 1))
        self.view.value = (
            f"<p class='sg-summary' style='color:{colour}'><b>{html.escape(summary(result))}</b></p>"
            f"<p style='margin:4px 0'>Jobs processed per worker: {html.escape(per_worker)}"
            f"{' (worker 1 crashed)' if result.settings['crash'] else ''}.</p>{jobs_html(result)}"
        )
        return result

    def _ipython_display_(self):  # pragma: no cover
        from IPython.display import display

        display(self.widget)
