"""Small wording helpers the explanation modules share (numbers and names as the lessons write
them). Not a registry: a lesson's module imports what it uses."""

from __future__ import annotations

from collections.abc import Iterable


def count(n: int, noun: str, plural: str | None = None) -> str:
    """``n`` and the noun, singular or plural.

    >>> count(1, "message"), count(3, "message"), count(0, "entry", "entries")
    ('1 message', '3 messages', '0 entries')
    """
    return f"{n} {noun if n == 1 else plural or noun + 's'}"


def listing(items: Iterable[object], empty: str = "none") -> str:
    """Names as a sentence lists them.

    >>> listing(["m-2"]), listing(["m-2", "m-3", "m-4"]), listing([])
    ('m-2', 'm-2, m-3 and m-4', 'none')
    """
    items = [str(i) for i in items]
    if not items:
        return empty
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def thousands(n: float) -> str:
    """A large number as the lessons print it, thousands apart (77 507).

    >>> thousands(77507.4), thousands(950)
    ('77 507', '950')
    """
    return f"{round(n):,}".replace(",", " ")


def with_fate(result, fate: str) -> list[str]:
    """The ids of a check result's messages with ``fate`` ("duplicated", "lost", ...), in the
    order they were sent."""
    return [m.id for m in result.messages.values() if m.fate == fate]
