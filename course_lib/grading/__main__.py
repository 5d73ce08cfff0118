"""python -m course_lib.grading {grade,generate} - see course_lib/grading/README.md."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m course_lib.grading")
    sub = parser.add_subparsers(dest="command", required=True)
    g = sub.add_parser("grade", help="grade a folder of submitted notebooks into a CSV + feedback files")
    g.add_argument("submissions", type=Path)
    g.add_argument("--out", type=Path, default=Path("scores.csv"))
    g.add_argument("--feedback-dir", type=Path, default=None, help="default: <out>_feedback/ next to the CSV")
    g.add_argument("--timeout", type=float, default=300, help="seconds per submitted notebook")
    g.add_argument("--cell-timeout", type=float, default=60, help="seconds per cell")
    g.add_argument("--implementation-timeout", type=float, default=120,
                   help="seconds per implemented exercise's hidden check")
    g.add_argument("--sets", default=None, help="exercise sets to grade, e.g. 05 or 02,05 (default: those the "
                                                "submissions mention)")
    g.add_argument("--jobs", type=int, default=2, help="submissions graded at the same time")
    sub.add_parser("generate", help="regenerate exercises/ and solutions/ from exercises_src/")
    args = parser.parse_args(argv)
    if args.command == "generate":
        from .generate import generate
        for path in generate():
            print(path)
        return 0
    from .autograder import Limits, grade_folder
    limits = Limits(submission_s=args.timeout, cell_s=args.cell_timeout, implementation_s=args.implementation_timeout)
    if not args.submissions.is_dir():
        parser.error(f"{args.submissions} is not a folder: pass the folder that holds the submitted notebooks")
    sets = args.sets.split(",") if args.sets else None
    grade_folder(args.submissions, args.out, args.feedback_dir, limits, sets, args.jobs)
    print(f"scores written to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
