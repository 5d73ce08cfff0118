"""The seeds the instructor's grader uses instead of the public ones (see framework.py).

Only the *number* of hidden seeds per exercise is written here; their values are derived from a
secret the instructor supplies when grading (``--secret-file`` or ``COURSE_GRADING_SECRET``), with
HMAC-SHA256 over the exercise id, so they do not ship with the course: a learner who reads this
file learns how many schedules the grader runs, not which ones. Every exercise gets hidden seeds,
listed here or not (unlisted: as many as it has public seeds).

:data:`DEFAULT_SECRET` is for trying the grader out; anyone with the course can compute the seeds
it gives, so the grader warns when it is used.
"""

from __future__ import annotations

import hashlib
import hmac
import os

#: how many hidden seeds an exercise gets (the default: as many as its public seeds)
HIDDEN_SEED_COUNTS = {
    "ex02_q2": 100,
    "ex03_q2": 100,
    "ex05_q2": 8,
    "ex06_q3": 6,
    "ex07_q1": 8,
    "ex09_q1": 30,
    "ex10_q1": 8,
    "ex11_q1": 20,
}
SECRET_ENV = "COURSE_GRADING_SECRET"
DEFAULT_SECRET = "try-the-grader"


def grading_secret() -> tuple[str, bool]:
    """The secret from the environment, and whether it is the public default."""
    secret = os.environ.get(SECRET_ENV, "")
    return (secret, False) if secret else (DEFAULT_SECRET, True)


def seeds_for(exercise, secret: str | None = None) -> tuple[int, ...]:
    """The hidden seeds of ``exercise``: ``HIDDEN_SEED_COUNTS`` of them (or as many as its public
    seeds), each an HMAC of ``"<exercise id>/<n>"`` under ``secret``, never one of the public seeds."""
    key = (grading_secret()[0] if secret is None else secret).encode()
    count = HIDDEN_SEED_COUNTS.get(exercise.id, len(exercise.public_seeds))
    if not isinstance(count, int) or count < 1:
        raise ValueError(f"HIDDEN_SEED_COUNTS[{exercise.id!r}] must be a positive int, not {count!r}")
    public, seeds, n = set(exercise.public_seeds), [], 0
    while len(seeds) < count:
        digest = hmac.new(key, f"{exercise.id}/{n}".encode(), hashlib.sha256).digest()
        seed = int.from_bytes(digest[:4], "big") >> 1  # 31 bits: fine for random.Random and the simulator
        if seed not in public and seed not in seeds:
            seeds.append(seed)
        n += 1
    return tuple(seeds)
