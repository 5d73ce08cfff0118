"""Replication invariants over 10,000 seeded fault schedules (each with an ISR shrink followed by
the leader's death), checked after every event: how many schedules, events and elections were
checked, how many violations, and the CPU time.

Run: ``python -m bench invariants`` (``--quick``: 100 seeds, a smoke run of seconds; ``make test``
checks 1,000 in tests/test_replication_invariants.py).
"""

from __future__ import annotations

import time
import warnings
from collections import Counter

from course_lib.broker.invariants import InvariantViolation
from bench.replication_trials import checked_trial


def run(seeds: range) -> dict:
    totals: Counter = Counter()
    by_config: Counter = Counter()
    violations: list[str] = []
    start = time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for seed in seeds:
            try:
                trial = checked_trial(seed)
            except InvariantViolation as e:
                violations.append(str(e))
                continue
            totals["schedules"] += 1
            totals["events checked"] += trial.events
            totals["clean elections"] += trial.clean_elections
            totals["unclean elections"] += trial.unclean_elections
            totals["acknowledged records"] += trial.acknowledged
            c = trial.config
            by_config[
                (c["min_insync_replicas"], c["unclean_leader_election_enable"], c["eligible_leader_replicas_enable"])
            ] += 1
    return {"totals": totals, "by_config": by_config, "violations": violations, "cpu_s": time.process_time() - start}


def main(quick: bool = False) -> dict:
    seeds = range(100 if quick else 10_000)
    out = run(seeds)
    print(f"\nReplication invariants, {len(seeds)} seeded schedules (checked after every event)")
    print(f"{'':28}{'value':>14}")
    for name, value in out["totals"].items():
        print(f"{name:28}{value:>14,}")
    print(f"{'violations':28}{len(out['violations']):>14,}")
    print(f"{'CPU time (s)':28}{out['cpu_s']:>14.1f}")
    print(f"{'CPU ms per schedule':28}{1000 * out['cpu_s'] / len(seeds):>14.1f}")
    print("\nschedules per configuration (min ISR, unclean election, ELR)")
    for key, n in sorted(out["by_config"].items()):
        print(f"  {key!s:26}{n:>8,}")
    for v in out["violations"][:10]:
        print("VIOLATION", v)
    return out


if __name__ == "__main__":
    main()
