"""The consumer-group app: two instances of one application, ``a`` from the start and ``b``
joining later; choose how each handles and commits, press **run the group**, read what the
group did (lesson 05b's experiments, with the knobs in hand).

>>> app = GroupDemo(seed=1, preset="rebalance")
>>> app.run_button.click()
>>> app.run.duplicates(), len(app.run.failed_commits)
(10, 0)

A lesson starts it with a preset (``GroupDemo(preset="rebalance")``; the names are in
``GROUP_PRESETS``): its starting settings and the steps to try, shown above it.

Taught in notebooks/05b_consumer_groups.
"""

from __future__ import annotations

import html
import warnings

import ipywidgets as widgets

from ..application.consumer_groups import GroupRun
from .presets import Preset, PresetApp, Step, lookup

RUN_MS = 60_000  # long enough for the slow handler's second eviction (05b: 18.20 s) and a settled group
MESSAGES = 40

# control name -> (description, [(label, value), ...]); "commit_on_revoke" is the checkbox
GROUP_CHOICES = {
    "handler_a": ("handler of a", [("20 ms per record", 20), ("100 ms per record", 100), ("800 ms per record", 800)]),
    "handler_b": ("handler of b", [("20 ms per record", 20), ("100 ms per record", 100), ("800 ms per record", 800)]),
    "b_starts": ("b starts", [("with a, at 0 s", 0), ("at 5 s (a rebalance)", 5000)]),
    "max_poll_records": ("max_poll_records", [("4", 4), ("5", 5), ("10", 10)]),
    "max_poll_interval_ms": ("max_poll_interval_ms", [("5 000 (5 s)", 5000), ("300 000 (the default)", 300_000)]),
    "commit_every": ("commit every", [("batch", 1), ("4 batches", 4)]),
}
GROUP_CONTROLS = (*GROUP_CHOICES, "commit_on_revoke")
GROUP_BUTTONS = ("run",)

# One per lesson; every step's `expect` is asserted by tests/test_viz_presets.py.
GROUP_PRESETS = {
    "rebalance": Preset(
        "rebalances, commits and slow handlers (lesson 05b)",
        {
            "handler_a": 100,
            "handler_b": 100,
            "b_starts": 5000,
            "max_poll_records": 5,
            "max_poll_interval_ms": 300_000,
            "commit_every": 4,
            "commit_on_revoke": False,
        },
        (
            Step(("run",), "How many messages are processed twice?", ("processed more than once: 10",)),
            Step(
                ("run",),
                "And with commit on revocation?",
                ("processed more than once: 0",),
                {"commit_on_revoke": True},
            ),
            Step(
                ("run",),
                "b spends 8 s per batch, more than max_poll_interval_ms: does commit on revocation save its work?",
                ("failed commits: 3", "left the group"),
                {
                    "handler_b": 800,
                    "b_starts": 0,
                    "max_poll_records": 10,
                    "max_poll_interval_ms": 5000,
                    "commit_every": 1,
                },
            ),
            Step(
                ("run",),
                "Smaller batches (3.2 s each): any failed commit or duplicate left?",
                ("processed more than once: 0", "failed commits: 0"),
                {"max_poll_records": 4},
            ),
        ),
    ),
}


def _dropdown(name: str) -> widgets.Dropdown:
    description, options = GROUP_CHOICES[name]
    return widgets.Dropdown(
        options=options,
        description=description,
        style={"description_width": "150px"},
        layout=widgets.Layout(width="420px"),
    )


class GroupDemo(PresetApp):
    """Two instances ``a`` and ``b`` of group ``billing`` on topic ``orders`` (40 messages, 2
    partitions), run for 60 simulated seconds with the chosen settings."""

    CONTROLS, BUTTONS = GROUP_CONTROLS, GROUP_BUTTONS

    def __init__(self, seed: int = 1, preset: str | None = None):
        """``preset``: a name from ``GROUP_PRESETS`` (the steps a lesson asks to try, shown above)."""
        self.preset = lookup(GROUP_PRESETS, preset, "GroupDemo")
        self.seed = seed
        self.handler_a, self.handler_b, self.b_starts = (_dropdown(n) for n in ("handler_a", "handler_b", "b_starts"))
        self.max_poll_records, self.max_poll_interval_ms, self.commit_every = (
            _dropdown(n) for n in ("max_poll_records", "max_poll_interval_ms", "commit_every")
        )
        self.commit_on_revoke = widgets.Checkbox(
            description="commit on revocation (on_partitions_revoked)",
            indent=False,
            layout=widgets.Layout(width="auto"),  # the whole label, not "on_partitions_rev..."
        )
        start = {"handler_a": 100, "handler_b": 100, "b_starts": 5000, "max_poll_records": 5}
        start.update(max_poll_interval_ms=300_000, commit_every=4)
        for name, value in {**start, **(self.preset.settings if self.preset else {})}.items():
            self.control(name).value = value
        self.run_button = widgets.Button(description="run the group", icon="play", button_style="primary")
        self.run_button.layout.width = "auto"
        self.run_button.on_click(lambda _: self.run_group())
        self.view = widgets.HTML("<p class='gr-summary'>Choose the settings, then press <b>run the group</b>.</p>")
        self.run: GroupRun | None = None
        descriptions = {n: self.control(n).description for n in GROUP_CONTROLS}
        labels = {n: self.button(n).description for n in GROUP_BUTTONS}
        self.try_view = widgets.HTML(self.preset.html(descriptions, labels, self._shown) if self.preset else "")
        self.widget = widgets.VBox(
            [
                self.try_view,
                widgets.HBox([self.handler_a, self.handler_b]),
                widgets.HBox([self.b_starts, self.commit_every]),
                widgets.HBox([self.max_poll_records, self.max_poll_interval_ms]),
                self.commit_on_revoke,
                widgets.HBox([self.run_button]),  # as wide as its label, not the whole row
                self.view,
            ]
        )

    @staticmethod
    def _shown(name: str, value, state: dict) -> str:
        """A choice as its dropdown shows it."""
        return dict((v, label) for label, v in GROUP_CHOICES[name][1])[value]

    def run_group(self) -> GroupRun:
        """A fresh run with the current settings (each press starts from the same 40 messages)."""
        common = dict(
            commit_every=self.commit_every.value,
            commit_on_revoke=self.commit_on_revoke.value,
            max_poll_records=self.max_poll_records.value,
            max_poll_interval_ms=self.max_poll_interval_ms.value,
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)  # kafka-python's importlib use, nothing else
            run = GroupRun(seed=self.seed, messages=MESSAGES)
            run.start("a", handler_ms=self.handler_a.value, **common)
            run.start("b", at_ms=self.b_starts.value, handler_ms=self.handler_b.value, **common)
            run.run(RUN_MS)
        self.run = run
        bad = run.duplicates() or run.never_processed() or run.failed_commits
        colour = "#c62828" if bad else "#2e7d32"
        self.view.value = (
            f"<p class='gr-summary' style='color:{colour}'><b>{html.escape(run.summary())}</b></p>"
            f"<p>What happened to the group ({RUN_MS // 1000} s, times since the start):</p>"
            f"<pre class='gr-timeline' style='font-size:12px;line-height:1.3;word-break:normal;overflow-wrap:break-word'>{html.escape(run.timeline())}</pre>"
        )
        return run

    def _ipython_display_(self):  # pragma: no cover
        from IPython.display import display

        display(self.widget)
