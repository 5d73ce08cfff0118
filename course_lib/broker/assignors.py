"""Server-side assignors of the consumer group protocol (KIP-848): ``uniform`` and ``range``.

In a consumer group the *coordinator* computes the target assignment (the classic protocol
lets the group leader's client do it). Both assignors are sticky: they start from the current
target assignment, so a member keeps what it may keep and only the difference moves - which is
what makes incremental reconciliation cheap.

- ``uniform`` (Kafka's default, ``UniformAssignor``): every member gets ``total // members``
  partitions, and ``total % members`` of them one more. With identical subscriptions this is
  Kafka's ``UniformHomogeneousAssignmentBuilder``: members first keep their current partitions
  up to their quota (the ones that keep more than the minimum get the extra slots), then the
  unassigned partitions fill the members below quota in member order. With different
  subscriptions each partition goes to its current owner while that owner is below its fair
  share, otherwise to the subscribed member with the fewest partitions (Kafka's heterogeneous
  builder balances the same way; its tie-breaks differ).
- ``range`` (``RangeAssignor``): per topic, the subscribed members in member-id order get
  consecutive ranges, the first ``partitions % members`` one more - partition *i* of every
  co-partitioned topic lands on the same member. Kafka's server-side range assignor is sticky
  within a topic's quota too; here a member keeps a partition only if it is in its range.

Member order is member-id order (Kafka iterates its members map; its member ids are random
UUIDs, so no order is "Kafka's").

An assignment is ``{member_id: {topic: frozenset(partitions)}}``.

>>> members = {"a": ("t",), "b": ("t",)}
>>> uniform(members, {"t": 4}, {})
{'a': {'t': frozenset({0, 1})}, 'b': {'t': frozenset({2, 3})}}
>>> # "c" joins: "a" and "b" keep what they may, one partition moves
>>> uniform({**members, "c": ("t",)}, {"t": 4}, {"a": {"t": frozenset({0, 1})}, "b": {"t": frozenset({2, 3})}})
{'a': {'t': frozenset({0, 1})}, 'b': {'t': frozenset({2})}, 'c': {'t': frozenset({3})}}
>>> range_({**members, "c": ("t",)}, {"t": 4}, {})
{'a': {'t': frozenset({0, 1})}, 'b': {'t': frozenset({2})}, 'c': {'t': frozenset({3})}}
"""

from __future__ import annotations

from typing import Callable

Assignment = dict  # member id -> {topic: frozenset(partitions)}


def _freeze(owned: dict) -> Assignment:
    return {m: {t: frozenset(ps) for t, ps in sorted(tps.items()) if ps} for m, tps in sorted(owned.items())}


def uniform(members: dict, partitions: dict, current: Assignment) -> Assignment:
    """``members``: member id -> subscribed topics; ``partitions``: topic -> partition count
    (topics that do not exist are absent); ``current``: the previous target assignment."""
    order = sorted(members)
    subscriptions = {tuple(sorted(members[m])) for m in order}
    if len(subscriptions) > 1:
        return _uniform_heterogeneous(members, partitions, current)
    topics = [t for t in (subscriptions.pop() if subscriptions else ()) if t in partitions]
    every = [(t, p) for t in topics for p in range(partitions[t])]
    if not order or not every:
        return {m: {} for m in order}
    minimum, extra = divmod(len(every), len(order))
    valid = set(every)
    taken: set = set()
    owned: dict = {}
    for m in order:
        kept = sorted(tp for t, ps in current.get(m, {}).items() for p in ps if (tp := (t, p)) in valid)
        quota = minimum
        if extra and len(kept) > minimum:
            quota, extra = minimum + 1, extra - 1
        owned[m] = kept[:quota]
        taken.update(owned[m])
    free = [tp for tp in every if tp not in taken]
    for m in order:  # fill everyone to the minimum first
        while len(owned[m]) < minimum:
            owned[m].append(free.pop(0))
    for m in order:  # then the extra slots still open
        if free and extra and len(owned[m]) == minimum:
            owned[m].append(free.pop(0))
            extra -= 1
    assert not free, "uniform: partitions left unassigned"
    return _freeze({m: _by_topic(owned[m]) for m in order})


def _uniform_heterogeneous(members: dict, partitions: dict, current: Assignment) -> Assignment:
    order = sorted(members)
    owned: dict = {m: [] for m in order}
    previous = {(t, p): m for m, tps in current.items() for t, ps in tps.items() for p in ps}
    for t in sorted(partitions):
        eligible = [m for m in order if t in members[m]]
        for p in range(partitions[t]) if eligible else ():
            share = -(-sum(partitions[x] for x in members[eligible[0]] if x in partitions) // len(eligible))
            keeper = previous.get((t, p))
            if keeper in eligible and len(owned[keeper]) < share:
                owned[keeper].append((t, p))
            else:
                owned[min(eligible, key=lambda m: (len(owned[m]), m))].append((t, p))
    return _freeze({m: _by_topic(owned[m]) for m in order})


def range_(members: dict, partitions: dict, current: Assignment) -> Assignment:
    """Per topic, consecutive partitions to the subscribed members in member-id order."""
    owned: dict = {m: {} for m in sorted(members)}
    for t in sorted(partitions):
        subscribed = sorted(m for m in members if t in members[m])
        start = 0
        for i, m in enumerate(subscribed):
            count = partitions[t] // len(subscribed) + (1 if i < partitions[t] % len(subscribed) else 0)
            owned[m][t] = range(start, start + count)
            start += count
    return _freeze(owned)


def _by_topic(tps: list) -> dict:
    out: dict = {}
    for t, p in tps:
        out.setdefault(t, set()).add(p)
    return out


#: ``group.consumer.assignors`` as Kafka names them; the first is the default
ASSIGNORS: dict[str, Callable[[dict, dict, Assignment], Assignment]] = {"uniform": uniform, "range": range_}
