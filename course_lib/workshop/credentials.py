"""One connection file per learner (``<name>.env``), reused on re-runs so passwords stay stable.

The file holds the variables :func:`course_lib.real.connect.connect` reads
(``connect(env_file="ann.env")``, or ``COURSE_CONNECTION_FILE=ann.env``, or ``source ann.env``).
"""

from __future__ import annotations

import secrets
from pathlib import Path

from course_lib.real import connect as conn
from course_lib.workshop.roster import Learner

#: the variable an earlier version of this command wrote the password to (still read on re-runs)
_OLD_PASSWORD = "KAFKA_PASSWORD"


def learner_passwords(out_dir: Path, learners: list[Learner]) -> dict[str, str]:
    """Existing passwords from earlier runs, new random ones for new learners."""
    out = {}
    for lr in learners:
        f = out_dir / f"{lr.name}.env"
        old = dict(line.split("=", 1) for line in f.read_text().splitlines() if "=" in line) if f.is_file() else {}
        out[lr.name] = old.get(conn.ENV_PASSWORD) or old.get(_OLD_PASSWORD) or secrets.token_urlsafe(12)
    return out


def connection_lines(bootstrap: str, learner: Learner, password: str, spark_remote: str | None = None) -> str:
    """The ``<name>.env`` text of one learner (the shared interface of the workshop)."""
    lines = {
        conn.ENV_BOOTSTRAP: bootstrap,
        conn.ENV_MECHANISM: conn.MECHANISMS[0],
        conn.ENV_USERNAME: learner.name,
        conn.ENV_PASSWORD: password,
        # the ACLs grant '<name>.'; connect() adds the dot
        conn.ENV_PREFIX: learner.name,
    }
    if spark_remote:
        lines[conn.ENV_SPARK_REMOTE] = spark_remote
    return "".join(f"{k}={v}\n" for k, v in lines.items())


def write_connection_files(
    out_dir: Path,
    bootstrap: str,
    learners: list[Learner],
    passwords: dict[str, str],
    spark_remote: str | None = None,
) -> list[Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = []
    for lr in learners:
        p = out_dir / f"{lr.name}.env"
        p.write_text(connection_lines(bootstrap, lr, passwords[lr.name], spark_remote))
        p.chmod(0o600)  # a learner's password is theirs alone
        paths.append(p)
    return paths
