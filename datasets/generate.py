"""Regenerate the course's small simulator data sets (sensor readings, clicks, payments).

    python datasets/generate.py          # rewrites the CSV files; the same seed gives the same bytes
    python datasets/generate.py --check  # exit 1 if a committed file differs from a fresh run

Each data set has a data card (README.md in its folder). ``datasets/orders/`` belongs to the
Spark lab and is not touched here.
"""
from __future__ import annotations

import csv
import io
import random
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
SEED = 2026
START_MS = 1_767_225_600_000  # 2026-01-01T00:00:00Z


def sensor_readings(rng: random.Random, rows: int = 240) -> list[dict]:
    """4 temperature sensors, one reading each every 15 s for 15 minutes: losing one is harmless."""
    out = []
    for i in range(rows):
        sensor = f"sensor-{i % 4 + 1}"
        base = {"sensor-1": 21.0, "sensor-2": 22.5, "sensor-3": 19.0, "sensor-4": 24.0}[sensor]
        out.append({"reading_id": f"r-{i:04d}", "sensor_id": sensor, "ts_ms": START_MS + (i // 4) * 15_000,
                    "temperature_c": round(base + rng.gauss(0, 0.4), 2)})
    return out


def clicks(rng: random.Random, rows: int = 300) -> list[dict]:
    """Page views of 25 users over an hour: counted for analytics, where a duplicate is tolerable."""
    pages = ["/", "/pricing", "/docs", "/blog", "/signup"]
    weights = [40, 15, 25, 15, 5]
    times = sorted(rng.randrange(3_600_000) for _ in range(rows))
    return [{"click_id": f"c-{i:04d}", "user_id": f"u-{rng.randrange(25):02d}", "ts_ms": START_MS + t,
             "page": rng.choices(pages, weights)[0]} for i, t in enumerate(times)]


def payments(rng: random.Random, rows: int = 120) -> list[dict]:
    """Transfers between 10 accounts: a lost or duplicated one changes balances (exactly-once)."""
    out = []
    for i in range(rows):
        src, dst = rng.sample(range(10), 2)
        out.append({"payment_id": f"p-{i:04d}", "from_account": f"acct-{src}", "to_account": f"acct-{dst}",
                    "amount_cents": rng.randrange(100, 50_000), "ts_ms": START_MS + i * 30_000})
    return out


DATASETS = {"sensor_readings": sensor_readings, "clicks": clicks, "payments": payments}


def render(name: str) -> str:
    rows = DATASETS[name](random.Random(f"{SEED}-{name}"))
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=list(rows[0]), lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return buf.getvalue()


def main(argv: list[str]) -> int:
    stale = []
    for name in DATASETS:
        path = HERE / name / f"{name}.csv"
        text = render(name)
        if "--check" in argv:
            if not path.exists() or path.read_text() != text:
                stale.append(str(path))
        else:
            path.write_text(text)
            print(f"wrote {path} ({text.count(chr(10)) - 1} rows)")
    if stale:
        print("out of date (run python datasets/generate.py):", *stale, sep="\n  ")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
