"""The orders/payments data set and its validation rules, in plain Python.

The Spark pipeline (:mod:`course_lib.spark.pipeline`) applies the same rules with Spark SQL;
this module is the independent reference the lab's checks compare it to: which lines are
valid, why each bad line is bad, and what every account's balance must be.

>>> validate('{"order_id": "o-000001", "account": "acct-006", "kind": "payment", '
...          '"amount": 5.71, "ts": "2026-01-05T09:00:00.061Z"}')
('ok', {'order_id': 'o-000001', 'account': 'acct-006', 'kind': 'payment', 'amount_cents': 571, 'ts': '2026-01-05T09:00:00.061Z'})
>>> validate('{"order_id": "o-000002", "account": "", "kind": "order", "amount": 1.00, '
...          '"ts": "2026-01-05T09:00:00.061Z"}')[0]
'missing_account'
>>> validate('order o-000271 amount 25.00')[0]
'not_json'

Taught in notebooks/10_pyspark_exactly_once_lab.
"""

from __future__ import annotations

import json
import re
from datetime import datetime
from pathlib import Path

from course_lib.datasets import data_dir

DATASET_DIR = data_dir("orders")
ORDER_ID_RE = r"^o-[0-9]{6}$"
AMOUNT_RE = r"^[0-9]{1,9}(\.[0-9]{1,2})?$"
TS_RE = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z$"
KINDS = ("order", "payment")
FIELDS = ("order_id", "account", "kind", "amount", "ts")
#: The order in which rules are checked (the first failing rule is the reason).
REASONS = ("not_json", "bad_order_id", "missing_account", "bad_kind", "bad_amount", "bad_timestamp")


def read_lines(limit: int | None = None, path: Path | None = None) -> list[str]:
    """The raw lines of ``datasets/orders/orders.jsonl`` (first ``limit`` of them)."""
    path = path or DATASET_DIR / "orders.jsonl"
    if not path.exists():
        raise FileNotFoundError(f"{path} is missing. Generate it with `python datasets/orders/generate.py`.")
    lines = path.read_text().splitlines()
    return lines[:limit] if limit else lines


def _as_text(value) -> str | None:
    # Mirrors Spark's from_json into a STRING field: numbers keep their literal text, strings
    # their content; objects/arrays do not occur in this data set.
    if value is None:
        return None
    return value if isinstance(value, str) else str(value)


def validate(line: str) -> tuple[str, dict | None]:
    """``('ok', order)`` or ``(reason, None)`` for one raw line; see :data:`REASONS`."""
    try:
        obj = json.loads(line, parse_float=str, parse_int=str)
    except ValueError:
        return "not_json", None
    if not isinstance(obj, dict) or all(obj.get(f) is None for f in FIELDS):
        return "not_json", None
    rec = {f: _as_text(obj.get(f)) for f in FIELDS}
    # A JSON number 12345 reads as text "12345" in Spark too; it fails the pattern either way.
    if rec["order_id"] is None or not re.match(ORDER_ID_RE, rec["order_id"]):
        return "bad_order_id", None
    if not rec["account"]:
        return "missing_account", None
    if rec["kind"] not in KINDS:
        return "bad_kind", None
    amount = rec["amount"]
    if amount is None or not re.match(AMOUNT_RE, amount) or _cents(amount) <= 0:
        return "bad_amount", None
    if rec["ts"] is None or not re.match(TS_RE, rec["ts"]) or not _parses(rec["ts"]):
        return "bad_timestamp", None
    return "ok", {
        "order_id": rec["order_id"],
        "account": rec["account"],
        "kind": rec["kind"],
        "amount_cents": _cents(amount),
        "ts": rec["ts"],
    }


def _cents(amount: str) -> int:
    whole, _, frac = amount.partition(".")
    return int(whole) * 100 + int((frac + "00")[:2])


def _parses(ts: str) -> bool:
    try:
        datetime.strptime(ts, "%Y-%m-%dT%H:%M:%S.%fZ")
        return True
    except ValueError:
        return False


def signed_cents(order: dict) -> int:
    """What the order does to the account's balance: orders add, payments subtract."""
    return order["amount_cents"] if order["kind"] == "order" else -order["amount_cents"]


def expected(lines: list[str]) -> dict:
    """The answer key for a list of lines: valid ids, bad lines with reasons, balances."""
    valid, bad, balances = [], [], {}
    for i, line in enumerate(lines):
        reason, order = validate(line)
        if order is None:
            bad.append({"line": i, "reason": reason, "raw": line})
        else:
            valid.append(order["order_id"])
            balances[order["account"]] = balances.get(order["account"], 0) + signed_cents(order)
    return {"valid_ids": valid, "bad": bad, "balances_cents": dict(sorted(balances.items()))}
