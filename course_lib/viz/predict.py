"""Record a prediction before the reveal: the learner picks (or types) an answer and presses
**lock in**; a later cell, after the experiment, hands the measurement to the widget, which shows
it only once a prediction is locked in.

>>> p = Prediction("How many of the 7 messages are duplicated?", choices=[0, 3, 7])
>>> p.choice.value = 3
>>> p.lock_button.click()
>>> p.locked, p.predicted
(True, 3)
>>> p.reveal(3)
You predicted 3; measured: 3. Right.

Run All reaches the reveal before anybody could answer: the measurement is held, not shown, and
the controls stay open; locking in then shows it.

>>> q = Prediction("Lost?", choices=["yes", "no"])
>>> shown = q.reveal("no")
>>> shown
Measured. Lock in your prediction above to see how it compares.
>>> q.choice.disabled, "no" in q.status.value
(False, False)
>>> q.choice.value = "yes"; q.lock_in()
>>> shown
You predicted yes; measured: no. Not this time: read on to see why.

Without ``choices`` the learner types a whole number:

>>> n = Prediction("How many are lost?")
>>> n.choice.value = "five"; n.lock_in(); n.locked
False
>>> n.choice.value = " 9 "; n.lock_in(); n.reveal(9).right
True

Nothing needs a browser: nbval and the tests run these cells with no frontend, so nobody presses
a button and every reveal stays waiting.

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


_NOTHING = object()
WAITING = "Measured. Lock in your prediction above to see how it compares."


class Prediction:
    """A question, an answer control, a **lock in** button and a status line."""

    def __init__(self, question: str, choices: Sequence | None = None):
        if choices is not None and len(choices) < 2:
            raise ValueError("a prediction needs at least two choices (or none: then a number is typed)")
        self.question, self.choices = question, list(choices) if choices is not None else None
        self.predicted: object = None
        self.locked = False
        self._measured: object = _NOTHING  # what reveal() was handed; shown only after lock-in
        # the reveal cell's line (a second view: the reveal cell is far below the question)
        self.outcome = widgets.HTML("")
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
        """Record the current answer and freeze the controls (no answer yet: say so, stay open);
        a measurement already handed to :meth:`reveal` is shown now."""
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
        if self._measured is _NOTHING:
            self._say(f"Locked in: <b>{html.escape(str(self.predicted))}</b>. Now run the experiment.")
        else:
            self._show_result()

    @property
    def result(self) -> Reveal | None:
        """The prediction next to the measurement, once both exist (None before)."""
        if not self.locked or self._measured is _NOTHING:
            return None
        return Reveal(self.predicted, self._measured)

    def reveal(self, actual) -> Revealed:
        """Hand over the measured ``actual``: shown at once if a prediction is locked in, else held
        (controls stay open) until the learner locks one in."""
        if self.choices is not None and actual not in self.choices:
            raise ValueError(f"measured {actual!r} is none of the choices {self.choices}: fix the choices")
        self._measured = actual
        if self.locked:
            self._show_result()
        else:
            self._say("The experiment has run: lock in your prediction to see what it measured.")
            self.outcome.value = f"<span class='pr-outcome'>{html.escape(WAITING)}</span>"
        return Revealed(self)

    def _show_result(self) -> None:
        result = self.result
        assert result is not None
        colour = "#2e7d32" if result.right else "#c62828"
        self._say(html.escape(str(result)), colour=colour)
        self.outcome.value = f"<span class='pr-outcome' style='color:{colour}'>{html.escape(str(result))}</span>"

    def _say(self, text: str, colour: str = "inherit") -> None:
        self.status.value = f"<span class='pr-status' style='color:{colour}'>{text}</span>"

    def _ipython_display_(self):  # pragma: no cover - notebook display
        from IPython.display import display

        display(self.widget)


class Revealed:
    """What a reveal cell shows: the comparison once a prediction is locked in; before that only
    that a measurement is waiting (never its value). Live: it follows a later lock-in."""

    def __init__(self, prediction: Prediction):
        self._prediction = prediction

    @property
    def result(self) -> Reveal | None:
        return self._prediction.result

    @property
    def right(self) -> bool:
        return self.result is not None and self.result.right

    def __eq__(self, other) -> bool:
        return self.result == (other.result if isinstance(other, Revealed) else other)

    __hash__ = None  # type: ignore[assignment]

    def __str__(self) -> str:
        return WAITING if self.result is None else str(self.result)

    __repr__ = __str__

    def _ipython_display_(self):  # pragma: no cover - notebook display
        from IPython.display import display

        display(self._prediction.outcome)
