"""The course's small data sets (``datasets/<name>/<name>.csv`` at the top of the repository,
each with a data card).

>>> rows = load("payments")
>>> len(rows), sorted(rows[0])
(120, ['amount_cents', 'from_account', 'payment_id', 'to_account', 'ts_ms'])

Regenerate them with ``python datasets/generate.py``.
"""

from __future__ import annotations

import csv
from importlib.resources import files
from pathlib import Path


def data_dir(*parts: str) -> Path:
    """A folder of the course's data, there under any install, not only in a checkout: an
    installed wheel carries the data sets inside the package (``course_lib/data/``, copied there
    by setup.py, found with ``importlib.resources``); a checkout - on ``PYTHONPATH`` or installed
    editable - reads the repository's top-level ``datasets/`` in place."""
    shipped = Path(str(files("course_lib").joinpath("data")))
    root = shipped if shipped.is_dir() else Path(__file__).resolve().parents[1] / "datasets"
    return root.joinpath(*parts)


ROOT = data_dir()
NAMES = ("sensor_readings", "clicks", "payments")
_INTS = {"ts_ms", "amount_cents"}


def load(name: str) -> list[dict]:
    """Rows of a data set as dicts (integers and floats converted)."""
    if name not in NAMES:
        raise ValueError(f"no data set {name!r}; choose one of {list(NAMES)}")
    path = ROOT / name / f"{name}.csv"
    if not path.exists():
        raise FileNotFoundError(
            f"{path} is missing: run python datasets/generate.py in a checkout of the course, "
            "or reinstall the course package (the data ships with it)"
        )
    with path.open(newline="") as f:
        rows = list(csv.DictReader(f))
    for row in rows:
        for key in row:
            if key in _INTS:
                row[key] = int(row[key])
            elif key == "temperature_c":
                row[key] = float(row[key])
    return rows
