"""Generate the orders/payments stream of the PySpark lab: ``orders.jsonl`` + ``manifest.json``.

One JSON object per line: an order (the account owes money) or a payment (it pays some back).
A few lines are deliberately malformed - broken JSON, a missing account, an amount with a comma,
an impossible timestamp ... - so the pipeline has to route them to its dead-letter output
instead of dropping them. ``manifest.json`` lists which lines are malformed and why, and the
expected per-account balances: it is the answer key the lab's checks compare against.

Everything comes from one ``random.Random(seed)``: the same seed gives byte-identical files.

    python datasets/orders/generate.py            # seed 42, 5000 lines (the committed file)
    python datasets/orders/generate.py --n 20000 --seed 7 --out /tmp/orders

Taught in notebooks/10_pyspark_exactly_once_lab.
"""
from __future__ import annotations

import argparse
import json
import random
from datetime import datetime, timedelta, timezone
from pathlib import Path

HERE = Path(__file__).resolve().parent
START = datetime(2026, 1, 5, 9, 0, 0, tzinfo=timezone.utc)
N_ACCOUNTS = 50
PAYMENT_SHARE = 0.2

#: (reason the pipeline must report, how to damage a good record). Reasons match
#: course_lib.spark.orders.validate and the Spark pipeline's rules.
MALFORMATIONS = [
    ("not_json", lambda r: json.dumps(r)[:-9]),                          # truncated line
    ("not_json", lambda r: "order " + r["order_id"] + " amount " + r["amount"]),
    ("missing_account", lambda r: _dump({k: v for k, v in r.items() if k != "account"})),
    ("missing_account", lambda r: _dump({**r, "account": ""})),
    ("bad_amount", lambda r: _dump({**r, "amount": "-" + r["amount"]})),
    ("bad_amount", lambda r: _dump(r).replace(r["amount"], '"' + r["amount"].replace(".", ",") + '"')),
    ("bad_amount", lambda r: _dump({**r, "amount": "0"})),
    ("bad_timestamp", lambda r: _dump({**r, "ts": "2026-13-45T99:00:00.000Z"})),
    ("bad_timestamp", lambda r: _dump({**r, "ts": "yesterday"})),
    ("bad_kind", lambda r: _dump({**r, "kind": "refund??"})),
    ("bad_order_id", lambda r: _dump({**r, "order_id": ""})),
    ("bad_order_id", lambda r: _dump({**r, "order_id": 12345})),
]


def _dump(record: dict) -> str:
    # Amounts are written as JSON numbers with exactly two decimals ("12.30", not 12.3): the
    # pipeline reads them as text and casts to DECIMAL(12,2), so no float ever touches money.
    parts = []
    for key, value in record.items():
        if key == "amount" and isinstance(value, str) and _is_decimal(value):
            parts.append(f'"{key}": {value}')
        else:
            parts.append(f"{json.dumps(key)}: {json.dumps(value)}")
    return "{" + ", ".join(parts) + "}"


def _is_decimal(text: str) -> bool:
    head, _, tail = text.partition(".")
    return head.lstrip("-").isdigit() and (not tail or tail.isdigit())


def generate(n: int = 5000, seed: int = 42, n_malformed: int = 12):
    """Return ``(lines, manifest)``: ``n`` lines of which ``n_malformed`` are malformed."""
    rng = random.Random(seed)
    accounts = [f"acct-{i:03d}" for i in range(N_ACCOUNTS)]
    # A few busy accounts and a long tail, like real traffic (weights ~ 1/rank).
    weights = [1.0 / (rank + 1) for rank in range(N_ACCOUNTS)]
    bad_positions = sorted(rng.sample(range(10, n), n_malformed))
    bad_kinds = {pos: MALFORMATIONS[i % len(MALFORMATIONS)] for i, pos in enumerate(bad_positions)}
    lines, malformed = [], []
    balances_cents: dict[str, int] = {}
    t = START
    for i in range(n):
        t += timedelta(milliseconds=rng.randint(0, 2000))
        kind = "payment" if rng.random() < PAYMENT_SHARE else "order"
        cents = max(1, int(round(rng.lognormvariate(7.5, 1.0))))   # median about 18 EUR
        record = {
            "order_id": f"o-{i + 1:06d}",
            "account": rng.choices(accounts, weights)[0],
            "kind": kind,
            "amount": f"{cents // 100}.{cents % 100:02d}",
            "ts": t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z",
        }
        if i in bad_kinds:
            reason, damage = bad_kinds[i]
            lines.append(damage(record))
            malformed.append({"line": i, "reason": reason, "order_id": record["order_id"]})
        else:
            lines.append(_dump(record))
            sign = 1 if kind == "order" else -1
            balances_cents[record["account"]] = balances_cents.get(record["account"], 0) + sign * cents
    manifest = {
        "seed": seed,
        "lines": n,
        "valid": n - len(malformed),
        "malformed": malformed,
        "balances_cents": dict(sorted(balances_cents.items())),
    }
    return lines, manifest


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=5000)
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--malformed", type=int, default=12)
    ap.add_argument("--out", type=Path, default=HERE)
    args = ap.parse_args(argv)
    lines, manifest = generate(args.n, args.seed, args.malformed)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "orders.jsonl").write_text("".join(line + "\n" for line in lines))
    (args.out / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    print(f"wrote {len(lines)} lines ({len(manifest['malformed'])} malformed) to {args.out}")


if __name__ == "__main__":
    main()
