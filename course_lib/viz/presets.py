"""Lesson presets for the widget apps: the settings an app starts with, and the "try it" steps
shown above it.

A step is data, not prose: the settings to change and the buttons to press, plus the question
the learner answers by doing it and the words the app then shows (``expect``). The "try it" text
is generated from the same data, and tests/test_viz_presets.py follows every step headless and
asserts ``expect``, so the text cannot drift away from what the app does.

>>> step = Step(settings={"retries": "0 (never retry)"}, press=("lose_ack", "send", "check"),
...             question="Duplicated now?", expect=("No anomalies",))
>>> labels = {"lose_ack": "lose next ACK", "send": "send 5 messages", "check": "heal and check"}
>>> print(step.instruction({"retries": "retries"}, labels))
Set <b>retries</b> to <b>0 (never retry)</b>; press <b>lose next ACK</b>, <b>send 5 messages</b>, <b>heal and check</b>. Duplicated now?
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


def _as_text(name: str, value, state: dict) -> str:
    return str(value)


Shown = Callable[[str, object, dict], str]  # (control, value, every setting at that step) -> as shown


@dataclass(frozen=True)
class Step:
    """One thing to try: change ``settings`` (control name -> value, in order), press ``press``
    (button names, in order), answer ``question``; the app then shows every text in ``expect``."""

    press: tuple[str, ...]
    question: str
    expect: tuple[str, ...]
    settings: dict = field(default_factory=dict)

    def instruction(
        self, descriptions: dict[str, str], labels: dict[str, str], shown: Shown = _as_text, state: dict | None = None
    ) -> str:
        """The step as one HTML sentence; ``descriptions`` names the controls, ``labels`` the
        buttons, ``shown`` words a value as its control shows it, given ``state`` (the settings
        in force once this step's are made)."""
        state = {**(state or {}), **self.settings}
        parts = []
        for name, value in self.settings.items():
            what = html.escape(descriptions[name])
            if isinstance(value, bool):  # a checkbox
                parts.append(f"{'tick' if value else 'untick'} <b>{what}</b>")
            else:
                parts.append(f"set <b>{what}</b> to <b>{html.escape(shown(name, value, state))}</b>")
        if self.press:
            buttons = ", ".join(f"<b>{html.escape(labels[b])}</b>" for b in self.press)
            parts.append(f"press {buttons}")
        sentence = "; ".join(parts)
        return sentence[:1].upper() + sentence[1:] + ". " + html.escape(self.question)


@dataclass(frozen=True)
class Preset:
    """An app as one lesson uses it: a title, the starting ``settings`` and the steps to try."""

    title: str
    settings: dict
    steps: tuple[Step, ...]

    def html(self, descriptions: dict[str, str], labels: dict[str, str], shown: Shown = _as_text) -> str:
        state, items = dict(self.settings), []
        for step in self.steps:
            items.append(f"<li>{step.instruction(descriptions, labels, shown, state)}</li>")
            state.update(step.settings)
        return f"<div class='app-try'><b>Try it: {html.escape(self.title)}</b><ol>{''.join(items)}</ol></div>"


class PresetApp:
    """What the apps with presets share: controls and buttons found by name (the names a step
    uses), and following a step as a learner would. An app sets ``CONTROLS`` and ``BUTTONS``,
    has attributes ``<control>`` and ``<button>_button``, and shows its result in ``view``."""

    CONTROLS: tuple[str, ...] = ()
    BUTTONS: tuple[str, ...] = ()
    view: Any  # an ipywidgets.HTML: what the app shows

    def control(self, name: str):
        if name not in self.CONTROLS:
            raise ValueError(f"no control {name!r}; the controls are {self.CONTROLS}")
        return getattr(self, name)

    def button(self, name: str):
        if name not in self.BUTTONS:
            raise ValueError(f"no button {name!r}; the buttons are {self.BUTTONS}")
        return getattr(self, f"{name}_button")

    def follow(self, step: Step) -> str:
        """Do what ``step`` says (settings, then buttons); return what the app shows, in words."""
        for name, value in step.settings.items():
            self.control(name).value = value
        for name in step.press:
            self.button(name).click()
        return html.unescape(re.sub(r"<[^>]+>", " ", self.view.value))


def lookup(presets: dict[str, Preset], name: str | None, app: str) -> Preset | None:
    """The preset called ``name`` (None: no preset), or a ValueError naming the ones there are."""
    if name is None:
        return None
    if name not in presets:
        raise ValueError(f"{app} has no preset {name!r}; choose one of {sorted(presets)}")
    return presets[name]
