"""Lessons 00-08 carry their interactive pieces where they teach: a prediction locked in before a
measured experiment and compared after it, and a "try it yourself" app with one of the lesson
presets. Widget cells are never output-checked by nbval (a widget has no stable text output)."""

import json
import re
from pathlib import Path

import nbformat
import pytest

from course_lib.viz.consumers import CRASH_PRESETS, TX_PRESETS
from course_lib.viz.groups import GROUP_PRESETS
from course_lib.viz.predict import SHOWN
from course_lib.viz.shares import SHARE_PRESETS
from course_lib.viz.simulator import PRESETS
from tests import spoilers

ROOT = Path(__file__).resolve().parents[1]
LESSONS = sorted(p for p in (ROOT / "notebooks").glob("0[0-8]_*.ipynb"))
WITH_PREDICTIONS = sorted(
    [*LESSONS, *(ROOT / "notebooks" / n for n in ("05b_consumer_groups.ipynb", "05c_share_groups.ipynb"))]
)
APPS = {
    "DeliverySimulator": PRESETS,
    "ConsumerCrashDemo": CRASH_PRESETS,
    "TransactionsDemo": TX_PRESETS,
    "GroupDemo": GROUP_PRESETS,
    "ShareDemo": SHARE_PRESETS,
}


def _code(lesson: Path) -> list[str]:
    return ["".join(c["source"]) for c in json.loads(lesson.read_text())["cells"] if c["cell_type"] == "code"]


def test_there_are_nine_lessons():
    assert [p.name[:2] for p in LESSONS] == [f"0{i}" for i in range(9)]


@pytest.mark.parametrize("lesson", WITH_PREDICTIONS, ids=lambda p: p.stem)
def test_a_prediction_is_locked_in_before_a_checked_experiment_and_revealed_after_it(lesson):
    cells = _code(lesson)
    made = [(i, m.group(1)) for i, c in enumerate(cells) if (m := re.search(r"^(\w+) = Prediction\(", c, re.M))]
    assert made, f"{lesson.name}: no Prediction(...) cell"
    for i, name in made:
        reveal = next((j for j in range(i + 1, len(cells)) if f"{name}.reveal(" in cells[j]), None)
        assert reveal is not None, f"{lesson.name}: {name} is never revealed"
        between = cells[i + 1 : reveal]
        assert any("NBVAL_CHECK_OUTPUT" in c for c in between), (
            f"{lesson.name}: no measured experiment before the reveal"
        )
        for experiment in (c for c in between if "NBVAL_CHECK_OUTPUT" in c):  # its output answers the question
            assert f"\nwith {name}.experiment():" in experiment, (
                f"{lesson.name}: the experiment of {name} prints its answer for all to see:\n{experiment}"
            )
        for widget_cell in (cells[i], cells[reveal]):
            assert "NBVAL_CHECK_OUTPUT" not in widget_cell


@pytest.mark.parametrize("lesson", WITH_PREDICTIONS, ids=lambda p: p.stem)
def test_a_try_it_yourself_app_uses_an_existing_preset(lesson):
    apps = [(app, m) for c in _code(lesson) for app in APPS if (m := re.search(rf"\b{app}\((.*)\)", c))]
    assert apps, f"{lesson.name}: no app to try"
    for app, match in apps:
        preset = re.search(r'preset="(\w+)"', match.group(1))
        assert preset and preset.group(1) in APPS[app], f"{lesson.name}: {app}({match.group(1)}) has no known preset"


# Run after "Run All": every Prediction in the kernel, as the learner finds it, then locked in.
_PROBE = """
import json as _json
from course_lib.viz.predict import Prediction as _Prediction
_found = []
for _name, _p in list(globals().items()):
    if isinstance(_p, _Prediction) and not _name.startswith("_"):  # not IPython's output history
        _before = {"locked": _p.locked, "greyed": _p.choice.disabled or _p.lock_button.disabled,
                   "status": _p.status.value, "outcome": _p.outcome.value,
                   "held": [h.layout.display for _, h in _p._held]}
        _p.choice.value = _p.choices[-1] if _p.choices else "12345"
        _p.lock_button.click()
        _found.append({"name": _name, "before": _before, "after": _p.status.value, "outcome": _p.outcome.value,
                       "measured": str(_p.result.actual), "held": {h.model_id: h.layout.display for _, h in _p._held}})
print(_json.dumps(_found))
"""


