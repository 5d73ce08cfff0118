"""``python -m course_lib.workshop plan ROSTER``: print what provisioning a roster would do."""
from __future__ import annotations

import argparse
import sys

from course_lib.workshop.roster import Quota, RosterError, plan, read_roster


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m course_lib.workshop")
    ap.add_argument("roster", help="text file, one learner name per line")
    ap.add_argument("--instructor", default="instructor", help="the super user's name")
    ap.add_argument("--producer-byte-rate", type=int, default=Quota.producer_byte_rate)
    ap.add_argument("--consumer-byte-rate", type=int, default=Quota.consumer_byte_rate)
    ap.add_argument("--request-percentage", type=int, default=Quota.request_percentage)
    ap.add_argument("--dry-run", action="store_true", required=True,
                    help="print the plan (applying it to a cluster is not built yet)")
    args = ap.parse_args(argv)
    try:
        learners = read_roster(args.roster, reserved=(args.instructor,))
    except RosterError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    quota = Quota(args.producer_byte_rate, args.consumer_byte_rate, args.request_percentage)
    print("\n".join(plan(learners, quota)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
