"""Lesson presets and the prediction widget, headless: every "try it" step a lesson shows does
what its text promises, and a prediction is recorded only when locked in."""

import pytest

from course_lib.viz.consumers import CRASH_PRESETS, TX_PRESETS, ConsumerCrashDemo, TransactionsDemo
from course_lib.viz.groups import GROUP_PRESETS, GroupDemo
from course_lib.viz.predict import Prediction, Reveal
from course_lib.viz.shares import SHARE_PRESETS, ShareDemo
from course_lib.viz.simulator import PRESETS, DeliverySimulator

APPS = (
    [(DeliverySimulator, name, p) for name, p in PRESETS.items()]
    + [(ConsumerCrashDemo, name, p) for name, p in CRASH_PRESETS.items()]
    + [(TransactionsDemo, name, p) for name, p in TX_PRESETS.items()]
    + [(GroupDemo, name, p) for name, p in GROUP_PRESETS.items()]
    + [(ShareDemo, name, p) for name, p in SHARE_PRESETS.items()]
)


@pytest.mark.parametrize(("app_class", "name", "preset"), APPS, ids=[f"{a.__name__}-{n}" for a, n, _ in APPS])
def test_each_step_followed_in_order_shows_what_it_promises(app_class, name, preset):
    app = app_class(seed=1, preset=name)
    for control, value in preset.settings.items():  # (the transactions demo has none)
        assert app.control(control).value == value
    for number, step in enumerate(preset.steps, 1):
        shown = app.follow(step)
        for words in step.expect:
            assert words in shown, f"{name} step {number}: {words!r} not in {shown!r}"


@pytest.mark.parametrize(("app_class", "name", "preset"), APPS, ids=[f"{a.__name__}-{n}" for a, n, _ in APPS])
def test_the_try_text_names_every_control_and_button_as_the_app_labels_them(app_class, name, preset):
    app = app_class(seed=1, preset=name)
    text = app.try_view.value
    assert text.count("<li>") == len(preset.steps)
    for step in preset.steps:
        for button in step.press:
            assert f"<b>{app.button(button).description}</b>" in text
        for control in step.settings:
            assert f"<b>{app.control(control).description}</b>" in text


def test_consumer_crash_moment_is_worded_as_the_dropdown_words_it_for_that_consumer():
    app = ConsumerCrashDemo(preset="commit_order")
    assert "after processing (the next poll() auto-commits)" in app.try_view.value  # auto-commit's wording
    app.follow(CRASH_PRESETS["commit_order"].steps[2])
    assert app.crash_point.label == "after processing (the next poll() auto-commits)"


def test_no_preset_shows_no_try_text_and_an_unknown_one_is_refused():
    assert DeliverySimulator().try_view.value == ""
    with pytest.raises(ValueError, match="no preset 'lesson3'; choose one of"):
        DeliverySimulator(preset="lesson3")
    with pytest.raises(ValueError, match="no preset"):
        ConsumerCrashDemo(preset="nope")


def test_buttons_are_as_wide_as_their_labels():
    """JupyterLab gives a button a fixed width and cuts "send 5 messages" (issue 12)."""
    app = DeliverySimulator()
    assert app.send_button.layout.width == "auto" and app.check_button.layout.width == "auto"


def test_prediction_records_nothing_until_locked_in_and_then_freezes():
    p = Prediction("Duplicated?", choices=["yes", "no"])
    p.lock_button.click()  # nothing picked yet
    assert not p.locked and "Pick an answer first" in p.status.value
    p.choice.value = "yes"
    p.lock_button.click()
    assert p.locked and p.predicted == "yes" and p.choice.disabled and p.lock_button.disabled
    p.choice.value = "no"  # too late: the locked prediction stands
    assert p.reveal("no") == Reveal("yes", "no") and not p.reveal("no").right
    assert "Not this time" in p.status.value


def test_reveal_before_a_prediction_holds_the_measurement_until_lock_in():
    """Run All reaches the reveal before the learner answered: nothing measured is shown and the
    controls stay open; locking in then shows the comparison, in the widget and the reveal cell."""
    p = Prediction("How many?")
    shown = p.reveal(3)
    assert str(shown) == "Measured. Lock in your prediction above to see how it compares."
    assert not p.choice.disabled and not p.lock_button.disabled and not p.locked
    assert "3" not in p.status.value and "3" not in p.outcome.value
    p.choice.value = "4"
    p.lock_in()
    assert shown.result == Reveal(4, 3) and not shown.right
    assert "measured: 3" in p.status.value and "measured: 3" in p.outcome.value and p.choice.disabled


def test_bad_input_is_refused_with_a_reason():
    with pytest.raises(ValueError, match="at least two choices"):
        Prediction("?", choices=[1])
    with pytest.raises(ValueError, match="none of the choices"):
        Prediction("?", choices=[0, 3]).reveal(7)
    p = Prediction("How many?")
    p.choice.value = "3.5"
    p.lock_in()
    assert not p.locked and "whole number" in p.status.value
