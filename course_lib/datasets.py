"""The course's small data sets (``datasets/<name>/<name>.csv``, each with a data card).

>>> rows = load("payments")
>>> len(rows), sorted(rows[0])
(120, ['amount_cents', 'from_account', 'payment_id', 'to_account', 'ts_ms'])

Regenerate them with ``python datasets/generate.py``.
"""

from __future__ import annotations

import csv
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1] / "datasets"
NAMES = ("sensor_readings", "clicks", "payments")
_INTS = {"ts_ms", "amount_cents"}


def load(name: str) -> list[dict]:
    """Rows of a data set as dicts (integers and floats converted)."""
    if name not in NAMES:
        raise ValueError(f"no data set {name!r}; choose one of {list(NAMES)}")
    path = ROOT / name / f"{name}.csv"
    if not path.exists():
        raise FileNotFoundError(f"{path} is missing: run python datasets/generate.py from the repository root")
    with path.open(newline="") as f:
        rows = list(csv.DictReader(f))
    for row in rows:
        for key in row:
            if key in _INTS:
                row[key] = int(row[key])
            elif key == "temperature_c":
                row[key] = float(row[key])
    return rows
