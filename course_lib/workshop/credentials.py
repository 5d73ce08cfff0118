"""One connection file per learner (``<name>.env``), reused on re-runs so passwords stay stable."""

from __future__ import annotations

import secrets
from pathlib import Path

from course_lib.workshop.roster import Learner


def learner_passwords(out_dir: Path, learners: list[Learner]) -> dict[str, str]:
    """Existing passwords from earlier runs, new random ones for new learners."""
    out = {}
    for lr in learners:
        f = out_dir / f"{lr.name}.env"
        old = dict(line.split("=", 1) for line in f.read_text().splitlines() if "=" in line) if f.is_file() else {}
        out[lr.name] = old.get("KAFKA_PASSWORD") or secrets.token_urlsafe(12)
    return out


def write_connection_files(
    out_dir: Path, bootstrap: str, learners: list[Learner], passwords: dict[str, str]
) -> list[Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = []
    for lr in learners:
        p = out_dir / f"{lr.name}.env"
        p.write_text(
            f"KAFKA_BOOTSTRAP={bootstrap}\nKAFKA_USER={lr.name}\n"
            f"KAFKA_PASSWORD={passwords[lr.name]}\nKAFKA_PREFIX={lr.prefix}\n"
        )
        p.chmod(0o600)  # a learner's password is theirs alone
        paths.append(p)
    return paths