@pytest.mark.parametrize("lesson", WITH_PREDICTIONS, ids=lambda p: p.stem)
def test_run_all_leaves_every_prediction_open_until_it_is_locked_in(lesson):
    """Run All reaches each reveal before anybody answered: the widget stays open and shows no
    measurement (neither does the reveal cell); locking in then shows it (no browser: see
    tests/test_browser_lab.py for the same in JupyterLab)."""
    from tools.notebook_client import NotebookClient  # nbclient's, without its 300 s stall

    nb = nbformat.read(lesson, as_version=4)
    made = [
        m.group(1)
        for c in nb.cells
        if c.cell_type == "code"
        for m in re.finditer(r"^(\w+) = Prediction\(", c.source, re.M)
    ]
    nb.cells.append(nbformat.v4.new_code_cell(_PROBE))
    NotebookClient(
        nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(lesson.parent)}}
    ).execute()
    # the kernel may split one print into several stream outputs (seen under load): join them
    printed = "".join(o.get("text", "") for o in nb.cells[-1].outputs if o.get("name") == "stdout")
    found = json.loads(printed)
    assert sorted(p["name"] for p in found) == sorted(made), f"{lesson.name}: predictions lost or reused"
    for p in found:
        before = p["before"]
        assert not before["locked"] and not before["greyed"], f"{lesson.name}: {p['name']} closed by Run All"
        assert "measured:" not in before["status"] + before["outcome"], f"{lesson.name}: {before}"
        assert "lock in your prediction" in before["status"], f"{lesson.name}: {p['name']} never revealed"
        # after lock-in the answer shows with where it came from: measured, or (05c's real-Kafka
        # question with no Kafka here) the simulator's answer, said to be one
        said = ("measured:", "(Kafka did not run):")
        assert any(s in p["after"] for s in said) and any(s in p["outcome"] for s in said), f"{lesson.name}: {p}"
    for cell in nb.cells[:-1]:
        if cell.cell_type == "code" and ".reveal(" in cell.source:
            shown = json.dumps(cell.outputs)
            assert "measured:" not in shown, f"{lesson.name}: a reveal cell shows the measurement: {shown[:300]}"
    # The experiment cells: nbclient, like JupyterLab, puts what an Output widget captured into the
    # widget, so the cell's outputs are what shows under it before lock-in. They hold neither the
    # measured value nor any line nbval checks; the captured output, hidden until lock-in, does.
    widgets = nb.metadata.get("widgets", {}).get("application/vnd.jupyter.widget-state+json", {}).get("state", {})
    measured = {p["name"]: p["measured"] for p in found}
    for e in spoilers.experiments(lesson):
        visible = spoilers.output_text(nb.cells[e.cell].outputs)
        assert not spoilers.shows(visible, measured[e.prediction]), (
            f"{lesson.name}: cell {e.cell} shows {measured[e.prediction]}: {visible}"
        )
        spoiled = spoilers.spoiled_lines(visible, e.printed)
        assert not spoiled, f"{lesson.name}: cell {e.cell} shows before lock-in: {spoiled}"
    # the lesson's text and every output shown: no answer before lock-in (it is in the reveal's
    # explanation and the cells held with after_lock_in())
    spoiled = spoilers.giveaways(nb, {p["name"]: p["measured"] for p in found})
    assert not spoiled, f"{lesson.name}: readable before lock-in:\n" + "\n".join(spoiled)
    for p in found:
        held = p["held"]
        assert held and set(p["before"]["held"]) == {"none"} and set(held.values()) == {SHOWN}, f"{lesson.name}: {p}"
        captured = "".join(spoilers.output_text(widgets[model]["state"]["outputs"]) for model in held)
        for e in spoilers.experiments(lesson):
            if e.prediction == p["name"]:
                assert e.printed in captured, f"{lesson.name}: cell {e.cell}'s output is not held for the reveal"


def test_05b_real_kafka_part_is_opt_in_and_says_what_it_costs():
    """Run All must not start 4 JVMs (the hub's 2 GB limit): a flag cell, off by default; the text
    above it gives the measured time and memory."""
    nb = nbformat.read(ROOT / "notebooks" / "05b_consumer_groups.ipynb", as_version=4)
    flag = next(i for i, c in enumerate(nb.cells) if c.cell_type == "code" and "start_lab(" in c.source)
    assert re.match(r"REAL_KAFKA = False\b", nb.cells[flag].source)
    assert "start_lab() if REAL_KAFKA else" in nb.cells[flag].source
    above = nb.cells[flag - 1].source
    assert (
        "optional and\noff by default" in above
        and re.search(r"about\s\d+ s", above)
        and re.search(r"\d(\.\d)? GB", above)
    )


@pytest.mark.parametrize("lesson", WITH_PREDICTIONS, ids=lambda p: p.stem)
def test_text_under_a_held_cell_does_not_retell_it(lesson):
    """The paragraphs under an ``after_lock_in()`` cell are visible before lock-in: they may ask
    what to look for, not quote what the hidden output prints."""
    assert not spoilers.retold(lesson), "\n".join(spoilers.retold(lesson))


def test_retelling_a_held_cell_is_caught(tmp_path):
    """The check fails on the paragraph lesson 02 once had under its hidden explanation of m-1."""
    lesson = ROOT / "notebooks" / "02_acks_and_durability.ipynb"
    nb = nbformat.read(lesson, as_version=4)
    held = next(i for i, c in enumerate(nb.cells) if ".after_lock_in()" in c.source)
    nb.cells[held + 1].source = "Broker 1 acknowledged m-1 at offset 4 while the HW was 0, then crashed."
    copy = tmp_path / lesson.name
    nbformat.write(nb, copy)
    found = spoilers.retold(copy)
    assert len(found) == 1 and "(0, 1, 4)" in found[0], found
