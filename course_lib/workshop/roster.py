"""The workshop roster: one learner per line, and what the cluster must grant each of them.

A roster is a text file with one learner name per line (blank lines and ``#`` comments are
ignored); a name may be followed by quota overrides for that learner, e.g.
``ann producer_byte_rate=50000 request_percentage=20``. Each learner gets a SCRAM user of the same name and owns every topic, consumer group
and transactional id that starts with ``<name>.`` (prefixed ACLs), so learners can create what
the lessons need without the instructor naming every topic in advance.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from course_lib.real.security import SecurityConfigError, check_user_name


class RosterError(ValueError):
    """A roster the instructor must fix (the message names the line and what is wrong)."""


@dataclass(frozen=True)
class Quota:
    """Per-user client quotas: a learner over them is throttled by the broker, not failed."""

    producer_byte_rate: int = 1_000_000
    consumer_byte_rate: int = 2_000_000
    request_percentage: int = 50

    KEYS = ("producer_byte_rate", "consumer_byte_rate", "request_percentage")

    def __post_init__(self) -> None:
        for k in self.KEYS:
            v = getattr(self, k)
            if not isinstance(v, int) or isinstance(v, bool) or v <= 0:
                raise RosterError(f"quota {k} must be a positive whole number, got {v!r}")

    def describe(self) -> str:
        """The quotas as an instructor reads them: whole numbers, with their unit.

        >>> Quota().describe()
        'producer_byte_rate=1000000 (1 MB/s), consumer_byte_rate=2000000 (2 MB/s), request_percentage=50 (50% of a broker thread)'
        >>> Quota(producer_byte_rate=5000, consumer_byte_rate=1_500_000).describe().split(", ")[:2]
        ['producer_byte_rate=5000 (5 kB/s)', 'consumer_byte_rate=1500000 (1.5 MB/s)']
        """
        return ", ".join(f"{k}={getattr(self, k)} ({_unit(k, getattr(self, k))})" for k in self.KEYS)

    def as_config(self) -> dict[str, float]:
        return {
            "producer_byte_rate": float(self.producer_byte_rate),
            "consumer_byte_rate": float(self.consumer_byte_rate),
            "request_percentage": float(self.request_percentage),
        }


def _unit(key: str, value: int) -> str:
    """A quota value in human units: bytes per second in kB/MB/GB (powers of 1000, as Kafka's docs
    write them), the request percentage as a share of one broker thread."""
    if key == "request_percentage":
        return f"{value}% of a broker thread"
    for unit, size in (("GB/s", 10**9), ("MB/s", 10**6), ("kB/s", 10**3)):
        if value >= size:
            return f"{value / size:.3g} {unit}"
    return f"{value} B/s"


# (resource type, operations) a learner gets on resources under their prefix. Idempotent
# writes need no cluster-level IDEMPOTENT_WRITE since Kafka 3.0 (WRITE on a topic implies it).
PREFIXED_GRANTS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("TOPIC", ("ALL",)),
    ("GROUP", ("ALL",)),
    ("TRANSACTIONAL_ID", ("ALL",)),
)


@dataclass(frozen=True)
class Learner:
    name: str
    #: quota settings of this learner's roster line, over the command's defaults
    quota_overrides: tuple[tuple[str, int], ...] = ()

    def quota(self, default: Quota) -> Quota:
        return replace(default, **dict(self.quota_overrides))

    @property
    def prefix(self) -> str:
        return f"{self.name}."

    @property
    def principal(self) -> str:
        return f"User:{self.name}"


def parse_roster(text: str, source: str = "roster", reserved: tuple[str, ...] = ()) -> list[Learner]:
    """Learners of a roster; a duplicate, an illegal or a reserved name is a :class:`RosterError`."""
    seen: dict[str, int] = {}
    learners = []
    for lineno, raw in enumerate(text.splitlines(), 1):
        words = raw.split("#", 1)[0].split()
        if not words:
            continue
        name = words[0]
        try:
            overrides = tuple(_quota_override(w) for w in words[1:])
            Quota(**dict(overrides))  # a bad value is an error of this line, not of the run
        except RosterError as e:
            raise RosterError(f"{source}:{lineno}: {e}") from None
        try:
            check_user_name(name, "learner name")
        except SecurityConfigError as e:
            raise RosterError(f"{source}:{lineno}: {e}") from None
        if "." in name:  # the prefix separator: 'ann' and 'ann.b' would share 'ann.' resources
            raise RosterError(
                f"{source}:{lineno}: learner name {name!r} contains '.', which "
                f"separates a learner's prefix from topic names; remove it"
            )
        key = name.lower()  # 'Ann' and 'ann' on one roster is a typo, not two people
        if key in seen:
            raise RosterError(
                f"{source}:{lineno}: learner {name!r} is already on line {seen[key]}; each learner must appear once"
            )
        if key in {r.lower() for r in reserved}:
            raise RosterError(f"{source}:{lineno}: {name!r} is the instructor's user name; rename the learner")
        seen[key] = lineno
        learners.append(Learner(name, overrides))
    if not learners:
        raise RosterError(f"{source}: no learner names found (one name per line)")
    return learners


def _quota_override(word: str) -> tuple[str, int]:
    key, sep, value = word.partition("=")
    if not sep or key not in Quota.KEYS:
        raise RosterError(
            f"{word!r} is not a quota setting; after the name only {', '.join(k + '=N' for k in Quota.KEYS)} may follow"
        )
    try:
        return key, int(value)
    except ValueError:
        raise RosterError(f"quota {key} must be a whole number, got {value!r}") from None


def read_roster(path: str | Path, reserved: tuple[str, ...] = ()) -> list[Learner]:
    p = Path(path)
    if not p.is_file():
        raise RosterError(f"roster file {str(p)!r} does not exist")
    return parse_roster(p.read_text(), str(p), reserved)


def plan(learners: list[Learner], quota: Quota) -> list[str]:
    """Human-readable actions that provisioning performs (what ``--dry-run`` prints)."""
    lines = []
    for lr in learners:
        lines.append(f"user {lr.name}: create SCRAM-SHA-512 credentials")
        for rtype, ops in PREFIXED_GRANTS:
            lines.append(f"user {lr.name}: allow {','.join(ops)} on {rtype} prefix {lr.prefix!r}")
        lines.append(f"user {lr.name}: set client quota {lr.quota(quota).describe()}")
    return lines
