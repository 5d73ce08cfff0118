"""``python -m course_lib.workshop ROSTER --bootstrap HOST:PORT --out DIR [--dry-run]``.

Provisions every learner of the roster (SCRAM user + prefixed ACLs) on the cluster and writes
``DIR/<name>.env``; the instructor's password comes from ``KAFKA_INSTRUCTOR_PASSWORD`` (not a
command-line argument: those end up in shell history and ``ps``).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from course_lib.workshop.roster import Quota, RosterError, plan, read_roster


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m course_lib.workshop")
    ap.add_argument("roster", help="text file, one learner name per line")
    ap.add_argument("--instructor", default="instructor", help="the super user's name")
    ap.add_argument("--producer-byte-rate", type=int, default=Quota.producer_byte_rate)
    ap.add_argument("--consumer-byte-rate", type=int, default=Quota.consumer_byte_rate)
    ap.add_argument("--request-percentage", type=int, default=Quota.request_percentage)
    ap.add_argument("--bootstrap", help="the shared cluster's host:port list")
    ap.add_argument("--out", default="workshop-connections", help="where <name>.env files go")
    ap.add_argument("--dry-run", action="store_true", help="print the plan, change nothing")
    args = ap.parse_args(argv)
    try:
        learners = read_roster(args.roster, reserved=(args.instructor,))
    except RosterError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    quota = Quota(args.producer_byte_rate, args.consumer_byte_rate, args.request_percentage)
    print("\n".join(plan(learners, quota)))
    if args.dry_run:
        return 0
    password = os.environ.get("KAFKA_INSTRUCTOR_PASSWORD")
    if not args.bootstrap or not password:
        print(
            "error: applying needs --bootstrap HOST:PORT and the instructor's password in "
            "KAFKA_INSTRUCTOR_PASSWORD (or pass --dry-run)",
            file=sys.stderr,
        )
        return 2
    from kafka.admin import KafkaAdminClient

    from course_lib.real.security import client_kwargs
    from course_lib.workshop.credentials import (
        learner_passwords,
        write_connection_files,
    )
    from course_lib.workshop.provision import provision

    out = Path(args.out)
    passwords = learner_passwords(out, learners)
    admin = KafkaAdminClient(bootstrap_servers=args.bootstrap, **client_kwargs(args.instructor, password))
    try:
        provision(admin, learners, passwords)
    finally:
        admin.close()
    for f in write_connection_files(out, args.bootstrap, learners, passwords):
        print(f"wrote {f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
