"""Record a prediction before the reveal: the learner picks (or types) an answer and presses
**lock in**; a later cell, after the experiment, hands the measurement to the widget, which shows
it only once a prediction is locked in.

The contract the lessons are written against (tests/test_prediction_sources.py checks their side):

- ``Prediction(question, choices=None, note=False)``: with ``choices`` the learner picks one;
  without, types a whole number; with ``note=True`` (an open question) types a short free-text
  note (non-empty once trimmed, at most :data:`NOTE_LIMIT` characters), and the reveal shows
  "You noted: ..." beside the measured explanation instead of a right/wrong verdict.
- ``prediction.reveal(actual, explanation=...)`` hands over the measurement; ``explanation`` is
  markdown made from the run's values by a function of ``course_lib.explain.lessonNN`` (a string
  it returned, or a callable returning one, called at once so errors show under the cell): never a
  literal in the notebook, whose source a learner reads before locking in.
- Everything that answers the question (the held experiment output, the explanation, the
  comparison) shows only once the prediction is locked in, whether that happens before the
  experiment runs or after Run All; the "lock in your prediction" hints go at lock-in, so the
  lesson's markdown carries no such hint (it could not go away).

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

The experiment itself runs inside ``with prediction.experiment():``. In JupyterLab its output (the
printed numbers, which answer the question) goes into an ``ipywidgets.Output`` under the cell that
stays hidden until the prediction is locked in, whether that happens before the cell runs or after
Run All. The kernel still publishes that output as the cell's own: nbval, which knows no widgets,
compares it as before. Outside a notebook nothing is held (plain Python prints as usual).

>>> e = Prediction("Lost?", choices=["yes", "no"])
>>> with e.experiment() as held:
...     print("lost: no")
lost: no
>>> held.layout.display
'none'
>>> e.choice.value = "no"; e.lock_in(); held.layout.display
'block'
>>> with e.experiment() as after:  # locked in first: shown as it runs
...     pass
>>> after.layout.display
'block'

What a lesson says about the measurement (the numbers, and why) is an answer too: it is handed to
:meth:`Prediction.reveal` as ``explanation`` (markdown) and shown under the reveal once locked
in (headed **Measured:**, unless it starts with its own heading); any other cell whose output gives
the answer away (a message's explanation, a diagram of the run, a progress bar labelled with a
choice) runs inside ``with prediction.after_lock_in():``.

>>> f = Prediction("Lost?", choices=["yes", "no"])
>>> shown = f.reveal("no", explanation="nothing is lost.")
>>> f.explained, f.explanation.layout.display
('**Measured:** nothing is lost.', 'none')
>>> f.choice.value = "yes"; f.lock_in(); f.explanation.layout.display
'block'

An open question takes a note; the reveal sets it beside the measurement and its explanation:

>>> o = Prediction("What are the HW and LEO of each replica?", note=True)
>>> o.choice.value = "   "; o.lock_in(); o.locked
False
>>> o.choice.value = "x" * (NOTE_LIMIT + 1); o.lock_in(); o.locked
False
>>> o.choice.value = " all LEO 3, HW 3 everywhere "; o.lock_in(); o.predicted
'all LEO 3, HW 3 everywhere'
>>> o.reveal("leader HW 3, followers HW 0", explanation=lambda: "The followers learn the HW later.")
You noted: all LEO 3, HW 3 everywhere; measured: leader HW 3, followers HW 0.
>>> "You noted: all LEO 3" in o.outcome.value  # the reveal cell's line, right above the explanation
True

After lock-in no hint to lock in is left anywhere in the widget:

>>> "lock in" in (o.status.value + o.outcome.value).lower()
False

Nothing needs a browser: nbval and the tests run these cells with no frontend, so nobody presses
a button and every reveal stays waiting.

Used in notebooks/00_start_here to notebooks/08_claims_tested.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass

import ipywidgets as widgets


@dataclass(frozen=True)
class Reveal:
    """A prediction next to the measurement; printed (or shown as a cell's value) as one sentence."""

    predicted: object  # None: nothing was locked in
    actual: object
    noted: bool = False  # a free-text note: compared by the learner, not by equality
    #: where the answer comes from: "measured", or e.g. "the simulator's answer" when the
    #: experiment the question is about (on real Kafka) did not run
    source: str = "measured"

    @property
    def right(self) -> bool:
        return not self.noted and self.predicted is not None and self.predicted == self.actual

    def __str__(self) -> str:
        if self.predicted is None:
            return f"No prediction was locked in; {self.source}: {self.actual}."
        if self.noted:
            return f"You noted: {self.predicted}; {self.source}: {self.actual}."
        verdict = "Right." if self.right else "Not this time: read on to see why."
        return f"You predicted {self.predicted}; {self.source}: {self.actual}. {verdict}"

    __repr__ = __str__


#: the longest note an open question takes (a sentence or two: a guess, not an essay)
NOTE_LIMIT = 300

_NOTHING = object()
WAITING = "Measured. Lock in your prediction above to see how it compares."
# shown under an experiment cell in place of its output until the prediction is locked in (no digits:
# the tests look for the measured number in what a learner sees)
HELD = "The result of this experiment is hidden until you lock in your prediction above."
HELD_AFTER = "This output is hidden until you lock in your prediction above."
# a shown experiment output: set explicitly (JupyterLite's widgets keep "display: none" when the
# trait goes back to None, JupyterLab's do not)
SHOWN = "block"


class Prediction:
    """A question, an answer control, a **lock in** button and a status line."""

    def __init__(self, question: str, choices: Sequence | None = None, note: bool = False):
        if choices is not None and len(choices) < 2:
            raise ValueError("a prediction needs at least two choices (or none: then a number is typed)")
        if choices is not None and note:
            raise ValueError("a prediction takes choices or a note, not both: drop one")
        self.question, self.choices = question, list(choices) if choices is not None else None
        self.note = note
        self.predicted: object = None
        self.locked = False
        self._measured: object = _NOTHING  # what reveal() was handed; shown only after lock-in
        self.source = "measured"  # or what the answer is when nothing was measured (reveal())
        self.explained: str | None = None  # the explanation's markdown, once revealed
        self._held: list[tuple[widgets.HTML, widgets.Output]] = []  # experiment outputs, hidden until lock-in
        # the lesson's text on the measurement (given to reveal()), hidden until lock-in
        self.explanation = widgets.Output(layout=widgets.Layout(display="none"))
        # the reveal cell's line (a second view: the reveal cell is far below the question)
        self.outcome = widgets.HTML("")
        if self.choices is not None:
            # no preselected answer: locking in the default would record a prediction nobody made
            self.choice: widgets.ValueWidget = widgets.ToggleButtons(
                options=[(str(c), c) for c in self.choices], value=None, style={"button_width": "auto"}
            )
        elif note:
            self.choice = widgets.Text(placeholder="your answer, in a few words", layout=widgets.Layout(width="32em"))
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
        elif self.note:
            answer = " ".join(self.choice.value.split())
            if not answer:
                self._say("Type your answer in a few words first.")
                return
            if len(answer) > NOTE_LIMIT:
                self._say(f"Keep it under {NOTE_LIMIT} characters (this is {len(answer)}): a guess, not an essay.")
                return
        else:
            try:
                answer = int(self.choice.value.strip())
            except ValueError:
                self._say(f"Type a whole number (not {html.escape(repr(self.choice.value))}).")
                return
        self.predicted, self.locked = answer, True
        self.choice.disabled = self.lock_button.disabled = True
        for note, held in self._held:
            _unhide(note, held)
        self.explanation.layout.display = SHOWN
        if self._measured is _NOTHING:
            self._say(f"Locked in: <b>{html.escape(str(self.predicted))}</b>. Now run the experiment.")
        else:
            self._show_result()

    @property
    def result(self) -> Reveal | None:
        """The prediction next to the measurement, once both exist (None before)."""
        if not self.locked or self._measured is _NOTHING:
            return None
        return Reveal(self.predicted, self._measured, noted=self.note, source=self.source)

    def reveal(self, actual, explanation: str | Callable[[], str] | None = None, source: str = "measured") -> Revealed:
        """Hand over the measured ``actual``: shown at once if a prediction is locked in, else held
        (controls stay open) until the learner locks one in. ``explanation``: markdown on what was
        measured and why, from a ``course_lib.explain`` function (its text, or a callable returning
        it, called now), shown under the reveal with the result (never before). ``source``: what
        the answer is when it was not measured (the simulator's answer to a question about a real
        cluster that did not run): the reveal line says so instead of "measured"."""
        if self.choices is not None and actual not in self.choices:
            raise ValueError(f"measured {actual!r} is none of the choices {self.choices}: fix the choices")
        if callable(explanation):
            explanation = explanation()
        if explanation is not None and not isinstance(explanation, str):
            raise TypeError(
                f"explanation is markdown text (or a callable returning it), not {type(explanation).__name__}"
            )
        if explanation is not None and not re.match(r"\s*\*\*(Measured|Verdict|Not measured)", explanation):
            explanation = f"**Measured:** {explanation}"  # what it is, at a glance (and for the browser tests)
        self._measured, self.explained, self.source = actual, explanation, source
        if explanation is not None:
            # into the widget's own state, not the cell's output: no frontend, nbval or stored
            # notebook can show it before lock-in. Set as an output, not append_display_data(),
            # which starts IPython's whole shell: a demo page has none (tools/widget_bridge.py).
            self.explanation.outputs = (
                {
                    "output_type": "display_data",
                    "data": {"text/markdown": explanation, "text/plain": explanation},
                    "metadata": {},
                },
            )
            self.explanation.layout.display = SHOWN if self.locked else "none"
        if self.locked:
            self._show_result()
        else:
            self._say("The experiment has run: lock in your prediction to see what it measured.")
            self.outcome.value = f"<span class='pr-outcome'>{html.escape(WAITING)}</span>"
        return Revealed(self)

    def experiment(self) -> AbstractContextManager[widgets.Output]:
        """Run the experiment of this prediction inside this block: in a notebook its output is
        captured under the cell, hidden until the prediction is locked in (shown at once if it
        already is, and if the experiment fails: an error answers nothing)."""
        return self._held_output(HELD)

    def after_lock_in(self) -> AbstractContextManager[widgets.Output]:
        """The same for any other cell whose output gives the answer away (a message's
        explanation, a diagram of the experiment, a progress bar or chart): hidden until the
        prediction is locked in. The checked experiment cell uses :meth:`experiment`."""
        return self._held_output(HELD_AFTER)

    @contextmanager
    def _held_output(self, saying: str) -> Iterator[widgets.Output]:
        locked = self.locked
        note = widgets.HTML(
            f"<span class='pr-held'><i>{html.escape(saying)}</i></span>",
            layout=widgets.Layout(display="none" if locked else None),
        )
        held = widgets.Output(layout=widgets.Layout(display=SHOWN if locked else "none"))
        self._held.append((note, held))
        _display_view_only(widgets.VBox([note, held], _dom_classes=["pr-experiment"]))
        held.__enter__()  # a frontend puts this cell's output into `held` (the kernel still sends it)
        try:
            yield held
            _show_figures()  # the inline backend would draw them after the block, for all to see
        except BaseException:
            _unhide(note, held)
            raise
        finally:
            held.__exit__(None, None, None)  # without the exception: ipywidgets would swallow it

    def _show_result(self) -> None:
        result = self.result
        assert result is not None
        colour = "inherit" if self.note else "#2e7d32" if result.right else "#c62828"
        self._say(html.escape(str(result)), colour=colour)
        self.outcome.value = f"<span class='pr-outcome' style='color:{colour}'>{html.escape(str(result))}</span>"

    def _say(self, text: str, colour: str = "inherit") -> None:
        self.status.value = f"<span class='pr-status' style='color:{colour}'>{text}</span>"

    def _ipython_display_(self):  # pragma: no cover - notebook display
        from IPython.display import display

        display(self.widget)


def revealed_in(namespace: dict) -> list[dict]:
    """What each prediction in ``namespace`` (a kernel's ``globals()`` after Run All) would show
    once locked in: its measured value and explanation. tools/notebook_outputs.py stores it beside
    the checked outputs, so tests/test_prediction_sources.py can look for it in the lesson's
    source without running the lesson.

    >>> p = Prediction("Lost?", choices=["yes", "no"])
    >>> shown = p.reveal("no", explanation="Nothing is lost: 5 of 5 are in the log.")
    >>> revealed_in({"p": p, "_p": p, "x": 1})
    [{'name': 'p', 'question': 'Lost?', 'kind': 'choice', 'choices': ['yes', 'no'], 'actual': 'no', 'explanation': '**Measured:** Nothing is lost: 5 of 5 are in the log.'}]
    """
    found = []
    for name, p in namespace.items():
        if not isinstance(p, Prediction) or name.startswith("_"):  # "_": IPython's output history
            continue
        found.append(
            {
                "name": name,
                "question": p.question,
                "kind": "note" if p.note else "number" if p.choices is None else "choice",
                "choices": [str(c) for c in p.choices] if p.choices is not None else None,
                "actual": None if p._measured is _NOTHING else str(p._measured),
                "explanation": p.explained,
            }
        )
    return found


def _show_figures() -> None:
    """Draw the figures made in a held block now, into its output (no pyplot in use: nothing)."""
    import sys

    plt = sys.modules.get("matplotlib.pyplot")
    if plt is not None and plt.get_fignums():
        plt.show()


def _unhide(note: widgets.HTML, held: widgets.Output) -> None:
    note.layout.display, held.layout.display = "none", SHOWN


def _display_view_only(widget: widgets.Widget) -> None:
    """Show ``widget`` in the running notebook with no text/plain fallback: nbval compares every
    field of an output except the widget view, so this output gives it nothing to compare (and
    tools/notebook_outputs.py stores nothing for it). Outside IPython: nothing to show."""
    from IPython import get_ipython
    from IPython.display import display

    if get_ipython() is None:
        return
    bundle = widget._repr_mimebundle_() or {}
    display({k: v for k, v in bundle.items() if k != "text/plain"}, raw=True)


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

        display(widgets.VBox([self._prediction.outcome, self._prediction.explanation]))
