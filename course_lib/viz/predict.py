"""Record a prediction before the reveal: the learner picks (or types) an answer and presses
**lock in**; a later cell, after the experiment, compares it with what was measured.

>>> p = Prediction("How many of the 7 messages are duplicated?", choices=[0, 3, 7])
>>> p.choice.value = 3
>>> p.lock_button.click()
>>> p.locked, p.predicted
(True, 3)
>>> p.reveal(3)
You predicted 3; measured: 3. Right.
>>> Prediction("Lost?", choices=["yes", "no"]).reveal("no")  # nobody pressed "lock in"
No prediction was locked in; measured: no.

Without ``choices`` the learner types a whole number:

>>> n = Prediction("How many are lost?")
>>> n.choice.value = "five"; n.lock_in(); n.locked
False
>>> n.choice.value = " 9 "; n.lock_in(); n.reveal(9).right
True

Nothing needs a browser: nbval and the
tests run these cells with no frontend, so nobody presses a button and ``reveal`` says so.

Used in notebooks/00_start_here to notebooks/08_claims_tested.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass

import ipywidgets as widgets


@dataclass(frozen=True)
class Reveal:
    """A prediction next to the measurement; printed (or shown as a cell's value) as one sentence."""

    predicted: object  # None: nothing was locked in
    actual: object

    @property
    def right(self) -> bool:
        return self.predicted is not None and self.predicted == self.actual

    def __str__(self) -> str:
        if self.predicted is None:
            return f"No prediction was locked in; measured: {self.actual}."
        verdict = "Right." if self.right else "Not this time: read on to see why."
        return f"You predicted {self.predicted}; measured: {self.actual}. {verdict}"

    __repr__ = __str__


class Prediction:
    """A question, an answer control, a **lock in** button and a status line."""

    def __init__(self, question: str, choices: Sequence | None = None):
        if choices is not None and len(choices) < 2:
            raise ValueError("a prediction needs at least two choices (or none: then a number is typed)")
        self.question, self.choices = question, list(choices) if choices is not None else None
        self.predicted: object = None
        self.locked = False
        if self.choices is not None:
            # no preselected answer: locking in the default would record a prediction nobody made
            self.choice: widgets.ValueWidget = widgets.ToggleButtons(
                options=[(str(c), c) for c in self.choices], value=None, style={"button_width": "auto"}
            )
        else:
            self.choice = widgets.Text(placeholder="a whole number", layout=widgets.Layout(width="9em"))
        self.lock_button = widgets.Button(description="lock in", icon="lock", button_style="info")
        self.lock_button.layout.width = "auto"
        self.lock_button.on_click(lambda _: self.lock_in())
        self.status = widgets.HTML("<span class='pr-status'>Pick an answer, then press <b>lock in</b>.</span>")
        self.widget = widgets.VBox(
            [
                widgets.HTML(f"<b>Your prediction:</b> {html.escape(question)}"),
                widgets.HBox([self.choice, self.lock_button]),
                self.status,
            ],
            _dom_classes=["prediction"],
        )

    def lock_in(self) -> None:
        """Record the current answer and freeze the controls (no answer yet: say so, stay open)."""
        if self.locked:
            return
        if self.choices is not None:
            answer = self.choice.value
            if answer is None:
                self._say("Pick an answer first.")
                return
        else:
            try:
                answer = int(self.choice.value.strip())
            except ValueError:
                self._say(f"Type a whole number (not {html.escape(repr(self.choice.value))}).")
                return
        self.predicted, self.locked = answer, True
        self.choice.disabled = self.lock_button.disabled = True
        self._say(f"Locked in: <b>{html.escape(str(self.predicted))}</b>. Now run the experiment.")

    def reveal(self, actual) -> Reveal:
        """Compare with the measured ``actual`` (also shown under the widget); predicting is over."""
        if self.choices is not None and actual not in self.choices:
            raise ValueError(f"measured {actual!r} is none of the choices {self.choices}: fix the choices")
        self.locked = True
        self.choice.disabled = self.lock_button.disabled = True
        result = Reveal(self.predicted, actual)
        self._say(html.escape(str(result)), colour="#2e7d32" if result.right else "#c62828")
        return result

    def _say(self, text: str, colour: str = "inherit") -> None:
        self.status.value = f"<span class='pr-status' style='color:{colour}'>{text}</span>"

    def _ipython_display_(self):  # pragma: no cover - notebook display
        from IPython.display import display

        display(self.widget)
