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


def value(v: object) -> str:
    """One measured value as a person writes it, not as Python's repr: a record's bytes decoded,
    ``(offset, value)`` pairs as ``offset: value``, a mapping as ``key: value``, lists joined.

    >>> value([(3, b"new0"), (4, b"new1")]), value({"events-0": 3}), value([]), value(None), value(b"a-0")
    ('3: new0, 4: new1', 'events-0: 3', 'none', '-', 'a-0')
    """
    if v is None:
        return "-"
    if isinstance(v, bytes):
        return v.decode(errors="replace")
    if isinstance(v, dict):
        return ", ".join(f"{k}: {value(x)}" for k, x in v.items()) or "none"
    if isinstance(v, (list, tuple, set, frozenset)):
        items = sorted(v) if isinstance(v, (set, frozenset)) else list(v)
        if items and all(isinstance(i, tuple) and len(i) == 2 for i in items):
            return ", ".join(f"{value(a)}: {value(b)}" for a, b in items)
        return ", ".join(value(i) for i in items) or "none"
    return str(v)


def fields(values: dict, names: dict | None = None) -> str:
    """A dict of measured values as aligned lines (``names``: a label per key, else the key with
    spaces), for an experiment cell to print instead of the dict's repr.

    >>> print(fields({"producer_id": 1000, "next_sequence": {"events-0": 3}}))
    producer id    1000
    next sequence  events-0: 3
    """
    labels = {k: (names or {}).get(k, str(k).replace("_", " ")) for k in values}
    width = max((len(x) for x in labels.values()), default=0) + 2
    return "\n".join(f"{labels[k]:<{width}}{value(v)}".rstrip() for k, v in values.items())
