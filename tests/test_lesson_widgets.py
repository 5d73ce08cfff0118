"""Lessons 00-08 carry their interactive pieces where they teach: a prediction locked in before a
measured experiment and compared after it, and a "try it yourself" app with one of the lesson
presets. Widget cells are never output-checked by nbval (a widget has no stable text output)."""

import json
import re
from pathlib import Path

import pytest

from course_lib.viz.consumers import CRASH_PRESETS, TX_PRESETS
from course_lib.viz.simulator import PRESETS

ROOT = Path(__file__).resolve().parents[1]
LESSONS = sorted(p for p in (ROOT / "notebooks").glob("0[0-8]_*.ipynb"))
APPS = {"DeliverySimulator": PRESETS, "ConsumerCrashDemo": CRASH_PRESETS, "TransactionsDemo": TX_PRESETS}


def _code(lesson: Path) -> list[str]:
    return ["".join(c["source"]) for c in json.loads(lesson.read_text())["cells"] if c["cell_type"] == "code"]


def test_there_are_nine_lessons():
    assert [p.name[:2] for p in LESSONS] == [f"0{i}" for i in range(9)]


@pytest.mark.parametrize("lesson", LESSONS, ids=lambda p: p.stem)
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
        for widget_cell in (cells[i], cells[reveal]):
            assert "NBVAL_CHECK_OUTPUT" not in widget_cell


@pytest.mark.parametrize("lesson", LESSONS, ids=lambda p: p.stem)
def test_a_try_it_yourself_app_uses_an_existing_preset(lesson):
    apps = [(app, m) for c in _code(lesson) for app in APPS if (m := re.search(rf"\b{app}\((.*)\)", c))]
    assert apps, f"{lesson.name}: no app to try"
    for app, match in apps:
        preset = re.search(r'preset="(\w+)"', match.group(1))
        assert preset and preset.group(1) in APPS[app], f"{lesson.name}: {app}({match.group(1)}) has no known preset"
